"""Which item a local annotator gets next.

Contract of ``work_queue_next_item``: an item of the project that

* this worker has not annotated yet, and
* still has an open slot: fewer counted annotations (``Annotation.State.COUNTED``, see
  ``annotation.services.annotations.annotation_state``) than
  ``project.redundancy_for(item.split)``;

or ``None`` when there is none or the worker is blocked.

Concurrency. Handing out an item reserves nothing (no model change, no cache lease: a cache is
not shared safely across gunicorn processes). Instead

1. while choosing, the candidate Item row is locked; on PostgreSQL with
   ``select_for_update(skip_locked=True)`` so that simultaneous choosers take *different* items;
   on SQLite there is no row lock and the choosing query runs outside a transaction
   (reading needs no lock on SQLite: WAL readers never block the writer, and nothing is written);
2. a worker first continues the group of the item it did last (a conversation in turn
   order); otherwise it goes on in id order after that item, or, having done none yet, from a
   per-worker pivot in the project's id range, so that concurrent annotators start on
   different items rather than all on the first open one;
3. the guarantee is at submit (``annotation_submit``): the Item row is locked again, the open
   slots are re-counted, and the unique (worker, item) constraint forbids a second answer.
   Two workers may therefore be *shown* the last open slot; only the first to submit fills it,
   the second is told the item is complete and gets the next one.
"""

from __future__ import annotations

from django.db import connection

from ..models import Annotation, Item, Project, Split, TaskKind, Worker
from ..selectors.annotate import ITEM_ALIAS, load_items

# Where a worker starts looking in a project's id range: the fractional part of pk × the golden
# ratio conjugate scatters consecutive workers evenly over [0, 1), so concurrent annotators start
# on different items (no lock contention, no "completed meanwhile" on SQLite).
SPREAD_FACTOR = 0.6180339887498949

ITEM_TABLE = Item._meta.db_table
ANNOTATION_TABLE = Annotation._meta.db_table

# One statement picks the next item: ``i.id = COALESCE((A), (B1), (B2), (C))`` where each branch
# is a ``LIMIT 1`` sub-select and both SQLite and PostgreSQL evaluate COALESCE's arguments
# lazily, so a later branch runs only when the earlier ones found nothing. LAST is the item the
# worker did last in this project (the one just submitted, when the caller says so):
#   A   continue LAST's group (a conversation in turn order, the other fillers of a sentence);
#   B1  from LAST upwards in id order (a worker who has done nothing yet: from their pivot in
#       the project's id range, so that concurrent annotators start on different items rather
#       than all on the first open one);
#   B2  the ids below that;
#   C   (conversations only) any open item, lowest turn first — a conversation abandoned after
#       its first turns is not orphaned.
# Performance contract (the annotator hot path, see docs/annotating.md "Load"): every branch
# walks an index in order and stops at the first open item, so the cost grows neither with the
# project's size nor with the number of items the worker has done (B1 starts after their past
# work instead of walking over it); the per-candidate work is two index probes (the worker's
# own answer, the item's annotations counted); LAST is one probe of the (worker, project, id)
# index.
# Only model table names and constants are formatted in; every value is a parameter.
# "Not done by the worker" is a scalar sub-select, not NOT EXISTS: PostgreSQL turns NOT EXISTS
# into an anti-join that reads all of the worker's annotations (11,000 rows per call for a
# worker with 2,000 items done, tests/frontend/test_hot_path.py); a scalar sub-select stays one
# index probe per candidate, on both databases.
_OPEN = f"""i.project_id = %s
  AND (SELECT d.id FROM {ANNOTATION_TABLE} d WHERE d.worker_id = %s AND d.item_id = i.id
       LIMIT 1) IS NULL
  AND (SELECT COUNT(*) FROM {ANNOTATION_TABLE} c
       WHERE c.item_id = i.id AND c.state = %s) < {{required}}"""  # noqa: S608
_LAST = f"""(SELECT m.item_id FROM {ANNOTATION_TABLE} m WHERE m.worker_id = %s
  AND m.project_id = %s ORDER BY m.id DESC LIMIT 1)"""  # noqa: S608
_GROUP_OF = f"""i.group_key = (SELECT h.group_key FROM {ITEM_TABLE} h WHERE h.id = {{last}})"""  # noqa: S608
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


