"""The API's staff lists run a fixed number of queries whatever the number of rows and the
page (issue 21: no N+1 on /api/annotations/, /api/items/, /api/batches/, /api/projects/)."""

from __future__ import annotations

import json

import pytest
from django.core.serializers.json import DjangoJSONEncoder
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


def test_the_answer_list_writes_what_the_serializer_writes(staff_client):
    """The list reads plain rows (no model instance per answer) and writes them as
    ``AnnotationSerializer`` does, value for value, in the same field order: ratings,
    categories, texts, empty and null times, JSON columns, workers of two providers; and its
    ``next`` link keys on the last row's id."""
    from datetime import UTC, datetime

    from annotation.api.serializers import AnnotationSerializer
    from annotation.models import Annotation
    from tests.factories import decontext_sample

    _, items = claire_sample()
    first, second = workers(2)
    second.provider, second.external_id = "prolific", "P0123456789"
    second.save()
    annotate(items[0], first, rating=3.5, duration_ms=1_250, payload={"rating": 3.5},
             started_at=datetime(2026, 11, 1, 12, 0, 0, 123_456, tzinfo=UTC),
             submitted_at=datetime(2026, 11, 1, 12, 0, 9, tzinfo=UTC),
             overridden_warnings=[{"code": "too_quick", "message": "fast"}])
    annotate(items[1], second, rating=None, skipped=True, provenance={"from": "import"})
    annotate(items[2], first, rating=1)
    _, sentence = decontext_sample()
    annotate(sentence, second, category="DONE", text="Bob said <b>hi</b>.",
             edit_operations=[{"op": "add", "text": "Bob"}])
    expected = [AnnotationSerializer(answer).data for answer in
                Annotation.objects.select_related("worker", "project").order_by("pk")]
    response = staff_client.get("/api/annotations/?limit=3")
    page = response.json()
    rest = staff_client.get(page["next"]).json()
    listed = page["results"] + rest["results"]
    assert [list(row) for row in listed] == [list(row) for row in expected]
    assert listed == json.loads(json.dumps(expected, cls=DjangoJSONEncoder))
    assert f"after={expected[2]['id']}" in page["next"]
    assert rest["next"] is None and len(listed) == 4


def test_the_project_filter_is_on_the_id_not_a_join_to_the_slug(staff_client):
    """Joined to the project by slug, the planner guessed the project's rows from an average
    and sorted every item of it for a deep ``?offset=`` (1.5 s at 1,000,000 answers); on the
    id it walks the primary key. An unknown project is an empty list."""
    project, items = claire_sample()
    annotate(items[0], workers(1)[0], rating=3)
    for url in (f"/api/items/?project={project.slug}&limit=10&offset=1",
                f"/api/annotations/?project={project.slug}&limit=10&offset=0"):
        with CaptureQueriesContext(connection) as queries:
            response = staff_client.get(url)
        assert response.status_code == 200 and response.json()["results"]
        listing = [q["sql"] for q in queries.captured_queries
                   if "LIMIT" in q["sql"] and ("annotation_item" in q["sql"].split("FROM")[1]
                                               or "annotation_annotation" in
                                               q["sql"].split("FROM")[1])][-1]
        where = listing.split(" WHERE ", 1)[1]
        assert '"slug"' not in where and f'"project_id" = {project.pk}' in where, where
    for url in ("/api/items/?project=no-such-project", "/api/annotations/?project=no-such"):
        assert staff_client.get(url).json()["results"] == []
