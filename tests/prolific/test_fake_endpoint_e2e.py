"""The provider's real requests client against the stateful stand-in: publishing (and resuming
without duplicates), paging, statuses, decisions, bonuses, blocking and throttling."""

from __future__ import annotations

from decimal import Decimal

import pytest
import requests

from annotation.fake_prolific import SimulatorRefused
from annotation.providers import ProviderPermanentError, ProviderThrottled
from annotation.providers.prolific import ProlificProvider

LONG_MESSAGE = ("The ratings in this session were given faster than the sentences can be "
                "read, and two attention items were answered wrongly.")


def _publish(provider: ProlificProvider, hit_key: str = "unpack-hit-1", places: int = 3):
    return provider.create_hit(hit_type_id="T", question_xml="", max_assignments=places,
                               lifetime_seconds=3600, unique_request_token=hit_key)


def test_a_published_study_admits_participants_with_our_ids_in_the_url(provider, simulator,
                                                                        fake_prolific):
    hit = _publish(provider)
    study = fake_prolific.world.studies[hit.hit_id]
    assert study.status == "ACTIVE"
    participant = simulator.participant()
    started = simulator.start(participant, hit.hit_id)
    assert f"PROLIFIC_PID={participant}" in started["task_url"]
    assert f"STUDY_ID={hit.hit_id}" in started["task_url"]
    assert f"SESSION_ID={started['session_id']}" in started["task_url"]


@pytest.mark.parametrize("killed_after", ["create", "publish"])
def test_a_launch_killed_mid_create_then_resumed_leaves_no_duplicate_study(
        provider, fake_prolific, template, killed_after):
    # The first attempt made the study (and maybe published it), then died before our
    # database stored the id. The resumed publish is a new job with a new provider.
    first = provider.create_draft_study(template, places=3,
                                        internal_name="unpack batch 1 [unpack-hit-1]")
    if killed_after == "publish":
        provider.publish_study(first.id)
    resumed = ProlificProvider(provider.config, template=template)

    hit = _publish(resumed)

    assert hit.hit_id == first.id
    assert list(fake_prolific.world.studies) == [first.id]
    assert fake_prolific.world.studies[first.id].status == "ACTIVE"


def test_one_listing_of_studies_per_publish_job(provider, fake_prolific):
    for number in range(5):
        _publish(provider, hit_key=f"unpack-hit-{number}")
    assert len(fake_prolific.world.studies) == 5
    assert fake_prolific.world.stats()["calls"]["list_studies"] == 1


def test_submissions_past_the_first_page_are_collected(provider, simulator):
    hit = _publish(provider, places=17)
    sessions = []
    for _ in range(17):
        participant = simulator.participant()
        sessions.append(simulator.start(participant, hit.hit_id)["session_id"])
    collected = provider.list_assignments_for_hit(hit.hit_id)  # page_size 7: three pages
    assert sorted(c.assignment_id for c in collected) == sorted(sessions)


def test_statuses_returned_and_timed_out_give_the_place_back(provider, simulator,
                                                            fake_prolific):
    hit = _publish(provider, places=2)
    first, second = (simulator.start(simulator.participant(), hit.hit_id)["session_id"]
                     for _ in range(2))
    with pytest.raises(SimulatorRefused) as full:
        simulator.start(simulator.participant(), hit.hit_id)
    assert full.value.code == "full"
    simulator.return_session(first)
    simulator.time_out(second)
    statuses = {c.assignment_id: c.status for c in provider.list_assignments_for_hit(hit.hit_id)}
    assert statuses == {first: "Returned", second: "Abandoned"}
    simulator.start(simulator.participant(), hit.hit_id)  # a place is free again


