"""Staff review queue and dashboard: access, escaping, decisions through the services, queries."""

from __future__ import annotations

from unittest import mock

import pytest
from django.test import Client

from annotation.models import Annotation, Assignment, Batch, Bonus, Flag, Hit, Job, Worker
from frontend.review import diff_html, svg_bars
from tests.factories import (
    SCRIPT,
    annotate,
    canard_sample,
    claire_sample,
    flagged_rewrites,
    workers,
)

pytestmark = pytest.mark.django_db


def test_annotators_and_anonymous_users_cannot_review(annotator_client):
    project, rows = flagged_rewrites(1)
    assignment = rows[0][0]
    for url in (f"/staff/review/{project.slug}/", f"/staff/review/{project.slug}/dashboard/",
                "/staff/review/"):
        response = Client().get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]
        assert annotator_client.get(url).status_code == 403  # logged in, not a reviewer
    response = annotator_client.post(
        f"/staff/review/{project.slug}/assignments/{assignment.pk}/decide/",
        {"action": "reject", "message": "no"})
    assert response.status_code == 403
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED


def test_queue_groups_by_hit_and_escapes_worker_text(staff_client):
    project, _ = flagged_rewrites(2)
    page = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("Reject whole assignment") == 2
    assert "<ins>" in page and "HIT0" in page and "HIT1" in page
    by_worker = staff_client.get(f"/staff/review/{project.slug}/?by=worker").content.decode()
    assert by_worker.count("Block worker") == 2
    assert SCRIPT not in by_worker


def test_queue_and_dashboard_run_a_fixed_number_of_queries(staff_client,
                                                           django_assert_num_queries):
    project, items = canard_sample()
    flagged_rewrites(2, (project, items))
    # session, user, project, the page of flag groups with their totals, the page's flags
    # with everything rendered, flag counts, the ids of the submitted assignments without an
    # open flag (the bulk approve button; none here, so no list of them), and one for the
    # review rules of selectors/blocks.py (unconfirmed work), and one for the workers blocked
    # from the project (the "blocked" badge of the shared _worker_name.html)
    with django_assert_num_queries(9) as small:
        staff_client.get(f"/staff/review/{project.slug}/")
    # session, user, project, progress, flag counts, and the time histogram's count,
    # 99th percentile and bins (no ratings, no agreement for rewrites)
    with django_assert_num_queries(8) as small_dashboard:
        staff_client.get(f"/staff/review/{project.slug}/dashboard/")
    flagged_rewrites(8, (project, items), first=2)  # 10 flagged assignments now
    with django_assert_num_queries(len(small.captured_queries)):
        staff_client.get(f"/staff/review/{project.slug}/")
    with django_assert_num_queries(len(small_dashboard.captured_queries)):
        staff_client.get(f"/staff/review/{project.slug}/dashboard/")


def test_reject_whole_assignment_enqueues_the_decision(staff_client,
                                                       django_capture_on_commit_callbacks):
    project, rows = flagged_rewrites(1)
    assignment, _annotation, flag, _ = rows[0]
    with mock.patch("annotation.tasks.sync_assignment_decision.delay") as delay, \
            django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            f"/staff/review/{project.slug}/assignments/{assignment.pk}/decide/",
            {"action": "reject", "message": "The rewrite keeps 'they'."})
    assert response.status_code == 302
    delay.assert_called_once_with(assignment.pk)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.REJECTED
    assert assignment.review_message == "The rewrite keeps 'they'."
    assert assignment.decision_synced is False
    # The whole assignment: the good rewrite in the same HIT is rejected too.
    assert set(assignment.annotations.values_list("review_status", flat=True)) == {"rejected"}
    flag.refresh_from_db()
    assert flag.status == Flag.Status.UPHELD and flag.reviewed_by is not None


def test_reject_needs_a_message_and_approve_dismisses_flags(staff_client,
                                                            django_capture_on_commit_callbacks):
    project, rows = flagged_rewrites(1)
    assignment, _, flag, _ = rows[0]
    url = f"/staff/review/{project.slug}/assignments/{assignment.pk}/decide/"
    with mock.patch("annotation.tasks.sync_assignment_decision.delay") as delay, \
            django_capture_on_commit_callbacks(execute=True):
        page = staff_client.post(url, {"action": "reject", "message": " "}, follow=True)
        assert "needs a message" in page.content.decode()
        assert delay.call_count == 0
        staff_client.post(url, {"action": "approve"})
    delay.assert_called_once_with(assignment.pk)
    assignment.refresh_from_db()
    flag.refresh_from_db()
    assert assignment.status == "approved" and flag.status == Flag.Status.DISMISSED
    assert set(assignment.annotations.values_list("review_status", flat=True)) == {"approved"}


def test_block_bonus_and_unflag(staff_client, django_capture_on_commit_callbacks):
    project, rows = flagged_rewrites(1)
    assignment, _, flag, worker_flag = rows[0]
    base = f"/staff/review/{project.slug}"
    with mock.patch("annotation.tasks.sync_worker_block.delay") as block, \
            mock.patch("annotation.tasks.send_bonus.delay") as bonus, \
            django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"{base}/workers/{assignment.worker_id}/block/",
                          {"reason": "random rewrites", "scope": "everywhere",
                           "pending": "leave"})
        staff_client.post(f"{base}/assignments/{assignment.pk}/bonus/",
                          {"amount_cents": "25", "reason": "careful work"})
        staff_client.post(f"{base}/assignments/{assignment.pk}/bonus/",
                          {"amount_cents": "abc", "reason": "x"})
        staff_client.post(f"{base}/flags/{flag.pk}/dismiss/", {"note": "fine"})
    worker = Worker.objects.get(pk=assignment.worker_id)
    assert worker.is_blocked and worker.blocked_reason == "random rewrites"
    block.assert_called_once_with(worker.pk)
    (row,) = Bonus.objects.all()
    assert row.amount_cents == 25 and row.unique_request_token.startswith("unpack-bonus-")
    bonus.assert_called_once_with(row.pk)
    flag.refresh_from_db()
    worker_flag.refresh_from_db()
    assert flag.status == Flag.Status.DISMISSED and flag.decision_note == "fine"
    assert worker_flag.status == Flag.Status.UPHELD


