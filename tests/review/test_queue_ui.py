"""The review queue's decisions and names (issue 24 audit): approve and bonus in one step on
every assignment it lists, bulk reject with one message and bulk un-flag through
``services/decisions.py``, workers named by the shared ``_worker_name.html``, Prolific's words
(study, session, rejection categories) and a link to the held-back work."""

from __future__ import annotations

import re

import pytest

from annotation.models import Annotation, Assignment, Flag, Worker, WorkerProjectBlock
from tests.factories import (
    annotate,
    canard_sample,
    flagged_rewrites,
    prolific_study_hit,
    sluice_project,
)

pytestmark = pytest.mark.django_db

LONG = ("Your answers did not follow the instructions: every question was left as the "
        "sentence itself, with nothing rewritten at all.")


def queue(client, project, by="hit") -> str:
    response = client.get(f"/staff/review/{project.slug}/?by={by}")
    assert response.status_code == 200
    return response.content.decode()


def prolific_flagged():
    """A Prolific session, collected, with a flagged answer."""
    project = sluice_project(slug="sluice-queue-ui", items=1)
    hit = prolific_study_hit(project, study_id="64d3ab4de4bae1091e5de441")
    worker = Worker.objects.create(provider=Worker.Provider.PROLIFIC,
                                   external_id="5a9d64f5f6dfdd0001eaa73d")
    session = Assignment.objects.create(hit=hit, worker=worker,
                                        provider_assignment_id="6500aa00bb11cc22dd33ee44",
                                        status=Assignment.Status.SUBMITTED)
    answer = annotate(project.items.get(), worker, assignment=session, source="prolific")
    flag = Flag.objects.create(project=project, annotation=answer, worker=worker,
                               assignment=session, reason="too_fast", score=2.0,
                               fingerprint=f"too_fast:annotation:{answer.pk}")
    return project, session, flag


def test_every_listed_assignment_offers_approve_and_bonus(staff_client):
    project, rows = flagged_rewrites(2)
    unflagged_project, items = canard_sample(slug="canard-unflagged")
    _, unflagged_rows = flagged_rewrites(1, (unflagged_project, items), first=5)
    Flag.objects.filter(project=unflagged_project).delete()  # submitted, without a flag
    for page, assignments in ((queue(staff_client, project), [row[0] for row in rows]),
                              (queue(staff_client, unflagged_project),
                               [row[0] for row in unflagged_rows])):
        for assignment in assignments:
            action = f'action="/staff/assignments/{assignment.pk}/approve-and-bonus/"'
            assert page.count(action) == 1
        assert page.count("Approve and bonus") == len(assignments)
        assert 'placeholder="cents (USD)"' in page


def test_the_queue_names_workers_with_the_shared_name_and_blocked(staff_client,
                                                                  django_user_model):
    project, rows = flagged_rewrites(2)
    local = rows[0][0].worker
    local.user = django_user_model.objects.create_user(username="ann-local-7")
    local.save(update_fields=["user"])
    WorkerProjectBlock.objects.create(worker=local, project=project, reason="spam")
    other = rows[1][0].worker
    for by in ("hit", "worker", "answer"):
        page = queue(staff_client, project, by)
        assert "(ann-local-7)" in page, by
        assert f'href="/staff/workers/{local.pk}/" data-testid="worker-name"' in page, by
        assert f'href="/staff/workers/{other.pk}/" data-testid="worker-name"' in page, by
        # "blocked" beside the blocked worker only: each of their names carries the badge.
        names = re.findall(r'href="/staff/workers/(\d+)/" data-testid="worker-name">[^<]*</a>'
                           r'(?: <span class="muted">\([^)]*\)</span>)?'
                           r'( <strong class="badge blocked")?', page)
        assert {pk for pk, badge in names if badge} == {str(local.pk)}, by
        assert {pk for pk, _ in names} == {str(local.pk), str(other.pk)}, by
        assert f"worker {local.anonymous_id}</h2>" not in page


def test_a_prolific_group_says_study_and_session(staff_client):
    project, session, _ = prolific_flagged()
    page = queue(staff_client, project, "hit")
    assert (f"Prolific study {session.hit.provider_hit_id} · session "
            f"{session.provider_assignment_id} · worker") in page
    assert f"HIT {session.hit.provider_hit_id}" not in page
    mturk, _ = flagged_rewrites(1)
    assert "HIT HIT0 · assignment ASG0 · worker" in queue(staff_client, mturk, "hit")


