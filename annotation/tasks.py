"""Celery tasks: thin and idempotent. Each takes ids, calls one service and is safe to run
twice (the services compare-and-set and send provider request tokens).

Retries come in two layers. Every provider call is retried where it failed, with backoff that
honours Retry-After (``annotation.providers.retry``), in every mode, so a throttled job never
starts over and repeats its reads. What escapes that (its bounded retries ran out) is retried
here by the job, on a worker only; permanent errors are recorded by the services and not
retried. Inline (no broker, ``CELERY_TASK_ALWAYS_EAGER``) a job runs inside the request or
command that queued it and is not retried again: the error stays on its row, saying so, and
"Resume publishing" or ``launch_batch --resume`` tries again; the periodic
``resume_unfinished_work`` job covers a killed worker. Services enqueue these by name
(``annotation.services.jobs``); nothing imports this module but Celery.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError

from .providers import ProviderThrottled, ProviderTransientError
from .selectors.outbox import unfinished_work
from .services import decisions, staff_jobs, statistics
from .services.batches import collect, decide, publish

logger = logging.getLogger(__name__)

RETRYABLE_PROVIDER_ERRORS = (ProviderThrottled, ProviderTransientError)


class ProviderJob(Task):
    """Retried with backoff on throttled/transient provider errors that outlasted the
    provider's own call-level retries, on a worker only."""

    autoretry_for = RETRYABLE_PROVIDER_ERRORS
    retry_backoff = True  # 1 s, 2 s, 4 s ... with jitter
    retry_backoff_max = 600
    retry_jitter = True
    max_retries = 8

    def retry(self, *args, exc=None, **kwargs):
        if self.request.is_eager and exc is not None:
            raise exc  # inline: no sleeping retries inside a web request
        wait = getattr(exc, "retry_after_seconds", None)
        if isinstance(exc, ProviderThrottled) and wait:
            # The provider said how long to wait (HTTP Retry-After): never retry sooner.
            kwargs["countdown"] = max(float(kwargs.get("countdown") or 0), float(wait))
        return super().retry(*args, exc=exc, **kwargs)


@shared_task(name="annotation.tasks.publish_batch", base=ProviderJob)
def publish_batch(batch_id: int) -> str:
    return publish.batch_publish(batch_id=batch_id).status


@shared_task(name="annotation.tasks.collect_batch", base=ProviderJob)
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


@shared_task(name="annotation.tasks.resume_unfinished_work")
def resume_unfinished_work() -> dict | None:
    """Periodic (celery beat): send again every job whose work is recorded but unfinished
    (a worker killed mid-publish, a broker that was down when the job was queued); None when
    this period's turn was taken already (``beat_turn_take``)."""
    if not beat_turn_take("resume-unfinished-work"):
        return None
    work = unfinished_work(quiet_for_seconds=settings.UNPACK_RESUME_QUIET_SECONDS)
    for batch_id in work.batch_ids:
        publish_batch.delay(batch_id)
    for assignment_id in work.assignment_ids:
        sync_assignment_decision.delay(assignment_id)
    for bonus_id in work.bonus_ids:
        send_bonus.delay(bonus_id)
    for worker_id in work.worker_ids:
        sync_worker_block.delay(worker_id)
    return {"batches": work.batch_ids, "assignments": work.assignment_ids,
            "bonuses": work.bonus_ids, "workers": work.worker_ids}


@shared_task(name="annotation.tasks.refresh_planner_statistics")
def refresh_planner_statistics() -> list[str] | None:
    """Periodic (celery beat): ANALYZE the hot tables that grew (PostgreSQL); None when this
    period's turn was taken already (``beat_turn_take``)."""
    if not beat_turn_take("refresh-planner-statistics"):
        return None
    return statistics.planner_statistics_refresh_grown()


@shared_task(name="annotation.tasks.sync_assignment_decision", base=ProviderJob)
def sync_assignment_decision(assignment_id: int) -> bool:
    return decisions.assignment_sync_decision(assignment_id=assignment_id)


@shared_task(name="annotation.tasks.sync_assignment_decisions", base=ProviderJob)
def sync_assignment_decisions(assignment_ids: list[int]) -> int:
    return decisions.assignments_sync_decisions(assignment_ids=assignment_ids)


@shared_task(name="annotation.tasks.send_bonus", base=ProviderJob)
def send_bonus(bonus_id: int) -> bool:
    return decisions.bonus_send(bonus_id=bonus_id).sent_at is not None


@shared_task(name="annotation.tasks.sync_worker_block", base=ProviderJob)
def sync_worker_block(worker_id: int) -> bool:
    return decisions.worker_sync_block(worker_id=worker_id)


@shared_task(name="annotation.tasks.expire_hit", base=ProviderJob)
def expire_hit(hit_id: int) -> None:
    decide.hit_expire(hit_id=hit_id)


def _hit_status_change(job: str, change, hit_id: int) -> str:
    """Run ``change`` (pause or resume) on the HIT: its new status, or why it was refused."""
    try:
        return change(hit_id=hit_id).status
    except ValidationError as error:  # the study moved on meanwhile: nothing to retry
        # The job's name in the template itself: the log record is each job's own, as before.
        logger.warning(f"{job} %s: %s", hit_id, "; ".join(error.messages))
        return "; ".join(error.messages)


@shared_task(name="annotation.tasks.pause_hit", base=ProviderJob)
def pause_hit(hit_id: int) -> str:
    return _hit_status_change("pause_hit", decide.hit_pause, hit_id)


@shared_task(name="annotation.tasks.resume_hit", base=ProviderJob)
def resume_hit(hit_id: int) -> str:
    return _hit_status_change("resume_hit", decide.hit_resume, hit_id)


@shared_task(name="annotation.tasks.extend_hit", base=ProviderJob)
def extend_hit(hit_id: int, seconds: int) -> None:
    decide.hit_extend(hit_id=hit_id, seconds=seconds)


@shared_task(bind=True, name="annotation.tasks.add_assignments", base=ProviderJob)
def add_assignments(self, hit_id: int, count: int) -> int:
    # The job id survives Celery retries, so it is the UniqueRequestToken of this request.
    return decide.hit_add_assignments(hit_id=hit_id, count=count,
                                       request_token=self.request.id or "").max_assignments


@shared_task(bind=True, name="annotation.tasks.adapt_places", base=ProviderJob)
def adapt_places(self, hit_id: int) -> int:
    # The job id survives Celery retries: the UniqueRequestToken of the places it adds.
    return decide.hit_places_adapt(hit_id=hit_id, request_token=self.request.id or "")


@shared_task(name="annotation.tasks.notify_workers", base=ProviderJob)
def notify_workers(project_id: int, worker_ids: list[int], subject: str, message: str
                   ) -> list[str]:
    return decide.workers_notify(project_id=project_id, worker_ids=worker_ids,
                                  subject=subject, message=message)


@shared_task(name="annotation.tasks.run_staff_job")
def run_staff_job(job_id: int) -> str:
    """Run one staff job (QC, export, …): ``services.staff_jobs.job_run`` records its
    progress and outcome on the row; a second delivery finds it claimed and does nothing."""
    return staff_jobs.job_run(job_id=job_id)
