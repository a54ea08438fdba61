"""The admin's changelists of the big tables: a fixed number of queries per page, a bounded
count, exact indexed search (issue 21)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import admin_scale
from annotation.models import Flag, StatusEvent
from tests.factories import annotate, claire_sample, flagged_rewrites, workers

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/admin/annotation/flag/", "/admin/annotation/statusevent/",
                                 "/admin/annotation/annotation/",
                                 "/admin/annotation/worker/"])
def test_a_changelist_runs_the_same_queries_for_3_or_30_rows(url, admin_client,
                                                             django_assert_num_queries):
    project, _ = flagged_rewrites(1)
    for flag in Flag.objects.all():
        StatusEvent.objects.create(flag=flag, worker=flag.worker, kind="flag_raised")
    admin_client.get(url)
    with CaptureQueriesContext(connection) as few:
        assert admin_client.get(url).status_code == 200
    flagged_rewrites(10, (project, list(project.items.order_by("pk"))), first=1)
    for flag in Flag.objects.filter(status="open"):
        StatusEvent.objects.create(flag=flag, worker=flag.worker, assignment=flag.assignment,
                                   kind="flag_raised")
    with django_assert_num_queries(len(few.captured_queries)):
        assert admin_client.get(url).status_code == 200


def test_annotation_search_matches_whole_ids_only(admin_client):
    _, items = claire_sample()
    one, two = workers(2)
    first = annotate(items[0], one, rating=1, text="needle in the text")
    second = annotate(items[1], two, rating=2)
    url = "/admin/annotation/annotation/?q="

    def found(term):
        page = admin_client.get(url + term).content.decode()
        return {pk for pk in (first.pk, second.pk)
                if f'href="/admin/annotation/annotation/{pk}/change/' in page}

    assert found(two.external_id) == {second.pk}
    assert found(items[0].external_id) == {first.pk}
    assert found(str(second.pk)) == {second.pk}
    assert found("needle") == set()  # no substring scan of every answer's text
    assert found(two.external_id[:-1]) == set()
    assert found("9" * 30) == set()  # past a bigint: no error


def test_a_long_list_is_counted_to_its_limit_and_says_so(admin_client, monkeypatch):
    monkeypatch.setattr(admin_scale.BoundedCountPaginator, "limit", 3)
    _, items = claire_sample()
    for worker in workers(5):
        annotate(items[0], worker, rating=3)
    page = admin_client.get("/admin/annotation/annotation/").content.decode()
    assert "More than 3 annotations" in page
    assert "Select all 4" not in page  # no "all N" it did not count
    searched = admin_client.get(f"/admin/annotation/annotation/?q={items[0].external_id}")
    assert "more than 3 results" in searched.content.decode()
    monkeypatch.setattr(admin_scale.BoundedCountPaginator, "limit", 10)
    page = admin_client.get("/admin/annotation/annotation/").content.decode()
    assert "5 annotations" in page and "More than" not in page
