"""Celery tasks: thin and idempotent. Each takes ids, calls one service in
``annotation.services.batches`` and is safe to run twice (the services compare-and-set and send
MTurk request tokens). Throttled and transient provider errors are retried with exponential
backoff; permanent ones are recorded by the services and not retried.

Enqueue them with ``transaction.on_commit`` (the services do) so a worker never looks for rows
that are not committed yet.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from .providers import ProviderThrottled, ProviderTransientError
from .services import statistics
from .services.batches import collect, decide, publish

logger = logging.getLogger(__name__)

RETRYABLE_PROVIDER_ERRORS = (ProviderThrottled, ProviderTransientError)
PROVIDER_TASK_OPTIONS = {
    "autoretry_for": RETRYABLE_PROVIDER_ERRORS,
    "retry_backoff": True,  # 1 s, 2 s, 4 s ... with jitter
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": 8,
}


@shared_task(name="annotation.tasks.publish_batch", **PROVIDER_TASK_OPTIONS)
def publish_batch(batch_id: int) -> str:
    return publish.batch_publish(batch_id=batch_id).status


@shared_task(name="annotation.tasks.collect_batch", **PROVIDER_TASK_OPTIONS)
def collect_batch(batch_id: int) -> dict:
    result = collect.batch_collect(batch_id=batch_id)
    return {"assignments_created": result.assignments_created,
            "annotations_created": result.annotations_created,
            "invalid_answers": result.invalid_answers}


def beat_turn_take(entry: str) -> bool:
    """True for the first run of beat entry ``entry`` in 0.9 × its period, False for others.

    A deployment runs one beat; should two run (``worker -B`` on every machine), the shared
    cache still lets each periodic job run once per period: the first run takes the turn
    (an atomic add), the other beat's runs within the period find it taken. Without a shared
    cache there is one process, and the guard is per process.
    """
    period = float(settings.CELERY_BEAT_SCHEDULE[entry]["schedule"])
    return cache.add(f"beat-turn:{entry}", 1, timeout=period * 0.9)


@shared_task(name="annotation.tasks.collect_open_batches")
def collect_open_batches() -> list[int] | None:
    """Periodic (celery beat): one ``collect_batch`` job per open MTurk batch; None when this
    period's turn was taken already (``beat_turn_take``)."""
    if not beat_turn_take("collect-open-batches"):
        return None
    batch_ids = collect.open_batch_ids()
    for batch_id in batch_ids:
        collect_batch.delay(batch_id)
    return batch_ids


@shared_task(name="annotation.tasks.refresh_planner_statistics")
def refresh_planner_statistics() -> list[str] | None:
    """Periodic (celery beat): ANALYZE the hot tables that grew (PostgreSQL); None when this
    period's turn was taken already (``beat_turn_take``)."""
    if not beat_turn_take("refresh-planner-statistics"):
        return None
    return statistics.planner_statistics_refresh_grown()


@shared_task(name="annotation.tasks.sync_assignment_decision", **PROVIDER_TASK_OPTIONS)
def sync_assignment_decision(assignment_id: int) -> bool:
    return decide.assignment_sync_decision(assignment_id=assignment_id)


@shared_task(name="annotation.tasks.send_bonus", **PROVIDER_TASK_OPTIONS)
def send_bonus(bonus_id: int) -> bool:
    return decide.bonus_send(bonus_id=bonus_id).sent_at is not None


@shared_task(name="annotation.tasks.sync_worker_block", **PROVIDER_TASK_OPTIONS)
def sync_worker_block(worker_id: int) -> bool:
    return decide.worker_sync_block(worker_id=worker_id)


@shared_task(name="annotation.tasks.expire_hit", **PROVIDER_TASK_OPTIONS)
def expire_hit(hit_id: int) -> None:
    decide.hit_expire(hit_id=hit_id)


@shared_task(name="annotation.tasks.extend_hit", **PROVIDER_TASK_OPTIONS)
def extend_hit(hit_id: int, seconds: int) -> None:
    decide.hit_extend(hit_id=hit_id, seconds=seconds)


@shared_task(bind=True, name="annotation.tasks.add_assignments", **PROVIDER_TASK_OPTIONS)
def add_assignments(self, hit_id: int, count: int) -> int:
    # The job id survives Celery retries, so it is the UniqueRequestToken of this request.
    return decide.hit_add_assignments(hit_id=hit_id, count=count,
                                       request_token=self.request.id or "").max_assignments


@shared_task(name="annotation.tasks.notify_workers", **PROVIDER_TASK_OPTIONS)
def notify_workers(project_id: int, worker_ids: list[int], subject: str, message: str
                   ) -> list[str]:
    return decide.workers_notify(project_id=project_id, worker_ids=worker_ids,
                                  subject=subject, message=message)
