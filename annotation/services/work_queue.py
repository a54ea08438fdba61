"""Which item a local annotator gets next.

Contract of ``work_queue_next_item``: an item of the project that

* this worker has not annotated yet, and
* still has an open slot: fewer counted annotations (``Annotation.State.COUNTED``, see
  ``annotation.services.annotations.annotation_state``) plus live leases of other annotators
  than it needs (``annotation.services.annotations.slots_required``: its adaptive target,
  ``Item.target_answers``, else ``services.adaptive.slots_by_split``: the split's redundancy or
  the adaptive policy's ``start``);

or ``None`` when there is none or the worker is blocked. The item handed out is leased to the
worker (``ItemLease``) for ``LEASE_SECONDS``; their page renews the lease while it is open
(``item_leases_renew``, which also tells the page when the item can no longer be used). An
answer replaces its lease (a lease of a worker who answered the item is not counted), and an
expired lease counts for nothing, so an abandoned page holds its slot for at most
``LEASE_SECONDS``.

Concurrency. Leases make it rare that two annotators work on the last slot of an item; the
guarantee does not depend on them:

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
   Two workers may still be *shown* the last open slot (a lease that expired, two choosers in
   the same instant); only the first to submit fills it, the second is told the item is complete
   and gets the next one.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from ..models import Annotation, Item, ItemLease, Project, TaskKind, Worker
from ..selectors.annotate import ITEM_ALIAS, load_items
from ..sql.work_queue import (
    LEASE,
    LEASED,
    chosen_and_leased,
    next_item_id,
    open_item_condition,
)
from . import gold
from .adaptive import slots_by_split

#: How long an item shown to an annotator stays reserved for them without a renewal; their page
#: renews it every third of that while it is open.
LEASE_SECONDS = 90

# Where a worker starts looking in a project's id range: the fractional part of pk × the golden
# ratio conjugate scatters consecutive workers evenly over [0, 1), so concurrent annotators start
# on different items (no lock contention, no "completed meanwhile" on SQLite).
SPREAD_FACTOR = 0.6180339887498949


def _db_time(moment: datetime):
    """A time as a raw statement's parameter, stored as the ORM stores it (SQLite: text)."""
    return connection.ops.adapt_datetimefield_value(moment)


def _lease(*, item_id: int, worker: Worker, now: datetime) -> None:
    """Lease the item to the worker from ``now``: it is being handed to them now (the lease's
    ``served_at``)."""
    params = {"item_id": item_id, "worker_id": worker.pk,
              "expires_at": _db_time(now + timedelta(seconds=LEASE_SECONDS)),
              "served_at": _db_time(now)}
    with connection.cursor() as cursor:
        cursor.execute(LEASE, params)


def _open_params(project: Project, worker: Worker, now: datetime) -> dict:
    return {"project_id": project.pk, "worker_id": worker.pk,
            "counted": Annotation.State.COUNTED, "now": _db_time(now),
            **{f"required_{split}": slots
               for split, slots in slots_by_split(project).items()}}


def open_items_where(*, project: Project, worker: Worker) -> tuple[str, dict]:
    """SQL condition (and named parameters) on an item aliased ``i``: open for ``worker`` in
    ``project`` — the rule this queue chooses by, for readers that count (progress)."""
    return open_item_condition(), _open_params(project, worker, timezone.now())


