"""The API's staff lists run a fixed number of queries whatever the number of rows and the
page (issue 21: no N+1 on /api/annotations/, /api/items/, /api/batches/, /api/projects/)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import annotate, claire_sample, publish_hit, sluice_project, workers

pytestmark = pytest.mark.django_db


def queries_for(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, (url, response.content[:300])
    return len(queries.captured_queries)


def lists(project) -> list[str]:
    slug = project.slug
    first = project.annotations.order_by("pk").values_list("pk", flat=True).first()
    item = project.items.order_by("pk").values_list("pk", flat=True).first()
    return [f"/api/annotations/?project={slug}&limit=1000",
            f"/api/annotations/?project={slug}&limit=1000&after={first}",
            f"/api/annotations/?project={slug}&limit=1000&offset=2",
            f"/api/items/?project={slug}&limit=1000",
            f"/api/items/?project={slug}&limit=1000&after={item}",
            "/api/batches/", "/api/projects/"]


def test_list_queries_do_not_grow_with_the_rows(staff_client):
    project, items = claire_sample()
    crowd = workers(3)
    annotate(items[0], crowd[0], rating=3)
    annotate(items[1], crowd[1], rating=4)
    annotate(items[2], crowd[2], rating=5)  # every page has a row (offset=2 too)
    publish_hit(project, hit_id="HITA")
    small = [queries_for(staff_client, url) for url in lists(project)]
    assert max(small) <= 4, small
    # Ten times the answers, more workers, batches and projects: the same number of queries.
    for item in items:
        for worker in crowd:
            if not item.annotations.filter(worker=worker).exists():
                annotate(item, worker, rating=2)
    publish_hit(project, hit_id="HITB")
    publish_hit(sluice_project(items=2), hit_id="HITC")
    assert project.annotations.count() >= 10
    assert [queries_for(staff_client, url) for url in lists(project)] == small