def test_forms_need_csrf(staff_user):
    project, rows = flagged_rewrites(1)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(staff_user)
    response = strict.post(f"/staff/review/{project.slug}/flags/{rows[0][2].pk}/dismiss/")
    assert response.status_code == 403
    page = strict.get(f"/staff/review/{project.slug}/").content.decode()
    assert page.count("csrfmiddlewaretoken") >= 4


def test_local_work_is_decided_per_annotation(staff_client):
    project, items = claire_sample()
    annotation = annotate(items[0], workers(1)[0], rating=1)
    Flag.objects.create(project=project, annotation=annotation, worker=annotation.worker,
                        reason="too_fast", fingerprint=f"too_fast:annotation:{annotation.pk}")
    page = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert "[the split]" in page  # the filler shown in its gap, as the worker saw it
    staff_client.post(f"/staff/review/{project.slug}/annotations/{annotation.pk}/decide/",
                      {"action": "reject", "message": "clicked through"})
    annotation.refresh_from_db()
    assert annotation.review_status == Annotation.Review.REJECTED


def test_dashboard_plots_are_inline_svg_with_escaped_labels(staff_client):
    project, items = claire_sample()
    crowd = workers(3)
    for worker in crowd:
        for k, item in enumerate(items):
            annotate(item, worker, rating=1 + k % 5, duration_ms=1000 * (k + 1))
    dashboard = f"/staff/review/{project.slug}/dashboard/"
    page = staff_client.get(dashboard).content.decode()
    # Every plot reads every answer: it comes from a finished QC job (h24dash).
    assert page.count("<svg") == 0
    assert "No QC run with dashboard figures has finished for this project yet" in page
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    job = Job.objects.get(kind="qc")
    page = staff_client.get(dashboard).content.decode()
    assert page.count("<svg") == 3
    assert f"QC job {job.pk}</a>, computed" in page
    assert "Ratings (1–5)" in page and "Time per item" in page
    assert "seconds per answer" in page and ">answers</text>" in page  # axis titles
    assert "<td>dev</td><td>5</td>" in page
    svg = svg_bars(SCRIPT, [SCRIPT], [1.0])
    assert "<script>" not in svg


def test_diff_marks_insertions_and_deletions_escaped():
    html = diff_html("When did they disband?", "When did <b>Zappa</b> disband?")
    assert "<ins>&lt;b&gt;Zappa&lt;/b&gt;</ins>" in html and "<del>they</del>" in html


def submitted_unflagged(n: int, project_items=None, first: int = 0):
    """``n`` submitted assignments without a flag, one rewrite each."""
    project, items = project_items or canard_sample()
    batch = Batch.objects.create(project=project, title="unflagged", provider="mturk")
    rows = []
    for k, worker in enumerate(workers(n), start=first):
        hit = Hit.objects.create(batch=batch, unique_request_token=f"u-token-{k}",
                                 provider_hit_id=f"UHIT{k}")
        assignment = Assignment.objects.create(hit=hit, worker=worker,
                                               provider_assignment_id=f"UASG{k}",
                                               status=Assignment.Status.SUBMITTED,
                                               decision_synced=True)
        annotate(items[1], worker, assignment=assignment, source="mturk",
                 text=f"When did the Mothers disband? {SCRIPT} {k}")
        rows.append(assignment)
    return project, rows


def test_unflagged_submitted_work_is_listed_with_its_decisions(staff_client,
                                                               django_assert_num_queries):
    project, items = canard_sample()
    _, rows = submitted_unflagged(2, (project, items))
    # + the answers of the listed assignments, + one for the rules of selectors/blocks.py
    with django_assert_num_queries(9) as small:
        page = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert SCRIPT not in page and "&lt;script&gt;" in page
    assert "Submitted work without an open flag" in page
    for assignment in rows:
        assert f"/assignments/{assignment.pk}/decide/" in page
        assert f"/assignments/{assignment.pk}/bonus/" in page
        assert f"/workers/{assignment.worker_id}/block/" in page
    assert page.count("Reject whole assignment") == 2
    submitted_unflagged(5, (project, items), first=2)
    with django_assert_num_queries(len(small.captured_queries)):
        page = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert page.count("Reject whole assignment") == 7


def test_a_decision_reads_in_plain_english(staff_client, django_capture_on_commit_callbacks):
    project, (assignment,) = submitted_unflagged(1)
    url = f"/staff/review/{project.slug}/assignments/{assignment.pk}/decide/"
    with mock.patch("annotation.tasks.sync_assignment_decision.delay"), \
            django_capture_on_commit_callbacks(execute=True):
        page = staff_client.post(url, {"action": "reject", "message": "Off topic."},
                                 follow=True).content.decode()
    assert "Assignment UASG0 rejected." in page  # was "rejectd"
