"""Issue 24, point 3 (outside the queue page): bulk reject with one message, bulk dismiss, and
approve-and-bonus in one step, as services, API endpoints and a page form; all or none."""

from __future__ import annotations

from unittest import mock

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Annotation, Assignment, Bonus, Flag, StatusEvent, Worker
from annotation.selectors.bonuses import bonus_report
from annotation.services import decisions
from tests.factories import prolific_study_hit, publish_hit, sluice_project

pytestmark = pytest.mark.django_db


def submitted(project, hit, n: int) -> list[Assignment]:
    item = project.items.order_by("pk").first()
    rows = []
    for i in range(n):
        worker = Worker.objects.create(provider=hit.batch.provider, external_id=f"AW{i}{hit.pk}")
        assignment = Assignment.objects.create(hit=hit, worker=worker,
                                               provider_assignment_id=f"A{hit.pk}-{i}",
                                               status=Assignment.Status.SUBMITTED)
        Annotation.objects.create(project=project, item=item, worker=worker,
                                  assignment=assignment, source=hit.batch.provider,
                                  text="Why?", payload={"full_question": "Why?",
                                                        "skipped": False})
        rows.append(assignment)
    return rows


@pytest.fixture(autouse=True)
def no_jobs():
    with mock.patch("annotation.services.decisions.enqueue_after_commit"):
        yield


def test_bulk_reject_is_one_message_all_or_none(staff_client):
    project = sluice_project(items=1)
    mturk = submitted(project, publish_hit(project), 2)
    prolific = submitted(project, prolific_study_hit(project, study_id="s" * 24), 1)
    events = StatusEvent.objects.count()
    # A Prolific one among them needs a category: nothing is rejected.
    response = staff_client.post("/api/assignments/reject/", {
        "assignments": [a.pk for a in mturk + prolific], "message": "Random answers."},
        content_type="application/json")
    assert response.status_code == 400 and "rejection_category" in response.json()
    assert StatusEvent.objects.count() == events
    assert set(Assignment.objects.values_list("status", flat=True)) == {"submitted"}
    response = staff_client.post("/api/assignments/reject/", {
        "assignments": [a.pk for a in mturk], "message": "Random answers."},
        content_type="application/json")
    assert response.status_code == 200
    assert sorted(response.json()["rejected"]) == sorted(a.pk for a in mturk)
    assert set(Assignment.objects.filter(pk__in=[a.pk for a in mturk])
               .values_list("review_message", "status")) == {("Random answers.", "rejected")}
    with pytest.raises(ValidationError, match="needs a message"):
        decisions.assignments_reject(assignment_ids=[prolific[0].pk], message=" ")


def test_bulk_dismiss_all_or_none(staff_client):
    project = sluice_project(items=1)
    (assignment,) = submitted(project, publish_hit(project), 1)
    flags = [Flag.objects.create(project=project, assignment=assignment,
                                 worker=assignment.worker, reason=f"r{i}",
                                 fingerprint=f"f{i}") for i in range(3)]
    decisions.flag_dismiss(flag_id=flags[0].pk)
    response = staff_client.post("/api/flags/dismiss/", {"flags": [f.pk for f in flags]},
                                 content_type="application/json")
    assert response.status_code == 400 and "already decided" in response.content.decode()
    assert Flag.objects.filter(status=Flag.Status.OPEN).count() == 2
    response = staff_client.post("/api/flags/dismiss/", {"flags": [f.pk for f in flags[1:]],
                                                         "note": "fine"},
                                 content_type="application/json")
    assert response.status_code == 200 and len(response.json()["dismissed"]) == 2
    assert not Flag.objects.filter(status=Flag.Status.OPEN).exists()


def test_approve_and_bonus_is_both_or_neither(staff_client):
    project = sluice_project(items=1)
    first, second = submitted(project, publish_hit(project), 2)
    response = staff_client.post(f"/api/assignments/{first.pk}/approve-and-bonus/",
                                 {"amount_cents": 25, "reason": "careful"},
                                 content_type="application/json")
    assert response.status_code == 200 and response.json()["amount_cents"] == 25
    first.refresh_from_db()
    assert first.status == "approved" and first.bonuses.get().amount_cents == 25
    # A bonus the service refuses (no reason) leaves the approval undone too.
    page = staff_client.post(f"/staff/assignments/{second.pk}/approve-and-bonus/",
                             {"amount_cents": "25", "reason": " ",
                              "next": f"/staff/review/{project.slug}/"}, follow=True)
    assert "a bonus needs a reason" in page.content.decode()
    second.refresh_from_db()
    assert second.status == "submitted" and not second.bonuses.exists()
    page = staff_client.post(f"/staff/assignments/{second.pk}/approve-and-bonus/",
                             {"amount_cents": "30", "reason": "thanks"}, follow=True)
    assert Bonus.objects.count() == 2
    # What became of the bonus, in the words of selectors.bonuses (paid inline here).
    _, bonus_words = bonus_report(second.bonuses.get().pk)
    assert f"Assignment {second} approved; {bonus_words}" in page.content.decode()


def test_a_project_block_rejects_a_local_annotators_pending_answers_there_only():
    here, elsewhere = sluice_project(slug="here", items=2), sluice_project(slug="there", items=1)
    worker = Worker.objects.create(provider="local", external_id="anna")
    answers = [Annotation.objects.create(project=project, item=item, worker=worker,
                                         source="local", text="Why?",
                                         payload={"full_question": "Why?", "skipped": False})
               for project in (here, elsewhere) for item in project.items.all()]
    outcome = decisions.worker_block(worker_id=worker.pk, reason="copied", scope="project",
                                     project_id=here.pk, pending="reject",
                                     message="Copied the question.")
    assert sorted(outcome.rejected_answers) == sorted(a.pk for a in answers[:2])
    assert "Rejected 0 pending assignment(s) and 2 pending answer(s)." in outcome.summary()
    states = dict(Annotation.objects.values_list("pk", "review_status"))
    assert [states[a.pk] for a in answers] == ["rejected", "rejected", "pending"]
    # Blocking again changes nothing more (nothing pending is left there).
    again = decisions.worker_block(worker_id=worker.pk, reason="copied", scope="project",
                                   project_id=here.pk, pending="reject", message="Copied.")
    assert again.rejected_answers == () and states == dict(
        Annotation.objects.values_list("pk", "review_status"))
