"""The staff pages a researcher needs after launching: "Collect submitted work now" on the
batch page (the periodic job's ``collect_batch``, on demand) and the project's export page
(the ``export_data`` files as one zip, written by an export job)."""

from __future__ import annotations

import io
import zipfile
from unittest import mock

import pytest

from annotation.models import Assignment, Batch, Job
from tests.factories import annotate, claire_sample, prolific_study_hit, workers

pytestmark = pytest.mark.django_db


def test_collect_now_sends_the_collect_job_of_an_open_batch(staff_client):
    project, _items = claire_sample()
    hit = prolific_study_hit(project, study_id="study-1")
    batch = hit.batch
    page = staff_client.get(f"/staff/batches/{batch.pk}/").content.decode()
    assert "Collect submitted work now" in page
    assert "Session statuses" in page and "per place" in page  # Prolific's words
    with mock.patch("frontend.staff_batches.enqueue_now", return_value=True) as enqueue:
        page = staff_client.post(f"/staff/batches/{batch.pk}/collect/", follow=True)
    enqueue.assert_called_once_with("annotation.tasks.collect_batch", batch.pk)
    assert "Collection requested" in page.content.decode()

    with mock.patch("frontend.staff_batches.enqueue_now", return_value=False):
        page = staff_client.post(f"/staff/batches/{batch.pk}/collect/", follow=True)
    assert "Collection could not start now" in page.content.decode()


def test_collect_now_refuses_a_batch_with_nothing_to_collect(staff_client):
    project, _items = claire_sample()
    batch = prolific_study_hit(project, study_id="study-2").batch
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.CANCELLED)
    assert "Collect submitted work now" not in staff_client.get(
        f"/staff/batches/{batch.pk}/").content.decode()
    with mock.patch("frontend.staff_batches.enqueue_now") as enqueue:
        page = staff_client.post(f"/staff/batches/{batch.pk}/collect/", follow=True)
        assert staff_client.get(f"/staff/batches/{batch.pk}/collect/").status_code == 405
        assert staff_client.post("/staff/batches/999999/collect/").status_code == 404
    assert enqueue.call_count == 0
    assert "Nothing to collect: the batch is cancelled." in page.content.decode()


def test_annotators_cannot_collect(annotator_client):
    project, _items = claire_sample()
    batch = prolific_study_hit(project, study_id="study-3").batch
    with mock.patch("frontend.staff_batches.enqueue_now") as enqueue:
        response = annotator_client.post(f"/staff/batches/{batch.pk}/collect/")
    assert response.status_code == 403
    assert enqueue.call_count == 0


def test_export_page_offers_the_projects_formats_and_downloads_a_zip(staff_client):
    project, items = claire_sample()
    (worker,) = workers(1)
    annotate(items[0], worker, rating=4, review_status="approved")
    old_address = staff_client.get(f"/staff/review/{project.slug}/export/")
    assert old_address["Location"] == f"/staff/projects/{project.slug}/export/"
    page = staff_client.get(old_address["Location"]).content.decode()
    assert 'data-format="claire"' in page and 'data-format="jsonl"' in page
    assert 'data-format="canard"' not in page  # another kind's format is not offered
    # The export runs as a job (inline here: no broker); its page offers the zip.
    started = staff_client.post(f"/staff/review/{project.slug}/export/", {"format": "jsonl"})
    job = Job.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/staff/jobs/{job.pk}/"
    assert job.kind == "export" and job.state == "done" and job.params == {"format": "jsonl"}
    job_page = staff_client.get(started["Location"]).content.decode()
    assert f'href="/staff/jobs/{job.pk}/download/"' in job_page
    assert "annotations.jsonl" in job_page
    response = staff_client.get(f"/staff/jobs/{job.pk}/download/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert f'filename="{project.slug}-jsonl.zip"' in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        text = "".join(archive.read(name).decode() for name in archive.namelist())
    assert worker.external_id not in text and worker.anonymous_id in text


def test_export_page_refuses_an_unknown_or_foreign_format(staff_client):
    project, _items = claire_sample()
    for name in ("canard", "nonsense"):
        page = staff_client.post(f"/staff/review/{project.slug}/export/", {"format": name},
                                 follow=True).content.decode()
        assert f"has no export format &#x27;{name}&#x27;" in page
    assert staff_client.post("/staff/review/no-such-project/export/",
                             {"format": "jsonl"}).status_code == 404
    assert not Assignment.objects.exists()
    assert not Job.objects.exists()


def test_annotators_cannot_export(annotator_client):
    project, _items = claire_sample()
    response = annotator_client.post(f"/staff/review/{project.slug}/export/",
                                     {"format": "jsonl"})
    assert response.status_code == 403
    assert not Job.objects.exists()
