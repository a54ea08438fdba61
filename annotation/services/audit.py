"""The one audit writer: a ``StatusEvent`` row for every state change, whoever makes it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.utils import timezone

from ..models import Annotation, Assignment, Batch, Flag, Hit, StatusEvent, Worker

#: The operating-system login of the management command writing events (None elsewhere).
_command_line_user: ContextVar[str | None] = ContextVar("command_line_user", default=None)


@contextmanager
def command_line(login: str) -> Iterator[None]:
    """Every event recorded inside names ``login`` as its ``command_line_user`` (a management
    command's operating-system user; ``annotation/management/actor.py``)."""
    token = _command_line_user.set(login)
    try:
        yield
    finally:
        _command_line_user.reset(token)


def record_status_event(*, kind: str, batch: Batch | None = None, hit: Hit | None = None,
                        assignment: Assignment | None = None, worker: Worker | None = None,
                        annotation: Annotation | None = None, flag: Flag | None = None,
                        actor=None, old: str = "", new: str = "",
                        detail: dict | None = None) -> StatusEvent:
    """Record one change. The batch is taken from the HIT or assignment when not given, so
    every event about MTurk work shows on its batch's page."""
    if batch is None and assignment is not None:
        batch = assignment.hit.batch
    if batch is None and hit is not None:
        batch = hit.batch
    detail = dict(detail or {})
    if (login := _command_line_user.get()) is not None:
        detail["command_line_user"] = login
    return StatusEvent.objects.create(
        batch=batch, hit=hit, assignment=assignment, worker=worker, annotation=annotation,
        flag=flag, actor=actor if getattr(actor, "pk", None) else None, kind=kind,
        old_status=old, new_status=new, detail=detail)


def close_open_flags(flags, *, status: str, actor, note: str, detail: dict | None = None,
                     set_reviewer: bool = True) -> int:
    """Close the open flags among ``flags`` (``status``, now, ``note``); one ``flag_closed``
    row each, with ``detail``. ``set_reviewer``: ``reviewed_by`` becomes ``actor`` (None
    without one); otherwise it is left as it is (an annotator withdrawing their own report).
    The number closed."""
    fields = ["status", "reviewed_at", "decision_note"]
    if set_reviewer:
        fields.append("reviewed_by")
    closed = 0
    for flag in (flags.filter(status=Flag.Status.OPEN).select_for_update(of=("self",))
                 .select_related("annotation", "assignment__hit__batch", "worker")):
        flag.status, flag.reviewed_at, flag.decision_note = status, timezone.now(), note
        if set_reviewer:
            flag.reviewed_by = actor if getattr(actor, "pk", None) else None
        flag.save(update_fields=fields)
        record_status_event(kind="flag_closed", flag=flag, annotation=flag.annotation,
                            assignment=flag.assignment, worker=flag.worker, actor=actor,
                            old=Flag.Status.OPEN, new=status, detail=detail)
        closed += 1
    return closed
