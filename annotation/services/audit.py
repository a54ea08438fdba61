"""The one audit writer: a ``StatusEvent`` row for every state change, whoever makes it."""

from __future__ import annotations

from ..models import Annotation, Assignment, Batch, Flag, Hit, StatusEvent, Worker


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
    return StatusEvent.objects.create(
        batch=batch, hit=hit, assignment=assignment, worker=worker, annotation=annotation,
        flag=flag, actor=actor if getattr(actor, "pk", None) else None, kind=kind,
        old_status=old, new_status=new, detail=detail or {})
