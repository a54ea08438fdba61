"""End to end: the real boto3 client, through the provider, against the stateful stand-in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest

from annotation.fake_mturk import SimulatorRefused
from annotation.hit_templates import (
    PLAUSIBILITY_RATING_OPTIONS,
    QualificationQuestion,
    render_external_question,
    render_html_question,
    render_html_task_form,
    render_plausibility_qualification_test,
)
from annotation.providers import (
    HitTypeSpec,
    PaidBonus,
    ProviderPermanentError,
    ProviderThrottled,
    QualificationRequirementSpec,
)

TASK_URL = "https://unpack.test/mturk/task/?item=42&kind=plausibility"


def _hit_type(provider, *, requirements=(), auto_approval=3600, duration=600) -> str:
    return provider.create_hit_type(
        HitTypeSpec(
            title="Rate how plausible a filler is",
            description="Read a how-to sentence and rate the filler in the gap.",
            reward=Decimal("0.13"),
            assignment_duration_seconds=duration,
            auto_approval_delay_seconds=auto_approval,
            qualification_requirements=tuple(requirements),
        )
    )


def _publish(provider, hit_type_id, token, *, assignments=2, lifetime=86400):
    return provider.create_hit(
        hit_type_id=hit_type_id,
        question_xml=render_external_question(url=TASK_URL, frame_height=0),
        max_assignments=assignments,
        lifetime_seconds=lifetime,
        unique_request_token=token,
    )


def test_publish_accept_submit_collect(provider, simulator):
    hit = _publish(provider, _hit_type(provider), "hit-1")
    assert hit.status == "Assignable"
    worker = simulator.register_worker("AWORKERONE")
    accepted = simulator.accept(worker, hit.hit_id)

    # The page MTurk opens: our URL plus the four parameters MTurk appends.
    task_url = urlsplit(accepted["task_url"])
    query = parse_qs(task_url.query)
    assert task_url.netloc == "unpack.test"
    assert query["item"] == ["42"]
    assert query["assignmentId"] == [accepted["assignment_id"]]
    assert query["hitId"] == [hit.hit_id]
    assert query["workerId"] == [worker]
    submit_to = query["turkSubmitTo"][0]
    assert submit_to == simulator.base_url

    simulator.external_submit(
        accepted["assignment_id"], {"rating": "4", "comment": 'fine & "<b>ok</b>"'}
    )
    assert provider.get_hit(hit.hit_id).assignments_completed == 1
    (assignment,) = provider.list_assignments_for_hit(hit.hit_id)
    assert assignment.worker_id == worker
    assert assignment.status == "Submitted"
    assert assignment.answers == {"rating": "4", "comment": 'fine & "<b>ok</b>"'}
    assert assignment.accept_time is not None and assignment.submit_time is not None
    assert assignment.submit_time >= assignment.accept_time


def test_html_question_hit_is_accepted(provider, simulator):
    page = render_html_task_form(
        title="Rewrite the question", instructions="Make it stand alone.",
        item_text="What did he do next?", question="Your rewrite", field_name="rewrite",
    )
    hit = provider.create_hit(
        hit_type_id=_hit_type(provider), question_xml=render_html_question(html=page),
        max_assignments=1, lifetime_seconds=600, unique_request_token="html-1",
    )
    worker = simulator.register_worker()
    accepted = simulator.accept(worker, hit.hit_id)
    assert accepted["task_url"] is None  # HTMLQuestion pages are served by MTurk itself
    simulator.external_submit(accepted["assignment_id"], {"rewrite": "What did Byrne do next?"})
    (assignment,) = provider.list_assignments_for_hit(hit.hit_id)
    assert assignment.answers == {"rewrite": "What did Byrne do next?"}


def test_lifecycle_assignable_unassignable_reviewable_disposed(provider, simulator):
    hit = _publish(provider, _hit_type(provider), "life-1", assignments=2)
    first, second, third = (simulator.register_worker() for _ in range(3))
    one = simulator.accept(first, hit.hit_id)
    assert provider.get_hit(hit.hit_id).status == "Assignable"
    two = simulator.accept(second, hit.hit_id)
    assert provider.get_hit(hit.hit_id).status == "Unassignable"
    with pytest.raises(SimulatorRefused) as refused:
        simulator.accept(third, hit.hit_id)
    assert refused.value.code == "HITNotAssignable"

    simulator.return_assignment(two["assignment_id"])  # the slot comes back
    assert provider.get_hit(hit.hit_id).status == "Assignable"
    three = simulator.accept(third, hit.hit_id)
    simulator.external_submit(one["assignment_id"], {"rating": "5"})
    assert provider.get_hit(hit.hit_id).status == "Unassignable"
    simulator.external_submit(three["assignment_id"], {"rating": "2"})
    assert provider.get_hit(hit.hit_id).status == "Reviewable"
    assert [h.hit_id for h in provider.list_reviewable_hits()] == [hit.hit_id]

    with pytest.raises(provider.client.exceptions.RequestError, match="every assignment"):
        provider.client.delete_hit(HITId=hit.hit_id)  # submitted work is not decided yet
    for assignment in provider.list_assignments_for_hit(hit.hit_id):
        provider.approve_assignment(assignment.assignment_id)
    provider.client.delete_hit(HITId=hit.hit_id)
    assert provider.get_hit(hit.hit_id).status == "Disposed"
    assert provider.list_reviewable_hits() == []


def test_abandoned_assignment_frees_the_slot_after_the_deadline(provider, simulator):
    hit = _publish(provider, _hit_type(provider, duration=60), "abandon-1", assignments=1)
    worker, other = simulator.register_worker(), simulator.register_worker()
    simulator.accept(worker, hit.hit_id)
    assert provider.get_hit(hit.hit_id).status == "Unassignable"
    simulator.advance_clock(61)
    assert provider.get_hit(hit.hit_id).status == "Assignable"
    simulator.accept(other, hit.hit_id)


def test_expiry_makes_a_hit_reviewable_and_extension_reopens_it(provider, simulator):
    hit = _publish(provider, _hit_type(provider), "expire-1", assignments=3)
    worker = simulator.register_worker()
    accepted = simulator.accept(worker, hit.hit_id)
    simulator.external_submit(accepted["assignment_id"], {"rating": "3"})
    provider.update_expiration(hit.hit_id, expire_at=datetime(2000, 1, 1, tzinfo=UTC))
    expired = provider.get_hit(hit.hit_id)
    assert (expired.status, expired.assignments_available) == ("Reviewable", 0)
    provider.update_expiration(
        hit.hit_id, expire_at=datetime.now(UTC) + timedelta(days=1)
    )
    assert provider.get_hit(hit.hit_id).status == "Assignable"
    provider.create_additional_assignments(hit.hit_id, count=2, unique_request_token="more-1")
    provider.create_additional_assignments(hit.hit_id, count=2, unique_request_token="more-1")
    assert provider.get_hit(hit.hit_id).max_assignments == 5  # the repeat added nothing


def test_auto_approval_after_the_delay_on_the_advanced_clock(provider, simulator):
    hit = _publish(provider, _hit_type(provider, auto_approval=3600), "auto-1", assignments=1)
    worker = simulator.register_worker()
    accepted = simulator.accept(worker, hit.hit_id)
    simulator.external_submit(accepted["assignment_id"], {"rating": "1"})
    (before,) = provider.list_assignments_for_hit(hit.hit_id)
    assert before.status == "Submitted"
    simulator.advance_clock(3599)
    assert provider.list_assignments_for_hit(hit.hit_id)[0].status == "Submitted"
    simulator.advance_clock(2)
    (after,) = provider.list_assignments_for_hit(hit.hit_id)
    assert after.status == "Approved"
    assert provider.list_assignments_for_hit(hit.hit_id, statuses=("Submitted",)) == []


def test_more_than_one_hundred_reviewable_hits_are_all_listed(provider, simulator):
    hit_type_id = _hit_type(provider)
    published = [
        _publish(provider, hit_type_id, f"many-{n}", assignments=1, lifetime=60)
        for n in range(230)
    ]
    simulator.advance_clock(61)  # every HIT expires unworked -> Reviewable
    reviewable = provider.list_reviewable_hits(hit_type_id=hit_type_id)
    assert len(reviewable) == 230
    assert {hit.hit_id for hit in reviewable} == {hit.hit_id for hit in published}
    assert simulator.stats()["calls"]["ListReviewableHITs"] == 3


def test_a_hit_with_more_than_one_hundred_assignments(provider, simulator):
    hit = _publish(provider, _hit_type(provider), "crowd-1", assignments=205)
    for number in range(205):
        worker = simulator.register_worker(f"ACROWD{number:04d}")
        accepted = simulator.accept(worker, hit.hit_id)
        simulator.external_submit(accepted["assignment_id"], {"rating": str(number % 5 + 1)})
    assignments = provider.list_assignments_for_hit(hit.hit_id)
    assert len(assignments) == 205
    assert len({assignment.worker_id for assignment in assignments}) == 205
    assert provider.get_hit(hit.hit_id).status == "Reviewable"
    assert simulator.stats()["calls"]["ListAssignmentsForHIT"] == 3


def test_approve_reject_and_bonus(provider, simulator):
    hit = _publish(provider, _hit_type(provider), "pay-1", assignments=2)
    good, bad = simulator.register_worker("AGOOD1"), simulator.register_worker("ABAD1")
    good_assignment = simulator.accept(good, hit.hit_id)["assignment_id"]
    bad_assignment = simulator.accept(bad, hit.hit_id)["assignment_id"]
    simulator.external_submit(good_assignment, {"rating": "4"})
    simulator.external_submit(bad_assignment, {"rating": "1"})
    balance_before = provider.get_account_balance().available

    provider.approve_assignment(good_assignment, feedback="Thanks!")
    provider.reject_assignment(bad_assignment, message="The rewrite ignores the conversation.")
    bonus = {"worker_id": good, "assignment_id": good_assignment, "amount": Decimal("0.50"),
             "reason": "Careful work", "unique_request_token": f"bonus-{good_assignment}"}
    provider.send_bonus(**bonus)
    with pytest.raises(ProviderPermanentError):  # a retried token is refused, and not paid:
        provider.send_bonus(**bonus)
    assert provider.bonus_payments(assignment_id=good_assignment) == [PaidBonus(
        worker_id=good, assignment_id=good_assignment, amount=Decimal("0.50"),
        reason="Careful work")]  # what the bonus service reads to tell (test_bonus_duplicates)
    statuses = {a.worker_id: a for a in provider.list_assignments_for_hit(hit.hit_id)}
    assert statuses[good].status == "Approved"
    assert statuses[bad].status == "Rejected"
    assert statuses[bad].requester_feedback == "The rewrite ignores the conversation."
    ledger = simulator.ledger()
    assert [bonus["BonusAmount"] for bonus in ledger["bonuses"]] == ["0.50"]
    assert provider.get_account_balance().available == balance_before - Decimal("0.63")

    with pytest.raises(ProviderPermanentError) as twice:
        provider.reject_assignment(good_assignment, message="changed my mind")
    assert twice.value.code == "RequestError"
    provider.approve_assignment(bad_assignment, override_rejection=True)


def test_blocked_worker_cannot_accept_until_unblocked(provider, simulator):
    hit = _publish(provider, _hit_type(provider), "block-1")
    worker = simulator.register_worker("ASPAMMER1")
    provider.create_worker_block(worker, reason="Copied the question verbatim.")
    with pytest.raises(SimulatorRefused) as refused:
        simulator.accept(worker, hit.hit_id)
    assert refused.value.code == "WorkerBlocked"
    provider.delete_worker_block(worker, reason="Appeal accepted.")
    simulator.accept(worker, hit.hit_id)


def test_duplicate_unique_request_token_resolves_to_the_same_hit(provider, simulator):
    hit_type_id = _hit_type(provider)
    first = _publish(provider, hit_type_id, "dup-1")
    again = _publish(provider, hit_type_id, "dup-1")
    assert again.hit_id == first.hit_id
    calls = simulator.stats()["calls"]
    assert calls["CreateHITWithHITType"] == 2
    assert len(provider.client.list_hits(MaxResults=100)["HITs"]) == 1


def test_throttling_fault_is_retried(provider, simulator):
    hit_type_id = _hit_type(provider)
    simulator.inject_fault("CreateHITWithHITType", count=2, error="throttling")
    hit = _publish(provider, hit_type_id, "throttled-1")
    assert provider.get_hit(hit.hit_id).status == "Assignable"
    assert simulator.stats()["calls"]["CreateHITWithHITType"] == 3
    assert provider.retries_performed == 2


def test_endless_throttling_is_surfaced(provider, simulator):
    simulator.inject_fault("GetAccountBalance", count=10, error="throttling")
    with pytest.raises(ProviderThrottled):
        provider.get_account_balance()
    assert simulator.stats()["calls"]["GetAccountBalance"] == 4  # max_attempts in conftest


def test_injected_permanent_error_is_not_retried(provider, simulator):
    simulator.inject_fault(
        "GetAccountBalance", error="RequestError", message="You are not a requester."
    )
    with pytest.raises(ProviderPermanentError, match="not a requester"):
        provider.get_account_balance()
    assert simulator.stats()["calls"]["GetAccountBalance"] == 1


def test_qualification_requirements_are_enforced(provider, simulator):
    test = render_plausibility_qualification_test(
        split="train",
        questions=[
            QualificationQuestion(f"q{n}", f"Case {n}", PLAUSIBILITY_RATING_OPTIONS, "5")
            for n in range(4)
        ],
    )
    qualification_id = provider.create_qualification_type(
        name="Plausibility test (train)", description="Four clear cases.",
        test_xml=test.test_xml, answer_key_xml=test.answer_key_xml, test_duration_seconds=600,
    )
    hit_type_id = _hit_type(
        provider,
        requirements=[
            QualificationRequirementSpec.locale_in("US", "GB"),
            QualificationRequirementSpec.percent_approved_at_least(95),
            QualificationRequirementSpec.number_approved_at_least(500),
            QualificationRequirementSpec.score_at_least(qualification_id, test.passing_score),
        ],
    )
    hit = _publish(provider, hit_type_id, "quals-1", assignments=10)
    qualified = dict(percent_approved=99, number_approved=1000,
                     qualifications={qualification_id: 4})
    refused_workers = {
        "ACANADA": dict(qualified, country="CA"),
        "ALOWRATE": dict(qualified, country="US", percent_approved=90),
        "ANOVICE": dict(qualified, country="GB", number_approved=20),
        "AFAILEDTEST": dict(qualified, country="US", qualifications={qualification_id: 3}),
        "ANOTEST": dict(qualified, country="US", qualifications={}),
    }
    for worker_id, attributes in refused_workers.items():
        simulator.register_worker(worker_id, **attributes)
        with pytest.raises(SimulatorRefused) as refused:
            simulator.accept(worker_id, hit.hit_id)
        assert refused.value.code == "NotQualified", worker_id
    simulator.register_worker("ABRITISH", country="GB", **{
        key: value for key, value in qualified.items()
    })
    simulator.accept("ABRITISH", hit.hit_id)
    # A worker granted the qualification through the API qualifies too.
    simulator.register_worker("AGRANTED", country="US", percent_approved=99, number_approved=600)
    provider.client.associate_qualification_with_worker(
        QualificationTypeId=qualification_id, WorkerId="AGRANTED", IntegerValue=4,
        SendNotification=False,
    )
    simulator.accept("AGRANTED", hit.hit_id)


def test_double_submit_is_refused(provider, simulator):
    hit = _publish(provider, _hit_type(provider), "double-1")
    worker = simulator.register_worker()
    accepted = simulator.accept(worker, hit.hit_id)
    simulator.external_submit(accepted["assignment_id"], {"rating": "4"})
    with pytest.raises(SimulatorRefused) as refused:
        simulator.external_submit(accepted["assignment_id"], {"rating": "5"})
    assert refused.value.status == 409
    assert provider.list_assignments_for_hit(hit.hit_id)[0].answers == {"rating": "4"}


def test_notify_workers_reports_unknown_workers(provider, simulator):
    known = simulator.register_worker("AKNOWN1")
    failures = provider.notify_workers([known, "AUNKNOWN1"], subject="New batch", message="Hi")
    assert [(failure.worker_id, failure.code) for failure in failures] == [
        ("AUNKNOWN1", "HardFailure")
    ]
    assert simulator.ledger()["notifications"][0]["WorkerId"] == known


def test_get_assignment_vouches_only_for_submitted_work_of_that_worker_and_hit(
        provider, simulator):
    """``assignment_is_live`` through boto3's GetAssignment, which MTurk documents as
    retrieving Submitted, Approved or Rejected assignments only: an invented id, one still
    being worked on, a returned one, and a real one claimed for another worker or HIT are all
    unconfirmed; a submitted one for its own worker and HIT is confirmed."""
    hit = _publish(provider, _hit_type(provider), "hit-live")
    other_hit = _publish(provider, _hit_type(provider), "hit-live-other")
    worker = simulator.register_worker("AWORKERLIVE")
    accepted = simulator.accept(worker, hit.hit_id)["assignment_id"]

    def live(assignment_id, *, hit_id=hit.hit_id, worker_id=worker):
        return provider.assignment_is_live(assignment_id=assignment_id, hit_id=hit_id,
                                           worker_id=worker_id)

    assert not live("3INVENTEDASSIGNMENT")
    assert not live(accepted)  # in progress: MTurk's GetAssignment does not know it yet
    with pytest.raises(ProviderPermanentError) as error:
        provider._call("get_assignment", AssignmentId=accepted)
    assert error.value.code == "RequestError"

    simulator.external_submit(accepted, {"rating": "4"})
    assert live(accepted)
    assert not live(accepted, worker_id="ASOMEONEELSE")
    assert not live(accepted, hit_id=other_hit.hit_id)

    returned = simulator.accept(simulator.register_worker("AWORKERBACK"), hit.hit_id)
    simulator.return_assignment(returned["assignment_id"])
    assert not live(returned["assignment_id"], worker_id="AWORKERBACK")
    assert provider.confirms_work_in_progress is False
