"""The app keeps the hot tables' planner statistics fresh itself (annotation/services/statistics):
an import, a split and a collection ANALYZE what they grew, the periodic job what grew since,
and a prepared statement's plan follows the new statistics. PostgreSQL only (SQLite: no-ops)."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from annotation import tasks
from annotation.models import Annotation, Item, Worker
from annotation.services import statistics
from annotation.services.imports import import_files
from annotation.services.splits import project_split

DEMO_DATA = Path(__file__).resolve().parents[2] / "annotation" / "demo_data"
WORKER_TABLE = Worker._meta.db_table

postgres_only = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")),
    reason="planner statistics are PostgreSQL's (DATABASE_URL is not PostgreSQL)")


def counted_rows(model) -> float:
    """The rows the planner believes ``model``'s table has (pg_class.reltuples, set by ANALYZE;
    -1 before the first)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)",
                       [model._meta.db_table])
        return cursor.fetchone()[0]


def report_counters() -> None:
    """Make this session report its row counters now (it does so about once a second)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT 1")


def add_workers(count: int, prefix: str = "w") -> None:
    Worker.objects.bulk_create(Worker(provider="local", external_id=f"{prefix}{n}")
                               for n in range(count))


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_an_import_leaves_its_tables_analyzed():
    statistics.planner_statistics_refresh()
    assert counted_rows(Item) == 0
    import_files(fmt="claire", paths=[DEMO_DATA / "claire" / "dev_data.tsv"],
                 project_slug="fresh", split="dev")
    assert counted_rows(Item) == Item.objects.count() > 0


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_split_that_moves_items_analyzes_the_item_table():
    import_files(fmt="claire", paths=[DEMO_DATA / "claire" / "dev_data.tsv"],
                 project_slug="fresh", split="dev")
    before = analyze_count(Item)
    result = project_split(project=Item.objects.first().project, rule="group", seed=1)
    assert result.moved_items > 0
    assert analyze_count(Item) == before + 1


def analyze_count(model) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT analyze_count FROM pg_stat_user_tables WHERE relid = "
                       "to_regclass(%s)", [model._meta.db_table])
        return cursor.fetchone()[0]


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_periodic_job_analyzes_the_tables_that_grew_and_only_those(settings):
    settings.UNPACK_ANALYZE_GROWTH = 0.2
    add_workers(2000)
    report_counters()  # before the ANALYZE that resets them
    statistics.planner_statistics_refresh()
    assert counted_rows(Worker) == 2000
    add_workers(300, prefix="small")  # 15 %: below the growth fraction
    report_counters()
    assert statistics.tables_grown() == []
    add_workers(1000, prefix="big")  # now 1,300 changed rows: 65 % of the 2,000 counted
    report_counters()
    assert statistics.tables_grown() == [WORKER_TABLE]
    # Through the Celery task beat runs (inline here), as deployed.
    assert tasks.refresh_planner_statistics.delay().get() == [WORKER_TABLE]
    assert counted_rows(Worker) == 3300
    assert statistics.tables_grown() == []


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_collection_counts_the_rows_it_just_wrote():
    statistics.planner_statistics_refresh()
    assert statistics.tables_grown(written={Annotation: 499}) == []
    # Rows a caller reports are counted before the session's own counters are.
    assert statistics.tables_grown(written={Annotation: 500}) == [Annotation._meta.db_table]


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_refresh_under_way_elsewhere_is_not_repeated():
    url = connection.settings_dict
    with psycopg.connect(dbname=url["NAME"], host=url["HOST"], port=url["PORT"] or 5432,
                         user=url["USER"], autocommit=True) as other, other.transaction():
        other.execute("SELECT pg_advisory_xact_lock(%s)", [statistics.ADVISORY_LOCK_KEY])
        assert statistics.planner_statistics_refresh() == []
    assert statistics.planner_statistics_refresh() == statistics._tables(statistics.HOT_MODELS)


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_prepared_statement_is_planned_again_on_the_new_statistics():
    """What the app's connections run is prepared (DATABASE_PREPARE_THRESHOLD) and, after five
    runs, may keep one generic plan. That plan was made for the statistics of its time: it
    stays while they do, however much the table grows, and is made again on the next run once
    an ANALYZE (here from another connection, as the periodic job's) updated them."""
    add_workers(10)
    statistics.planner_statistics_refresh()
    settings_dict = connection.settings_dict
    with psycopg.connect(dbname=settings_dict["NAME"], host=settings_dict["HOST"],
                         port=settings_dict["PORT"] or 5432, user=settings_dict["USER"],
                         autocommit=True) as app:
        app.execute("SET plan_cache_mode = force_generic_plan")  # what auto settles on
        app.execute(f"PREPARE next_worker(bigint) AS SELECT external_id "  # noqa: S608
                    f"FROM {WORKER_TABLE} WHERE id > $1 ORDER BY id LIMIT 1")  # a model's table

        def plan() -> str:
            return "\n".join(row[0] for row in app.execute("EXPLAIN EXECUTE next_worker(0)"))

        assert "Seq Scan" in plan()  # 10 rows: reading the one page and sorting is cheapest
        add_workers(50_000, prefix="more")
        assert "Seq Scan" in plan()  # the old plan, on 50,000 rows now
        statistics.planner_statistics_refresh(of=[Worker])
        assert "Index Scan" in plan() and "Seq Scan" not in plan()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_qc_refreshes_the_flags_statistics_once_it_stored_enough_flags(monkeypatch, settings):
    from annotation.models import Flag
    from annotation.services.qc import project_qc_run
    from tests.factories import annotate, canard_sample, workers

    settings.UNPACK_ANALYZE_GROWTH = 0.0
    project, items = canard_sample()
    annotate(items[1], workers(1)[0], text="When did they disband?")  # a pronoun left: a flag
    statistics.planner_statistics_refresh()  # every table analyzed, the flags table empty
    assert counted_rows(Flag) == 0
    monkeypatch.setattr(statistics, "MIN_CHANGED_ROWS", 1000)  # too few flags for a refresh
    project_qc_run(project=project)
    flags = Flag.objects.count()
    assert flags >= 1 and counted_rows(Flag) == 0
    monkeypatch.setattr(statistics, "MIN_CHANGED_ROWS", 1)  # enough now
    Flag.objects.all().delete()
    report_counters()
    statistics.planner_statistics_refresh()
    assert counted_rows(Flag) == 0
    project_qc_run(project=project)
    assert counted_rows(Flag) == flags  # QC's own refresh analyzed the flags table
