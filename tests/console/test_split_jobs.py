"""Freezing a split from the console is a ``splits`` job (issue 21): inline it has finished
when the page answers and says what it did; with a worker the page goes to the job, two clicks
start one job, and its progress (items moved) is visible while the split's transaction runs;
``make_splits`` reports through the same service."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.db.models import Count

from annotation.management.commands import make_splits
from annotation.models import Item, Job, Project, SplitManifest
from annotation.services import job_progress, staff_jobs
from tests.factories import plausibility_project

pytestmark = pytest.mark.django_db

FREEZE = {"rule": "group", "seed": "7", "train": "0.5", "dev": "0.25", "test": "0.25",
          "freeze": "yes"}


def split_counts() -> dict[str, int]:
    return dict(Item.objects.order_by().values("split").annotate(n=Count("id"))
                .values_list("split", "n"))


def test_inline_freeze_runs_the_job_and_says_what_it_moved(staff_client, monkeypatch):
    project = plausibility_project(items=20, split="train")
    reports = []
    real = job_progress.job_report_progress
    monkeypatch.setattr(job_progress, "PROGRESS_EVERY_SECONDS", 0.0)

    def spy(**kwargs):
        reports.append((kwargs["done"], kwargs["total"], kwargs["message"]))
        real(**kwargs)

    monkeypatch.setattr(job_progress, "job_report_progress", spy)
    response = staff_client.post(f"/staff/projects/{project.slug}/splits/", FREEZE,
                                 follow=True)
    job = Job.objects.get(kind="splits")
    manifest = SplitManifest.objects.get()
    assert job.state == "done" and job.result["manifest"] == manifest.pk
    assert response.redirect_chain[-1][0] == (
        f"/staff/projects/{project.slug}/splits/{manifest.pk}/")
    moved = 20 - split_counts()["train"]
    assert moved > 0 and job.result["moved_items"] == moved
    assert split_counts() == manifest.counts == job.result["counts"]
    counts = ", ".join(f"{split} {n}" for split, n in manifest.counts.items())
    summary = f"Split frozen ({counts}); {moved} item(s) moved."
    assert summary in response.content.decode()
    # Progress: the assignment, then items moved out of the items to move, then freezing.
    assert reports[0] == (0, None, "assigning the items by the group rule")
    assert reports[-1] == (moved, moved, "freezing the manifest")
    assert (moved, moved, "moving items (dev)") in reports or \
        (moved, moved, "moving items (test)") in reports
    assert job.progress_done == job.progress_total == moved
    page = staff_client.get(f"/staff/jobs/{job.pk}/").content.decode()
    assert summary in page and f"/staff/projects/{project.slug}/splits/{manifest.pk}/" in page
    # The same choices again: the job says nothing changed, and nothing moves.
    again = staff_client.post(f"/staff/projects/{project.slug}/splits/", FREEZE, follow=True)
    assert "Unchanged: the frozen manifest is this split already." in again.content.decode()
    assert SplitManifest.objects.count() == 1


def test_with_a_worker_two_clicks_start_one_job_and_the_page_follows_it(
        with_broker, staff_client):
    project = plausibility_project(items=12, split="train")
    first = staff_client.post(f"/staff/projects/{project.slug}/splits/", FREEZE)
    job = Job.objects.get(kind="splits")
    assert first.status_code == 302 and first["Location"] == f"/staff/jobs/{job.pk}/"
    assert job.state == "queued" and split_counts() == {"train": 12}  # nothing in the request
    second = staff_client.post(f"/staff/projects/{project.slug}/splits/", FREEZE, follow=True)
    assert Job.objects.filter(kind="splits").count() == 1
    assert f"This split is already queued (job {job.pk}); it was not started a second " \
        "time." in second.content.decode()
    assert staff_jobs.job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert job.result["counts"] == split_counts() == SplitManifest.objects.get().counts
    progress = staff_client.get(f"/staff/jobs/{job.pk}/progress/").json()
    assert progress["state"] == "done" and progress["percent"] == 100


def test_a_refused_split_fails_its_job_and_moves_nothing(staff_client):
    project = plausibility_project(items=4, split="train")
    staff_client.post(f"/staff/projects/{project.slug}/splits/", FREEZE)
    before = split_counts()
    manifest = SplitManifest.objects.get()
    other = {**FREEZE, "seed": "8"}
    response = staff_client.post(f"/staff/projects/{project.slug}/splits/", other)
    assert response.status_code == 200
    assert "has a frozen split manifest" in response.content.decode()
    assert Job.objects.filter(kind="splits", state="failed").count() == 1
    assert SplitManifest.objects.get(frozen=True) == manifest and split_counts() == before


def test_bad_split_parameters_start_nothing():
    project = plausibility_project(items=2)
    good = {"rule": "group", "seed": 1, "fractions": {"train": 1, "dev": 0, "test": 0}}
    for params in ({**good, "rule": "nope"}, {**good, "seed": "1"}, {**good, "seed": True},
                   {**good, "fractions": {"train": 1}},
                   {**good, "fractions": {"train": -1, "dev": 1, "test": 1}},
                   {**good, "fractions": {"train": 0, "dev": 0, "test": 0}},
                   {**good, "colour": "red"}):
        with pytest.raises(staff_jobs.JobRefused):
            staff_jobs.job_start(kind="splits", project=project, params=params)
    assert not Job.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="SQLite has one writer: the progress waits for the commit there")
def test_progress_is_visible_while_the_split_transaction_is_open():
    project = Project.objects.create(slug="visible", name="Visible", kind="plausibility")
    job = Job.objects.create(kind="splits", project=project, params={}, params_key="k",
                             state="running")
    observer = connections.create_connection("default")
    try:
        with transaction.atomic(), job_progress.CommittedProgress(job.pk, every=0) as progress:
            Item.objects.filter(project=project).update(split="dev")  # the split's work
            progress(3, 10, "moving items (dev)")
            with observer.cursor() as cursor:
                cursor.execute("SELECT progress_done, progress_total, progress_message "
                               "FROM annotation_job WHERE id = %s", [job.pk])
                assert cursor.fetchone() == (3, 10, "moving items (dev)")
    finally:
        observer.close()


def test_make_splits_reports_through_the_same_service(monkeypatch, capsys):
    project = plausibility_project(items=10, split="train")
    heard = []

    class Recorder:
        def __init__(self, description, **kwargs):
            heard.append(description)

        def __call__(self, done, total=None, message=""):
            heard.append((done, total, message))

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            return None

    monkeypatch.setattr(make_splits, "ProgressBar", Recorder)
    call_command("make_splits", project.slug, "--rule", "group", "--seed", "7",
                 "--fractions", "0.5,0.25,0.25")
    moved = 10 - split_counts()["train"]
    assert heard[0] == f"split {project.slug} (group)"
    assert heard[-1] == (moved, moved, "freezing the manifest")
    assert f"{moved} item(s) moved" in capsys.readouterr().out
