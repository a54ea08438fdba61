"""Decisions on collected work and on live HITs: approve/reject, bonuses, blocking, notifying
workers, expiring and extending HITs, adding assignments."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ...models import (
    Annotation,
    Assignment,
    Batch,
    Bonus,
    Hit,
    Worker,
)
from ...providers import (
    AnnotationProvider,
    ProviderPermanentError,
)
from ..annotations import annotations_set_review_status
from .common import (
    MAX_ASSIGNMENTS_PER_HIT,
    REMOTE_ASSIGNMENT_STATUS,
    enqueue_task,
    new_request_token,
    provider_for,
    provider_for_batch,
    record_status_event,
)

logger = logging.getLogger(__name__)


# --- Decisions ---------------------------------------------------------------------------------


@transaction.atomic
def assignment_decide(*, assignment_id: int, approve: bool, message: str = "",
                      reviewer=None) -> Assignment:
    """Record a reviewer's approve/reject and enqueue ``sync_assignment_decision``.

    Allowed from submitted, and between approved and rejected while the previous decision
    has not been synced or to override a rejection (MTurk lets an approval override it).
    A rejection needs a message: the worker reads it.
    """
    assignment = Assignment.objects.select_for_update().select_related("hit__batch").get(
        pk=assignment_id)
    new_status = Assignment.Status.APPROVED if approve else Assignment.Status.REJECTED
    if not approve and not message.strip():
        raise ValidationError({"message": "a rejection needs a message the worker can read"})
    if assignment.status == new_status:
        return assignment
    allowed = {Assignment.Status.SUBMITTED}
    if not assignment.decision_synced or approve:
        allowed |= {Assignment.Status.APPROVED, Assignment.Status.REJECTED}
    if assignment.status not in allowed:
        raise ValidationError(f"assignment {assignment.provider_assignment_id} is "
                              f"{assignment.status}; it cannot be {new_status} now")
    old = assignment.status
    assignment.status = new_status
    assignment.review_message = message
    assignment.reviewed_at = timezone.now()
    assignment.decision_synced = False
    assignment.save(update_fields=["status", "review_message", "reviewed_at",
                                   "decision_synced"])
    annotations_set_review_status(annotations=assignment.annotations.all(), review_status=(
        Annotation.Review.APPROVED if approve else Annotation.Review.REJECTED))
    record_status_event(batch=assignment.hit.batch, hit=assignment.hit, assignment=assignment,
                        kind="assignment_decided", old=old, new=new_status,
                        detail={"message": message, "reviewer": getattr(reviewer, "username", "")})
    transaction.on_commit(lambda: enqueue_task("sync_assignment_decision", assignment_id))
    return assignment


def _remote_assignment_status(provider: AnnotationProvider, assignment: Assignment) -> str | None:
    for collected in provider.list_assignments_for_hit(assignment.hit.provider_hit_id):
        if collected.assignment_id == assignment.provider_assignment_id:
            return REMOTE_ASSIGNMENT_STATUS.get(collected.status)
    return None


def assignment_sync_decision(*, assignment_id: int,
                             provider: AnnotationProvider | None = None) -> bool:
    """Send an unsynced approve/reject to the provider; True when it is (now) synced.

    A retry after the provider acted but before we recorded it gets MTurk's "wrong status"
    error: the remote status is then read back and, when it already shows the decision, the
    sync counts as done. An approval of a remotely rejected assignment overrides the rejection.
    """
    assignment = Assignment.objects.select_related("hit__batch").get(pk=assignment_id)
    if assignment.decision_synced:
        return True
    if assignment.status not in (Assignment.Status.APPROVED, Assignment.Status.REJECTED):
        return False
    decided = assignment.status
    batch = assignment.hit.batch
    provider = provider or provider_for_batch(batch)
    try:
        if decided == Assignment.Status.APPROVED:
            provider.approve_assignment(assignment.provider_assignment_id,
                                        feedback=assignment.review_message)
        else:
            provider.reject_assignment(assignment.provider_assignment_id,
                                       message=assignment.review_message)
    except ProviderPermanentError as error:
        remote = _remote_assignment_status(provider, assignment)
        if remote == Assignment.Status.REJECTED and decided == Assignment.Status.APPROVED:
            provider.approve_assignment(assignment.provider_assignment_id,
                                        feedback=assignment.review_message,
                                        override_rejection=True)
        elif remote != decided:
            record_status_event(batch=batch, hit=assignment.hit, assignment=assignment,
                                kind="decision_sync_failed", new=decided,
                                detail={"error": str(error), "remote_status": remote or ""})
            return False
    with transaction.atomic():
        # Only the decision we sent is marked synced; a newer one keeps waiting for its job.
        updated = Assignment.objects.filter(pk=assignment_id, status=decided,
                                            decision_synced=False).update(decision_synced=True)
        if updated:
            record_status_event(batch=batch, hit=assignment.hit, assignment=assignment,
                                kind="decision_synced", new=decided)
    return True


@transaction.atomic
def bonus_create(*, assignment_id: int, amount_cents: int, reason: str) -> Bonus:
    """Record a bonus (with its own UniqueRequestToken) and enqueue ``send_bonus``."""
    if amount_cents < 1:
        raise ValidationError({"amount": "a bonus must be at least $0.01"})
    if not reason.strip():
        raise ValidationError({"reason": "a bonus needs a reason the worker can read"})
    assignment = Assignment.objects.select_related("hit__batch").get(pk=assignment_id)
    if assignment.status in (Assignment.Status.ACCEPTED, Assignment.Status.RETURNED,
                             Assignment.Status.ABANDONED):
        raise ValidationError(f"assignment {assignment.provider_assignment_id} was never "
                              "submitted; it cannot get a bonus")
    bonus = Bonus.objects.create(assignment=assignment, amount_cents=amount_cents,
                                 reason=reason.strip(),
                                 unique_request_token=new_request_token("bonus"))
    record_status_event(batch=assignment.hit.batch, hit=assignment.hit, assignment=assignment,
                        kind="bonus_created",
                        detail={"bonus_id": bonus.pk, "amount_cents": amount_cents})
    bonus_id = bonus.pk
    transaction.on_commit(lambda: enqueue_task("send_bonus", bonus_id))
    return bonus


def bonus_send(*, bonus_id: int, provider: AnnotationProvider | None = None) -> Bonus:
    """Pay the bonus once: its token makes a retried SendBonus a no-op at MTurk."""
    bonus = Bonus.objects.select_related("assignment__worker", "assignment__hit__batch").get(
        pk=bonus_id)
    if bonus.sent_at is not None:
        return bonus
    assignment = bonus.assignment
    provider = provider or provider_for_batch(assignment.hit.batch)
    try:
        provider.send_bonus(worker_id=assignment.worker.external_id,
                            assignment_id=assignment.provider_assignment_id,
                            amount=Decimal(bonus.amount_cents) / 100, reason=bonus.reason,
                            unique_request_token=bonus.unique_request_token)
    except ProviderPermanentError as error:
        Bonus.objects.filter(pk=bonus_id, sent_at__isnull=True).update(error=str(error))
        bonus.refresh_from_db()
        return bonus
    with transaction.atomic():
        if Bonus.objects.filter(pk=bonus_id, sent_at__isnull=True).update(
                sent_at=timezone.now(), error=""):
            record_status_event(batch=assignment.hit.batch, hit=assignment.hit,
                                assignment=assignment, kind="bonus_sent",
                                detail={"bonus_id": bonus_id, "amount_cents": bonus.amount_cents})
    bonus.refresh_from_db()
    return bonus


@transaction.atomic
def worker_set_blocked(*, worker_id: int, blocked: bool, reason: str = "") -> Worker:
    """Block (reason required: MTurk shows it to the worker) or unblock; enqueues the sync."""
    worker = Worker.objects.select_for_update().get(pk=worker_id)
    if blocked and not reason.strip():
        raise ValidationError({"reason": "blocking a worker needs a reason"})
    worker.is_blocked = blocked
    worker.blocked_reason = reason.strip() if blocked else ""
    worker.save(update_fields=["is_blocked", "blocked_reason"])
    transaction.on_commit(lambda: enqueue_task("sync_worker_block", worker_id))
    return worker


def _provider_for_worker(worker: Worker) -> AnnotationProvider:
    """The MTurk environment the worker worked in (their latest batch), else the default."""
    latest = Batch.objects.filter(hits__assignments__worker=worker).order_by("-pk").first()
    live = latest.live if latest is not None else bool(settings.MTURK_LIVE)
    return provider_for(name="mturk", live=live)


def worker_sync_block(*, worker_id: int, provider: AnnotationProvider | None = None) -> bool:
    """Make the provider's block list match ``Worker.is_blocked`` (both calls are idempotent).
    Returns False for workers the provider does not know (local annotators)."""
    worker = Worker.objects.get(pk=worker_id)
    if worker.provider != Worker.Provider.MTURK:
        return False
    provider = provider or _provider_for_worker(worker)
    if worker.is_blocked:
        provider.create_worker_block(worker.external_id,
                                     reason=worker.blocked_reason or "blocked by the requester")
    else:
        provider.delete_worker_block(worker.external_id, reason="block lifted")
    return True


def workers_notify(*, project_id: int, worker_ids: Iterable[int], subject: str, message: str,
                   provider: AnnotationProvider | None = None) -> list[str]:
    """Message MTurk workers of a project; returns the WorkerIds the provider could not reach.
    Workers who never worked on this project's batches are not messaged."""
    if not subject.strip() or not message.strip():
        raise ValidationError("a notification needs a subject and a message")
    workers = Worker.objects.filter(
        pk__in=list(worker_ids), provider=Worker.Provider.MTURK,
        assignments__hit__batch__project_id=project_id).distinct()
    external_ids = sorted({worker.external_id for worker in workers})
    if not external_ids:
        return []
    if provider is None:
        latest = Batch.objects.filter(project_id=project_id, provider="mturk").order_by("-pk")
        batch = latest.first()
        provider = provider_for(name="mturk", live=bool(batch and batch.live))
    failures = provider.notify_workers(external_ids, subject=subject[:200], message=message)
    return [failure.worker_id for failure in failures]


