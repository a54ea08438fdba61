"""Property-based fuzz of the submit endpoints (issue 11, point 4): whatever the body, the
answer is never a server error, and a refused submission changes nothing.

Bounded (a fixed number of examples per endpoint, no deadline) so it runs in every test run.
"""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Annotation, Assignment, Worker
from tests.factories import publish_hit, sluice_project

pytestmark = pytest.mark.django_db

SANDBOX = "https://workersandbox.mturk.com"
# Any code point, lone surrogates and NUL included (json.dumps writes them as \\u escapes).
# Known troublemakers are drawn often, the rest of Unicode too.
ANY_TEXT = st.one_of(
    st.sampled_from(["Why \ud800?", "Why\x00?", "\udfff", "Why did he leave?", ""]),
    st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None),
            max_size=30))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(ANY_TEXT, children, max_size=4),
    max_leaves=12)
# Mostly well-formed submissions with hostile parts, so that bad values get past the first
# checks and reach validation and storage; and anything at all.
WARNINGS = st.lists(st.fixed_dictionaries({"code": ANY_TEXT, "message": ANY_TEXT}), max_size=3)
SUBMISSION = st.fixed_dictionaries(
    {"item_id": st.one_of(st.just("ITEM"), st.just("ITEM"), st.integers(), JSON),
     "client_token": st.one_of(st.just("TOKEN"), st.just("TOKEN"), ANY_TEXT),
     "payload": st.one_of(
         st.fixed_dictionaries({"full_question": ANY_TEXT},
                               optional={"skipped": st.booleans()}),
         st.fixed_dictionaries({"full_question": st.just("Why did he leave the band?")},
                               optional={"skipped": JSON, "extra": JSON}),
         JSON)},
    optional={"started_at": st.one_of(ANY_TEXT, st.datetimes().map(lambda d: d.isoformat()),
                                      JSON),
              "duration_ms": JSON, "client_warnings": st.one_of(WARNINGS, JSON),
              "overridden_warnings": st.one_of(WARNINGS, JSON),
              "task_token": st.one_of(st.just("TASK"), ANY_TEXT)})
FUZZ = settings(max_examples=120, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def fuzz_world(django_user_model, *, items: int) -> tuple:
    """A sluice project of ``items`` items with an MTurk HIT; a logged-in annotator who opened
    its task page (which creates their Worker) and an MTurk worker's open task page:
    ``(project, local client, mturk client, the MTurk page's task token)``."""
    project = sluice_project(slug="fuzz", items=items, redundancy={"train": 50, "dev": 50,
                                                                   "test": 50})
    publish_hit(project, max_assignments=50)
    local = Client(raise_request_exception=False)
    local.force_login(django_user_model.objects.create_user(username="fuzzer"))
    local.get(f"/annotate/{project.slug}/")
    mturk = Client(raise_request_exception=False)
    page = mturk.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": "FUZZASSIGN", "hitId": "HIT123", "workerId": "FUZZWORKER",
        "turkSubmitTo": SANDBOX})
    return project, local, mturk, page.context["config"]["task_token"]


@pytest.fixture
def world(django_user_model):
    return fuzz_world(django_user_model, items=2)


def state() -> tuple[int, int, int]:
    return Annotation.objects.count(), Assignment.objects.count(), Worker.objects.count()


def post(client, url: str, body) -> int:
    before = state()
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code < 500, (body, response.content[:500])
    if response.status_code >= 400:
        assert state() == before, body
    return response.status_code


def concrete(body, project, task_token: str):
    """Fill the placeholders: a real item id, a fresh client token, the page's task token."""
    if not isinstance(body, dict):
        return body
    body = dict(body)
    if body.get("item_id") == "ITEM":
        body["item_id"] = project.items.order_by("id").first().pk
    if body.get("client_token") == "TOKEN":
        body["client_token"] = uuid.uuid4().hex
    if body.get("task_token") == "TASK":
        body["task_token"] = task_token
    return body


@FUZZ
@given(body=st.one_of(SUBMISSION, JSON))
def test_the_local_submit_never_fails_with_a_server_error(world, body):
    project, local, _, token = world
    post(local, f"/annotate/{project.slug}/submit/", concrete(body, project, token))


@FUZZ
@given(body=st.one_of(SUBMISSION, JSON))
def test_the_mturk_submit_never_fails_with_a_server_error(world, body):
    project, _, mturk, token = world
    if isinstance(body, dict):
        body = {**body, "task_token": body.get("task_token", "TASK")}
    post(mturk, f"/mturk/task/{project.slug}/submit/", concrete(body, project, token))
