"""Throttled publishing on a real Celery worker (Redis, PostgreSQL): every provider call is
retried where it failed inside the job (annotation/providers/retry.py), so a launch throttled
on one call in three publishes everything without the job starting over. (Prolific's case is
in test_prolific_e2e.py, beside its worker.)"""

from __future__ import annotations

import pytest

from annotation.models import Batch
from tests.factories import batch_plausibility_project, launched_batch
from tests.integration.conftest import wait_for, wait_for_idle_worker

pytestmark = pytest.mark.integration

HITS = 110


def test_110_hits_publish_on_the_worker_with_one_call_in_three_throttled(mturk, simulator):
    simulator.throttle_every(3)
    batch = launched_batch(batch_plausibility_project(items=HITS), items_per_hit=1,
                           assignments=1)
    wait_for(lambda: Batch.objects.get(pk=batch.pk).status == Batch.Status.PUBLISHED,
             timeout=120, what="110 HITs published through throttling")
    wait_for_idle_worker()
    batch.refresh_from_db()
    assert batch.error == ""
    assert batch.hits.filter(provider_hit_id__isnull=False).count() == HITS
    assert len(mturk.world.hits) == HITS
    # One job run: the HIT type was made once (a restarted job would have asked again).
    assert simulator.stats()["calls"]["CreateHITType"] <= 2
