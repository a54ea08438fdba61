"""The "too fast" rules judge the server's own times, not the browser's ``duration_ms``.

The audit: a worker submitting 12 answers 10 ms apart while claiming 15-40 s each got no
flag. The server records when it served each item (``Annotation.served_at``: the page view
for local annotators, the signed task token's time on MTurk pages) and QC compares."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.models import Annotation, Flag
from annotation.services.qc import project_qc_run
from tests.factories import publish_hit, sluice_project

pytestmark = pytest.mark.django_db

ANSWER = {"full_question": "Why did he leave the band?", "skipped": False}


def annotator(name: str) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user(name, password="x" * 12))
    return client


def work_through(client: Client, project, claims_ms: list[int]) -> list[int]:
    """Answer the items the page serves, one after the other, as fast as the test runs,
    claiming ``claims_ms``; the ids of the items answered."""
    page = client.get(f"/annotate/{project.slug}/")
    item_id = page.context["config"]["items"][0]["item_id"]
    answered = []
    for claim in claims_ms:
        body = {"item_id": item_id, "client_token": uuid.uuid4().hex, "payload": ANSWER,
                "duration_ms": claim}
        saved = client.post(f"/annotate/{project.slug}/submit/", json.dumps(body),
                            content_type="application/json").json()
        assert saved["status"] == "saved"
        answered.append(item_id)
        if saved["next"] is None:
            break
        item_id = saved["next"]["item"]["item_id"]
    return answered


def test_twelve_answers_in_a_blink_claiming_half_a_minute_each_are_flagged():
    project = sluice_project(slug="timing", items=12, redundancy={"train": 2})
    cheat = annotator("cheat")
    claims = [15_000 + 2_000 * k for k in range(12)]
    assert len(work_through(cheat, project, claims)) == 12
    stored = Annotation.objects.filter(duration_ms__gte=15_000)
    assert stored.count() == 12 and not stored.filter(served_at__isnull=True).exists()
    # An honest worker claiming what the server could see pass is not flagged.
    assert len(work_through(annotator("honest"), project, [900] * 12)) == 12

    project_qc_run(project=project)
    flagged = Flag.objects.filter(project=project, reason="timing_mismatch")
    assert set(flagged.values_list("annotation_id", flat=True)) == set(
        stored.values_list("id", flat=True))
    assert {flag.worker.external_id for flag in flagged} == {
        stored.first().worker.external_id}


def test_an_mturk_page_answer_is_timed_from_when_the_page_was_served(client):
    project = sluice_project(slug="timing-mturk", items=1)
    publish_hit(project, max_assignments=1)
    before = timezone.now() - timedelta(seconds=1)
    page = client.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": "ATIMED", "hitId": "HIT123", "workerId": "AWTIMED",
        "turkSubmitTo": "https://workersandbox.mturk.com"})
    body = {"item_id": project.items.get().pk, "client_token": uuid.uuid4().hex,
            "task_token": page.context["config"]["task_token"], "payload": ANSWER,
            "duration_ms": 30_000}
    assert client.post(f"/mturk/task/{project.slug}/submit/", json.dumps(body),
                       content_type="application/json").status_code == 200
    answer = Annotation.objects.get()
    assert before <= answer.served_at <= answer.submitted_at
