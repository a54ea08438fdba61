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
2. a worker first continues a group it started (a conversation in turn order); otherwise it
   looks from a per-worker pivot in the project's id range, so that concurrent annotators start
   on different items rather than all on the first open one;
3. the guarantee is at submit (``annotation_submit``): the Item row is locked again, the open
   slots are re-counted, and the unique (worker, item) constraint forbids a second answer.
   Two workers may therefore be *shown* the last open slot; only the first to submit fills it,
   the second is told the item is complete and gets the next one.
"""

from __future__ import annotations

from django.db import connection

from ..models import Annotation, Item, Project, Split, TaskKind, Worker
from ..selectors_annotate import ITEM_ALIAS, load_items, not_provisional_sql

# Where a worker starts looking in a project's id range: the fractional part of pk × the golden
# ratio conjugate scatters consecutive workers evenly over [0, 1), so concurrent annotators start
# on different items (no lock contention, no "completed meanwhile" on SQLite).
SPREAD_FACTOR = 0.6180339887498949

ITEM_TABLE = Item._meta.db_table
ANNOTATION_TABLE = Annotation._meta.db_table

# One statement picks the next item: ``i.id = COALESCE((A), (B1), (B2), (C))`` where each branch
# is a ``LIMIT 1`` sub-select and both SQLite and PostgreSQL evaluate COALESCE's arguments
# lazily, so a later branch runs only when the earlier ones found nothing:
#   A   continue a group the worker started (a conversation in turn order);
#   B1  from the worker's pivot in the project's id range upwards, in id order;
#   B2  the ids below the pivot;
#   C   (conversations only) any open item, lowest turn first — a conversation abandoned after
#       its first turns is not orphaned.
# Performance contract (the annotator hot path, see docs/annotating.md "Load"): every branch
# walks an index in order and stops at the first open item, so the cost does not grow with the
# project's size; the worker's own annotations are read once per branch by an uncorrelated
# sub-query; the per-candidate work is one index probe counting the item's annotations.
# Only model table names and constants are formatted in; every value is a parameter.
_OPEN = f"""i.project_id = %s
  AND i.id NOT IN (SELECT d.item_id FROM {ANNOTATION_TABLE} d WHERE d.worker_id = %s)
  AND (SELECT COUNT(*) FROM {ANNOTATION_TABLE} c
       WHERE c.item_id = i.id AND c.source <> %s
         AND {not_provisional_sql("c")}) < {{required}}"""  # noqa: S608
_STARTED_GROUPS = f"""i.group_key IN (
  SELECT g.group_key FROM {ANNOTATION_TABLE} m JOIN {ITEM_TABLE} g ON g.id = m.item_id
  WHERE m.worker_id = %s AND m.project_id = %s)"""  # noqa: S608
_PIVOT = f"""(SELECT MIN(p.id) FROM {ITEM_TABLE} p WHERE p.project_id = %s)
  + CAST(((SELECT MAX(q.id) FROM {ITEM_TABLE} q WHERE q.project_id = %s)
          - (SELECT MIN(r.id) FROM {ITEM_TABLE} r WHERE r.project_id = %s)) * %s AS BIGINT)"""  # noqa: S608
_FIRST_OF_GROUP = f"""i.position = (SELECT MIN(f.position) FROM {ITEM_TABLE} f
  WHERE f.project_id = i.project_id AND f.group_key = i.group_key)"""  # noqa: S608


def _required_sql(project: Project) -> tuple[str, list]:
    """SQL (and its parameters) for the redundancy of the item's split."""
    whens, params = [], []
    for split in Split.values:
        whens.append("WHEN %s THEN %s")
        params += [split, project.redundancy_for(split)]
    return f"CASE i.split {' '.join(whens)} ELSE 1 END", params


def _choose_sql(project: Project, worker: Worker, *, lock: bool) -> tuple[str, list]:
    required, required_params = _required_sql(project)
    open_sql = _OPEN.format(required=required)
    open_params = [project.pk, worker.pk, Annotation.Source.IMPORT, *required_params]
    pivot_params = [project.pk, project.pk, project.pk, (worker.pk * SPREAD_FACTOR) % 1.0]
    suffix = " LIMIT 1" + (" FOR UPDATE OF i SKIP LOCKED" if lock else "")
    conversation = project.kind == TaskKind.REWRITE
    # New conversations start at their first turn.
    first = f" AND {_FIRST_OF_GROUP}" if conversation else ""

    def branch(condition: str, order: str) -> str:
        return (f"(SELECT i.id FROM {ITEM_TABLE} i WHERE {open_sql} AND {condition} "  # noqa: S608
                f"ORDER BY {order}{suffix})")

    branches = [
        branch(_STARTED_GROUPS, "i.position, i.id"),
        branch(f"i.id >= {_PIVOT}{first}", "i.id"),
        branch(f"i.id < {_PIVOT}{first}", "i.id"),
    ]
    params = [*open_params, worker.pk, project.pk,
              *open_params, *pivot_params,
              *open_params, *pivot_params]
    if conversation:
        branches.append(branch("1 = 1", "i.position, i.id"))
        params += open_params
    return f"COALESCE({', '.join(branches)})", params


def work_queue_next_item(*, project: Project, worker: Worker) -> Item | None:
    """The next item for ``worker`` in ``project`` (see the module docstring), or None.

    The item comes with ``project`` and the source material its page shows: choosing and
    loading are ONE statement (the chooser is a sub-select of the item query), plus the
    dialogue turns for rewrite and sluice. On PostgreSQL that statement locks the chosen row
    while it runs (SKIP LOCKED: simultaneous choosers get different items).
    """
    if worker.is_blocked:
        return None
    lock = connection.features.has_select_for_update_skip_locked
    sql, params = _choose_sql(project, worker, lock=lock)
    # No transaction block of its own: in autocommit the statement is its own transaction, so
    # the row lock lasts exactly as long as it did inside an atomic block holding only this
    # statement (until the row is read), without the BEGIN and COMMIT round trips; inside a
    # caller's transaction it lasts until that ends, as before. SQLite: a plain autocommit read
    # (an IMMEDIATE transaction would take the write lock).
    # Values are parameters; only model table names and constants are formatted into ``sql``.
    items = load_items(project=project, where=f"{ITEM_ALIAS}.id = {sql}", params=params)
    return items[0] if items else None
