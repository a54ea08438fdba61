"""Work recorded in the database whose background job has not finished: the periodic
``resume_unfinished_work`` job sends each again (every job is idempotent)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from ..models import Assignment, Batch, Bonus, StatusEvent, Worker


@dataclass(frozen=True)
class UnfinishedWork:
    batch_ids: list[int]
    assignment_ids: list[int]
    bonus_ids: list[int]
    worker_ids: list[int]


def unfinished_work(*, quiet_for_seconds: int) -> UnfinishedWork:
    """Jobs to send again: publishing batches (and drafts) untouched for ``quiet_for_seconds``
    (a publish job touches its batch after every HIT, so a running one is left alone),
    decisions not yet synced, bonuses not yet paid, blocks not yet synced. Work whose last
    attempt failed for good (a recorded permanent error) waits for a person."""
    quiet_since = timezone.now() - timedelta(seconds=quiet_for_seconds)
    batches = Batch.objects.filter(
        status__in=(Batch.Status.DRAFT, Batch.Status.PUBLISHING), updated_at__lt=quiet_since)
    failed_sync = StatusEvent.objects.filter(assignment=OuterRef("pk"),
                                             kind="decision_sync_failed",
                                             at__gte=OuterRef("reviewed_at"))
    assignments = (Assignment.objects.filter(decision_synced=False, reviewed_at__lt=quiet_since)
                   .exclude(Exists(failed_sync)))
    # A bonus whose pay reply was lost (paying_started_at) is checked again against the
    # provider's list of payments, even while its error says so (decisions._bonus_settle).
    bonuses = Bonus.objects.filter(Q(error="") | Q(paying_started_at__isnull=False),
                                   sent_at__isnull=True, created_at__lt=quiet_since)
    workers = Worker.objects.filter(block_synced=False)
    return UnfinishedWork(
        batch_ids=list(batches.order_by("pk").values_list("pk", flat=True)),
        assignment_ids=list(assignments.order_by("pk").values_list("pk", flat=True)),
        bonus_ids=list(bonuses.order_by("pk").values_list("pk", flat=True)),
        worker_ids=list(workers.order_by("pk").values_list("pk", flat=True)),
    )
