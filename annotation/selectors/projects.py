"""Reads. Views, the API and commands get their querysets here, shaped for the page that uses
them (select_related / annotate), so hot views run a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from ..models import Annotation, Item, Project, Worker


def project_list_with_progress() -> QuerySet[Project]:
    return Project.objects.annotate(
        item_count=Count("items", distinct=True),
        annotation_count=Count("annotations", distinct=True),
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
    annotations = Annotation.objects.select_related("item", "worker", "project")
    if project is not None:
        annotations = annotations.filter(project=project)
    if worker is not None:
        annotations = annotations.filter(worker=worker)
    return annotations.order_by("id")
