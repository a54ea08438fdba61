"""Client-reported times (``started_at``) are checked against the server's clock, and every
reader survives an out-of-range time already stored (issue 11, point 1)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from annotation.models import Annotation
from annotation.payloads import clean_client_time
from annotation.services.workers import worker_for_user
from tests.factories import AnnotationFactory, publish_hit, sluice_project

pytestmark = pytest.mark.django_db

SANDBOX = "https://workersandbox.mturk.com"
ANSWER = {"full_question": "Why did he leave the band?", "skipped": False}
# Stored verbatim, each is a timestamp PostgreSQL keeps and Python cannot read back.
EXTREME = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:00:00-05:00"]
IGNORED = [*EXTREME, "2020-13-45T00:00:00Z", "yesterday", "", "0" * 100]


def mturk_token(client, project) -> str:
    response = client.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": "ASSIGN1", "hitId": "HIT123", "workerId": "WORKER1",
        "turkSubmitTo": SANDBOX})
    return response.context["config"]["task_token"]


def mturk_submit(client, project, token, started_at):
    body = {"item_id": project.items.get().pk, "client_token": uuid.uuid4().hex,
            "task_token": token, "payload": ANSWER, "started_at": started_at}
    return client.post(f"/mturk/task/{project.slug}/submit/", json.dumps(body),
                       content_type="application/json")


@pytest.mark.parametrize("started_at", [*IGNORED, "far past", "far future"])
def test_the_anonymous_mturk_submit_ignores_a_time_outside_the_window(client, started_at):
    project = sluice_project(slug="times")
    publish_hit(project)
    now = timezone.now()
    started_at = {"far past": (now - timedelta(days=31)).isoformat(),
                  "far future": (now + timedelta(hours=1)).isoformat()}.get(started_at,
                                                                           started_at)
    response = mturk_submit(client, project, mturk_token(client, project), started_at)
    assert response.status_code == 200, response.content
    assert Annotation.objects.get().started_at is None


def test_a_time_in_the_window_is_kept(client, annotator_client):
    project = sluice_project(slug="times")
    started = timezone.now() - timedelta(seconds=40)
    body = {"item_id": project.items.get().pk, "client_token": uuid.uuid4().hex,
            "payload": ANSWER, "started_at": started.isoformat().replace("+00:00", "Z")}
    response = annotator_client.post(f"/annotate/{project.slug}/submit/", json.dumps(body),
                                     content_type="application/json")
    assert response.status_code == 200, response.content
    assert Annotation.objects.get().started_at == started


def test_the_window_is_around_the_servers_clock():
    now = timezone.now()
    assert clean_client_time((now - timedelta(days=29)).isoformat(), now=now) is not None
    assert clean_client_time((now + timedelta(minutes=4)).isoformat(), now=now) is not None
    assert clean_client_time((now + timedelta(minutes=6)).isoformat(), now=now) is None
    assert clean_client_time("2026-01-01T00:00:00", now=now.replace(year=2026, month=1, day=2)
                             ).utcoffset() == timedelta(0)  # no offset: taken as UTC
    assert clean_client_time(1700000000, now=now) is None


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="only PostgreSQL stores times Python cannot read")
@pytest.mark.parametrize("stored", EXTREME)
def test_every_reader_survives_a_bad_time_already_stored(stored, staff_client, django_user_model,
                                                         tmp_path):
    """A row written before the check (inserted here directly) shows with no start time on the
    staff API, the owner's API, the admin change and delete pages and the JSONL export; the
    admin can delete it."""
    owner = django_user_model.objects.create_user(username="owner")
    annotation = AnnotationFactory(worker=worker_for_user(user=owner))
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Annotation._meta.db_table} SET started_at = %s::timestamptz "  # noqa: S608
                       "WHERE id = %s", [stored, annotation.pk])
    assert Annotation.objects.get(pk=annotation.pk).started_at is None

    listed = staff_client.get("/api/annotations/")
    assert listed.status_code == 200
    assert [row["started_at"] for row in listed.json()["results"]] == [None]
    assert staff_client.get(f"/api/annotations/{annotation.pk}/").status_code == 200
    owner_client = Client()
    owner_client.force_login(owner)
    assert len(owner_client.get("/api/annotations/").json()["results"]) == 1

    call_command("export_data", annotation.project.slug, "--format", "jsonl",
                 "--out", str(tmp_path))
    exported = [json.loads(line) for path in tmp_path.rglob("*.jsonl")
                for line in path.read_text().splitlines()]
    assert [(row["annotation_id"], row["started_at"]) for row in exported] == [
        (annotation.pk, None)]

    admin = f"/admin/annotation/annotation/{annotation.pk}/"
    assert staff_client.get(admin + "change/").status_code == 200
    assert staff_client.get(admin + "delete/").status_code == 200
    assert staff_client.post(admin + "delete/", {"post": "yes"}).status_code == 302
    assert not Annotation.objects.filter(pk=annotation.pk).exists()
