"""Reviewer decisions: approve, reject, dismiss a flag, block a worker, pay a bonus.

Each function does the whole change in one transaction and enqueues the provider call with
``transaction.on_commit`` (the MTurk side effects live in ``annotation.tasks``):

- approving / rejecting sets the Assignment's status and ``review_message``, marks it
  ``decision_synced=False`` (the outbox ``sync_assignment_decision`` empties), sets the review
  status of every annotation in it and closes its open flags (dismissed / upheld). Rejection
  covers the whole assignment, i.e. everything the worker did in that HIT — CANARD rejected the
  whole HIT when one rewrite was inadequate;
- work without an assignment (local annotators, imports) is decided per annotation;
- blocking a worker records the reason, upholds their open worker flags and enqueues
  ``sync_worker_block``; a bonus row gets a fresh ``unique_request_token`` so a retried
  ``send_bonus`` can never pay twice.
"""

from __future__ import annotations

import uuid

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .. import tasks
from ..models import Annotation, Assignment, Bonus, Flag, Worker
from .annotations import annotations_set_review_status

MAX_BONUS_CENTS = 10_000  # a typo guard: $100 for one assignment is never intended


def _close_flags(flags, *, status: str, reviewer, note: str) -> int:
    return flags.filter(status=Flag.Status.OPEN).update(
        status=status, reviewed_by=reviewer, reviewed_at=timezone.now(), decision_note=note
    )


def _decide_assignment(*, assignment: Assignment, reviewer, approve: bool,
                       message: str) -> Assignment:
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.status != Assignment.Status.SUBMITTED:
        raise ValidationError(
            f"assignment {assignment.provider_assignment_id} is {assignment.status}; only "
            "submitted work can be approved or rejected"
        )
    assignment.status = (Assignment.Status.APPROVED if approve
                         else Assignment.Status.REJECTED)
    assignment.review_message = message
    assignment.reviewed_at = timezone.now()
    assignment.decision_synced = False
    assignment.save(update_fields=["status", "review_message", "reviewed_at",
                                   "decision_synced"])
    annotations_set_review_status(
        annotations=assignment.annotations.all(),
        review_status=Annotation.Review.APPROVED if approve else Annotation.Review.REJECTED)
    _close_flags(
        Flag.objects.filter(Q(assignment=assignment) | Q(annotation__assignment=assignment)),
        status=Flag.Status.DISMISSED if approve else Flag.Status.UPHELD,
        reviewer=reviewer, note=message,
    )
    assignment_id = assignment.pk
    transaction.on_commit(lambda: tasks.sync_assignment_decision.delay(assignment_id))
    return assignment


@transaction.atomic
def assignment_approve(*, assignment: Assignment, reviewer, message: str = "") -> Assignment:
    return _decide_assignment(assignment=assignment, reviewer=reviewer, approve=True,
                              message=message)


@transaction.atomic
def assignment_reject(*, assignment: Assignment, reviewer, message: str) -> Assignment:
    if not message.strip():
        raise ValidationError("a rejection needs a message for the worker")
    return _decide_assignment(assignment=assignment, reviewer=reviewer, approve=False,
                              message=message.strip())


@transaction.atomic
def annotation_decide(*, annotation: Annotation, reviewer, approve: bool,
                      message: str = "") -> Annotation:
    """Decide work that has no assignment; with an assignment, decide the assignment."""
    if annotation.assignment_id is not None:
        decide = assignment_approve if approve else assignment_reject
        decide(assignment=annotation.assignment, reviewer=reviewer, message=message)
        annotation.refresh_from_db()
        return annotation
    if not approve and not message.strip():
        raise ValidationError("a rejection needs a message")
    annotations_set_review_status(
        annotations=Annotation.objects.filter(pk=annotation.pk),
        review_status=Annotation.Review.APPROVED if approve else Annotation.Review.REJECTED)
    annotation.refresh_from_db(fields=["review_status", "state"])
    _close_flags(annotation.flags.all(),
                 status=Flag.Status.DISMISSED if approve else Flag.Status.UPHELD,
                 reviewer=reviewer, note=message)
    return annotation


@transaction.atomic
def flag_dismiss(*, flag: Flag, reviewer, note: str = "") -> Flag:
    """Un-flag: the finding was looked at and the work is fine; the work itself is unchanged."""
    flag = Flag.objects.select_for_update().get(pk=flag.pk)
    if flag.status != Flag.Status.OPEN:
        raise ValidationError(f"flag {flag.pk} was already decided ({flag.status})")
    flag.status = Flag.Status.DISMISSED
    flag.reviewed_by = reviewer
    flag.reviewed_at = timezone.now()
    flag.decision_note = note
    flag.save(update_fields=["status", "reviewed_by", "reviewed_at", "decision_note"])
    return flag


@transaction.atomic
def worker_block(*, worker: Worker, reviewer, reason: str) -> Worker:
    if not reason.strip():
        raise ValidationError("blocking a worker needs a reason")
    worker = Worker.objects.select_for_update().get(pk=worker.pk)
    worker.is_blocked = True
    worker.blocked_reason = reason.strip()
    worker.save(update_fields=["is_blocked", "blocked_reason"])
    _close_flags(Flag.objects.filter(worker=worker, annotation__isnull=True,
                                     assignment__isnull=True),
                 status=Flag.Status.UPHELD, reviewer=reviewer, note=reason.strip())
    worker_id = worker.pk
    transaction.on_commit(lambda: tasks.sync_worker_block.delay(worker_id))
    return worker


@transaction.atomic
def bonus_create(*, assignment: Assignment, amount_cents: int, reason: str) -> Bonus:
    if not 0 < amount_cents <= MAX_BONUS_CENTS:
        raise ValidationError(f"a bonus must be between 1 and {MAX_BONUS_CENTS} cents")
    if not reason.strip():
        raise ValidationError("a bonus needs a reason (the worker sees it)")
    bonus = Bonus.objects.create(assignment=assignment, amount_cents=amount_cents,
                                 reason=reason.strip(), unique_request_token=uuid.uuid4().hex)
    bonus_id = bonus.pk
    transaction.on_commit(lambda: tasks.send_bonus.delay(bonus_id))
    return bonus
