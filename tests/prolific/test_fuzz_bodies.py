"""Property-based fuzz of the Prolific door's JSON endpoints (issue 26, "Done when": every JSON
endpoint): a real participant's page (started at the Prolific stand-in, so the first save's
session check asks it through the real client) posts generated bodies to submit and finish.
Whatever the body, never a server error, and a refused body changes nothing. The list of
fuzzed endpoints is checked complete in ``tests/security/test_fuzz_json_endpoints.py``."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from annotation.models import Annotation, Assignment, Worker
from annotation.providers.prolific import study_url
from tests.factories import prolific_study_hit, sluice_project, study_template
from tests.security.test_fuzz_submit import ANY_TEXT, FUZZ, JSON, SUBMISSION, concrete

pytestmark = pytest.mark.django_db

CODE = "C1UNPACK"


@pytest.fixture
def door(settings, fake_prolific, simulator, provider):
    """A study of one sluice item at the stand-in and a participant's open task page."""
    settings.PROLIFIC_API_URL = fake_prolific.base_url
    settings.PROLIFIC_API_TOKEN = "test-token"
    settings.PROLIFIC_COMPLETION_URL = f"{fake_prolific.base_url}/submissions/complete?cc={{code}}"
    project = sluice_project(slug="fuzz-prolific", items=2)
    template = study_template(
        external_study_url=study_url(f"https://unpack.example/prolific/task/{project.slug}/"),
        completion_code=CODE, failed_check_code="C1FAILED", internal_name=project.slug)
    published = provider.with_template(template).create_hit(
        hit_type_id="", question_xml="", max_assignments=3, lifetime_seconds=3600,
        unique_request_token="fuzz-prolific-study")
    hit = prolific_study_hit(project, study_id=published.hit_id, max_assignments=3,
                             completion_code=CODE)
    participant = simulator.participant("5f" + "0" * 22)
    task_url = simulator.start(participant, hit.provider_hit_id)["task_url"]
    client = Client(raise_request_exception=False)
    page = client.get(f"/prolific/task/{project.slug}/", dict(parse_qsl(urlsplit(task_url).query)))
    assert page.status_code == 200, page.content
    return project, client, page.context["config"]["task_token"]


def state() -> tuple[int, int, int]:
    return Annotation.objects.count(), Assignment.objects.count(), Worker.objects.count()


def post(client, url: str, body) -> None:
    before = state()
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code < 500, (body, response.content[:500])
    if response.status_code >= 400:
        assert state() == before, body


@FUZZ
@given(body=st.one_of(SUBMISSION, JSON))
def test_the_prolific_submit_never_fails_with_a_server_error(door, body):
    project, client, token = door
    if isinstance(body, dict):
        body = {**body, "task_token": body.get("task_token", "TASK")}
    post(client, f"/prolific/task/{project.slug}/submit/", concrete(body, project, token))


@FUZZ
@given(body=st.one_of(
    st.fixed_dictionaries({"task_token": st.one_of(st.just("TASK"), ANY_TEXT)},
                          optional={"extra": JSON}),
    JSON))
def test_the_prolific_finish_never_fails_with_a_server_error(door, body):
    project, client, token = door
    post(client, f"/prolific/task/{project.slug}/finish/", concrete(body, project, token))