def open_items_where(*, project: Project, worker: Worker) -> tuple[str, list]:
    """SQL condition (and parameters) on an item aliased ``i``: open for ``worker`` in
    ``project`` — the rule this queue chooses by, for readers that count (progress)."""
    required, required_params = _required_sql(project)
    return (_OPEN.format(required=required),
            [project.pk, worker.pk, Annotation.State.COUNTED, *required_params])


def _choose_sql(project: Project, worker: Worker, *, lock: bool,
                after_item_id: int | None = None) -> tuple[str, list]:
    open_sql, open_params = open_items_where(project=project, worker=worker)
    if after_item_id is None:
        last, last_params = _LAST, [worker.pk, project.pk]
    else:
        last, last_params = "%s", [after_item_id]
    # From after LAST; from the worker's pivot when there is no LAST (the pivot sub-selects
    # run only then: COALESCE is lazy).
    start = f"COALESCE({last} + 1, {_PIVOT})"
    start_params = [*last_params, project.pk, project.pk, project.pk,
                    (worker.pk * SPREAD_FACTOR) % 1.0]
    suffix = " LIMIT 1" + (" FOR UPDATE OF i SKIP LOCKED" if lock else "")
    conversation = project.kind == TaskKind.REWRITE
    # New conversations start at their first turn.
    first = f" AND {_FIRST_OF_GROUP}" if conversation else ""

    def branch(condition: str, order: str) -> str:
        return (f"(SELECT i.id FROM {ITEM_TABLE} i WHERE {open_sql} AND {condition} "  # noqa: S608
                f"ORDER BY {order}{suffix})")

    branches = [
        branch(_GROUP_OF.format(last=last), "i.position, i.id"),
        branch(f"i.id >= {start}{first}", "i.id"),
        branch(f"i.id < {start}{first}", "i.id"),
    ]
    params = [*open_params, *last_params,
              *open_params, *start_params,
              *open_params, *start_params]
    if conversation:
        branches.append(branch("1 = 1", "i.position, i.id"))
        params += open_params
    return f"COALESCE({', '.join(branches)})", params


def work_queue_next_item(*, project: Project, worker: Worker,
                         after_item_id: int | None = None) -> Item | None:
    """The next item for ``worker`` in ``project`` (see the module docstring), or None.

    ``after_item_id``: the item the worker has just submitted (or found complete), when the
    caller knows it; otherwise the item of the worker's latest annotation in the project is
    read in the same statement. Either way a page load and the next item in a submit's answer
    are chosen alike.

    The item comes with ``project`` and the source material its page shows: choosing and
    loading are ONE statement (the chooser is a sub-select of the item query), plus the
    dialogue turns for rewrite and sluice. On PostgreSQL that statement locks the chosen row
    while it runs (SKIP LOCKED: simultaneous choosers get different items); when it finds
    nothing, a second statement without locks confirms it.
    """
    if worker.is_blocked:
        return None
    lock = connection.features.has_select_for_update_skip_locked
    sql, params = _choose_sql(project, worker, lock=lock, after_item_id=after_item_id)
    # No transaction block of its own: in autocommit the statement is its own transaction, so
    # the row lock lasts exactly as long as it did inside an atomic block holding only this
    # statement (until the row is read), without the BEGIN and COMMIT round trips; inside a
    # caller's transaction it lasts until that ends, as before. SQLite: a plain autocommit read
    # (an IMMEDIATE transaction would take the write lock).
    # Values are parameters; only model table names and constants are formatted into ``sql``.
    items = load_items(project=project, where=f"{ITEM_ALIAS}.id = {sql}", params=params)
    if not items and lock:
        # SKIP LOCKED also skips open items that are only locked for a moment (another
        # chooser reading them, a submit storing an answer to them): with few items left, all
        # of them can be, and the worker would be told "nothing left" while work remains. So
        # "nothing" is confirmed by choosing again without row locks (two workers may then be
        # shown the same item: the submit's capacity re-check decides, as always).
        sql, params = _choose_sql(project, worker, lock=False, after_item_id=after_item_id)
        items = load_items(project=project, where=f"{ITEM_ALIAS}.id = {sql}", params=params)
    return items[0] if items else None
