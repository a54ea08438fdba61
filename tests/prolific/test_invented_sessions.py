"""Invented Prolific sessions (issue 22.12, 26.6): a well-formed SESSION_ID that Prolific
answers 404 for is refused and writes nothing; only an unreachable Prolific lets an answer be
kept provisionally, and the study's completion code goes only to sessions Prolific confirms
(held, saying so, while Prolific cannot be asked)."""

from __future__ import annotations

import pytest

from annotation.models import Annotation, Assignment, Worker
from tests.factories import sluice_project
from tests.prolific.test_participant_path import (
    CODE,
    finish,
    launch,
    new_prolific_id,
    prolific,  # noqa: F401  (fixture)
    start,
    submit,
    token_for,
)

pytestmark = pytest.mark.django_db


def invented_ids(hit) -> dict:
    return {"PROLIFIC_PID": new_prolific_id(), "STUDY_ID": hit.provider_hit_id,
            "SESSION_ID": new_prolific_id()}


def test_an_invented_session_is_refused_and_writes_nothing(client, prolific,  # noqa: F811
                                                            provider):
    project = sluice_project()
    hit = launch(provider, project, places=3)
    ids = invented_ids(hit)
    token = token_for(client, project, ids)
    refused = submit(client, project, token, project.items.get().pk)
    assert refused.status_code == 403
    assert refused.json()["error"] == "unknown_session"
    assert refused.json()["message"] == ("Prolific does not know this session, so nothing was "
                                         "saved. Please open the study from your Prolific "
                                         "account.")
    assert not Worker.objects.exists()
    assert not Assignment.objects.exists()
    assert not Annotation.objects.exists()
    finished = finish(client, project, token)
    assert CODE not in finished.content.decode()


def test_an_unreachable_prolific_keeps_the_answer_and_holds_the_code(
        client, prolific, provider, simulator):  # noqa: F811
    project = sluice_project()
    hit = launch(provider, project, places=3)
    ids = start(simulator, hit)  # a real session, but Prolific cannot be asked now
    simulator.fault("get_submission", count=2, status=503)
    token = token_for(client, project, ids)
    assert submit(client, project, token, project.items.get().pk).status_code == 200
    assignment = Assignment.objects.get(provider_assignment_id=ids["SESSION_ID"])
    assert assignment.confirmed_at is None  # kept provisionally, holding no place
    held = finish(client, project, token)
    assert held.status_code == 409 and held.json()["error"] == "code_held"
    assert "could not be reached" in held.json()["message"]
    assert "held until it can be checked" in held.json()["message"]
    assert CODE not in held.content.decode() and "redirect_url" not in held.json()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ACCEPTED and assignment.confirmed_at is None
    # Prolific answers again and confirms the session: the code is given.
    given = finish(client, project, token)
    assert given.status_code == 200, given.content
    assert given.json()["redirect_url"].endswith(f"cc={CODE}")
    assignment.refresh_from_db()
    assert assignment.confirmed_at is not None
    assert assignment.status == Assignment.Status.SUBMITTED


def test_an_invented_session_stored_while_prolific_was_down_never_gets_the_code(
        client, prolific, provider, simulator):  # noqa: F811
    project = sluice_project()
    hit = launch(provider, project, places=3)
    simulator.fault("get_submission", count=1, status=503)
    token = token_for(client, project, invented_ids(hit))
    assert submit(client, project, token, project.items.get().pk).status_code == 200
    refused = finish(client, project, token)  # Prolific is back: 404 for this session
    assert refused.status_code == 403 and refused.json()["error"] == "unknown_session"
    assert CODE not in refused.content.decode()
    assert Assignment.objects.get().status == Assignment.Status.ACCEPTED
