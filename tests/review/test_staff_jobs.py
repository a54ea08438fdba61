"""Staff jobs (``annotation.services.staff_jobs``, ``frontend/staff_jobs.py``): two starts make
one job, progress and the final state are recorded truthfully inline, a failure is recorded
and shown, and a job's page and download need the permission of the page that started it."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth.models import Permission
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from annotation.exporters import export_project
from annotation.models import Flag, Job
from annotation.services import staff_jobs
from annotation.services.qc import QC_STEPS, project_qc_run
from tests.factories import annotate, claire_sample, workers

pytestmark = pytest.mark.django_db


def rated_project():
    project, items = claire_sample()
    crowd = workers(3)
    for worker in crowd:
        for k, item in enumerate(items):
            annotate(item, worker, rating=1 + (k + worker.pk) % 5, duration_ms=900 * (k + 1),
                     overridden_warnings=[{"code": "too_quick", "message": "fast"}]
                     if k == 0 else [])
    return project


def test_two_starts_make_one_job(with_broker, staff_user):
    project = rated_project()
    first = staff_jobs.job_start(kind="qc", project=project, user=staff_user)
    second = staff_jobs.job_start(kind="qc", project=project, user=staff_user)
    assert first.created and not second.created
    assert second.job.pk == first.job.pk
    assert Job.objects.count() == 1 and first.job.state == "queued"
    # The queued job's wake-up is sent again (a lost one is replaced); running it twice is
    # harmless: the second delivery finds it claimed.
    assert with_broker == [(staff_jobs.TASK_NAME, first.job.pk)] * 2
    assert staff_jobs.job_run(job_id=first.job.pk) == "done"
    assert staff_jobs.job_run(job_id=first.job.pk) == "done"
    # Other parameters are another job; once done, a new start is a new job.
    other = staff_jobs.job_start(kind="export", project=project, params={"format": "jsonl"})
    again = staff_jobs.job_start(kind="qc", project=project)
    assert other.created and again.created and Job.objects.count() == 3


def test_the_database_refuses_a_second_active_job(with_broker):
    project = rated_project()
    job = staff_jobs.job_start(kind="qc", project=project).job
    with pytest.raises(IntegrityError), transaction.atomic():
        Job.objects.create(kind="qc", project=project, params=job.params,
                           params_key=job.params_key, state="running")


def test_the_page_says_when_a_job_was_already_running(with_broker, staff_client):
    project = rated_project()
    first = staff_client.post(f"/staff/review/{project.slug}/qc/")
    job = Job.objects.get()
    assert first["Location"] == f"/staff/jobs/{job.pk}/"
    page = staff_client.post(f"/staff/review/{project.slug}/qc/", follow=True).content.decode()
    assert Job.objects.count() == 1
    assert f"already queued (job {job.pk}); it was not started a second time" in page
    assert 'data-state="queued"' in page and "frontend/staff/job.js" in page


def test_a_dead_running_job_is_replaced_and_says_why(with_broker, settings):
    project = rated_project()
    job = staff_jobs.job_start(kind="qc", project=project).job
    long_ago = timezone.now() - timedelta(seconds=settings.UNPACK_JOB_STALE_SECONDS + 60)
    Job.objects.filter(pk=job.pk).update(state="running", heartbeat_at=long_ago)
    started = staff_jobs.job_start(kind="qc", project=project)
    assert started.created and started.job.pk != job.pk
    job.refresh_from_db()
    assert job.state == "failed" and "stopped reporting progress" in job.error


def test_inline_qc_job_records_every_step_and_the_report(staff_user, monkeypatch):
    project = rated_project()
    reports = []
    real = staff_jobs.job_report_progress
    monkeypatch.setattr(staff_jobs, "PROGRESS_EVERY_SECONDS", 0.0)

    def spy(**kwargs):
        reports.append((kwargs["done"], kwargs["total"], kwargs["message"],
                        Job.objects.get(pk=kwargs["job_id"]).state))
        real(**kwargs)

    monkeypatch.setattr(staff_jobs, "job_report_progress", spy)
    job = staff_jobs.job_start(kind="qc", project=project, user=staff_user).job
    assert job.state == "done" and job.error == ""
    assert job.started_at and job.finished_at and job.finished_at >= job.started_at
    assert [message for _, _, message, _ in reports] == [*QC_STEPS[:4], "storing flags",
                                                         "done"]
    assert all(state == "running" for *_, state in reports)  # reported while it ran
    assert job.progress_done == job.progress_total == len(QC_STEPS)
    # The stored report is the service's (run again without storing: the same figures).
    again = project_qc_run(project=project, store_flags=False)
    assert job.result["agreement"] == json.loads(json.dumps(again["agreement"]))
    assert job.result["flags_stored"]["created"] == Flag.objects.filter(project=project).count()


def test_a_failure_is_recorded_and_shown(staff_client):
    project = rated_project()
    project.flag_settings = {"no_such_threshold": 1}
    project.save(update_fields=["flag_settings"])
    job = staff_jobs.job_start(kind="qc", project=project).job
    assert job.state == "failed" and "no_such_threshold" in job.error
    page = staff_client.get(f"/staff/jobs/{job.pk}/").content.decode()
    assert "This job failed:" in page and "no_such_threshold" in page
    progress = staff_client.get(f"/staff/jobs/{job.pk}/progress/").json()
    assert progress["state"] == "failed" and progress["finished"]
    assert "no_such_threshold" in progress["error"] and progress["download"] is None
    assert not Flag.objects.exists()


def test_an_unexpected_error_fails_the_job_not_the_request(staff_client, monkeypatch):
    project = rated_project()

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(staff_jobs.KINDS, "qc", staff_jobs.JobKind(
        check=staff_jobs.KINDS["qc"].check, run=broken))
    response = staff_client.post(f"/staff/review/{project.slug}/qc/", follow=True)
    assert response.status_code == 200
    job = Job.objects.get()
    assert job.state == "failed"
    assert job.error.startswith("unexpected error (RuntimeError: disk on fire)")
    assert "QC did not run: unexpected error (RuntimeError: disk on fire)" in \
        response.content.decode()


def test_bad_parameters_start_nothing():
    project = rated_project()
    for kind, params in (("qc", {"nonsense": 1}), ("export", {"format": "canard"}),
                         ("export", {}), ("import", {})):
        with pytest.raises(staff_jobs.JobRefused):
            staff_jobs.job_start(kind=kind, project=project, params=params)
    assert not Job.objects.exists()


def test_the_export_job_zips_what_export_data_writes(staff_client, tmp_path):
    project = rated_project()
    job = staff_jobs.job_start(kind="export", project=project, params={"format": "claire"}).job
    assert job.state == "done" and Path(job.result_path).is_file()
    assert job.progress_done == job.progress_total == 9  # three files per split
    expected = export_project(project=project, format_name="claire", out_dir=tmp_path)
    response = staff_client.get(f"/staff/jobs/{job.pk}/download/")
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        # the dataset's files, and the MANIFEST.json every export download carries
        assert sorted(archive.namelist()) == sorted(
            [Path(f.path).name for f in expected] + ["MANIFEST.json"])
        for file in expected:
            assert archive.read(Path(file.path).name) == Path(file.path).read_bytes()
    assert [f["records"] for f in job.result["files"]] == [f.records for f in expected]


def test_job_pages_need_the_permission_of_the_page_that_started_them(
        staff_client, annotator_user, django_user_model):
    project = rated_project()
    qc = staff_jobs.job_start(kind="qc", project=project).job
    export = staff_jobs.job_start(kind="export", project=project,
                                  params={"format": "jsonl"}).job
    # May see the work (the export page) but not run QC (decide_flags).
    viewer = django_user_model.objects.create_user(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_annotation"))
    viewer_client = Client()
    viewer_client.force_login(viewer)
    annotator_client = Client()
    annotator_client.force_login(annotator_user)
    assert viewer_client.get(f"/staff/jobs/{export.pk}/download/").status_code == 200
    for url in (f"/staff/jobs/{qc.pk}/", f"/staff/jobs/{qc.pk}/progress/"):
        assert viewer_client.get(url).status_code == 403
        assert staff_client.get(url).status_code == 200
    for url in (f"/staff/jobs/{export.pk}/", f"/staff/jobs/{export.pk}/download/"):
        assert annotator_client.get(url).status_code == 403
        anonymous = Client().get(url)
        assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    # A QC job has no file; a file outside the jobs folder is never served.
    assert staff_client.get(f"/staff/jobs/{qc.pk}/download/").status_code == 404
    Job.objects.filter(pk=export.pk).update(result_path="/etc/passwd")
    assert staff_client.get(f"/staff/jobs/{export.pk}/download/").status_code == 404


def test_export_runs_on_disk_not_in_memory(staff_client):
    """The request answers a redirect, never the file: the zip is on disk, served by the
    download URL as a stream."""
    project = rated_project()
    with mock.patch("zipfile.ZipFile.writestr") as in_memory:
        response = staff_client.post(f"/staff/review/{project.slug}/export/",
                                     {"format": "jsonl"})
    # Only the small MANIFEST.json is written from memory; the data files go from disk.
    assert [call.args[0] for call in in_memory.call_args_list] == ["MANIFEST.json"]
    assert response.status_code == 302 and not response.content
    job = Job.objects.get()
    download = staff_client.get(f"/staff/jobs/{job.pk}/download/")
    assert download.streaming and download["Content-Type"] == "application/zip"
