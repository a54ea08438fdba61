"""A retried SendBonus whose token MTurk already paid is recorded as paid, and a real refusal as
failed, told apart by MTurk's own ListBonusPayments — never by the error's wording, which AWS
does not document (issue 11: DESIGN.md "never depend on the wording of a provider's error")."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
import pytest
from botocore.stub import Stubber

from annotation.models import Assignment, Batch, Bonus, Hit, StatusEvent, Worker
from annotation.providers.mturk import MTurkConfig, MTurkProvider
from annotation.services import decisions
from tests.factories import ProjectFactory
from tests.mturk.test_fake_endpoint_e2e import _hit_type, _publish

pytestmark = pytest.mark.django_db


def submitted(worker_id: str, assignment_id: str) -> Assignment:
    batch = Batch.objects.create(project=ProjectFactory(), provider="mturk", title="t",
                                 status="published")
    hit = Hit.objects.create(batch=batch, unique_request_token=f"t-{assignment_id}",
                             provider_hit_id=f"H-{assignment_id}")
    worker = Worker.objects.create(provider="mturk", external_id=worker_id)
    return Assignment.objects.create(hit=hit, worker=worker, status="submitted",
                                     provider_assignment_id=assignment_id)


def bonus_for(assignment: Assignment, monkeypatch, *, again: bool = False) -> Bonus:
    monkeypatch.setattr(decisions, "enqueue_after_commit", lambda *args: None)
    return decisions.bonus_create(assignment_id=assignment.pk, amount_cents=25,
                                  reason="Careful work", again=again).bonus


def stubbed_provider():
    client = boto3.client("mturk", region_name="us-east-1", aws_access_key_id="AKIDFAKE",
                          aws_secret_access_key="fake")
    return MTurkProvider(MTurkConfig(), client=client, sleep=lambda _s: None), client


PAID = {"NumResults": 1, "BonusPayments": [
    {"WorkerId": "AW1", "BonusAmount": "0.25", "AssignmentId": "AS1", "Reason": "Careful work",
     "GrantTime": datetime(2024, 1, 2, tzinfo=UTC)}]}


@pytest.mark.parametrize("wording", [
    'The idempotency token "x" has already been processed.',  # what we used to match
    "This request was previously fulfilled.",  # any other wording
    "",
])
def test_a_paid_token_counts_as_paid_whatever_the_message(wording, monkeypatch):
    bonus = bonus_for(submitted("AW1", "AS1"), monkeypatch)
    provider, client = stubbed_provider()
    with Stubber(client) as stubber:
        stubber.add_client_error("send_bonus", service_error_code="RequestError",
                                 service_message=wording)
        stubber.add_response("list_bonus_payments", PAID,
                             {"AssignmentId": "AS1", "MaxResults": 100})
        sent = decisions.bonus_send(bonus_id=bonus.pk, provider=provider)
        stubber.assert_no_pending_responses()
    assert sent.sent_at is not None and sent.error == ""


def test_a_refusal_that_sounds_like_a_duplicate_is_still_a_refusal(monkeypatch):
    """The message says "already processed" but MTurk lists no payment: not paid."""
    bonus = bonus_for(submitted("AW1", "AS1"), monkeypatch)
    provider, client = stubbed_provider()
    with Stubber(client) as stubber:
        stubber.add_client_error(
            "send_bonus", service_error_code="RequestError",
            service_message='The idempotency token "x" has already been processed. AW1')
        stubber.add_response("list_bonus_payments", {"NumResults": 0, "BonusPayments": []},
                             {"AssignmentId": "AS1", "MaxResults": 100})
        failed = decisions.bonus_send(bonus_id=bonus.pk, provider=provider)
    assert failed.sent_at is None and "already been processed" in failed.error
    assert "AW1" not in failed.error  # staff read the pseudonym
    assert StatusEvent.objects.filter(kind="bonus_failed").count() == 1


def test_against_the_stand_in_a_lost_answer_and_a_second_bonus(provider, simulator,
                                                                monkeypatch):
    """Through boto3 and the stand-in: the first SendBonus is paid but its answer is "lost"
    (sent_at cleared, as when the job died after the call); sending again is refused by the
    stand-in (token used) and recorded as paid from its listing, with no second payment. A
    second bonus of the same amount and reason (``again``) that the stand-in refuses (no funds)
    is not mistaken for the first one."""
    hit = _publish(provider, _hit_type(provider), "bonus-dup", assignments=1)
    worker_id = simulator.register_worker("ADUP1")
    assignment_id = simulator.accept(worker_id, hit.hit_id)["assignment_id"]
    simulator.external_submit(assignment_id, {"rating": "4"})
    assignment = submitted(worker_id, assignment_id)
    first = bonus_for(assignment, monkeypatch)
    assert decisions.bonus_send(bonus_id=first.pk, provider=provider).sent_at is not None
    Bonus.objects.filter(pk=first.pk).update(sent_at=None)  # the answer was lost
    assert decisions.bonus_send(bonus_id=first.pk, provider=provider).sent_at is not None
    assert [b["BonusAmount"] for b in simulator.ledger()["bonuses"]] == ["0.25"]

    second = bonus_for(assignment, monkeypatch, again=True)
    simulator.inject_fault("SendBonus", error="RequestError",
                           message="You do not have enough funds to pay this bonus.")
    failed = decisions.bonus_send(bonus_id=second.pk, provider=provider)
    assert failed.sent_at is None and "funds" in failed.error
    assert len(simulator.ledger()["bonuses"]) == 1

