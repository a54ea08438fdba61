"""A Celery worker killed (SIGKILL) in the middle of publishing a batch: a second worker with
celery beat finishes it through ``resume_unfinished_work`` -- every HIT published within a
bounded time, none twice. (Issue 11, point 3: before, the job sat unacknowledged in Redis for
the 3,600 s visibility timeout and nothing republished unfinished batches.)"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from annotation.celery import app as celery_app
from annotation.models import Batch, Hit
from annotation.services.batches.plan import LaunchOptions, batch_launch, batch_plan
from tests.factories import batch_plausibility_project
from tests.integration.conftest import service_environment, start_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True)]

HITS = 300
RECOVERY_BOUND_SECONDS = 60  # quiet period 3 s + beat every 1 s + the rest of the HITs


def published() -> int:
    return Hit.objects.filter(provider_hit_id__isnull=False).count()


def test_a_worker_killed_mid_publish_is_resumed_without_duplicates(
        celery_worker, mturk, integration_services, django_db_blocker):
    project = batch_plausibility_project(items=HITS, redundancy={"train": 1, "dev": 1, "test": 1})
    options = LaunchOptions(title="Rate fillers", reward_cents=5, items_per_hit=1,
                            splits=("dev",))
    plan = batch_plan(project=project, options=options)
    batch = batch_launch(project=project, options=options,
                         confirmed_total_cents=plan.estimate.total_cents)
    wait_for(lambda: published() >= 20, timeout=60, what="the first HITs to be published")
    os.kill(celery_worker.pid, signal.SIGKILL)
    celery_worker.wait(timeout=10)
    at_kill = published()
    assert at_kill < HITS, "the worker finished before it could be killed; raise HITS"

    schedule = Path(tempfile.mkdtemp(prefix="celerybeat-")) / "schedule"
    # (The killed worker's job is dropped with the queue here: only the periodic job remains.)
    env = {**service_environment(integration_services, django_db_blocker, mturk),
           "UNPACK_RESUME_QUIET_SECONDS": "3", "UNPACK_RESUME_EVERY_SECONDS": "1"}
    rescuer, log_path = start_worker(env, "-B", "-s", str(schedule))
    started = time.monotonic()
    try:
        wait_for(lambda: celery_app.control.ping(timeout=0.5), timeout=60,
                 what="the second worker")
        wait_for(lambda: Batch.objects.get(pk=batch.pk).status == Batch.Status.PUBLISHED,
                 timeout=RECOVERY_BOUND_SECONDS, what="the batch to be published again")
        took = time.monotonic() - started
    finally:
        rescuer.terminate()
        try:
            rescuer.wait(timeout=15)
        except subprocess.TimeoutExpired:
            rescuer.kill()
            rescuer.wait()
        if os.environ.get("UNPACK_KEEP_WORKER_LOG") != "1":
            os.unlink(log_path)
    assert published() == HITS
    remote_hits = mturk.world.hits
    assert len(remote_hits) == HITS, "a HIT was created twice at MTurk"
    ours = Counter(Hit.objects.values_list("provider_hit_id", flat=True))
    assert set(ours) == set(remote_hits) and max(ours.values()) == 1
    print(f"killed at {at_kill}/{HITS} HITs; all published {took:.1f} s after the restart")
