"""Confirming a task page's session with its provider before it may hold one of a HIT's slots
(``selectors/providers.py``, ``AnnotationProvider.assignment_is_live``).

MTurk cannot vouch for work in progress (its GetAssignment knows submitted work only), so the
app never asks it at a first save; a provider that can (Prolific) is. These tests switch the
MTurk provider's ``confirms_work_in_progress`` on to drive that provider-neutral path end to
end through the real boto3 client and the stand-in: a session the provider vouches for holds
a slot, one it does not holds none, answers are cached, and an unreachable provider confirms
nothing without failing the save."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal

import pytest

from annotation.hit_templates import render_external_question
from annotation.models import Annotation, Assignment, Worker
from annotation.providers import HitTypeSpec
from annotation.providers.mturk import MTurkProvider
from annotation.selectors.providers import SessionCheck, session_check
from tests.factories import publish_hit, sluice_project

pytestmark = pytest.mark.django_db

ANSWER = {"full_question": "Why did he leave the band?", "skipped": False}


@pytest.fixture
def remote_hit(fake, provider, simulator, monkeypatch):
    """A one-assignment HIT at the stand-in, mirrored in the database, with the MTurk provider
    treated as one that can vouch for sessions."""
    monkeypatch.setattr(MTurkProvider, "confirms_work_in_progress", True)
    hit_type = provider.create_hit_type(HitTypeSpec(
        title="Resolve a sluice", description="Write the full question.",
        reward=Decimal("0.13"), assignment_duration_seconds=600))
    published = provider.create_hit(
        hit_type_id=hit_type, max_assignments=1, lifetime_seconds=3600,
        question_xml=render_external_question(url="https://unpack.example.org/t"),
        unique_request_token=uuid.uuid4().hex)
    project = sluice_project(slug=f"confirm-{uuid.uuid4().hex[:6]}")
    return project, publish_hit(project, hit_id=published.hit_id, max_assignments=1)


def first_save(client, project, hit, *, assignment: str, worker: str):
    page = client.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": assignment, "hitId": hit.provider_hit_id, "workerId": worker,
        "turkSubmitTo": "https://workersandbox.mturk.com"})
    body = {"item_id": project.items.get().pk, "client_token": uuid.uuid4().hex,
            "task_token": page.context["config"]["task_token"], "payload": ANSWER}
    return client.post(f"/mturk/task/{project.slug}/submit/", json.dumps(body),
                       content_type="application/json")


def test_a_vouched_session_holds_the_slot_and_an_invented_one_does_not(
        client, remote_hit, simulator):
    project, hit = remote_hit
    worker = simulator.register_worker()
    real = simulator.accept(worker, hit.provider_hit_id)["assignment_id"]
    simulator.external_submit(real, {"summary": "done"})  # now GetAssignment knows it

    # A session the provider answers "no such assignment" for is refused, nothing written.
    invented = first_save(client, project, hit, assignment="AINVENTED1", worker="AFAKE1")
    assert invented.status_code == 403 and invented.json()["error"] == "unknown_session"
    assert "nothing was saved" in invented.json()["message"]
    assert not Assignment.objects.exists() and not Worker.objects.exists()
    assert first_save(client, project, hit, assignment=real, worker=worker).status_code == 200
    assert Assignment.objects.get(provider_assignment_id=real).confirmed_at is not None
    assert Annotation.objects.count() == 1


def test_answers_are_cached_and_an_unreachable_provider_confirms_nothing(
        remote_hit, simulator, fake):
    _, hit = remote_hit

    def get_assignment_calls() -> int:
        return simulator.stats()["calls"].get("GetAssignment", 0)

    ids = {"hit": hit, "assignment_id": f"AUNKNOWN{uuid.uuid4().hex[:8].upper()}",
           "worker_id": "ANOBODY"}
    assert session_check(**ids) is SessionCheck.UNKNOWN
    assert session_check(**ids) is SessionCheck.UNKNOWN
    assert get_assignment_calls() == 1

    simulator.inject_fault("GetAssignment", count=100, error="ServiceFault")
    down = dict(ids, assignment_id=f"ADOWN{uuid.uuid4().hex[:8].upper()}")
    assert session_check(**down) is SessionCheck.UNREACHABLE
    simulator.reset()


def test_a_provider_that_cannot_see_work_in_progress_is_not_asked(client, remote_hit,
                                                                   simulator, monkeypatch):
    monkeypatch.setattr(MTurkProvider, "confirms_work_in_progress", False)
    project, hit = remote_hit
    assert first_save(client, project, hit, assignment="AINVENTED3",
                      worker="AFAKE3").status_code == 200
    assert simulator.stats()["calls"].get("GetAssignment", 0) == 0
