"""Which item a local annotator gets next.

Contract of ``work_queue_next_item``: an item of the project that

* this worker has not annotated yet, and
* still has an open slot: fewer non-imported annotations than
  ``project.redundancy_for(item.split)``;

or ``None`` when there is none or the worker is blocked.

Concurrency. Handing out an item reserves nothing (no model change, no cache lease: a cache is
not shared safely across gunicorn processes). Instead

1. while choosing, the candidate Item row is locked; on PostgreSQL with
   ``select_for_update(skip_locked=True)`` so that simultaneous choosers take *different* items;
   on SQLite the settings open every transaction ``IMMEDIATE``, so choosers are serialised;
2. candidates are ordered by a per-worker spread (and, for dialogues, by turn position) so that
   concurrent annotators start on different items rather than all on the first open one;
3. the guarantee is at submit (``annotation_submit``): the Item row is locked again, the open
   slots are re-counted, and the unique (worker, item) constraint forbids a second answer.
   Two workers may therefore be *shown* the last open slot; only the first to submit fills it,
   the second is told the item is complete and gets the next one.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Mod

from ..models import Annotation, Item, Project, Split, TaskKind, Worker

# Primes for the per-worker spread of candidates (any values that scatter ids will do).
SPREAD_MODULUS = 997
SPREAD_ITEM_FACTOR = 7919
SPREAD_WORKER_FACTOR = 104729


def required_annotations(project: Project) -> Case:
    """SQL expression: the redundancy of the item's split."""
    return Case(
        *[When(split=split, then=Value(project.redundancy_for(split))) for split in Split.values],
        default=Value(1),
        output_field=IntegerField(),
    )


def collected_annotations() -> Coalesce:
    """SQL expression: annotations collected for the item, imported ones aside."""
    counted = (
        Annotation.objects.filter(item=OuterRef("pk"))
        .exclude(source=Annotation.Source.IMPORT)
        .order_by()
        .values("item")
        .annotate(count=Count("id"))
        .values("count")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def open_items_for(*, project: Project, worker: Worker):
    """Items with an open slot that ``worker`` has not done, best first (a lazy queryset)."""
    done_by_worker = Annotation.objects.filter(item=OuterRef("pk"), worker=worker)
    worked_in_group = Annotation.objects.filter(
        worker=worker, project=project, item__group_key=OuterRef("group_key")
    )
    spread = Mod(F("id") * SPREAD_ITEM_FACTOR + Value(worker.pk * SPREAD_WORKER_FACTOR),
                 Value(SPREAD_MODULUS))
    items = (
        Item.objects.filter(project=project)
        .annotate(required=required_annotations(project), collected=collected_annotations(),
                  in_my_group=Exists(worked_in_group), spread=spread)
        .filter(~Exists(done_by_worker), collected__lt=F("required"))
    )
    if project.kind == TaskKind.REWRITE:
        # A conversation is read in order: continue it, and start new ones at their first turn.
        return items.order_by("-in_my_group", "position", "spread", "id")
    return items.order_by("-in_my_group", "spread", "id")


def work_queue_next_item(*, project: Project, worker: Worker) -> Item | None:
    """The next item for ``worker`` in ``project`` (see the module docstring), or None."""
    if worker.is_blocked:
        return None
    with transaction.atomic():
        candidates = open_items_for(project=project, worker=worker)
        if connection.features.has_select_for_update_skip_locked:
            candidates = candidates.select_for_update(skip_locked=True, of=("self",))
        return candidates.first()


def item_has_open_slot(*, item: Item, worker: Worker) -> bool:
    """Inside a transaction that holds the Item row lock: may ``worker`` still answer it?"""
    collected = (
        Annotation.objects.filter(item=item)
        .exclude(Q(source=Annotation.Source.IMPORT) | Q(worker=worker))
        .count()
    )
    return collected < item.project.redundancy_for(item.split)