def _published_hit(hit_id: int) -> Hit:
    hit = Hit.objects.select_related("batch").get(pk=hit_id)
    if not hit.provider_hit_id:
        raise ValidationError(f"hit {hit_id} is not published")
    return hit


def hit_expire(*, hit_id: int, provider: AnnotationProvider | None = None) -> Hit:
    """Stop a HIT taking new workers now (work in progress can still be submitted)."""
    hit = _published_hit(hit_id)
    now = timezone.now()
    if hit.expires_at is not None and hit.expires_at <= now:
        return hit
    (provider or provider_for_batch(hit.batch)).update_expiration(hit.provider_hit_id,
                                                                  expire_at=now)
    with transaction.atomic():
        if Hit.objects.filter(pk=hit_id, expires_at=hit.expires_at).update(expires_at=now):
            record_status_event(batch=hit.batch, hit=hit, kind="hit_expired",
                                detail={"expires_at": now.isoformat()})
    hit.refresh_from_db()
    return hit


def hit_extend(*, hit_id: int, seconds: int, provider: AnnotationProvider | None = None) -> Hit:
    """Keep a HIT open until at least ``seconds`` from now.

    The target is "now + seconds" (never "old expiry + seconds"), so a retried job lands on
    about the same moment instead of extending twice; an expiry already later stays.
    """
    if seconds < 60:
        raise ValidationError({"seconds": "extend by at least 60 seconds"})
    hit = _published_hit(hit_id)
    target = timezone.now() + timedelta(seconds=seconds)
    if hit.expires_at is not None and hit.expires_at >= target:
        return hit
    (provider or provider_for_batch(hit.batch)).update_expiration(hit.provider_hit_id,
                                                                  expire_at=target)
    with transaction.atomic():
        if Hit.objects.filter(pk=hit_id, expires_at=hit.expires_at).update(expires_at=target):
            record_status_event(batch=hit.batch, hit=hit, kind="hit_extended",
                                detail={"expires_at": target.isoformat()})
    hit.refresh_from_db()
    return hit


