"""Bad input gets a clear 4xx and changes nothing (issue 11, point 4).

Every case here was a 500 (or was stored, to break a later page): deep JSON nesting
(RecursionError), a lone surrogate (UnicodeEncodeError), a NUL (PostgreSQL DataError), NaN (jsonb
has none), ``item_id`` ≥ 2^63 (SQLite OverflowError), ``?limit=`` ≥ 2^63, wrong types in a
project's settings, and a refused first MTurk save that left its Worker and Assignment behind.
"""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import Annotation, Assignment, Project, Worker
from annotation.services.workers import worker_for_user
from tests.factories import AnnotationFactory, publish_hit, sluice_project

pytestmark = pytest.mark.django_db

SANDBOX = "https://workersandbox.mturk.com"


def counts() -> tuple[int, int, int, int]:
    return (Annotation.objects.count(), Assignment.objects.count(), Worker.objects.count(),
            Project.objects.count())


def body_cases(item_id: int) -> dict[str, str]:
    """Raw JSON bodies (text, so that escapes such as \\ud800 reach the server as sent)."""
    def submission(payload: str, item: str = str(item_id)) -> str:
        return (f'{{"item_id": {item}, "client_token": "{uuid.uuid4().hex}", '
                f'"task_token": "TOKEN", "payload": {payload}}}')
    return {
        "deep nesting": "[" * 90_000 + "]" * 90_000,
        "deep nesting in the payload": submission('{"full_question": "Why?", "x": '
                                                  + "[" * 5000 + "]" * 5000 + "}"),
        "lone surrogate": submission('{"full_question": "Why \\ud800?"}'),
        "lone surrogate in a key": submission('{"full_question": "Why?", "\\udfff": 1}'),
        "NUL": submission('{"full_question": "Why\\u0000?"}'),
        "NaN": submission('{"full_question": "Why?", "skipped": NaN}'),
        "item_id 2^63": submission('{"full_question": "Why?"}', item=str(2**63)),
        "item_id 10^30": submission('{"full_question": "Why?"}', item="1" + "0" * 30),
        "item_id 0": submission('{"full_question": "Why?"}', item="0"),
        "not UTF-8": "\xff\xfe",
        "huge number": submission('{"full_question": "Why?", "n": ' + "9" * 5000 + "}"),
    }


@pytest.fixture
def world(django_user_model):
    project = sluice_project(slug="bad-input")
    publish_hit(project)
    annotator = django_user_model.objects.create_user(username="annotator")
    local = Client(raise_request_exception=False)
    local.force_login(annotator)
    mturk = Client(raise_request_exception=False)
    page = mturk.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": "ASSIGN1", "hitId": "HIT123", "workerId": "WORKER1",
        "turkSubmitTo": SANDBOX})
    return project, local, mturk, page.context["config"]["task_token"]


@pytest.mark.parametrize("case", list(body_cases(1)))
@pytest.mark.parametrize("endpoint", ["local", "mturk"])
def test_a_hostile_submit_body_is_a_clear_400_and_changes_nothing(world, case, endpoint):
    project, local, mturk, token = world
    raw = body_cases(project.items.get().pk)[case].replace("TOKEN", token)
    before = counts()
    if endpoint == "local":
        response = local.post(f"/annotate/{project.slug}/submit/", raw.encode("utf-8",
                              "surrogateescape"), content_type="application/json")
    else:
        response = mturk.post(f"/mturk/task/{project.slug}/submit/", raw.encode(
            "utf-8", "surrogateescape"), content_type="application/json")
    assert response.status_code == 400, (case, response.status_code, response.content[:300])
    answer = response.json()
    assert answer["error"] == "invalid" and answer["field"] in ("body", "item_id"), answer
    assert counts() == before


def test_a_refused_first_mturk_save_leaves_no_worker_or_assignment(world, django_user_model):
    """The first save creates the Worker and the Assignment (a HIT slot): when the answer is
    then refused (here: its client token is someone else's), neither may remain."""
    project, _, mturk, token = world
    someone = django_user_model.objects.create_user(username="someone-else")
    AnnotationFactory(client_token="taken-token-123", worker=worker_for_user(user=someone))
    before = counts()
    body = {"item_id": project.items.get().pk, "client_token": "taken-token-123",
            "task_token": token, "payload": {"full_question": "Why did he leave?"}}
    response = mturk.post(f"/mturk/task/{project.slug}/submit/", json.dumps(body),
                          content_type="application/json")
    assert response.status_code == 403 and response.json()["error"] == "token_conflict"
    assert counts() == before
    assert not Assignment.objects.filter(provider_assignment_id="ASSIGN1").exists()


