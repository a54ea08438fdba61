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
   on SQLite there is no row lock and the choosing query runs outside a transaction
   (reading needs no lock on SQLite: WAL readers never block the writer, and nothing is written);
2. candidates are ordered by a per-worker spread (and, for dialogues, by turn position) so that
   concurrent annotators start on different items rather than all on the first open one;
3. the guarantee is at submit (``annotation_submit``): the Item row is locked again, the open
   slots are re-counted, and the unique (worker, item) constraint forbids a second answer.
   Two workers may therefore be *shown* the last open slot; only the first to submit fills it,
   the second is told the item is complete and gets the next one.
"""

from __future__ import annotations

from contextlib import nullcontext

from django.db import connection, transaction
from django.db.models.expressions import RawSQL

from ..models import Annotation, Item, Project, Split, TaskKind, Worker
from ..selectors_annotate import page_items_queryset

# Primes for the per-worker spread of candidates (any values that scatter ids will do).
SPREAD_MODULUS = 997
SPREAD_ITEM_FACTOR = 7919
SPREAD_WORKER_FACTOR = 104729

ITEM_TABLE = Item._meta.db_table
ANNOTATION_TABLE = Annotation._meta.db_table

# One statement picks the next item. Performance contract (the annotator hot path, see
# docs/annotating.md "Load"): the worker's own annotations are read ONCE by uncorrelated
# sub-queries (PostgreSQL hashes them, SQLite builds an ephemeral index), never once per item;
# the only per-item work is the index look-up counting the item's collected annotations.
# The ORM spelling of the same query (Exists/Subquery/Case) cost ~2-3 ms of compilation per call
# and planned the "done by me" and "in my group" tests as per-item scans of the worker's
# annotations, i.e. O(items x worker's annotations). Only table names (from the models) and
# constants are formatted in; every value is a parameter.
_CHOOSE_SQL = f"""
SELECT i.id FROM {ITEM_TABLE} i
WHERE i.project_id = %s
  AND i.id NOT IN (SELECT d.item_id FROM {ANNOTATION_TABLE} d WHERE d.worker_id = %s)
  AND (SELECT COUNT(*) FROM {ANNOTATION_TABLE} c
       WHERE c.item_id = i.id AND c.source <> %s) < {{required}}
ORDER BY
  CASE WHEN i.group_key IN (SELECT g.group_key FROM {ANNOTATION_TABLE} m
                            JOIN {ITEM_TABLE} g ON g.id = m.item_id
                            WHERE m.worker_id = %s AND m.project_id = %s)
       THEN 0 ELSE 1 END,
  {{position}}(i.id * {SPREAD_ITEM_FACTOR} + %s) %% {SPREAD_MODULUS},
  i.id
LIMIT 1{{lock}}
"""  # noqa: S608


def _required_sql(project: Project) -> tuple[str, list]:
    """SQL (and its parameters) for the redundancy of the item's split."""
    whens, params = [], []
    for split in Split.values:
        whens.append("WHEN %s THEN %s")
        params += [split, project.redundancy_for(split)]
    return f"CASE i.split {' '.join(whens)} ELSE 1 END", params


def _choose_sql(project: Project, worker: Worker, *, lock: bool) -> tuple[str, list]:
    required, required_params = _required_sql(project)
    sql = _CHOOSE_SQL.format(
        required=required,
        # A conversation is read in order: continue it, and start new ones at their first turn.
        position="i.position, " if project.kind == TaskKind.REWRITE else "",
        lock=" FOR UPDATE OF i SKIP LOCKED" if lock else "",
    )
    params = [project.pk, worker.pk, Annotation.Source.IMPORT, *required_params,
              worker.pk, project.pk, worker.pk * SPREAD_WORKER_FACTOR]
    return sql, params


def work_queue_next_item(*, project: Project, worker: Worker) -> Item | None:
    """The next item for ``worker`` in ``project`` (see the module docstring), or None.

    The item comes with ``project`` and the source material its page shows: choosing and
    loading are ONE statement (the chooser is a sub-select of the item query), plus the
    dialogue turns for rewrite and sluice. On PostgreSQL it runs in a short transaction that
    holds the chosen row's lock (SKIP LOCKED: simultaneous choosers get different items).
    """
    if worker.is_blocked:
        return None
    lock = connection.features.has_select_for_update_skip_locked
    sql, params = _choose_sql(project, worker, lock=lock)
    # Values are parameters; only model table names and constants are formatted into ``sql``.
    queryset = page_items_queryset(project).filter(id=RawSQL(sql, params))  # noqa: S611
    # SQLite: a plain autocommit read (an IMMEDIATE transaction would take the write lock).
    with transaction.atomic() if lock else nullcontext():
        item = queryset.first()
    if item is not None:
        item.project = project
    return item
