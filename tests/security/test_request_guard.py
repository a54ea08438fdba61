"""Bodies above the configured size and text PostgreSQL cannot store are refused before anything
parses them, on every endpoint (issue 26, points 3 and 4; ``annotation/request_guard.py``)."""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client

from annotation.models import Annotation, Project
from tests.factories import plausibility_project

pytestmark = pytest.mark.django_db

LIMIT = 4096


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.UNPACK_MAX_REQUEST_BYTES = LIMIT


class Unreadable(io.RawIOBase):
    """A request body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the body was read")

    readline = readinto = read


def post_unread(client, path, *, length, content_type="application/json", **extra):
    return client.generic("POST", path, b"", CONTENT_TYPE=content_type,
                          CONTENT_LENGTH=str(length), **{"wsgi.input": Unreadable(), **extra})


@pytest.mark.parametrize("path", ["/api/projects/", "/api/batches/launch/",
                                  "/accounts/login/", "/admin/login/",
                                  "/annotate/some-project/submit/",
                                  "/mturk/task/some-project/submit/"])
def test_an_oversized_body_is_refused_before_it_is_read(annotator_client, path):
    """Before: DRF's parser read the whole body during the CSRF check (+298 MB for 100 MB)."""
    answer = post_unread(annotator_client, path, length=LIMIT + 1)
    assert answer.status_code == 413
    assert answer.json()["error"] == "too_large"
    assert f"{LIMIT:,} bytes" in answer.json()["message"]


def test_an_oversized_form_is_refused_before_the_csrf_check_reads_it():
    client = Client(enforce_csrf_checks=True)
    answer = post_unread(client, "/accounts/login/", length=10**8,
                         content_type="application/x-www-form-urlencoded",
                         HTTP_ACCEPT="text/html")
    assert answer.status_code == 413 and answer["Content-Type"].startswith("text/plain")
    assert "nothing was read or saved" in answer.content.decode()


def test_an_oversized_submit_gets_the_json_the_task_page_shows(annotator_client):
    """The task page shows ``Not saved: <message>`` for any JSON answer with a message."""
    project = plausibility_project(items=1)
    item = project.items.get()
    body = json.dumps({"item_id": item.pk, "client_token": "too-large-1",
                       "payload": {"rating": 3, "note": "x" * LIMIT}})
    answer = annotator_client.post(f"/annotate/{project.slug}/submit/", body,
                                   content_type="application/json",
                                   HTTP_X_REQUESTED_WITH="fetch")
    assert answer.status_code == 413
    assert answer.json() == {"error": "too_large", "field": "body",
                             "message": f"The request body is larger than the {LIMIT:,} bytes "
                                        "this server accepts; nothing was read or saved."}
    assert not Annotation.objects.exists()


def test_a_chunked_body_is_counted_while_read(staff_client):
    too_big = io.BytesIO(b"{" + b" " * (10 * LIMIT) + b"}")
    answer = staff_client.generic("POST", "/api/projects/", b"", CONTENT_TYPE="application/json",
                                  CONTENT_LENGTH="", HTTP_TRANSFER_ENCODING="chunked",
                                  **{"wsgi.input": too_big})
    assert answer.status_code == 413
    assert too_big.tell() <= LIMIT + 1  # read no further than needed to know
    # A small chunked body is read and handed on whole.
    small = json.dumps({"slug": "chunked", "name": "Chunked", "kind": "plausibility"}).encode()
    answer = staff_client.generic("POST", "/api/projects/", b"", CONTENT_TYPE="application/json",
                                  CONTENT_LENGTH="", HTTP_TRANSFER_ENCODING="chunked",
                                  **{"wsgi.input": io.BytesIO(small)})
    assert answer.status_code == 201, answer.content
    assert Project.objects.filter(slug="chunked").exists()


def test_a_body_within_the_limit_goes_through(annotator_client):
    project = plausibility_project(items=1)
    item = project.items.get()
    answer = annotator_client.post(
        f"/annotate/{project.slug}/submit/",
        json.dumps({"item_id": item.pk, "client_token": "fits-0001", "payload": {"rating": 3}}),
        content_type="application/json")
    assert answer.status_code == 200 and answer.json()["status"] == "saved"


# --- text PostgreSQL cannot store (point 4) ----------------------------------------------------

NUL_URLS = [
    "/api/annotations/?project=a%00",
    "/api/projects/a%00b/",
    "/api/batches/?project=a%00",
    "/api/items/?project=a%00",
    "/api/items/?split=a%00",
    "/api/items/?project%00=x",
    "/admin/annotation/annotation/?source=a%00",
    "/admin/annotation/annotation/?q=a%00",
    "/staff/review/?project=a%00",
]


@pytest.mark.parametrize("url", NUL_URLS)
def test_a_nul_in_a_path_or_query_parameter_is_a_400_not_a_500(staff_client, url):
    """Before: a 500 on PostgreSQL in the issue's six places."""
    answer = staff_client.get(url)
    assert answer.status_code == 400
    text = answer.content.decode()
    assert "NUL character" in text
    if url.startswith("/api/"):
        assert answer.json()["error"] == "invalid"


@pytest.mark.parametrize("model", ["auth/user", "auth/group", "annotation/project",
                                   "annotation/annotation"])
def test_an_overlong_admin_search_is_a_400_not_a_500(admin_client, model):
    """Before: a 500 on SQLite ("LIKE or GLOB pattern too complex") for a 60,000-character
    search, found by test_text_filters.py once it searched every admin changelist."""
    answer = admin_client.get(f"/admin/{model}/?q=" + "x" * 60_000)
    assert answer.status_code == 400
    assert "q: longer than the 2,000 characters a query parameter may have" in (
        answer.content.decode())
    assert admin_client.get(f"/admin/{model}/?q=" + "x" * 2_000).status_code == 200


def test_annotators_reach_the_refusal_too(annotator_client):
    for url in ("/api/annotations/?project=a%00", "/api/projects/a%00b/"):
        assert annotator_client.get(url).status_code == 400


def test_a_nul_in_a_form_field_is_a_400(client):
    """(A lone surrogate cannot arrive in a form or a query string: Django decodes those with
    replacement characters; JSON's ``\\ud800`` is refused by ``annotation.jsonbody``.)"""
    answer = client.post("/accounts/login/", {"username": "a\x00", "password": "x"})
    assert answer.status_code == 400 and "username: text must not contain a NUL" in (
        answer.content.decode())
    answer = client.post("/accounts/login/", {"user\x00name": "a", "password": "x"},
                         HTTP_ACCEPT="application/json")
    assert answer.status_code == 400
    assert answer.json() == {"error": "invalid", "field": "user\\x00name",
                             "message": "user\\x00name: text must not contain a NUL character."}
