"""Reads for batches, HITs and assignments (the staff pages, the API and the review CLI)."""

from __future__ import annotations

from django.db.models import BigIntegerField, Count, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from ..models import Assignment, Batch, Hit, StatusEvent


def batches_with_counts(*, project_slug: str | None = None) -> QuerySet[Batch]:
    batches = Batch.objects.select_related("project").annotate(
        hit_count=Count("hits", distinct=True),
        published_hit_count=Count("hits", filter=Q(hits__provider_hit_id__isnull=False),
                                  distinct=True),
    ).order_by("-created_at", "-pk")
    if project_slug:
        batches = batches.filter(project__slug=project_slug)
    return batches


def batch_hit_status_counts(*, batch: Batch) -> dict[str, int]:
    return dict(batch.hits.values_list("status").annotate(n=Count("pk")).order_by())


def batch_assignment_status_counts(*, batch: Batch) -> dict[str, int]:
    return dict(Assignment.objects.filter(hit__batch=batch).values_list("status")
                .annotate(n=Count("pk")).order_by())


def batch_hits(*, batch: Batch, limit: int = 500) -> list[Hit]:
    return list(batch.hits.annotate(
        item_count=Count("hititem", distinct=True),
        submitted_count=Count("assignments", distinct=True),
    ).order_by("pk")[:limit])


def batch_events(*, batch: Batch, limit: int = 200) -> list[StatusEvent]:
    return list(StatusEvent.objects.filter(batch=batch)
                .select_related("hit", "assignment").order_by("-at", "-pk")[:limit])


def assignments_pending_review(*, project_slug: str | None = None,
                               batch_id: int | None = None) -> QuerySet[Assignment]:
    """Submitted assignments nobody has approved or rejected yet, oldest first."""
    assignments = (Assignment.objects.filter(status=Assignment.Status.SUBMITTED)
                   .select_related("worker", "hit__batch__project")
                   .annotate(annotation_count=Count("annotations"))
                   .order_by("submitted_at", "pk"))
    if project_slug:
        assignments = assignments.filter(hit__batch__project__slug=project_slug)
    if batch_id:
        assignments = assignments.filter(hit__batch_id=batch_id)
    return assignments


def unflagged_submitted_assignment_ids(*, project) -> QuerySet:
    """Ids of the project's submitted assignments with no open flag on them or their answers:
    what a reviewer may approve in one go (never a blocked worker's, never unconfirmed work:
    ``selectors/blocks.py``)."""
    from .blocks import bulk_approvable

    return (bulk_approvable(_unflagged_submitted(project))
            .order_by("pk").values_list("pk", flat=True))


def unflagged_held_back_counts(*, project) -> dict[str, int]:
    """The project's submitted assignments without an open flag that a bulk approval leaves
    out, counted by why (as ``blocks.held_back`` lists them): ``unconfirmed`` (collection has
    not confirmed them) and ``blocked`` (their worker is blocked for the project)."""
    from .blocks import blocked_q, unconfirmed_q

    unflagged = _unflagged_submitted(project)
    return {"unconfirmed": unflagged.filter(unconfirmed_q()).count(),
            "blocked": unflagged.exclude(unconfirmed_q())
            .filter(blocked_q(project="hit__batch__project")).count()}


def _unflagged_submitted(project) -> QuerySet:
    from ..models import Annotation, Flag

    # The assignment of each open flag, its own or its answer's. The answer's is read by
    # primary key, one probe per flag (a subquery): as a join the planner hashed every answer
    # of the table, a scan of 1,000,000 rows per page view (issue 21). A flag on a worker
    # gives 0, no assignment's id: a NULL would make NOT IN never true.
    answer_assignment = Annotation.objects.filter(pk=OuterRef("annotation_id")).values(
        "assignment_id")[:1]
    flagged = (Flag.objects.filter(project=project, status=Flag.Status.OPEN)
               .annotate(target=Coalesce("assignment_id", Subquery(answer_assignment),
                                        Value(0), output_field=BigIntegerField()))
               .values("target"))
    return (Assignment.objects.filter(status=Assignment.Status.SUBMITTED,
                                      hit__batch__project=project)
            .exclude(pk__in=flagged))


def assignment_by_reference(reference: str) -> Assignment | None:
    """An assignment by MTurk AssignmentId or by database id."""
    assignment = Assignment.objects.filter(provider_assignment_id=reference).first()
    if assignment is None and reference.isdigit():
        assignment = Assignment.objects.filter(pk=int(reference)).first()
    return assignment


def hit_provider_ids(*, hit_ids: list[int]) -> list[str]:
    """The provider's ids of ``hit_ids`` (MTurk HIT ids, Prolific study ids), in our order:
    what staff messages name HITs by."""
    return list(Hit.objects.filter(pk__in=hit_ids).order_by("pk")
                .values_list("provider_hit_id", flat=True))
