"""Anonymous crowd saves are rate-limited per address and per HIT/study, before the provider is
asked or any row written (issue 26, point 5; ``annotation/crowd_throttle.py``)."""

from __future__ import annotations

import json
import uuid
from unittest import mock

import pytest
from django.test import Client

from annotation.models import Annotation, Assignment, Worker
from annotation.selectors.providers import SessionCheck
from tests.factories import prolific_study_hit, publish_hit, sluice_project
from tests.security.test_mturk_trust import submit, token_for

pytestmark = pytest.mark.django_db

ANSWER = {"full_question": "Why did he leave the band?", "skipped": False}


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.UNPACK_CROWD_SESSIONS_PER_ADDRESS = 3
    settings.UNPACK_CROWD_SESSIONS_PER_HIT = 5
    settings.UNPACK_CROWD_SAVES_PER_ADDRESS = 8


def rows() -> tuple[int, int, int]:
    return Worker.objects.count(), Assignment.objects.count(), Annotation.objects.count()


def confirming():
    """The provider's check of a new session, counted (it is an API call per session)."""
    # Unreachable: the answer is kept provisionally, as before the provider could refuse it.
    return mock.patch("frontend.annotate_views.provider_selectors.session_check",
                      return_value=SessionCheck.UNREACHABLE)


def test_forged_mturk_sessions_from_one_address_stop_at_its_limit():
    """Before: one client stored 21 forged sessions per second, three rows each."""
    project = sluice_project(slug="throttled", items=1)
    publish_hit(project, max_assignments=50)
    item = project.items.get()
    attacker = Client(REMOTE_ADDR="10.1.0.1")
    answers = []
    with confirming() as asked:
        for index in range(6):
            token = token_for(attacker, project, assignment=f"AFORGED{index}",
                              worker=f"AFAKE{index}")
            answers.append(submit(attacker, project, token, item.pk))
        assert asked.call_count == 3  # the refused ones never reached the provider
    assert [answer.status_code for answer in answers] == [200] * 3 + [429] * 3
    refused = answers[-1]
    assert refused.json()["error"] == "rate_limited" and refused["Retry-After"] == "60"
    assert refused.json()["message"].startswith("Too many new task sessions from your network")
    assert rows() == (3, 3, 3)


def test_a_hits_limit_spares_sessions_already_started():
    """Invented sessions from many addresses use up a HIT's new sessions for the window; a
    worker who had started keeps saving, and a refused newcomer is told to wait."""
    project = sluice_project(slug="busy-hit", items=2)
    publish_hit(project, max_assignments=1)
    first, second = project.items.order_by("id")
    real = Client(REMOTE_ADDR="10.2.0.1")
    real_token = token_for(real, project, assignment="AREAL1", worker="AWREAL1")
    assert submit(real, project, real_token, first.pk).status_code == 200
    outcomes = []
    for index in range(8):
        forger = Client(REMOTE_ADDR=f"10.3.0.{index}")
        token = token_for(forger, project, assignment=f"AFORGED{index}", worker=f"AFAKE{index}")
        outcomes.append(submit(forger, project, token, first.pk).status_code)
    assert outcomes.count(429) == 4  # 5 new sessions per window (2 × 1 assignment < 5)
    before = rows()
    assert submit(real, project, real_token, second.pk).status_code == 200
    assert rows()[2] == before[2] + 1
    newcomer = Client(REMOTE_ADDR="10.4.0.1")
    late = submit(newcomer, project, token_for(newcomer, project, assignment="ALATE1",
                                               worker="AWLATE1"), first.pk)
    assert late.status_code == 429
    assert late.json()["message"].startswith("Too many people are starting this task")


def test_saves_of_one_address_are_limited_too():
    project = sluice_project(slug="many-saves", items=1)
    publish_hit(project, max_assignments=5)
    item = project.items.get()
    client = Client(REMOTE_ADDR="10.5.0.1")
    token = token_for(client, project, assignment="ASAVES1", worker="AWSAVES1")
    codes = [submit(client, project, token, item.pk, client_token=f"retry-{index:04d}"
                    ).status_code for index in range(10)]
    assert codes[:8] == [200] * 8 and codes[8:] == [429, 429]


PROLIFIC_STUDY = "64d3ab4de4bae1091e5de441"


def test_invented_prolific_sessions_stop_before_prolific_is_asked():
    """Before: each invented Prolific session cost one synchronous Prolific API call."""
    project = sluice_project(slug="study", items=1)
    prolific_study_hit(project, study_id=PROLIFIC_STUDY, max_assignments=100)
    item = project.items.get()
    attacker = Client(REMOTE_ADDR="10.6.0.1")
    codes = []
    with confirming() as asked:
        for _ in range(5):
            page = attacker.get(f"/prolific/task/{project.slug}/", {
                "PROLIFIC_PID": uuid.uuid4().hex[:24], "STUDY_ID": PROLIFIC_STUDY,
                "SESSION_ID": uuid.uuid4().hex[:24]})
            assert page.status_code == 200
            body = {"item_id": item.pk, "client_token": uuid.uuid4().hex, "payload": ANSWER,
                    "task_token": page.context["config"]["task_token"]}
            codes.append(attacker.post(f"/prolific/task/{project.slug}/submit/",
                                       json.dumps(body), content_type="application/json"
                                       ).status_code)
        assert asked.call_count == 3
    assert codes == [200, 200, 200, 429, 429]
    assert rows() == (3, 3, 3)
