"""A database outage gets a proper 503 page (or JSON answer), not a bare 500 (issue 11, 9)."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from django.db import OperationalError
from django.test import Client

from tests.factories import sluice_project

pytestmark = pytest.mark.django_db

DOWN = OperationalError("connection to server at 127.0.0.1, port 5432 failed: refused")


@pytest.fixture
def annotator(annotator_user):
    client = Client(raise_request_exception=False)
    client.force_login(annotator_user)
    return client


def test_a_page_during_a_database_outage_says_so_with_503(annotator):
    with mock.patch("frontend.views.project_selectors.project_list_with_progress",
                    side_effect=DOWN):
        response = annotator.get("/")
    assert response.status_code == 503 and response["Retry-After"] == "30"
    page = response.content.decode()
    assert "Unavailable for a moment" in page and "Nothing you saved is lost" in page
    assert "unpack.css" in page  # the site's page, not Django's bare "Server Error (500)"


def test_a_submit_during_a_database_outage_gets_json_503(annotator):
    project = sluice_project(slug="outage")
    body = {"item_id": project.items.get().pk, "client_token": "t" * 16,
            "payload": {"full_question": "Why did he leave?"}}
    with mock.patch("frontend.annotate_views.annotate_selectors.project_by_slug",
                    side_effect=DOWN):
        response = annotator.post(f"/annotate/{project.slug}/submit/", json.dumps(body),
                                  content_type="application/json")
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"


def test_other_server_errors_get_the_sites_500_page(annotator):
    with mock.patch("frontend.views.project_selectors.project_list_with_progress",
                    side_effect=RuntimeError("bug")):
        response = annotator.get("/")
    assert response.status_code == 500 and "Server error" in response.content.decode()


def _wrapped(django_error, cause):
    """A Django database error as Django raises it: the driver's error as its cause."""
    error = django_error(str(cause))
    error.__cause__ = cause
    return error


def test_a_query_cut_by_the_statement_timeout_is_not_called_an_outage(annotator):
    """Issue 21: the home page's query ran past its time and the page said "the database is
    unavailable", which was not so."""
    import psycopg

    timeout = _wrapped(OperationalError,
                       psycopg.errors.QueryCanceled("canceling statement due to statement "
                                                    "timeout"))
    with mock.patch("frontend.views.project_selectors.project_list_with_progress",
                    side_effect=timeout):
        response = annotator.get("/")
    page = response.content.decode()
    assert response.status_code == 500 and "Retry-After" not in response
    assert "ran past its time limit" in page and "The database itself is up" in page
    assert "Unavailable for a moment" not in page and "unavailable" not in page
    with mock.patch("frontend.views.project_selectors.project_list_with_progress",
                    side_effect=timeout):
        answer = annotator.get("/", HTTP_ACCEPT="application/json")
    assert answer.status_code == 500 and answer.json()["error"] == "query_timeout"


def test_a_failed_statement_is_a_query_error_and_a_lost_connection_an_outage(annotator):
    import sqlite3

    import psycopg
    from django.db import ProgrammingError

    from frontend.errors import error_code

    failed = [
        _wrapped(ProgrammingError, psycopg.errors.UndefinedTable("no such relation")),
        _wrapped(OperationalError, psycopg.errors.DiskFull("could not write to file")),
        _wrapped(OperationalError, sqlite3.OperationalError("no such table: x")),
    ]
    failed[2].__cause__.sqlite_errorname = "SQLITE_ERROR"
    for error in failed:
        assert error_code(error) == "query_failed", error
    down = [
        DOWN,  # no driver error underneath: the connection never came up
        _wrapped(OperationalError, psycopg.errors.AdminShutdown("terminating connection")),
        _wrapped(OperationalError, psycopg.errors.TooManyConnections("too many clients")),
    ]
    for error in down:
        assert error_code(error) == "unavailable", error
    with mock.patch("frontend.views.project_selectors.project_list_with_progress",
                    side_effect=failed[0]):
        response = annotator.get("/")
    page = response.content.decode()
    assert response.status_code == 500 and "A database query of this page failed" in page
    assert "Unavailable for a moment" not in page