@pytest.mark.parametrize("url", ["/api/annotations/", "/api/items/", "/api/projects/"])
@pytest.mark.parametrize("limit", ["9223372036854775808", "1" + "0" * 40, "100000"])
def test_api_lists_cap_the_limit(staff_client, url, limit):
    for _ in range(3):
        AnnotationFactory()
    staff = Client(raise_request_exception=False)
    staff.cookies = staff_client.cookies
    response = staff.get(url, {"limit": limit, "offset": "9223372036854775808"})
    if url == "/api/projects/":
        assert response.status_code == 200
        assert response.json()["results"] == []
    else:  # keyset lists: an offset past 10,000 is refused, deeper pages go by ?after=
        assert response.status_code == 400 and "after" in response.json()["offset"][0]
        response = staff.get(url, {"limit": limit, "after": "9223372036854775807"})
        assert response.status_code == 200 and response.json()["results"] == []
    response = staff.get(url, {"limit": limit})
    assert response.status_code == 200 and len(response.json()["results"]) >= 1


BAD_SETTINGS = [
    {"flag_settings": 5}, {"flag_settings": None}, {"flag_settings": "fast"},
    {"flag_settings": [1]}, {"flag_settings": {"fast_z": "fast"}},
    {"flag_settings": {"fast_z": True}},
    {"flag_settings": {"rewrite_warning_codes": 5}}, {"flag_settings": {"min_gold_items": 1.5}},
    {"flag_settings": {"fast_z": 1e300}}, {"flag_settings": {"no_such_setting": 1}},
    {"redundancy": 5}, {"redundancy": None}, {"redundancy": [1]}, {"redundancy": {"train": True}},
    {"redundancy": {"train": "1"}},
    {"live_check_settings": 5}, {"live_check_settings": None}, {"live_check_settings": []},
    {"reward_cents": 2**63}, {"reward_cents": -1}, {"name": None}, {"name": "x" * 201},
]


@pytest.mark.parametrize("change", BAD_SETTINGS, ids=lambda change: json.dumps(change))
def test_wrong_types_in_a_projects_settings_are_a_400_and_change_nothing(staff_client, change):
    project = sluice_project(slug="settings")
    staff = Client(raise_request_exception=False)
    staff.cookies = staff_client.cookies
    before = Project.objects.values().get(pk=project.pk)
    response = staff.patch(f"/api/projects/{project.slug}/", json.dumps(change),
                           content_type="application/json")
    assert response.status_code == 400, response.content
    assert Project.objects.values().get(pk=project.pk) == before
    created = staff.post("/api/projects/", json.dumps(
        {"slug": "new-one", "name": "New", "kind": "sluice", **change}),
        content_type="application/json")
    assert created.status_code == 400, created.content
    assert not Project.objects.filter(slug="new-one").exists()


def test_qc_runs_with_the_settings_the_api_accepts(staff_client):
    project = sluice_project(slug="settings")
    response = staff_client.patch(f"/api/projects/{project.slug}/", json.dumps(
        {"flag_settings": {"fast_z": 3, "rewrite_warning_codes": ["rewrite_pronoun_left"]}}),
        content_type="application/json")
    assert response.status_code == 200
    assert staff_client.post(f"/staff/review/{project.slug}/qc/").status_code == 302


@pytest.mark.parametrize("raw", ["[" * 90_000 + "]" * 90_000,
                                 '{"slug": "x", "name": "a\\u0000b", "kind": "sluice"}',
                                 '{"slug": "x", "name": "a", "kind": "sluice", '
                                 '"flag_settings": {"\\ud800": 1}}',
                                 '{"slug": "x", "name": "a", "kind": "sluice", '
                                 '"live_check_settings": {"a": NaN}}'],
                         ids=["deep nesting", "NUL", "lone surrogate", "NaN"])
def test_hostile_json_to_the_api_is_a_400(staff_client, raw):
    staff = Client(raise_request_exception=False)
    staff.cookies = staff_client.cookies
    response = staff.post("/api/projects/", raw, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert not Project.objects.exists()


def test_the_schema_describes_every_endpoint_without_warnings(tmp_path):
    """drf-spectacular knows every body (the batch endpoints had none: W002)."""
    call_command("spectacular", "--validate", "--fail-on-warn", "--file",
                 str(tmp_path / "schema.yaml"))
    schema = (tmp_path / "schema.yaml").read_text()
    assert "/api/batches/launch/" in schema and "$ref: '#/components/schemas/Launch'" in schema
    assert "BatchDetail:" in schema


@pytest.mark.parametrize(("reward", "cents"), [("0.01", 1), ("0.50", 50), ("12.34", 1234)])
def test_the_staff_launch_form_takes_any_whole_cent_reward(reward, cents):
    """A one-cent reward was refused: the form's bound was the float 0.01, which is a hair
    above Decimal("0.01")."""
    from frontend.staff_batches import LaunchForm

    sluice_project(slug="cents")
    form = LaunchForm({"project": "cents", "title": "Ask", "items_per_hit": "5",
                       "reward": reward, "lifetime": "7d", "duration": "1h",
                       "auto_approve": "3d", "locales": "US", "provider": "mturk",
                       "splits": ["train"]})
    assert form.is_valid(), form.errors
    assert form.launch_options().reward_cents == cents
    assert not LaunchForm({**form.data, "reward": "0.001"}).is_valid()
    assert not LaunchForm({**form.data, "reward": "0"}).is_valid()
