"""A QC job run by a real Celery worker: the page's request only queues it, the worker
claims it, reports progress and stores the report and the flags; the job's page and progress
endpoint say so."""

from __future__ import annotations

import pytest

from annotation.models import Flag, Job
from annotation.services.qc import QC_STEPS
from tests.factories import annotate, claire_sample, workers
from tests.integration.conftest import wait_for

pytestmark = [pytest.mark.integration]

WARNED = [{"code": "too_quick", "message": "You answered quickly."}]


def test_a_qc_job_runs_to_done_on_a_real_worker(celery_worker, transactional_db,
                                                staff_user, client):
    project, items = claire_sample()
    crowd = workers(3)
    for worker in crowd:
        for k, item in enumerate(items):
            annotate(item, worker, rating=1 + (k + worker.pk) % 5,
                     overridden_warnings=WARNED if k == 0 else [])
    client.force_login(staff_user)
    response = client.post(f"/staff/review/{project.slug}/qc/")
    job = Job.objects.get(kind="qc", project=project)
    # The request queued the job and sent the reviewer to its page; the worker runs it.
    assert response.status_code == 302 and response["Location"] == f"/staff/jobs/{job.pk}/"
    done = wait_for(lambda: Job.objects.filter(pk=job.pk, state__in=("done", "failed"))
                    .first(), timeout=90, what="the QC job to finish on the worker")
    assert done.state == "done", done.error
    assert done.progress_done == done.progress_total == len(QC_STEPS)
    assert done.result["flags_raised"]["warning_overridden"] == 3
    assert Flag.objects.filter(project=project, reason="warning_overridden").count() == 3
    progress = client.get(f"/staff/jobs/{job.pk}/progress/").json()
    assert progress["state"] == "done" and progress["finished"] and progress["percent"] == 100
    page = client.get(f"/staff/jobs/{job.pk}/").content.decode()
    assert "QC ran on 15 annotations" in page
