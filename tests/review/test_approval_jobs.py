""""Approve all unflagged" is an ``approvals`` job (issue 21): never decided inside the request
with a worker, two clicks start one job, and its message says how many were approved and how
many held back (blocked workers, work collection has not confirmed), as the rules say."""

from __future__ import annotations

from unittest import mock

import pytest

from annotation.models import (
    Annotation,
    Assignment,
    Flag,
    Job,
    StatusEvent,
    Worker,
    WorkerProjectBlock,
)
from annotation.services import staff_jobs
from tests.factories import publish_hit, sluice_project

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_provider_calls():
    with mock.patch("annotation.services.decisions.enqueue_after_commit"):
        yield


def submitted(project, hit, n: int, *, state="counted", tag="") -> list[Assignment]:
    item = project.items.order_by("pk").first()
    rows = []
    for i in range(n):
        worker = Worker.objects.create(provider=hit.batch.provider,
                                       external_id=f"AW{tag}{i}{hit.pk}")
        assignment = Assignment.objects.create(hit=hit, worker=worker,
                                               provider_assignment_id=f"A{tag}{hit.pk}-{i}",
                                               status=Assignment.Status.SUBMITTED)
        Annotation.objects.create(project=project, item=item, worker=worker,
                                  assignment=assignment, source=hit.batch.provider,
                                  state=state, text="Why?",
                                  payload={"full_question": "Why?", "skipped": False})
        rows.append(assignment)
    return rows


def world():
    """5 approvable, 1 flagged, 1 of a worker blocked for the project, 1 unconfirmed."""
    project = sluice_project(items=1)
    hit = publish_hit(project)
    fine = submitted(project, hit, 5, tag="f")
    [flagged] = submitted(project, hit, 1, tag="x")
    Flag.objects.create(project=project, assignment=flagged, reason="too_fast",
                        fingerprint="too_fast:x")
    [blocked] = submitted(project, hit, 1, tag="b")
    WorkerProjectBlock.objects.create(worker=blocked.worker, project=project, reason="spam")
    [unconfirmed] = submitted(project, hit, 1, tag="u", state="provisional")
    return project, fine, flagged, blocked, unconfirmed


def statuses(assignments) -> list[str]:
    return [Assignment.objects.get(pk=a.pk).status for a in assignments]


def test_inline_it_approves_the_unflagged_and_says_what_it_held_back(staff_client):
    project, fine, flagged, blocked, unconfirmed = world()
    response = staff_client.post(f"/staff/review/{project.slug}/assignments/approve/",
                                 {"message": "Thanks!"}, follow=True)
    page = response.content.decode()
    assert ("5 assignment(s) approved; held back: 1 of workers blocked for the project (decide "
            "each yourself), 1 not yet confirmed by collection.") in page
    assert statuses(fine) == ["approved"] * 5
    assert statuses([flagged, blocked, unconfirmed]) == ["submitted"] * 3
    assert {a.review_message for a in Assignment.objects.filter(status="approved")} == {
        "Thanks!"}
    job = Job.objects.get(kind="approvals")
    assert job.state == "done" and job.requested_by.is_staff
    assert job.progress_done == job.progress_total == 5
    assert StatusEvent.objects.filter(kind="assignment_decided").count() == 5
    # Nothing left: the page says so and starts no job.
    again = staff_client.post(f"/staff/review/{project.slug}/assignments/approve/", {},
                              follow=True)
    assert "No submitted assignment without an open flag is waiting." in \
        again.content.decode()
    assert Job.objects.filter(kind="approvals").count() == 1


