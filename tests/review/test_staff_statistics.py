"""Every table a staff page reads is one whose planner statistics the app refreshes (issue 21:
``annotation_flag`` was never analyzed, and the queue's flag query was planned for 1 row)."""

from __future__ import annotations

import os
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Flag
from annotation.services import statistics
from tests.factories import hostile_world, staff_pages

pytestmark = pytest.mark.django_db

#: Tables that do not grow with the work: users, their groups and permissions.
NOT_GROWING = re.compile(r"^(auth_|django_content_type$)")
TABLE = re.compile(r'(?:FROM|JOIN)\s+"?([a-z_]+)"?', re.IGNORECASE)


def test_the_staff_pages_read_only_tables_whose_statistics_are_refreshed(admin_client):
    world = hostile_world()
    pages = [url for url in staff_pages(world) if not url.startswith("/admin/")]
    pages += [f"/staff/review/{world.plausibility.slug}/?by=answer",
              "/admin/annotation/annotation/", "/admin/annotation/flag/",
              "/admin/annotation/statusevent/"]
    read = set()
    for url in pages:
        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get(url).status_code == 200, url
        for query in queries.captured_queries:
            read |= set(TABLE.findall(query["sql"]))
    refreshed = set(statistics._tables(statistics.HOT_MODELS))
    assert Flag._meta.db_table in read  # the pages were read, with their flags
    missing = {table for table in read - refreshed if not NOT_GROWING.match(table)}
    # CTE names of hand-written statements are not tables
    missing -= {"open_flags", "g", "page", "ranked", "totals"}
    assert missing == set()


@pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                    reason="planner statistics are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_a_refresh_analyzes_the_flag_and_audit_tables():
    def analyzed(table: str) -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute("SELECT analyze_count FROM pg_stat_user_tables WHERE relid = "
                           "to_regclass(%s)", [table])
            return cursor.fetchone()[0]

    tables = ("annotation_flag", "annotation_statusevent", "annotation_clozefiller",
              "django_session")
    before = {table: analyzed(table) for table in tables}
    assert set(tables) <= set(statistics.planner_statistics_refresh())
    assert all(analyzed(table) == before[table] + 1 for table in tables)
