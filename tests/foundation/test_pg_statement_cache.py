"""psycopg keeps the conversion of the annotator's long statements
(``annotation.pg_statement_cache``): the next-item statement is converted once per process, not
on every submit."""

from unittest import mock

import pytest
from django.db import connection

from annotation import pg_statement_cache
from annotation.selectors.annotate import SOURCE_RELATIONS
from annotation.sql import rows
from annotation.sql.work_queue import chosen_and_leased, next_item_id
from tests.factories import local_submit, rewrite_project


def test_the_limit_covers_every_kinds_next_item_statement():
    from psycopg import _queries

    assert _queries.MAX_CACHED_STATEMENT_LENGTH == pg_statement_cache.STATEMENT_BYTES
    sizes = []
    for kind, paths in SOURCE_RELATIONS.items():
        for after_given in (True, False):
            choose = next_item_id(conversation=kind == "rewrite", lock=True,
                                  after_given=after_given)
            select = rows.items_select(paths, "default").sql
            where = " (item.id = (SELECT item_id FROM leased)) ORDER BY item.id"
            statement = f"{chosen_and_leased(choose)}{select}{where}"
            sizes.append(len(statement.encode()))
    # Most over psycopg's own 4,096 bytes (the reason for the setting), all well under the new
    # limit.
    assert sorted(sizes)[1] > 4096 and max(sizes) < pg_statement_cache.STATEMENT_BYTES / 2


@pytest.mark.django_db
def test_a_submit_converts_no_statement_again(annotator_client):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (psycopg)")
    from psycopg import _queries

    project = rewrite_project("cached", dialogues=3)  # the longest next-item statement
    item_ids = list(project.items.order_by("position", "id").values_list("id", flat=True))
    annotator_client.get(f"/annotate/{project.slug}/")
    local_submit(annotator_client, project, item_ids[0], {"rewrite": "Who founded it?"})
    with mock.patch.object(_queries, "_query2pg_nocache",
                           wraps=_queries._query2pg_nocache) as uncached:
        answer = local_submit(annotator_client, project, item_ids[1],
                              {"rewrite": "When did it close?"})
    assert answer.status_code == 200 and answer.json()["next"] is not None
    assert uncached.call_count == 0