def hit_add_assignments(*, hit_id: int, count: int, request_token: str,
                        provider: AnnotationProvider | None = None) -> Hit:
    """Ask for ``count`` more assignments once per ``request_token`` (the job's id).

    MTurk will not take a HIT created with fewer than 10 assignments to 10 or more, and 10+
    would cost the surcharge anyway: beyond 9, launch another batch for the items.
    """
    if count < 1:
        raise ValidationError({"count": "add at least one assignment"})
    if not request_token:
        raise ValidationError("adding assignments needs the request token of the job")
    hit = _published_hit(hit_id)
    token = f"unpack-add-{request_token}"[:64]
    if hit.events.filter(kind="assignments_added", detail__token=token).exists():
        return hit
    if hit.max_assignments + count > MAX_ASSIGNMENTS_PER_HIT:
        raise ValidationError({"count": (
            f"hit {hit_id} has {hit.max_assignments} assignments; more than "
            f"{MAX_ASSIGNMENTS_PER_HIT} in total is refused (MTurk's 10+ rule and surcharge)")})
    (provider or provider_for_batch(hit.batch)).create_additional_assignments(
        hit.provider_hit_id, count=count, unique_request_token=token)
    with transaction.atomic():
        locked = Hit.objects.select_for_update().get(pk=hit_id)
        if not locked.events.filter(kind="assignments_added", detail__token=token).exists():
            locked.max_assignments += count
            locked.save(update_fields=["max_assignments", "updated_at"])
            record_status_event(batch=hit.batch, hit=locked, kind="assignments_added",
                                detail={"token": token, "count": count})
    hit.refresh_from_db()
    return hit


DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration_seconds(text: str) -> int:
    """``"7d"``, ``"1h"``, ``"30m"``, ``"90s"`` or a plain number of seconds."""
    value = text.strip().lower()
    unit = DURATION_UNITS.get(value[-1:]) if value else None
    number = value[:-1] if unit else value
    if not number.isdigit():
        raise ValueError(f"{text!r} is not a duration like 7d, 1h, 30m or 3600")
    return int(number) * (unit or 1)