def test_with_a_worker_the_request_decides_nothing_and_two_clicks_start_one_job(
        staff_client, with_broker):
    project, fine, *_ = world()
    url = f"/staff/review/{project.slug}/assignments/approve/"
    first = staff_client.post(url, {})
    job = Job.objects.get(kind="approvals")
    assert first["Location"] == f"/staff/jobs/{job.pk}/"
    assert statuses(fine) == ["submitted"] * 5
    second = staff_client.post(url, {}, follow=True)
    assert Job.objects.filter(kind="approvals").count() == 1
    assert f"already queued (job {job.pk})" in second.content.decode()
    assert staff_jobs.job_run(job_id=job.pk) == "done"
    assert statuses(fine) == ["approved"] * 5
    page = staff_client.get(f"/staff/jobs/{job.pk}/").content.decode()
    assert "5 assignment(s) approved; held back: 1 of workers blocked" in page


def test_a_part_that_changed_meanwhile_is_counted_not_approved(staff_client, monkeypatch):
    project, fine, *_ = world()
    monkeypatch.setattr(staff_jobs, "APPROVAL_CHUNK", 2)
    real = staff_jobs.KINDS["approvals"].run

    def block_one_then_run(job, progress):
        # The worker of the third is blocked after the list was read: its part of 2 refuses.
        from annotation.selectors import batches

        listed = list(batches.unflagged_submitted_assignment_ids(project=project))
        with mock.patch.object(batches, "unflagged_submitted_assignment_ids",
                               return_value=listed):
            Worker.objects.filter(pk=fine[2].worker_id).update(is_blocked=True)
            return real(job, progress)

    monkeypatch.setitem(staff_jobs.KINDS, "approvals", staff_jobs.JobKind(
        check=staff_jobs.KINDS["approvals"].check, run=block_one_then_run))
    response = staff_client.post(f"/staff/review/{project.slug}/assignments/approve/", {},
                                 follow=True)
    page = response.content.decode()
    assert "3 assignment(s) approved" in page
    assert "2 not approved, changed since they were listed: a bulk approval never pays a " \
        "blocked worker" in page
    assert statuses(fine) == ["approved", "approved", "submitted", "submitted", "approved"]


def test_bad_approval_parameters_start_nothing():
    project = sluice_project(items=1)
    for params in ({"message": 3}, {"everything": True}):
        with pytest.raises(staff_jobs.JobRefused):
            staff_jobs.job_start(kind="approvals", project=project, params=params)
    assert not Job.objects.exists()


def test_the_command_runs_the_jobs_service_with_a_progress_bar(monkeypatch):
    """``review approve --all-pending`` approves what the job approves (never the flagged,
    blocked or unconfirmed), through the same service, reporting progress as it goes."""
    from io import StringIO

    from django.core.management import CommandError, call_command

    from annotation.management.commands import review
    from annotation.services import decisions

    project, fine, flagged, blocked, unconfirmed = world()
    reports, calls = [], []
    real_bar, real_service = review.ProgressBar, decisions.unflagged_assignments_approve

    class RecordingBar(real_bar):
        def __call__(self, done, total=None, message=""):
            reports.append((done, total, message))
            super().__call__(done, total, message)

    def spy(**kwargs):
        calls.append(kwargs["project"].slug)
        return real_service(**kwargs)

    monkeypatch.setattr(review, "ProgressBar", RecordingBar)
    monkeypatch.setattr(decisions, "unflagged_assignments_approve", spy)
    out = StringIO()
    call_command("review", "approve", "--all-pending", "--project", project.slug, stdout=out)
    assert calls == [project.slug]
    assert reports[0] == (0, 5, "approving") and reports[-1] == (5, 5, "approving")
    assert out.getvalue() == (f"{project.slug}: 5 assignment(s) approved; held back: 1 of "
                              "blocked workers, 1 not yet confirmed by collection\n")
    for assignment in fine:
        assignment.refresh_from_db()
        assert assignment.status == Assignment.Status.APPROVED
    for assignment in (flagged, blocked, unconfirmed):
        assignment.refresh_from_db()
        assert assignment.status == Assignment.Status.SUBMITTED
    with pytest.raises(CommandError, match="may be approved in bulk"):
        call_command("review", "approve", "--all-pending", stdout=StringIO())
