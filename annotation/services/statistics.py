"""The planner statistics of the hot tables, kept fresh by the app itself (PostgreSQL).

PostgreSQL chooses every plan from statistics gathered by ANALYZE. Autovacuum refreshes them
when it runs, but under heavy writes (or with autovacuum tuned down or off) they lag: the
annotation table analyzed while it was empty, then grown by annotators, made the next-item query
go from 0.3 ms to 35–74 ms and the submit throughput fall tenfold (docs/annotating.md, "Planner
statistics"). So the app refreshes them where it knows the tables changed:

* ``planner_statistics_refresh`` (unconditional) at the end of every import and after a split
  moved items;
* ``planner_statistics_refresh_grown`` (only the tables that changed by ``UNPACK_ANALYZE_GROWTH``
  of their size since their last analyze) after a collection stored answers, after QC stored
  its flags (the flags table only: the review queue's plans read it), and periodically
  (celery beat, ``annotation.tasks.refresh_planner_statistics``), for the answers local
  annotators pour in.

Prepared statements (``DATABASE_PREPARE_THRESHOLD``) do not keep a plan made for the old
statistics: PostgreSQL re-plans a prepared statement whose tables' statistics an ANALYZE
updated (tests/foundation/test_planner_statistics.py shows it on a generic plan).

One refresh at a time: an advisory lock; a refresh that finds it taken returns at once (another
process is analyzing the same tables). On SQLite every function is a no-op: its
planner needs no statistics for the hot path's index walks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection, transaction
from django.db.models import Model

from ..models import (
    Annotation,
    Assignment,
    Batch,
    Bonus,
    ClozeFiller,
    ClozeItem,
    ComplexSentence,
    Dialogue,
    DialogueTurn,
    Document,
    Flag,
    Hit,
    HitItem,
    Item,
    ItemLease,
    Job,
    Project,
    ProjectCount,
    StatusEvent,
    TargetSentence,
    Worker,
    WorkerProjectBlock,
)

#: The tables the annotator and batch hot paths read, whose row counts grow with use.
ANNOTATOR_MODELS: tuple[type[Model], ...] = (Item, Annotation, Worker, Assignment, Hit)
#: The tables the staff pages read besides those (the review queue joins flags to answers,
#: items and their source rows; the audit trail; every page reads its session): a table
#: never analyzed is planned as if nearly empty — the queue's flag query was planned for
#: 1 row of ``annotation_flag`` with 11,299 in it (issue 21).
STAFF_MODELS: tuple[type[Model], ...] = (
    Flag, StatusEvent, ClozeItem, ClozeFiller, Document, TargetSentence, Dialogue,
    DialogueTurn, ComplexSentence, HitItem, Batch, Bonus, ItemLease, Session, Project,
    ProjectCount, Job, WorkerProjectBlock)
#: Every table whose statistics the app refreshes.
HOT_MODELS: tuple[type[Model], ...] = ANNOTATOR_MODELS + STAFF_MODELS
#: Changed rows below this never trigger an ANALYZE (autovacuum's analyze threshold is 50; a
#: few hundred rows more or less do not change a plan on these tables).
MIN_CHANGED_ROWS = 500
#: pg_try_advisory_lock key of a refresh ("UNPACK-AN" read as digits, arbitrary but fixed).
ADVISORY_LOCK_KEY = 86_780_326_286


def _tables(chosen: Iterable[type[Model]]) -> list[str]:
    return [model._meta.db_table for model in chosen]


def _analyze(tables: list[str]) -> list[str]:
    """ANALYZE ``tables`` under the advisory lock; [] when another refresh holds it.

    A transaction-level lock in one transaction with the ANALYZE: behind a PgBouncer in
    transaction mode, a session-level lock and its unlock could reach different server
    connections."""
    if not tables:
        return []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [ADVISORY_LOCK_KEY])
        if not cursor.fetchone()[0]:
            return []
        # Model table names only, quoted: nothing from outside reaches this statement.
        cursor.execute("ANALYZE " + ", ".join(connection.ops.quote_name(t) for t in tables))
    return tables


def planner_statistics_refresh(*, of: Iterable[type[Model]] = HOT_MODELS) -> list[str]:
    """ANALYZE the given hot tables now; returns the tables analyzed.

    Call it once the writes committed, outside any transaction of the caller's (ANALYZE inside
    the writing transaction would hold its lock until that ends).
    """
    if connection.vendor != "postgresql":
        return []
    return _analyze(_tables(of))


def tables_grown(*, fraction: float | None = None,
                 written: Mapping[type[Model], int] | None = None,
                 of: Iterable[type[Model]] = HOT_MODELS) -> list[str]:
    """The hot tables (those of ``of``) whose rows changed since their last analyze by at least
    ``fraction`` (default ``UNPACK_ANALYZE_GROWTH``) of the rows counted then, and by
    ``MIN_CHANGED_ROWS``.

    Changed rows are PostgreSQL's ``n_mod_since_analyze`` (inserts, updates and deletes of every
    session; a session reports its counts about once a second) plus ``written``: rows the
    caller has just written and knows of, which may not be reported yet.
    """
    if connection.vendor != "postgresql":
        return []
    fraction = settings.UNPACK_ANALYZE_GROWTH if fraction is None else fraction
    extra = {model._meta.db_table: rows for model, rows in (written or {}).items()}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # this transaction's cached counts
        cursor.execute(
            "SELECT c.relname, GREATEST(c.reltuples, 0), COALESCE(s.n_mod_since_analyze, 0) "
            "FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid "
            "WHERE c.oid IN (SELECT to_regclass(name) FROM unnest(%s::text[]) AS name)",
            [_tables(of)])
        rows = cursor.fetchall()
    return [table for table, counted, changed in rows
            if changed + extra.get(table, 0) >= max(MIN_CHANGED_ROWS, fraction * counted)]


def planner_statistics_refresh_grown(*, written: Mapping[type[Model], int] | None = None,
                                     of: Iterable[type[Model]] = HOT_MODELS) -> list[str]:
    """ANALYZE the hot tables that ``tables_grown`` names; returns the tables analyzed.

    Cheap when nothing grew (one read of PostgreSQL's table counters), so it runs periodically
    and after every collection.
    """
    if connection.vendor != "postgresql":
        return []
    return _analyze(tables_grown(written=written, of=of))
