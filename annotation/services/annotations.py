"""Storing annotators' answers (local pages and MTurk ExternalQuestion pages).

``annotation_submit`` is idempotent: the browser's ``client_token`` is unique, so a double submit
(or a retry after a lost response) returns the stored annotation instead of a second one. The
capacity re-check under the Item row lock is the concurrency guarantee of the work queue
(see ``annotation.services.work_queue``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import Annotation, Assignment, Hit, Item, Worker
from ..payloads import CleanPayload, ItemContext, live_check_warnings
from .work_queue import item_has_open_slot


class SubmitRefused(Exception):
    """The submission cannot be stored; ``code`` is stable for the browser, ``message`` human."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class SubmitResult:
    annotation: Annotation
    created: bool


def _existing_for_token(*, client_token: str | None, worker: Worker) -> Annotation | None:
    if not client_token:
        return None
    existing = Annotation.objects.filter(client_token=client_token).first()
    if existing is not None and existing.worker_id != worker.pk:
        # Never reveal or overwrite another worker's annotation, whatever token is sent.
        raise SubmitRefused("token_conflict", "This submission key belongs to someone else.")
    return existing


def annotation_submit(
    *,
    worker: Worker,
    item: Item,
    clean: CleanPayload,
    context: ItemContext,
    source: str,
    client_token: str | None,
    assignment: Assignment | None = None,
    client_warnings: list[dict] | None = None,
    overridden_warnings: list[dict] | None = None,
    started_at: datetime | None = None,
    duration_ms: int | None = None,
) -> SubmitResult:
    """Store ``worker``'s validated answer ``clean`` for ``item``; see the module docstring.

    Raises ``SubmitRefused`` when the worker is blocked, the item is already complete (local
    work only: MTurk bounds assignments itself), or the token belongs to another worker.
    Server warnings are the shared live checks re-run on the clean payload.
    """
    with transaction.atomic():
        existing = _existing_for_token(client_token=client_token, worker=worker)
        if existing is not None:
            return SubmitResult(existing, created=False)
        if worker.is_blocked:
            raise SubmitRefused("blocked", "Your account cannot submit work for this project.")
        # The row lock serialises every submit for this item: the slot count below is exact.
        Item.objects.select_for_update().filter(pk=item.pk).first()
        already = Annotation.objects.filter(worker=worker, item=item,
                                            assignment=assignment).first()
        if already is not None:
            return SubmitResult(already, created=False)
        if source == Annotation.Source.LOCAL and not item_has_open_slot(item=item,
                                                                         worker=worker):
            raise SubmitRefused("item_full",
                                "Other annotators completed this item meanwhile.")
        now = timezone.now()
        fields = dict(
            project_id=item.project_id, item=item, worker=worker, assignment=assignment,
            source=source, payload=clean.payload, client_token=client_token or None,
            client_warnings=client_warnings or [], overridden_warnings=overridden_warnings or [],
            server_warnings=live_check_warnings(context, clean.payload),
            started_at=started_at, submitted_at=now, duration_ms=duration_ms,
            **clean.columns,
        )
        try:
            with transaction.atomic():
                annotation = Annotation.objects.create(**fields)
        except IntegrityError:
            # A concurrent duplicate (same token or same worker+item) won the race: return it.
            existing = _existing_for_token(client_token=client_token, worker=worker) or (
                Annotation.objects.filter(worker=worker, item=item, assignment=assignment).first()
            )
            if existing is None:
                raise
            return SubmitResult(existing, created=False)
        return SubmitResult(annotation, created=True)


def assignment_get_or_create_mturk(*, hit: Hit, worker: Worker,
                                   provider_assignment_id: str) -> Assignment:
    """The Assignment of an MTurk worker on ``hit``, created on their first saved item.

    The MTurk collector get-or-creates by the same AssignmentId, so whichever runs first wins
    and the other finds the row. An AssignmentId of another worker or HIT is refused.
    """
    with transaction.atomic():
        assignment, _ = Assignment.objects.select_for_update().get_or_create(
            provider_assignment_id=provider_assignment_id,
            defaults={"hit": hit, "worker": worker, "status": Assignment.Status.ACCEPTED,
                      "accepted_at": timezone.now()},
        )
        if assignment.worker_id != worker.pk or assignment.hit_id != hit.pk:
            raise SubmitRefused("not_yours", "This assignment belongs to another worker or HIT.")
        return assignment


def assignment_mark_submitted(*, assignment: Assignment) -> Assignment:
    """Mark an MTurk assignment submitted (once; a later state set by review is kept)."""
    with transaction.atomic():
        updated = Assignment.objects.filter(
            pk=assignment.pk, status=Assignment.Status.ACCEPTED
        ).update(status=Assignment.Status.SUBMITTED, submitted_at=timezone.now())
        if updated:
            assignment.refresh_from_db()
        return assignment
