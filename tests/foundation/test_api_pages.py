"""The API's long lists (items, annotations) page by keyset: ``?after=<id>`` and a ``next``
link, no count, a bounded ``?offset=`` (issue 21)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import annotate, claire_sample, workers

pytestmark = pytest.mark.django_db


@pytest.fixture
def answers():
    project, items = claire_sample()
    crowd = workers(2)
    return project, sorted(annotate(item, worker, rating=3).pk
                           for item in items for worker in crowd)


def test_next_links_walk_every_row_once_in_id_order(staff_client, answers):
    project, ids = answers
    url, seen, pages = f"/api/annotations/?project={project.slug}&limit=3", [], 0
    while url:
        body = staff_client.get(url).json()
        assert "count" not in body
        seen += [row["id"] for row in body["results"]]
        url, pages = body["next"], pages + 1
    assert seen == ids and pages == 4  # 10 rows: 3 + 3 + 3 + 1
    items = staff_client.get(f"/api/items/?project={project.slug}&limit=2").json()
    assert len(items["results"]) == 2 and f"after={items['results'][1]['id']}" in items["next"]


def test_a_deep_page_reads_from_its_key_without_skipping_or_counting(staff_client, answers):
    project, ids = answers
    with CaptureQueriesContext(connection) as queries:
        body = staff_client.get(f"/api/annotations/?project={project.slug}&limit=2"
                                f"&after={ids[5]}").json()
    assert [row["id"] for row in body["results"]] == ids[6:8]
    sql = " ".join(query["sql"] for query in queries.captured_queries).upper()
    assert "OFFSET" not in sql and "COUNT(" not in sql


def test_offset_still_works_up_to_its_bound(staff_client, answers):
    project, ids = answers
    body = staff_client.get(f"/api/annotations/?project={project.slug}&limit=2&offset=3").json()
    assert [row["id"] for row in body["results"]] == ids[3:5]
    assert "offset" not in body["next"] and f"after={ids[4]}" in body["next"]
    assert staff_client.get("/api/annotations/?offset=10000").status_code == 200
    for bad in ("offset=10001", "offset=-1", "after=x", "after=9223372036854775808"):
        response = staff_client.get(f"/api/annotations/?{bad}")
        assert response.status_code == 400, bad
    assert "?after=" in staff_client.get("/api/items/?offset=20000").json()["offset"][0]


def test_limit_stays_capped_at_1000(staff_client, answers):
    _, ids = answers
    body = staff_client.get("/api/annotations/?limit=5000").json()
    assert [row["id"] for row in body["results"]] == ids and body["next"] is None


def test_the_schema_describes_the_keyset_pages(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/annotations/"]["get"]
    names = {parameter["name"] for parameter in operation["parameters"]}
    assert {"limit", "after", "offset"} <= names
    page = next(iter(schema["components"]["schemas"][name] for name in
                     schema["components"]["schemas"] if name == "PaginatedAnnotationList"))
    assert set(page["properties"]) == {"next", "results"}