def _choose_sql(project: Project, worker: Worker, *, lock: bool,
                after_item_id: int | None = None, now: datetime | None = None,
                skip_after: bool = False) -> tuple[str, dict]:
    """The choosing statement (``annotation.sql.work_queue``) and its named parameters."""
    sql = next_item_id(conversation=project.kind == TaskKind.REWRITE, lock=lock,
                       after_given=after_item_id is not None, skip_after=skip_after)
    params = {**_open_params(project, worker, now or timezone.now()),
              "pivot": (worker.pk * SPREAD_FACTOR) % 1.0}
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

    The item comes with ``project`` and the source material its page shows, leased to the
    worker as served now (``ItemLease.served_at``, which their answer's INSERT reads). On
    PostgreSQL choosing, leasing and loading are ONE statement (``chosen_and_leased``), which
    locks the chosen row until its lease is committed (SKIP LOCKED: simultaneous choosers get
    different items); when it finds nothing, a statement without locks confirms it, as on
    SQLite, where choosing and loading are one statement and leasing another. Plus the
    dialogue turns for rewrite and sluice.
    """
    if worker.is_blocked:
        return None
    now = timezone.now()
    gold_item = _gold_item(project, worker, now=now, after_item_id=after_item_id)
    if gold_item is not None:
        _lease(item_id=gold_item.pk, worker=worker, now=now)
        return gold_item
    if connection.features.has_select_for_update_skip_locked:
        # PostgreSQL: choose (the chosen row locked, SKIP LOCKED), lease and load in ONE
        # statement; the row stays locked until the statement ends, by which time its lease
        # is committed with it, so a simultaneous chooser skips it and, after, counts it.
        sql, params = _choose_sql(project, worker, lock=True, after_item_id=after_item_id,
                                  now=now)
        params.update(expires_at=_db_time(now + timedelta(seconds=LEASE_SECONDS)),
                      served_at=_db_time(now))
        leased = f"{ITEM_ALIAS}.id = (SELECT item_id FROM {LEASED})"  # noqa: S608
        items = load_items(project=project, where=leased, params=params,
                           with_clause=chosen_and_leased(sql))
        if items:
            return items[0]
        # SKIP LOCKED also skips open items that are only locked for a moment (another
        # chooser reading them, a submit storing an answer to them): with few items left, all
        # of them can be, and the worker would be told "nothing left" while work remains. So
        # "nothing" is confirmed by choosing again without row locks (two workers may then be
        # shown the same item: the submit's capacity re-check decides, as always).
    # SQLite (and PostgreSQL's confirmation): a plain autocommit read (on SQLite an IMMEDIATE
    # transaction would take the write lock for it), then the lease in its own statement.
    item = _chosen_without_lock(project, worker, after_item_id=after_item_id, now=now)
    if item is not None:
        _lease(item_id=item.pk, worker=worker, now=now)
    return item


def _chosen_without_lock(project: Project, worker: Worker, *, after_item_id: int | None,
                         now: datetime, skip_after: bool = False) -> Item | None:
    sql, params = _choose_sql(project, worker, lock=False, after_item_id=after_item_id, now=now,
                              skip_after=skip_after)
    items = load_items(project=project, where=f"{ITEM_ALIAS}.id = {sql}", params=params)
    return items[0] if items else None


def work_queue_next_item_before_answer(*, project: Project, worker: Worker,
                                       answered_item_id: int) -> Item | None:
    """The item ``work_queue_next_item(after_item_id=answered_item_id)`` will choose once the
    worker's answer to ``answered_item_id`` is stored, chosen now, before it is (that item
    itself excluded), by a plain read and NOT leased: lease it with ``work_queue_lease`` in the
    transaction that stores the answer. For SQLite, where that transaction holds the
    database's one write lock: the choice is made before it, and the answer and the lease are
    one write."""
    if worker.is_blocked:
        return None
    now = timezone.now()
    gold_item = _gold_item(project, worker, now=now, after_item_id=answered_item_id,
                           answering=True)
    if gold_item is not None:
        return gold_item
    return _chosen_without_lock(project, worker, after_item_id=answered_item_id,
                                now=now, skip_after=True)


def _gold_item(project: Project, worker: Worker, *, now: datetime,
               after_item_id: int | None, answering: bool = False) -> Item | None:
    """The gold item to serve ``worker`` next (not leased), when one is due at the project's
    gold rate, they have one left to answer and the queue still has the project's own work
    for them (gold items are mixed into work, never served instead of it); otherwise None.
    ``answering``: the answer to ``after_item_id`` is being stored and counts already."""
    if not gold.gold_item_due(project=project, worker=worker,
                              answering=after_item_id if answering else None):
        return None
    gold_item_id = gold.gold_item_for(project=project, worker=worker,
                                      excluding=after_item_id if answering else None)
    if gold_item_id is None:
        return None
    sql, params = _choose_sql(project, worker, lock=False, after_item_id=after_item_id,
                              now=now, skip_after=answering)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {sql} AS real_work_left", params)
        if cursor.fetchone()[0] is None:
            return None
    items = load_items(project=project, where=f"{ITEM_ALIAS}.id = %(gold_item_id)s",
                       params={"gold_item_id": gold_item_id})
    return items[0] if items else None


def work_queue_lease(*, item: Item, worker: Worker) -> None:
    """Lease ``item`` to ``worker`` as served now (see ``work_queue_next_item_before_answer``)."""
    _lease(item_id=item.pk, worker=worker, now=timezone.now())


#: The most leases one annotator renews in a project: a page's worth (a local page shows one
#: item; a second tab, or the item a submit's answer handed out while the page still shows the
#: last one, makes two). A renewal never creates a lease.
PAGE_LEASES = 2


@transaction.atomic
def item_leases_renew(*, project: Project, worker: Worker, item_ids: Iterable[int]
                      ) -> list[int]:
    """Renew ``worker``'s leases on the items of ``project`` their page shows (``item_ids``);
    the ids of those that can no longer be used: other annotators' counted answers filled them
    meanwhile (the worker's lease had expired). Those are not renewed.

    Only items the queue served to the worker are renewed (a lease of theirs with a
    ``served_at``) among the :data:`PAGE_LEASES` they were served last in the project: ids of
    items never served to them, of other projects, or served before those are ignored, so
    nobody holds items they were never shown (issue 26, point 2). A blocked worker renews
    nothing."""
    ids = {int(item_id) for item_id in item_ids}
    if worker.is_blocked or not ids:
        return []
    latest = ItemLease.objects.filter(worker=worker, item__project=project,
                                      served_at__isnull=False).order_by("-served_at", "-pk")
    served = [item_id for item_id in latest.values_list("item_id", flat=True)[:PAGE_LEASES]
              if item_id in ids]
    defaults = slots_by_split(project)
    required = {item_id: target if target is not None else defaults[split]
                for item_id, split, target in Item.objects.filter(pk__in=served).values_list(
                    "pk", "split", "target_answers")}
    filled = dict(Annotation.objects.filter(item_id__in=required,
                                            state=Annotation.State.COUNTED)
                  .exclude(worker=worker).values("item_id").annotate(n=Count("pk"))
                  .values_list("item_id", "n"))
    unusable = sorted(item_id for item_id, slots in required.items()
                      if filled.get(item_id, 0) >= slots)
    renewed = required.keys() - set(unusable)
    if renewed:
        ItemLease.objects.filter(worker=worker, item_id__in=renewed).update(
            expires_at=timezone.now() + timedelta(seconds=LEASE_SECONDS))
    return unusable
