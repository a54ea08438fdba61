"""The console's export page starts the export as a job (issue 21, point 2): never built in
the request, one job however many clicks, inline with its result on the embedded default, the
job's page with a worker, and the download offered once it is done."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Job
from annotation.services import staff_jobs
from tests.factories import annotate, claire_sample, workers

pytestmark = pytest.mark.django_db


def rated_project():
    project, items = claire_sample()
    for worker in workers(2):
        for k, item in enumerate(items):
            annotate(item, worker, rating=1 + (k + worker.pk) % 5)
    return project


def test_inline_the_export_is_done_when_the_page_comes_back(staff_client):
    project = rated_project()
    url = f"/staff/projects/{project.slug}/export/"
    before = staff_client.get(url).content.decode()
    assert "none yet" in before and "Download" not in before
    response = staff_client.post(url, {"format": "jsonl"}, follow=True)
    job = Job.objects.get(kind="export")
    assert job.state == "done" and job.params == {"format": "jsonl"}
    page = response.content.decode()
    assert (f"Export jsonl done (job {job.pk}): 1 file, 10 records; the download is "
            "below.") in page
    assert f'href="/staff/jobs/{job.pk}/download/"' in page
    assert "annotations.jsonl" in page and "No warnings." in page
    download = staff_client.get(f"/staff/jobs/{job.pk}/download/")
    with zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))) as bundle:
        lines = bundle.read("annotations.jsonl").decode().splitlines()
        manifest = json.loads(bundle.read("MANIFEST.json"))
    assert len(lines) == 10 == manifest["files"][0]["records"]


def test_with_a_worker_the_page_starts_one_job_and_goes_to_its_page(with_broker,
                                                                    staff_client):
    project = rated_project()
    url = f"/staff/projects/{project.slug}/export/"
    first = staff_client.post(url, {"format": "claire"})
    job = Job.objects.get(kind="export")
    assert first.status_code == 302 and first.url == f"/staff/jobs/{job.pk}/"
    assert job.state == "queued"
    second = staff_client.post(url, {"format": "claire"}, follow=True)
    assert Job.objects.count() == 1
    assert (f"This export is already queued (job {job.pk}); it was not started a second "
            "time.") in second.content.decode()
    page = staff_client.get(url).content.decode()
    assert f"job {job.pk}</a>: queued" in page and "Download claire" not in page
    # The worker runs it; the page then offers the download.
    assert staff_jobs.job_run(job_id=job.pk) == "done"
    page = staff_client.get(url).content.decode()
    assert f'href="/staff/jobs/{job.pk}/download/" download data-format="claire"' in page


def test_a_format_the_project_has_not_starts_nothing(staff_client):
    project = rated_project()
    response = staff_client.post(f"/staff/projects/{project.slug}/export/",
                                 {"format": "decontext"}, follow=True)
    assert "has no export format &#x27;decontext&#x27;" in response.content.decode()
    assert not Job.objects.exists()


def test_a_failed_export_says_why(staff_client, monkeypatch):
    project = rated_project()

    def broken(job, progress):
        raise staff_jobs.JobError("The export failed: the disk is full")

    monkeypatch.setitem(staff_jobs.KINDS, "export", staff_jobs.JobKind(
        check=staff_jobs.KINDS["export"].check, run=broken))
    response = staff_client.post(f"/staff/projects/{project.slug}/export/",
                                 {"format": "jsonl"}, follow=True)
    job = Job.objects.get(kind="export")
    assert (f"The export failed (job {job.pk}): The export failed: the disk is full"
            in response.content.decode())


def test_the_page_reads_a_bounded_number_of_rows(staff_client):
    """One query per format for the latest jobs, however many exports ran."""
    project = rated_project()
    url = f"/staff/projects/{project.slug}/export/"
    staff_client.post(url, {"format": "jsonl"})
    staff_client.get(url)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(url)
    for _ in range(3):
        staff_client.post(url, {"format": "claire"})
        staff_client.post(url, {"format": "jsonl"})
    with CaptureQueriesContext(connection) as many:
        staff_client.get(url)
    assert len(many.captured_queries) == len(few.captured_queries)


def test_the_exports_last_progress_line_counts_its_files_and_records(tmp_path):
    from annotation.exporters import export_project

    project = rated_project()
    heard = []
    export_project(project=project, format_name="jsonl", out_dir=tmp_path,
                   progress=lambda done, total, message: heard.append((done, total, message)))
    assert heard[-1] == (1, 1, "1 file, 10 records")
