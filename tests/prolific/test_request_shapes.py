"""The requests the provider sends, checked at the HTTP level against Prolific's API reference
(paths, methods, token header, JSON fields), and how it reads Prolific's answers and errors."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.test import override_settings

from annotation.providers import (
    ProviderPermanentError,
    ProviderThrottled,
    ProviderTransientError,
)
from annotation.providers.prolific import URL_PLACEHOLDERS

API = "https://api.prolific.com/api/v1"
LONG_MESSAGE = ("Your answers did not follow the instructions: several ratings were given "
                "without reading the sentence, as the attention items show.")


def _path(request) -> str:
    return urlsplit(request.url).path


def test_create_hit_creates_a_draft_with_every_field_then_publishes(recorded):
    provider, adapter = recorded
    adapter.answer(200, {"results": [], "_links": {}})                       # list studies
    adapter.answer(200, {"results": [], "_links": {}})                       # list groups
    adapter.answer(201, {"id": "grp1", "name": "Unpack blocklist"})          # create group
    adapter.answer(201, {"id": "study1", "status": "UNPUBLISHED",
                         "total_available_places": 3})                      # create study
    adapter.answer(200, {"id": "study1", "status": "ACTIVE", "total_available_places": 3})

    published = provider.create_hit(hit_type_id="T", question_xml="", max_assignments=3,
                                    lifetime_seconds=3600, unique_request_token="unpack-hit-1")

    assert published.hit_id == "study1" and published.status == "Assignable"
    methods_paths = [(r.method, _path(r)) for r in adapter.requests]
    assert methods_paths == [
        ("GET", "/api/v1/studies/"),
        ("GET", "/api/v1/participant-groups/"),
        ("POST", "/api/v1/participant-groups/"),
        ("POST", "/api/v1/studies/"),
        ("POST", "/api/v1/studies/study1/transition/"),
    ]
    assert all(r.headers["Authorization"] == "Token secret-token" for r in adapter.requests)
    assert parse_qs(urlsplit(adapter.requests[1].url).query)["workspace_id"] == [
        "wsp0000000000000000000001"]
    study = adapter.body(3)
    assert study["name"] == "Rate fillers"
    assert study["internal_name"] == "unpack batch 1 [unpack-hit-1]"
    assert study["description"] == "Rate how plausible each filler is."
    assert all(placeholder in study["external_study_url"]
               for placeholder in URL_PLACEHOLDERS.values())
    assert study["prolific_id_option"] == "url_parameters"
    assert study["total_available_places"] == 3
    assert study["estimated_completion_time"] == 10
    assert study["maximum_allowed_time"] == 30
    assert study["reward"] == 150
    assert study["device_compatibility"] == ["desktop"]
    assert [(code["code"], code["code_type"]) for code in study["completion_codes"]] == [
        ("CDONE1234", "COMPLETED"), ("CFAIL5678", "FAILED_ATTENTION_CHECK")]
    assert study["filters"] == [
        {"filter_id": "approval_rate", "selected_range": {"lower": 95, "upper": 100}},
        {"filter_id": "participant_group_blocklist", "selected_values": ["grp1"]},
    ]
    assert adapter.body(4) == {"action": "PUBLISH"}


def test_study_controls_send_transitions_and_places(recorded):
    provider, adapter = recorded
    for _ in range(4):
        adapter.answer(200, {"id": "s1", "status": "ACTIVE", "total_available_places": 5})
    provider.pause_study("s1")
    provider.resume_study("s1")
    provider.stop_study("s1")
    provider.set_total_places("s1", 8)
    assert [adapter.body(i) for i in range(3)] == [
        {"action": "PAUSE"}, {"action": "START"}, {"action": "STOP"}]
    assert (adapter.requests[3].method, _path(adapter.requests[3])) == (
        "PATCH", "/api/v1/studies/s1/")
    assert adapter.body(3) == {"total_available_places": 8}


def test_submissions_are_listed_through_every_next_link(recorded):
    provider, adapter = recorded
    next_href = f"{API}/studies/s1/submissions/?page=2&page_size=100"
    adapter.answer(200, {"results": [
        {"id": "sub1", "participant_id": "p1", "status": "AWAITING REVIEW",
         "started_at": "2026-11-24T10:00:00Z", "completed_at": "2026-11-24T10:09:00Z"},
        {"id": "sub2", "participant_id": "p2", "status": "RETURNED",
         "started_at": "2026-11-24T10:00:00Z"},
    ], "_links": {"next": {"href": next_href}}})
    adapter.answer(200, {"results": [
        {"id": "sub3", "participant_id": "p3", "status": "TIMED-OUT",
         "started_at": "2026-11-24T10:00:00Z"}], "_links": {"next": {"href": None}}})

    collected = provider.list_assignments_for_hit("s1")

    assert adapter.requests[1].url == next_href
    assert [(c.assignment_id, c.worker_id, c.status) for c in collected] == [
        ("sub1", "p1", "Submitted"), ("sub2", "p2", "Returned"), ("sub3", "p3", "Abandoned")]
    assert collected[0].submit_time is not None and collected[0].hit_id == "s1"


def test_approve_and_reject_one_by_one_and_in_bulk(recorded):
    provider, adapter = recorded
    provider.approve_assignment("sub1")
    provider.reject_assignment("sub2", message=LONG_MESSAGE, rejection_category="LOW_EFFORT")
    provider.approve_assignments(["sub3", "sub4"])
    provider.reject_assignments(["sub5", "sub6"], message=LONG_MESSAGE,
                                rejection_category="FAILED_CHECK")
    assert [(r.method, _path(r)) for r in adapter.requests] == [
        ("POST", "/api/v1/submissions/sub1/transition/"),
        ("POST", "/api/v1/submissions/sub2/transition/"),
        ("POST", "/api/v1/submissions/bulk-approve/"),
        ("POST", "/api/v1/submissions/sub5/transition/"),
        ("POST", "/api/v1/submissions/sub6/transition/"),
    ]
    assert adapter.body(0) == {"action": "APPROVE"}
    assert adapter.body(1) == {"action": "REJECT", "message": LONG_MESSAGE,
                               "rejection_category": "LOW_EFFORT"}
    assert adapter.body(2) == {"submission_ids": ["sub3", "sub4"]}
    assert adapter.body(4)["rejection_category"] == "FAILED_CHECK"


def test_a_rejection_prolific_would_refuse_is_stopped_before_any_request(recorded):
    provider, adapter = recorded
    with pytest.raises(ProviderPermanentError, match="at least 100 characters"):
        provider.reject_assignment("sub1", message="Low effort.")
    with pytest.raises(ValueError, match="rejection category"):
        provider.reject_assignments(["sub1"], message=LONG_MESSAGE, rejection_category="BAD")
    assert adapter.requests == []


def test_bonus_is_set_up_for_the_submission_then_paid_by_set_up_id(recorded):
    provider, adapter = recorded
    adapter.answer(200, {"id": "sub1", "study_id": "s1", "participant": "p1"})
    adapter.answer(201, {"id": "bonus9", "study": "s1", "amount": 50, "fees": 16.65,
                         "vat": 0, "total_amount": 66.65})
    adapter.answer(200, "Bulk bonus payment with ID bonus9 is being processed")

    setup = provider.set_up_bonus(worker_id="p1", assignment_id="sub1", amount=Decimal("0.50"))
    provider.pay_bonus(setup.id)

    assert (setup.id, setup.amount_cents, setup.fees_cents, setup.total_cents) == (
        "bonus9", 50, 17, 67)
    assert [(r.method, _path(r)) for r in adapter.requests] == [
        ("GET", "/api/v1/submissions/sub1/"),
        ("POST", "/api/v1/submissions/bonus-payments/"),
        ("POST", "/api/v1/bulk-bonus-payments/bonus9/pay/"),
    ]
    assert adapter.body(1) == {"study_id": "s1", "csv_bonuses": "sub1,0.50\n"}


def test_one_call_bonus_is_refused(recorded):
    provider, adapter = recorded
    with pytest.raises(ProviderPermanentError) as refused:
        provider.send_bonus(worker_id="p1", assignment_id="sub1", amount=Decimal("1.00"),
                            reason="thanks", unique_request_token="t")
    assert refused.value.code == "TwoStepBonus" and adapter.requests == []


def test_block_and_unblock_go_through_the_blocklist_group(recorded):
    provider, adapter = recorded
    adapter.answer(200, {"results": [{"id": "grp7", "name": "Unpack blocklist",
                                      "is_deleted": False}], "_links": {}})
    adapter.answer(200, {"results": []})
    adapter.answer(200, {"results": []})
    provider.create_worker_block("p1", reason="spam")
    provider.delete_worker_block("p1")
    assert [(r.method, _path(r)) for r in adapter.requests] == [
        ("GET", "/api/v1/participant-groups/"),
        ("POST", "/api/v1/participant-groups/grp7/participants/"),
        ("DELETE", "/api/v1/participant-groups/grp7/participants/"),
    ]
    assert adapter.body(1) == adapter.body(2) == {"participant_ids": ["p1"]}


def test_429_is_retried_where_it_failed_never_sooner_than_retry_after(recorded):
    provider, adapter = recorded
    sleeps: list[float] = []
    provider._sleep = sleeps.append
    adapter.answer(429, {"error": {"status": 429, "title": "Too many requests"}},
                   {"Retry-After": "7"})
    adapter.answer(200, {"id": "s1", "status": "ACTIVE"})
    assert provider.get_study("s1").id == "s1"
    assert len(adapter.requests) == 2 and sleeps == [7.0]


def test_429_past_the_bounded_retries_is_raised_with_retry_after(recorded, settings):
    settings.UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS = 3
    from annotation.providers.retry import RetryPolicy

    provider, adapter = recorded
    provider.config = replace(provider.config, retry=RetryPolicy.from_settings())
    provider._sleep = lambda _seconds: None
    for _ in range(3):
        adapter.answer(429, {"error": {"status": 429, "title": "Too many requests"}},
                       {"Retry-After": "7"})
    with pytest.raises(ProviderThrottled) as throttled:
        provider.get_study("s1")
    assert throttled.value.retry_after_seconds == 7.0
    assert len(adapter.requests) == 3


def test_a_post_whose_reply_was_lost_is_not_sent_again_blindly(recorded):
    """A 5xx after a POST (the outcome unknown) is not repeated by the call retry; a GET is."""
    provider, adapter = recorded
    adapter.answer(503, {"error": {"status": 503, "title": "Service unavailable"}})
    with pytest.raises(ProviderTransientError):
        provider.pay_bonus("setup1")
    assert len(adapter.requests) == 1
    adapter.answer(503, {"error": {"status": 503, "title": "Service unavailable"}})
    adapter.answer(200, {"id": "s1", "status": "ACTIVE"})
    assert provider.get_study("s1").id == "s1"
    assert len(adapter.requests) == 3


def test_errors_map_to_the_provider_error_classes(recorded, settings):
    settings.UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS = 1
    from annotation.providers.retry import RetryPolicy

    provider, adapter = recorded
    provider.config = replace(provider.config, retry=RetryPolicy.from_settings())
    adapter.answer(503, {"error": {"status": 503, "title": "Service unavailable"}})
    with pytest.raises(ProviderTransientError):
        provider.get_study("s1")
    adapter.answer(400, {"error": {"status": 400, "error_code": 140100, "title": "Bad request",
                                   "detail": {"reward": ["Too low."]}}})
    with pytest.raises(ProviderPermanentError) as permanent:
        provider.get_study("s1")
    assert permanent.value.code == "140100" and "Too low." in permanent.value.message


def test_a_dropped_connection_is_transient(template):
    from annotation.providers.prolific import ProlificConfig, ProlificProvider
    from annotation.providers.retry import RetryPolicy

    provider = ProlificProvider(ProlificConfig(api_url="http://127.0.0.1:9", api_token="t",
                                               connect_timeout_seconds=0.5,
                                               retry=RetryPolicy.from_settings()))
    with pytest.raises(ProviderTransientError) as refused:
        provider.get_study("s1")
    assert refused.value.request_sent is False  # refused: nothing reached Prolific


def test_no_token_is_a_clear_permanent_error():
    from annotation.providers.prolific import ProlificConfig, ProlificProvider

    session = requests.Session()
    with pytest.raises(ProviderPermanentError, match="PROLIFIC_API_TOKEN"):
        ProlificProvider(ProlificConfig(), session=session).get_study("s1")


@override_settings(PROLIFIC_API_URL="http://127.0.0.1:1", PROLIFIC_API_TOKEN="tok",
                   PROLIFIC_WORKSPACE_ID="ws1")
def test_get_provider_reads_the_settings():
    from annotation.providers import get_provider
    from annotation.providers.prolific import ProlificProvider

    provider = get_provider("prolific")
    assert isinstance(provider, ProlificProvider)
    assert (provider.config.api_url, provider.config.api_token,
            provider.config.workspace_id) == ("http://127.0.0.1:1", "tok", "ws1")


def test_the_default_base_url_is_prolifics():
    from annotation.providers.prolific import DEFAULT_API_URL, ProlificConfig

    assert ProlificConfig.from_settings(object()).api_url == DEFAULT_API_URL == \
        "https://api.prolific.com"
