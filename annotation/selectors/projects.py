"""Reads. Views, the API and commands get their querysets here, shaped for the page that uses
them (select_related / annotate), so hot views run a fixed number of queries."""

from __future__ import annotations

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from ..models import Annotation, Item, Project, ProjectCount, Worker
from .counts import stored_answer_count_subquery


def project_list_with_progress() -> QuerySet[Project]:
    """Every project with ``item_count`` and ``annotation_count`` (every answer row, problem
    reports and older versions too): read from ``ProjectCount``, the counts the database's
    triggers keep, so the statement reads a few rows per project at any size (counting
    1,000,000 answers took 0.4 s a page; joining items to answers never finished, issue 21)."""
    shards = ProjectCount.objects.filter(project=OuterRef("pk")).order_by().values("project")
    return Project.objects.annotate(
        item_count=Coalesce(Subquery(shards.annotate(n=Sum("items")).values("n")), 0),
        # "stored" (annotation.selectors.counts): every answer row of the project.
        annotation_count=stored_answer_count_subquery(),
    ).order_by("slug")


def project_get(*, slug: str) -> Project:
    return Project.objects.get(slug=slug)


def item_list(*, project: Project | None = None, split: str | None = None) -> QuerySet[Item]:
    items = Item.objects.select_related(
        "project",
        "target_sentence__document",
        "turn__dialogue",
        "filler__cloze",
        "complex_sentence",
    )
    if project is not None:
        items = items.filter(project=project)
    if split:
        items = items.filter(split=split)
    return items.order_by("id")


def annotation_list(*, project: Project | None = None,
                    worker: Worker | None = None) -> QuerySet[Annotation]:
    # The API shows the item by id (``item_id``) and the project by slug: joining the item
    # and the project built two more model instances per row, their JSON columns decoded
    # (a third of a 1,000-row page's CPU at 1,000,000 answers, issue 21). The page's
    # projects (one, usually) come in one more query, their slugs only.
    annotations = (Annotation.objects.select_related("worker")
                   .prefetch_related(Prefetch("project",
                                              queryset=Project.objects.only("id", "slug"))))
    if project is not None:
        annotations = annotations.filter(project=project)
    if worker is not None:
        annotations = annotations.filter(worker=worker)
    return annotations.order_by("id")


#: What a page of the API's answer list reads per answer (``annotation_rows``): the answer's
#: columns, its project's slug and its worker's provider and id (the pseudonym is made of them).
ANNOTATION_ROW_FIELDS = (
    "id", "project__slug", "item_id", "worker_id", "worker__provider", "worker__external_id",
    "source", "payload", "category", "rating", "text", "skipped", "edit_operations",
    "started_at", "submitted_at", "duration_ms", "client_warnings", "overridden_warnings",
    "server_warnings", "review_status", "provenance", "created_at",
)


def annotation_rows(annotations: QuerySet[Annotation]) -> QuerySet[dict]:
    """``annotations`` (an ``annotation_list``, filtered) as plain rows of
    ``ANNOTATION_ROW_FIELDS``: a page of 1,000 answers builds no model instance (building them
    and serializing field by field was most of a page's CPU at 1,000,000 answers, issue 21)."""
    return annotations.prefetch_related(None).values(*ANNOTATION_ROW_FIELDS)