def test_approve_reject_and_bulk_approve(provider, simulator, fake_prolific):
    hit = _publish(provider, places=4)
    sessions = [simulator.start(simulator.participant(), hit.hit_id)["session_id"]
                for _ in range(4)]
    for session in sessions:
        simulator.complete(session, "CDONE1234")
    provider.approve_assignment(sessions[0])
    provider.approve_assignment(sessions[0])  # Prolific ignores a repeated transition
    provider.reject_assignment(sessions[1], message=LONG_MESSAGE, rejection_category="TOO_QUICKLY")
    provider.approve_assignments(sessions[2:])
    statuses = [c.status for c in provider.list_assignments_for_hit(hit.hit_id)]
    assert statuses == ["Approved", "Rejected", "Approved", "Approved"]
    assert fake_prolific.world.studies[hit.hit_id].status == "COMPLETED"
    with pytest.raises(ProviderPermanentError, match="Cannot APPROVE"):
        provider.approve_assignment(sessions[1], override_rejection=True)


def test_bonus_set_up_then_paid(provider, simulator, fake_prolific):
    hit = _publish(provider)
    session = simulator.start(simulator.participant(), hit.hit_id)["session_id"]
    simulator.complete(session, "CDONE1234")
    setup = provider.set_up_bonus(worker_id="", assignment_id=session, amount=Decimal("0.40"))
    assert fake_prolific.world.ledger()["payments"] == []  # a set-up pays nothing
    provider.pay_bonus(setup.id)
    assert fake_prolific.world.ledger()["payments"] == [
        {"setup_id": setup.id, "to": session, "cents": 40}]


def test_a_blocked_participant_cannot_take_later_studies(provider, simulator):
    participant = simulator.participant()
    provider.create_worker_block(participant, reason="spam")
    hit = _publish(provider)
    with pytest.raises(SimulatorRefused) as refused:
        simulator.start(participant, hit.hit_id)
    assert refused.value.code == "blocked"
    provider.delete_worker_block(participant)
    simulator.start(participant, hit.hit_id)


def test_a_block_reaches_a_study_already_running(provider, simulator):
    hit = _publish(provider)
    participant = simulator.participant()
    provider.create_worker_block(participant, reason="spam")
    with pytest.raises(SimulatorRefused):
        simulator.start(participant, hit.hit_id)


def test_throttling_is_reported_with_retry_after(provider, simulator):
    hit_id = _publish(provider).hit_id
    simulator.fault("get_study", status=429, retry_after=0.05)
    assert provider.get_hit(hit_id).hit_id == hit_id  # retried where it failed
    assert simulator.stats()["calls"]["get_study"] == 2
    simulator.fault("get_study", count=50, status=429, retry_after=0.05)
    with pytest.raises(ProviderThrottled) as throttled:  # past the bounded retries
        provider.get_hit(hit_id)
    assert throttled.value.retry_after_seconds == 0.05


def test_stand_in_refuses_what_prolific_refuses(provider, fake_prolific, template):
    base = fake_prolific.base_url
    auth = {"Authorization": "Token t"}
    assert requests.get(f"{base}/api/v1/studies/", timeout=5).status_code == 401
    bad = requests.post(f"{base}/api/v1/studies/", json={"name": "x"}, headers=auth, timeout=5)
    assert bad.status_code == 400 and "external_study_url" in bad.json()["error"]["detail"]
    hit = _publish(provider, places=3)
    shrink = requests.patch(f"{base}/api/v1/studies/{hit.hit_id}/",
                            json={"total_available_places": 2}, headers=auth, timeout=5)
    assert shrink.status_code == 400
    again = requests.post(f"{base}/api/v1/studies/{hit.hit_id}/transition/",
                          json={"action": "PUBLISH"}, headers=auth, timeout=5)
    assert again.status_code == 400
    provider.create_additional_assignments(hit.hit_id, count=2, unique_request_token="x")
    assert provider.get_hit(hit.hit_id).max_assignments == 5


def test_pause_resume_stop(provider, fake_prolific):
    hit = _publish(provider)
    assert provider.pause_study(hit.hit_id).status == "PAUSED"
    assert provider.resume_study(hit.hit_id).status == "ACTIVE"
    assert provider.stop_study(hit.hit_id).status in ("AWAITING REVIEW", "COMPLETED")