def test_prolific_rejection_categories_read_in_words_where_a_reviewer_rejects(staff_client):
    project, session, _ = prolific_flagged()
    page = queue(staff_client, project, "hit")
    forms = re.findall(rf"<form[^>]*assignments/{session.pk}/decide/.*?</form>",
                       page.replace("\n", " "))
    rejecting = [form for form in forms if 'value="reject"' in form]
    assert len(rejecting) == 1
    assert ">Malingering (answers not given in good faith)</option>" in rejecting[0]
    assert ">Failed an attention check</option>" in rejecting[0]
    assert ">MALINGERING<" not in page and ">FAILED_CHECK<" not in page
    browse = staff_client.get(f"/staff/projects/{project.slug}/answers/").content.decode()
    assert ">Malingering (answers not given in good faith)</option>" in browse
    assert ">MALINGERING<" not in browse


def test_the_queue_links_the_held_back_work(staff_client):
    project, _ = flagged_rewrites(1)
    page = queue(staff_client, project)
    assert f'href="/staff/projects/{project.slug}/held/" data-testid="held-link"' in page


def test_bulk_reject_refuses_another_projects_assignment_and_changes_nothing(staff_client):
    project, rows = flagged_rewrites(1)
    other, items = canard_sample(slug="canard-other")
    _, other_rows = flagged_rewrites(1, (other, items), first=3)
    response = staff_client.post(f"/staff/review/{project.slug}/assignments/reject/", {
        "assignment": [rows[0][0].pk, other_rows[0][0].pk], "message": "no"}, follow=True)
    said = response.content.decode()
    assert f"Nothing was rejected: no assignment [{other_rows[0][0].pk}] in {project.slug}." in said
    assert set(Assignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_bulk_reject_of_a_prolific_session_needs_its_category(staff_client):
    project, session, _ = prolific_flagged()
    url = f"/staff/review/{project.slug}/assignments/reject/"
    said = staff_client.post(url, {"assignment": [session.pk], "message": LONG},
                             follow=True).content.decode()
    assert "Nothing was rejected: Prolific needs a rejection category" in said
    session.refresh_from_db()
    assert session.status == "submitted"
    said = staff_client.post(url, {"assignment": [session.pk], "message": LONG,
                                   "rejection_category": "FAILED_INSTRUCTIONS"},
                             follow=True).content.decode()
    assert f"Rejected 1 assignment with one message: {session.provider_assignment_id}." in said
    session.refresh_from_db()
    assert (session.status, session.rejection_category, session.review_message) == (
        "rejected", "FAILED_INSTRUCTIONS", LONG)
    again = staff_client.post(url, {"assignment": [session.pk], "message": LONG,
                                    "rejection_category": "FAILED_INSTRUCTIONS"},
                              follow=True).content.decode()
    assert "Nothing to reject. 1 ticked assignment had been rejected already." in again


def test_bulk_unflag_is_all_or_none_and_says_what_it_did(staff_client):
    project, rows = flagged_rewrites(2)
    (_, _, first, first_worker), (_, _, second, _) = rows
    url = f"/staff/review/{project.slug}/flags/dismiss/"
    staff_client.post(f"/staff/review/{project.slug}/flags/{second.pk}/dismiss/", {})
    said = staff_client.post(url, {"flag": [first.pk, second.pk]}, follow=True).content.decode()
    assert "Nothing was un-flagged:" in said and "already decided" in said
    assert Flag.objects.get(pk=first.pk).status == Flag.Status.OPEN
    said = staff_client.post(url, {"flag": [first.pk, first_worker.pk], "note": "fine"},
                             follow=True).content.decode()
    assert ("Un-flagged 2 flags (1 rewrite_pronoun_left, 1 too_fast); the answers "
            "themselves are unchanged.") in said
    assert Flag.objects.filter(status=Flag.Status.OPEN).count() == 1
    assert set(Annotation.objects.values_list("review_status", flat=True)) == {"pending"}
    said = staff_client.post(url, {"flag": ["x"]}, follow=True).content.decode()
    assert "Nothing was un-flagged: a flag must be given by its number." in said


def test_a_hit_group_of_unconfirmed_work_gets_no_reject_tick(staff_client):
    project, session, _ = prolific_flagged()
    Annotation.objects.filter(assignment=session).update(state=Annotation.State.PROVISIONAL)
    page = queue(staff_client, project, "hit")
    assert 'data-testid="unconfirmed"' in page
    assert f'name="assignment" value="{session.pk}"' not in page
    Annotation.objects.filter(assignment=session).update(state=Annotation.State.COUNTED)
    assert f'name="assignment" value="{session.pk}"' in queue(staff_client, project, "hit")
