"""The API grants staff powers by model permission (groups ``researcher`` and ``reviewer``),
not by ``is_staff`` (issue 11, point 9)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from tests.factories import AnnotationFactory, ItemFactory

pytestmark = pytest.mark.django_db

NEW_PROJECT = {"slug": "roles-new", "name": "New", "kind": "sluice"}


def client_in(django_user_model, username: str, *, group: str | None = None,
              is_staff: bool = True) -> Client:
    user = django_user_model.objects.create_user(username=username, is_staff=is_staff)
    if group:
        user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    return client


def powers(client: Client) -> dict[str, int]:
    return {
        "items": client.get("/api/items/").status_code,
        "batches": client.get("/api/batches/").status_code,
        # the list has no count (a count of every row on every page): its rows on one page
        "all annotations": len(client.get("/api/annotations/?limit=1000").json()["results"]),
        "create project": client.post("/api/projects/", json.dumps(NEW_PROJECT),
                                      content_type="application/json").status_code,
        "launch": client.post("/api/batches/launch/", json.dumps({}),
                              content_type="application/json").status_code,
    }


def test_is_staff_alone_gives_no_api_powers(django_user_model):
    ItemFactory()
    AnnotationFactory()
    assert powers(client_in(django_user_model, "staff-only")) == {
        "items": 403, "batches": 403, "all annotations": 0, "create project": 403,
        "launch": 403}


def test_a_reviewer_reads_but_does_not_launch_or_write(django_user_model):
    AnnotationFactory()
    assert powers(client_in(django_user_model, "rita", group="reviewer")) == {
        "items": 200, "batches": 200, "all annotations": 1, "create project": 403,
        "launch": 403}


def test_a_researcher_runs_projects_and_batches(django_user_model):
    AnnotationFactory()
    assert powers(client_in(django_user_model, "rob", group="researcher")) == {
        "items": 200, "batches": 200, "all annotations": 1, "create project": 201,
        "launch": 400}  # 400: the empty launch request is validated, so it was allowed

