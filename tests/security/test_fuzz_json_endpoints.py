"""Property-based fuzz of the JSON endpoints outside the API besides the submits (those are in
``test_fuzz_submit.py``; the Prolific doors in ``tests/prolific/test_fuzz_bodies.py``; the API is
schemathesis's, ``test_schemathesis.py``): whatever the body, never a server error, and a refused
body changes nothing. And a check that this list of fuzzed endpoints is every JSON endpoint the
project serves, so a new one cannot be added unfuzzed (issue 26, "Done when").
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from annotation.models import Annotation, Assignment, ItemLease, Worker
from tests.factories import local_submit, publish_hit, sluice_project
from tests.security.test_access import url_patterns
from tests.security.test_fuzz_submit import (
    ANY_TEXT,
    FUZZ,
    JSON,
    SUBMISSION,
    concrete,
    fuzz_world,
)

pytestmark = pytest.mark.django_db

#: Every route that reads a JSON body, with the test file that fuzzes it.
FUZZED = {
    "annotate/<slug:slug>/submit/": "tests/security/test_fuzz_submit.py",
    "mturk/task/<slug:slug>/submit/": "tests/security/test_fuzz_submit.py",
    "prolific/task/<slug:slug>/submit/": "tests/prolific/test_fuzz_bodies.py",
    "prolific/task/<slug:slug>/finish/": "tests/prolific/test_fuzz_bodies.py",
    "annotate/<slug:slug>/lease/": __name__,
    "annotate/<slug:slug>/revise/": __name__,
    "mturk/task/<slug:slug>/finish/": __name__,
}
SANDBOX = "https://workersandbox.mturk.com"
ITEM_IDS = st.one_of(
    st.lists(st.one_of(st.just("ITEM"), st.integers(), st.booleans(), ANY_TEXT), max_size=12),
    JSON)


@pytest.fixture
def world(django_user_model):
    """``test_fuzz_submit``'s world, plus one saved answer of the annotator (to revise)."""
    project, local, mturk, token = fuzz_world(django_user_model, items=3)
    first = project.items.order_by("id").first()
    saved = local_submit(local, project, first.pk,
                         {"full_question": "Why did he leave the band?", "skipped": False})
    assert saved.status_code == 200, saved.content
    return project, local, mturk, token, Annotation.objects.get(item=first).pk


def state() -> tuple:
    return (Annotation.objects.count(), Assignment.objects.count(), Worker.objects.count(),
            sorted(ItemLease.objects.values_list("item_id", "worker_id", "expires_at")))


def post(client, url: str, body) -> int:
    before = state()
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code < 500, (body, response.content[:500])
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    if response.status_code >= 400:
        assert state() == before, body
    return response.status_code


@FUZZ
@given(item_ids=ITEM_IDS, extra=st.dictionaries(ANY_TEXT, JSON, max_size=3))
def test_the_lease_renewal_never_fails_with_a_server_error(world, item_ids, extra):
    project, local, *_ = world
    if isinstance(item_ids, list):
        first = project.items.order_by("id").first().pk
        item_ids = [first if value == "ITEM" else value for value in item_ids]
    post(local, f"/annotate/{project.slug}/lease/", {**extra, "item_ids": item_ids})


@FUZZ
@given(body=st.one_of(SUBMISSION, JSON),
       replaces=st.one_of(st.just("ANSWER"), st.integers(), st.booleans(), ANY_TEXT, JSON))
def test_the_revise_endpoint_never_fails_with_a_server_error(world, body, replaces):
    project, local, _, token, answer_id = world
    body = concrete(body, project, token)
    if isinstance(body, dict):
        body = {**body, "replaces": answer_id if replaces == "ANSWER" else replaces}
    post(local, f"/annotate/{project.slug}/revise/", body)


@FUZZ
@given(body=st.one_of(
    st.fixed_dictionaries({"task_token": st.one_of(st.just("TASK"), ANY_TEXT)},
                          optional={"extra": JSON}),
    JSON))
def test_the_mturk_finish_never_fails_with_a_server_error(world, body):
    project, _, mturk, token, _ = world
    post(mturk, f"/mturk/task/{project.slug}/finish/", concrete(body, project, token))


def json_endpoints(django_user_model) -> set[str]:
    """Routes (outside the admin and the API) that answer a logged-in POST of a JSON body with
    JSON, found by asking every route: slugs filled with a real project's, numbers with 1.
    Refusals before any body is read (403, 404, 405: the error pages answer a JSON request in
    JSON) say nothing about the route."""
    project = sluice_project(slug="probe", items=1)
    publish_hit(project)
    users = [django_user_model.objects.create_superuser(f"probe-su-{uuid.uuid4().hex[:6]}"),
             django_user_model.objects.create_user(f"probe-an-{uuid.uuid4().hex[:6]}")]
    found = set()
    for route, _ in url_patterns():
        if route.startswith(("admin/", "api/")):
            continue
        url = re.sub(r"<slug:\w+>", project.slug, route)
        url = "/" + re.sub(r"<(str|path):\w+>", "x", re.sub(r"<int:\w+>", "1", url))
        for user in users:
            client = Client(raise_request_exception=False)
            client.force_login(user)
            answer = client.post(url, json.dumps({"probe": True}),
                                 content_type="application/json")
            reads_json = answer.get("Content-Type", "").startswith("application/json")
            if reads_json and answer.status_code not in (403, 404, 405):
                found.add(route)
    return found


def test_every_json_endpoint_is_fuzzed(django_user_model):
    found = json_endpoints(django_user_model)
    assert "annotate/<slug:slug>/lease/" in found  # the probe finds what it should
    assert found - FUZZED.keys() == set(), "JSON endpoints nobody fuzzes"
    assert FUZZED.keys() - found == set(), "fuzzed routes that no longer read JSON"
