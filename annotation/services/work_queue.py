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
from ..sql.work_queue import next_item_id

# Where a worker starts looking in a project's id range: the fractional part of pk × the golden
# ratio conjugate scatters consecutive workers evenly over [0, 1), so concurrent annotators start
# on different items (no lock contention, no "completed meanwhile" on SQLite).
SPREAD_FACTOR = 0.6180339887498949


def _choose_sql(project: Project, worker: Worker, *, lock: bool,
                after_item_id: int | None = None) -> tuple[str, dict]:
    """The choosing statement (``annotation.sql.work_queue``) and its named parameters."""
    sql = next_item_id(conversation=project.kind == TaskKind.REWRITE, lock=lock,
                       after_given=after_item_id is not None)
    params = {"project_id": project.pk, "worker_id": worker.pk,
              "counted": Annotation.State.COUNTED,
              "pivot": (worker.pk * SPREAD_FACTOR) % 1.0,
              **{f"required_{split}": project.redundancy_for(split) for split in Split.values}}
    if after_item_id is not None:
        params["after_item_id"] = after_item_id
    return sql, params


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
