"""The provider's exact MTurk requests, checked by botocore's Stubber against the service model."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest

from annotation.providers import (
    HitTypeSpec,
    ProviderPermanentError,
    ProviderThrottled,
    ProviderTransientError,
    QualificationRequirementSpec,
    get_provider,
)
from annotation.providers.local import LocalProvider
from annotation.providers.mturk import (
    LIVE_ENDPOINT_URL,
    SANDBOX_ENDPOINT_URL,
    MTurkConfig,
    MTurkProvider,
)

EXTERNAL_QUESTION = (
    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
    '2006-07-14/ExternalQuestion.xsd"><ExternalURL>https://unpack.test/task/1</ExternalURL>'
    "<FrameHeight>0</FrameHeight></ExternalQuestion>"
)


def _hit(hit_id: str = "3HITAAAA", status: str = "Assignable") -> dict:
    return {
        "HITId": hit_id,
        "HITTypeId": "3TYPEAAAA",
        "HITStatus": status,
        "MaxAssignments": 4,
        "NumberOfAssignmentsAvailable": 4,
        "NumberOfAssignmentsPending": 0,
        "NumberOfAssignmentsCompleted": 0,
        "Expiration": datetime(2030, 1, 1, tzinfo=UTC),
    }


def _assignment(number: int) -> dict:
    return {
        "AssignmentId": f"3ASG{number:06d}",
        "WorkerId": f"AWORKER{number:04d}",
        "HITId": "3HITAAAA",
        "AssignmentStatus": "Submitted",
        "AcceptTime": datetime(2024, 1, 1, tzinfo=UTC),
        "SubmitTime": datetime(2024, 1, 1, 0, 5, tzinfo=UTC),
        "Answer": (
            '<QuestionFormAnswers xmlns="http://mechanicalturk.amazonaws.com/'
            'AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd"><Answer>'
            f"<QuestionIdentifier>rating</QuestionIdentifier><FreeText>{number % 5 + 1}</FreeText>"
            "</Answer></QuestionFormAnswers>"
        ),
    }


def test_plausibility_hit_type_sends_the_three_system_qualifications(stubbed):
    provider, stubber, _ = stubbed
    stubber.add_response(
        "create_hit_type",
        {"HITTypeId": "3TYPEAAAA"},
        {
            "AutoApprovalDelayInSeconds": 259200,
            "AssignmentDurationInSeconds": 600,
            "Reward": "0.13",
            "Title": "Rate a filler",
            "Description": "How plausible is the filler?",
            "Keywords": "plausibility, wikihow",
            "QualificationRequirements": [
                {
                    "QualificationTypeId": "00000000000000000071",
                    "Comparator": "In",
                    "LocaleValues": [{"Country": "US"}, {"Country": "GB"}],
                },
                {
                    "QualificationTypeId": "000000000000000000L0",
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [95],
                },
                {
                    "QualificationTypeId": "00000000000000000040",
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [500],
                },
            ],
        },
    )
    spec = HitTypeSpec(
        title="Rate a filler",
        description="How plausible is the filler?",
        reward=Decimal("0.13"),
        assignment_duration_seconds=600,
        keywords=("plausibility", "wikihow"),
        qualification_requirements=(
            QualificationRequirementSpec.locale_in("US", "GB"),
            QualificationRequirementSpec.percent_approved_at_least(95),
            QualificationRequirementSpec.number_approved_at_least(500),
        ),
    )
    assert provider.create_hit_type(spec) == "3TYPEAAAA"


def test_create_hit_sends_unique_request_token(stubbed):
    provider, stubber, _ = stubbed
    stubber.add_response(
        "create_hit_with_hit_type",
        {"HIT": _hit()},
        {
            "HITTypeId": "3TYPEAAAA",
            "MaxAssignments": 4,
            "LifetimeInSeconds": 86400,
            "Question": EXTERNAL_QUESTION,
            "UniqueRequestToken": "unpack-hit-17",
            "RequesterAnnotation": "batch 3",
        },
    )
    hit = provider.create_hit(
        hit_type_id="3TYPEAAAA",
        question_xml=EXTERNAL_QUESTION,
        max_assignments=4,
        lifetime_seconds=86400,
        unique_request_token="unpack-hit-17",
        requester_annotation="batch 3",
    )
    assert (hit.hit_id, hit.status, hit.assignments_available) == ("3HITAAAA", "Assignable", 4)


EXISTING = "3EXISTINGHIT0000000000000000AB"  # MTurk HIT ids: 30 characters of [A-Z0-9]
OURS = "unpack batch 3 unpack-hit-17"


@pytest.mark.parametrize("message", [
    f'The idempotency token "unpack-hit-17" has already been processed. HIT ID: {EXISTING} '
    "(1626172412406)",
    f'The HIT with ID "{EXISTING}" already exists. (1626172412406)',
    f"HITId={EXISTING}: duplicate request",
], ids=["our-stand-in", "aws-style", "terse"])
def test_a_duplicate_token_resolves_to_the_hit_named_in_any_wording(stubbed, message):
    provider, stubber, _ = stubbed
    stubber.add_client_error("create_hit_with_hit_type", service_error_code="RequestError",
                             service_message=message, http_status_code=400)
    stubber.add_response("get_hit", {"HIT": {**_hit(EXISTING), "RequesterAnnotation": OURS}},
                         {"HITId": EXISTING})
    hit = provider.create_hit(hit_type_id="3TYPEAAAA", question_xml=EXTERNAL_QUESTION,
                              max_assignments=4, lifetime_seconds=86400,
                              unique_request_token="unpack-hit-17", requester_annotation=OURS)
    assert hit.hit_id == EXISTING
    stubber.assert_no_pending_responses()


def test_a_duplicate_token_without_a_hit_id_is_found_by_its_annotation_on_any_page(stubbed):
    provider, stubber, _ = stubbed
    stubber.add_client_error("create_hit_with_hit_type", service_error_code="RequestError",
                             service_message="The request has already been processed.",
                             http_status_code=400)
    others = [{**_hit(f"3OTHER{n:024d}"), "RequesterAnnotation": f"unpack batch 2 t{n}"}
              for n in range(150)]
    stubber.add_response("list_hits", {"HITs": others[:100], "NextToken": "page-2",
                                       "NumResults": 100}, {"MaxResults": 100})
    stubber.add_response("list_hits", {
        "HITs": [*others[100:], {**_hit(EXISTING), "RequesterAnnotation": OURS}],
        "NumResults": 51}, {"MaxResults": 100, "NextToken": "page-2"})
    hit = provider.create_hit(hit_type_id="3TYPEAAAA", question_xml=EXTERNAL_QUESTION,
                              max_assignments=4, lifetime_seconds=86400,
                              unique_request_token="unpack-hit-17", requester_annotation=OURS)
    assert hit.hit_id == EXISTING
    stubber.assert_no_pending_responses()


def test_a_permanent_create_error_that_made_no_hit_is_raised(stubbed):
    provider, stubber, _ = stubbed
    stubber.add_client_error("create_hit_with_hit_type", service_error_code="RequestError",
                             service_message="The Question is not well-formed XML.",
                             http_status_code=400)
    stubber.add_response("list_hits", {"HITs": [], "NumResults": 0}, {"MaxResults": 100})
    with pytest.raises(ProviderPermanentError, match="not well-formed"):
        provider.create_hit(hit_type_id="3TYPEAAAA", question_xml=EXTERNAL_QUESTION,
                            max_assignments=4, lifetime_seconds=86400,
                            unique_request_token="unpack-hit-18", requester_annotation=OURS)


def test_missing_credentials_and_network_failures_are_provider_errors():
    """Finding 6: NoCredentialsError escaped as a 500; every botocore failure now maps."""
    import botocore.exceptions

    from annotation.providers.mturk import classify_botocore_error

    missing = classify_botocore_error(botocore.exceptions.NoCredentialsError(), "create_hit")
    assert isinstance(missing, ProviderPermanentError) and missing.code == "NoCredentials"
    assert "AWS_ACCESS_KEY_ID" in missing.message
    for failure in (botocore.exceptions.EndpointConnectionError(endpoint_url="https://x"),
                    botocore.exceptions.ConnectTimeoutError(endpoint_url="https://x"),
                    botocore.exceptions.SSLError(endpoint_url="https://x", error="bad"),
                    botocore.exceptions.ProxyConnectionError(proxy_url="https://p", error="x")):
        assert isinstance(classify_botocore_error(failure, "get_hit"), ProviderTransientError)


def test_list_assignments_follows_every_next_token(stubbed):
    provider, stubber, _ = stubbed
    expected = {"HITId": "3HITAAAA", "AssignmentStatuses": ["Submitted", "Approved", "Rejected"]}
    pages = [range(0, 100), range(100, 200), range(200, 250)]
    for index, numbers in enumerate(pages):
        params = dict(expected, MaxResults=100)
        if index:
            params["NextToken"] = f"token-{index}"
        response = {"NumResults": len(numbers), "Assignments": [_assignment(n) for n in numbers]}
        if index < len(pages) - 1:
            response["NextToken"] = f"token-{index + 1}"
        stubber.add_response("list_assignments_for_hit", response, params)
    assignments = provider.list_assignments_for_hit("3HITAAAA")
    assert len(assignments) == 250
    assert len({assignment.assignment_id for assignment in assignments}) == 250
    assert assignments[7].answers == {"rating": "3"}


def test_list_reviewable_hits_follows_every_next_token(stubbed):
    provider, stubber, _ = stubbed
    stubber.add_response(
        "list_reviewable_hits",
        {"NextToken": "p2", "NumResults": 1, "HITs": [_hit("3HITA", "Reviewable")]},
        {"Status": "Reviewable", "HITTypeId": "3TYPEAAAA", "MaxResults": 100},
    )
    stubber.add_response(
        "list_reviewable_hits",
        {"NumResults": 1, "HITs": [_hit("3HITB", "Reviewable")]},
        {"Status": "Reviewable", "HITTypeId": "3TYPEAAAA", "MaxResults": 100, "NextToken": "p2"},
    )
    hits = provider.list_reviewable_hits(hit_type_id="3TYPEAAAA")
    assert [hit.hit_id for hit in hits] == ["3HITA", "3HITB"]


def test_bonus_carries_token_and_amount_in_cents(stubbed):
    provider, stubber, _ = stubbed
    stubber.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "AWORKER0001",
            "AssignmentId": "3ASG000001",
            "BonusAmount": "0.25",
            "Reason": "Careful rewrites",
            "UniqueRequestToken": "bonus-3ASG000001",
        },
    )
    provider.send_bonus(
        worker_id="AWORKER0001",
        assignment_id="3ASG000001",
        amount=Decimal("0.25"),
        reason="Careful rewrites",
        unique_request_token="bonus-3ASG000001",
    )


def test_a_refused_bonus_is_raised_whatever_it_says_and_payments_are_listed(stubbed):
    """No wording is trusted: the bonus service asks ListBonusPayments (test_bonus_duplicates)."""
    provider, stubber, _ = stubbed
    stubber.add_client_error(
        "send_bonus",
        service_error_code="RequestError",
        service_message='The idempotency token "bonus-1" has already been processed. (1)',
    )
    with pytest.raises(ProviderPermanentError):
        provider.send_bonus(worker_id="AWORKER0001", assignment_id="3ASG000001",
                            amount=Decimal("0.25"), reason="r", unique_request_token="bonus-1")
    stubber.add_response(
        "list_bonus_payments",
        {"NumResults": 1, "NextToken": "page2", "BonusPayments": [
            {"WorkerId": "AWORKER0001", "BonusAmount": "0.25", "AssignmentId": "3ASG000001",
             "Reason": "r", "GrantTime": datetime(2024, 1, 2, tzinfo=UTC)}]},
        {"AssignmentId": "3ASG000001", "MaxResults": 100},
    )
    stubber.add_response(
        "list_bonus_payments", {"NumResults": 0, "BonusPayments": []},
        {"AssignmentId": "3ASG000001", "MaxResults": 100, "NextToken": "page2"},
    )
    assert [(p.worker_id, p.amount, p.reason) for p in
            provider.bonus_payments(assignment_id="3ASG000001")] == [
        ("AWORKER0001", Decimal("0.25"), "r")]


def test_throttled_then_ok_is_retried_with_backoff(stubbed):
    provider, stubber, sleeps = stubbed
    stubber.add_client_error(
        "get_hit", service_error_code="ThrottlingException", service_message="Rate exceeded"
    )
    stubber.add_client_error(
        "get_hit", service_error_code="ServiceFault", service_message="oops", http_status_code=500
    )
    stubber.add_response("get_hit", {"HIT": _hit()}, {"HITId": "3HITAAAA"})
    assert provider.get_hit("3HITAAAA").hit_id == "3HITAAAA"
    assert len(sleeps) == 2
    # Attempt n waits within [0.5, 1.0] x base * 2**(n-1).
    assert 0.5 <= sleeps[0] <= 1.0
    assert 1.0 <= sleeps[1] <= 2.0


def test_throttling_that_never_ends_is_surfaced_after_bounded_attempts(stubbed):
    provider, stubber, sleeps = stubbed
    for _ in range(3):
        stubber.add_client_error(
            "get_hit", service_error_code="ThrottlingException", service_message="Slow down"
        )
    with pytest.raises(ProviderThrottled):
        provider.get_hit("3HITAAAA")
    assert len(sleeps) == 2


def test_service_fault_exhausting_retries_is_transient(stubbed):
    provider, stubber, _ = stubbed
    for _ in range(3):
        stubber.add_client_error(
            "get_account_balance", service_error_code="ServiceFault", http_status_code=500
        )
    with pytest.raises(ProviderTransientError) as raised:
        provider.get_account_balance()
    assert raised.value.code == "ServiceFault"


def test_permanent_error_is_surfaced_at_once_with_mturk_message(stubbed):
    provider, stubber, sleeps = stubbed
    stubber.add_client_error(
        "approve_assignment",
        service_error_code="RequestError",
        service_message="Assignment 3NOPE does not exist. (1619128282649)",
    )
    with pytest.raises(ProviderPermanentError) as raised:
        provider.approve_assignment("3NOPE")
    assert raised.value.code == "RequestError"
    assert "3NOPE does not exist" in raised.value.message
    assert sleeps == []


def test_update_expiration_and_reject_requests(stubbed):
    provider, stubber, _ = stubbed
    moment = datetime(2020, 1, 1, tzinfo=UTC)
    stubber.add_response(
        "update_expiration_for_hit", {}, {"HITId": "3HITAAAA", "ExpireAt": moment}
    )
    stubber.add_response(
        "reject_assignment", {}, {"AssignmentId": "3ASG1", "RequesterFeedback": "Off-topic"}
    )
    provider.update_expiration("3HITAAAA", expire_at=moment)
    provider.reject_assignment("3ASG1", message="Off-topic")


def test_notify_workers_sends_groups_of_one_hundred(stubbed):
    provider, stubber, _ = stubbed
    workers = [f"AW{n:05d}" for n in range(150)]
    stubber.add_response(
        "notify_workers",
        {"NotifyWorkersFailureStatuses": []},
        {"Subject": "s", "MessageText": "m", "WorkerIds": workers[:100]},
    )
    stubber.add_response(
        "notify_workers",
        {
            "NotifyWorkersFailureStatuses": [
                {
                    "NotifyWorkersFailureCode": "HardFailure",
                    "NotifyWorkersFailureMessage": "no",
                    "WorkerId": "AW00149",
                }
            ]
        },
        {"Subject": "s", "MessageText": "m", "WorkerIds": workers[100:]},
    )
    failures = provider.notify_workers(workers, subject="s", message="m")
    assert [(failure.worker_id, failure.code) for failure in failures] == [
        ("AW00149", "HardFailure")
    ]


def test_config_defaults_to_sandbox_and_live_only_when_asked():
    assert MTurkConfig().resolved_endpoint_url == SANDBOX_ENDPOINT_URL
    assert MTurkConfig.from_settings(SimpleNamespace()).is_sandbox
    live = MTurkConfig.from_settings(SimpleNamespace(MTURK_LIVE=True, MTURK_ENDPOINT_URL=None))
    assert live.resolved_endpoint_url == LIVE_ENDPOINT_URL
    overridden = MTurkConfig.from_settings(
        SimpleNamespace(MTURK_LIVE=True, MTURK_ENDPOINT_URL="http://127.0.0.1:8765")
    )
    assert overridden.resolved_endpoint_url == "http://127.0.0.1:8765"


def test_client_is_built_lazily_against_the_configured_endpoint():
    provider = MTurkProvider(
        MTurkConfig(aws_access_key_id="AKIDX", aws_secret_access_key="s")
    )
    assert provider._client is None
    assert provider.client.meta.endpoint_url == SANDBOX_ENDPOINT_URL
    assert provider.client.meta.config.retries["total_max_attempts"] == 1


def test_get_provider_factory():
    assert isinstance(get_provider(), LocalProvider)
    with pytest.raises(ValueError, match="unknown provider"):
        get_provider("crowdflower")


def test_amounts_must_be_decimal_cents(stubbed):
    provider, _, _ = stubbed
    with pytest.raises(ValueError, match="cents"):
        provider.send_bonus(
            worker_id="AW1",
            assignment_id="3A",
            amount=Decimal("0.125"),
            reason="r",
            unique_request_token="t",
        )
