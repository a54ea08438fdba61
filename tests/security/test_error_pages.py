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
