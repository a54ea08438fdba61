"""Storing annotators' answers (local pages and MTurk ExternalQuestion pages).

``annotation_submit`` is idempotent: the browser's ``client_token`` is unique, so a double submit
(or a retry after a lost response) returns the stored annotation instead of a second one. The
capacity re-check under the Item row lock is the concurrency guarantee of the work queue
(see ``annotation.services.work_queue``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ..models import Annotation, Assignment, Hit, Item, Worker
from ..payloads import CleanPayload, ItemContext, live_check_warnings


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


ANNOTATION_TABLE = Annotation._meta.db_table
ITEM_TABLE = Item._meta.db_table

# Everything the submit decides on, in ONE indexed statement (client_token is unique; item_id is
# indexed): the annotation holding this token and its worker, this worker's own answer to the
# item, and the slots the item's other non-imported annotations fill. Run after the row lock.
_SUBMIT_STATE_SQL = f"""
SELECT MAX(CASE WHEN a.client_token = %s THEN a.id END),
       MAX(CASE WHEN a.client_token = %s THEN a.worker_id END),
       MAX(CASE WHEN a.item_id = %s AND a.worker_id = %s AND {{same_assignment}} THEN a.id END),
       COALESCE(SUM(CASE WHEN a.item_id = %s AND a.source <> %s AND a.worker_id <> %s
                         THEN 1 ELSE 0 END), 0)
FROM {ANNOTATION_TABLE} a
WHERE a.client_token = %s OR a.item_id = %s
"""  # noqa: S608 -- table name from the model; every value is a parameter


@dataclass(frozen=True)
class _SubmitState:
    token_annotation_id: int | None
    token_worker_id: int | None
    own_annotation_id: int | None
    collected_by_others: int


def _submit_state(*, item: Item, worker: Worker, assignment: Assignment | None,
                  client_token: str | None) -> _SubmitState:
    same_assignment = "a.assignment_id IS NULL" if assignment is None else "a.assignment_id = %s"
    params = [client_token, client_token, item.pk, worker.pk,
              *([] if assignment is None else [assignment.pk]),
              item.pk, Annotation.Source.IMPORT, worker.pk, client_token, item.pk]
    with connection.cursor() as cursor:
        cursor.execute(_SUBMIT_STATE_SQL.format(same_assignment=same_assignment), params)
        token_id, token_worker_id, own_id, collected = cursor.fetchone()
    return _SubmitState(token_id, token_worker_id, own_id, int(collected))


def _lock_item(item: Item) -> None:
    """Lock the Item row until the transaction ends. SQLite has no row locks and needs none:
    the settings open every transaction IMMEDIATE, which already serialises writers."""
    if connection.features.has_select_for_update:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {ITEM_TABLE} WHERE id = %s FOR UPDATE",  # noqa: S608
                           [item.pk])


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

    Queries when stored: the row lock (PostgreSQL), one state query, the INSERT (plus BEGIN and
    COMMIT on SQLite). A duplicate costs one more read to return the stored annotation.
    """
    client_token = client_token or None
    try:
        with transaction.atomic():
            # The row lock serialises every submit for this item: the state read below is exact.
            _lock_item(item)
            state = _submit_state(item=item, worker=worker, assignment=assignment,
                                  client_token=client_token)
            if state.token_annotation_id is not None:
                if state.token_worker_id != worker.pk:
                    # Never reveal or overwrite another worker's annotation, whatever token.
                    raise SubmitRefused("token_conflict",
                                        "This submission key belongs to someone else.")
                return SubmitResult(Annotation.objects.get(pk=state.token_annotation_id),
                                    created=False)
            if worker.is_blocked:
                raise SubmitRefused("blocked",
                                    "Your account cannot submit work for this project.")
            if state.own_annotation_id is not None:
                return SubmitResult(Annotation.objects.get(pk=state.own_annotation_id),
                                    created=False)
            if (source == Annotation.Source.LOCAL and state.collected_by_others
                    >= item.project.redundancy_for(item.split)):
                raise SubmitRefused("item_full",
                                    "Other annotators completed this item meanwhile.")
            annotation = Annotation.objects.create(
                project_id=item.project_id, item=item, worker=worker, assignment=assignment,
                source=source, payload=clean.payload, client_token=client_token,
                client_warnings=client_warnings or [],
                overridden_warnings=overridden_warnings or [],
                server_warnings=live_check_warnings(context, clean.payload),
                started_at=started_at, submitted_at=timezone.now(), duration_ms=duration_ms,
                **clean.columns,
            )
            return SubmitResult(annotation, created=True)
    except IntegrityError:
        # A concurrent duplicate (same token or same worker+item) won the race; the transaction
        # is rolled back, so read the winner in a fresh one and return it.
        existing = _existing_for_token(client_token=client_token, worker=worker) or (
            Annotation.objects.filter(worker=worker, item=item, assignment=assignment).first()
        )
        if existing is None:
            raise
        return SubmitResult(existing, created=False)


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
