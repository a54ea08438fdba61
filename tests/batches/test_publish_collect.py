"""Publishing, collecting and decisions against the in-process MTurk stand-in (tasks inline)."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError

from annotation import tasks
from annotation.models import Annotation, Assignment, Batch, Bonus, Hit, Qualification, Worker
from annotation.providers import ProviderThrottled
from annotation.services import decisions
from annotation.services.batches import collect, decide, publish
from annotation.services.batches import plan as planning
from tests.factories import (
    batch_plausibility_project,
    hit_item_ids,
    launched_batch,
    submitted_assignment,
)

pytestmark = pytest.mark.django_db


def test_launch_publishes_every_hit_with_the_external_question(
        fake, simulator, django_capture_on_commit_callbacks):
    batch = launched_batch(batch_plausibility_project(items=12), django_capture_on_commit_callbacks)
    assert batch.status == Batch.Status.PUBLISHED
    assert batch.provider_hit_type_id
    hits = list(batch.hits.all())
    assert all(hit.provider_hit_id and hit.status == Hit.Status.ASSIGNABLE for hit in hits)
    remote = fake.world.hits[hits[0].provider_hit_id]
    assert "https://unpack.example.org/mturk/task/claire/" in remote.question
    assert remote.max_assignments == 4
    assert remote.hit_type["Reward"] == "0.50"
    assert simulator.stats()["calls"] == {"CreateHITType": 1, "CreateHITWithHITType": 3}
    kinds = list(batch.events.values_list("kind", flat=True))
    assert kinds.count("hit_published") == 3 and kinds[-1] == "batch_published"
    # Publishing again is a no-op: nothing pending, no call made.
    tasks.publish_batch(batch.pk)
    assert simulator.stats()["total"] == 4


@pytest.mark.parametrize("wording", ["ours", "aws", "no-id"])
def test_a_create_whose_answer_was_lost_resolves_to_the_same_hit(
        wording, fake, provider, simulator, django_capture_on_commit_callbacks, monkeypatch):
    """Finding 8: however the endpoint words "token already used" (AWS documents only that the
    message contains the HITId; it may contain none), the resume adopts the HIT."""
    fake.world.set_duplicate_hit_wording(wording)
    project = batch_plausibility_project(items=4)
    # launch without publishing
    monkeypatch.setattr(planning, "enqueue_after_commit", lambda *args: None)
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    # The first attempt reached MTurk but the worker died before recording the HIT id.
    hit_type_id = provider.create_hit_type(publish.hit_type_spec(batch, provider))
    lost = provider.create_hit(hit_type_id=hit_type_id, question_xml="<x/>", max_assignments=4,
                               lifetime_seconds=600,
                               unique_request_token=hit.unique_request_token,
                               requester_annotation=publish.requester_annotation_for(hit))
    publish.batch_publish(batch_id=batch.pk, provider=provider)
    hit.refresh_from_db()
    assert hit.provider_hit_id == lost.hit_id
    assert len(fake.world.hits) == 1
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.PUBLISHED


def test_a_publish_killed_half_way_resumes_without_duplicates(
        fake, provider, django_capture_on_commit_callbacks, monkeypatch):
    project = batch_plausibility_project(items=10)
    monkeypatch.setattr(planning, "enqueue_after_commit", lambda *args: None)
    batch = launched_batch(project, django_capture_on_commit_callbacks, items_per_hit=1)
    original_create = provider.create_hit
    created = []

    class WorkerKilled(BaseException):
        pass

    def dying_create(**kwargs):
        if len(created) == 4:
            raise WorkerKilled
        created.append(original_create(**kwargs))
        return created[-1]

    monkeypatch.setattr(provider, "create_hit", dying_create)
    with pytest.raises(WorkerKilled):
        publish.batch_publish(batch_id=batch.pk, provider=provider)
    assert Hit.objects.filter(batch=batch, provider_hit_id__isnull=False).count() == 4
    monkeypatch.setattr(provider, "create_hit", original_create)
    publish.batch_publish(batch_id=batch.pk, provider=provider)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED
    assert len(fake.world.hits) == 10
    assert Hit.objects.filter(batch=batch, provider_hit_id__isnull=False).count() == 10


def test_a_permanent_error_fails_the_batch_with_its_reason_and_resume_finishes_it(
        fake, simulator, django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=10)
    simulator.inject_fault("CreateHITWithHITType", error="RequestError",
                           message="Your account is not allowed to publish")
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    assert batch.status == Batch.Status.FAILED
    assert "not allowed to publish" in batch.error
    assert batch.hits.filter(status=Hit.Status.FAILED).count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        publish.batch_resume(batch_id=batch.pk)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED and batch.error == ""
    assert len(fake.world.hits) == 2


def test_throttling_is_retried(fake, provider, simulator, django_capture_on_commit_callbacks,
                               monkeypatch):
    monkeypatch.setattr(planning, "enqueue_after_commit", lambda *args: None)
    batch = launched_batch(batch_plausibility_project(items=5), django_capture_on_commit_callbacks)
    simulator.inject_fault("CreateHITWithHITType", count=2)  # the provider retries 3 times
    publish.batch_publish(batch_id=batch.pk, provider=provider)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED
    assert simulator.stats()["calls"]["CreateHITWithHITType"] == 3
    # Retries exhausted: the error escapes for the Celery task to retry later.
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.PUBLISHING)
    Hit.objects.create(batch=batch, unique_request_token="unpack-hit-extra")
    simulator.inject_fault("CreateHITWithHITType", count=3)
    with pytest.raises(ProviderThrottled):
        publish.batch_publish(batch_id=batch.pk, provider=provider)


def test_the_publish_task_retries_retryable_provider_errors():
    assert ProviderThrottled in tasks.publish_batch.autoretry_for
    assert tasks.publish_batch.retry_backoff is True
    assert tasks.publish_batch.max_retries == 8


def test_collect_stores_each_assignment_once(fake, simulator,
                                             django_capture_on_commit_callbacks):
    batch = launched_batch(batch_plausibility_project(items=7), django_capture_on_commit_callbacks)
    hits = list(batch.hits.order_by("pk"))
    for number, hit in enumerate(hits):
        for worker in range(4):
            submitted_assignment(simulator, hit, f"AW{number}X{worker}", rating=1 + worker)
    result = collect.batch_collect(batch_id=batch.pk)
    assert result.assignments_created == 8
    assert result.annotations_created == 4 * 5 + 4 * 2
    assert Annotation.objects.filter(source="mturk").count() == 28
    assert Worker.objects.filter(provider="mturk").count() == 8
    assert set(Hit.objects.filter(batch=batch).values_list("status", flat=True)) == {
        Hit.Status.REVIEWABLE}
    annotation = Annotation.objects.filter(worker__external_id="AW0X2").first()
    assert annotation.rating == 3 and annotation.payload == {"rating": 3}
    assert annotation.assignment.status == Assignment.Status.SUBMITTED
    again = collect.batch_collect(batch_id=batch.pk)
    assert (again.assignments_created, again.annotations_created) == (0, 0)
    assert Annotation.objects.count() == 28


def test_an_assignment_the_page_already_saved_is_left_as_is(
        fake, simulator, django_capture_on_commit_callbacks):
    batch = launched_batch(batch_plausibility_project(items=2), django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    assignment_id = submitted_assignment(simulator, hit, "APAGE1", rating=5)
    worker = Worker.objects.create(provider="mturk", external_id="APAGE1")
    saved = Assignment.objects.create(hit=hit, worker=worker, provider_assignment_id=assignment_id,
                                      status=Assignment.Status.SUBMITTED)
    first_item = hit_item_ids(hit)[0]
    Annotation.objects.create(project=batch.project, item_id=first_item, worker=worker,
                              assignment=saved, source="mturk", payload={"rating": 2}, rating=2)
    result = collect.batch_collect(batch_id=batch.pk)
    assert result.assignments_created == 0 and result.annotations_created == 1
    assert Annotation.objects.get(item_id=first_item).rating == 2  # the page's, untouched
    assert Annotation.objects.filter(assignment=saved).count() == 2


def test_an_unreadable_answer_is_kept_for_review(fake, simulator,
                                                 django_capture_on_commit_callbacks):
    batch = launched_batch(batch_plausibility_project(items=2), django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    simulator.register_worker("ABAD1")
    accepted = simulator.accept("ABAD1", hit.provider_hit_id)
    ids = hit_item_ids(hit)
    simulator.external_submit(accepted["assignment_id"], {
        "unpack_payload": json.dumps({str(ids[0]): {"rating": 9}, str(ids[1]): {"rating": 1}})})
    result = collect.batch_collect(batch_id=batch.pk)
    assert result.invalid_answers == 1
    assignment = Assignment.objects.get()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert "rating" in assignment.events.get(kind="answer_invalid").detail["error"]
    assert "QuestionFormAnswers" in assignment.raw_answer
    assert not Annotation.objects.exists()
    collect.batch_collect(batch_id=batch.pk)
    assert assignment.events.filter(kind="answer_invalid").count() == 1


@pytest.mark.parametrize(("answers", "message"), [
    ({}, "no unpack_payload"),
    ({"unpack_payload": "{"}, "not JSON"),
    ({"unpack_payload": "[]"}, "JSON object"),
    ({"unpack_payload": '{"1": {}, "99": {}}'}, "not in this HIT"),
    ({"unpack_payload": '{"1": {}}'}, "no payload for items"),
])
def test_answer_parsing_errors(answers, message):
    with pytest.raises(collect.AnswerError, match=message):
        collect.parse_answer_payloads(answers, [1, 2])


def test_auto_approval_on_mturk_is_copied(fake, simulator, django_capture_on_commit_callbacks):
    batch = launched_batch(batch_plausibility_project(items=1), django_capture_on_commit_callbacks)
    submitted_assignment(simulator, batch.hits.get(), "AAUTO1")
    collect.batch_collect(batch_id=batch.pk)
    simulator.advance_clock(4 * 24 * 3600)
    result = collect.batch_collect(batch_id=batch.pk)
    assignment = Assignment.objects.get()
    assert result.status_changes >= 1
    assert assignment.status == Assignment.Status.APPROVED
    assert assignment.annotations.get().review_status == Annotation.Review.APPROVED


def test_approve_reject_bonus_block_reach_mturk_once(fake, simulator,
                                                      django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=1,
                                         redundancy={"train": 1, "dev": 3, "test": 3})
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    good, bad, late = (submitted_assignment(simulator, hit, f"AREV{n}") for n in range(3))
    collect.batch_collect(batch_id=batch.pk)
    good_row, bad_row, _ = (Assignment.objects.get(provider_assignment_id=a)
                            for a in (good, bad, late))
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=good_row.pk)
        decisions.assignment_reject(assignment_id=bad_row.pk,
                                  message="The ratings ignore the context.")
        decisions.bonus_create(assignment_id=good_row.pk, amount_cents=25, reason="Careful work")
        decisions.worker_block(worker_id=bad_row.worker_id, reason="Random ratings")
    assert fake.world.assignments[good].status == "Approved"
    assert fake.world.assignments[bad].status == "Rejected"
    assert fake.world.assignments[bad].requester_feedback == "The ratings ignore the context."
    good_row.refresh_from_db()
    bad_row.refresh_from_db()
    assert good_row.decision_synced and bad_row.decision_synced
    assert bad_row.annotations.get().review_status == Annotation.Review.REJECTED
    ledger = simulator.ledger()
    assert [bonus["BonusAmount"] for bonus in ledger["bonuses"]] == ["0.25"]
    assert ledger["blocks"] == {"AREV1": "Random ratings"}
    # Retried jobs never act twice: the bonus is sent, the decision synced.
    bonus = Bonus.objects.get()
    Bonus.objects.filter(pk=bonus.pk).update(sent_at=None)  # as if the answer was lost
    tasks.send_bonus(bonus.pk)
    assert len(simulator.ledger()["bonuses"]) == 1
    assert Bonus.objects.get().sent_at is not None
    Assignment.objects.filter(pk=good_row.pk).update(decision_synced=False)
    assert tasks.sync_assignment_decision(good_row.pk) is True
    assert Assignment.objects.get(pk=good_row.pk).decision_synced
    # An approval overriding a synced rejection is sent with OverrideRejection.
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=bad_row.pk)
    assert fake.world.assignments[bad].status == "Approved"
    with django_capture_on_commit_callbacks(execute=True):
        decisions.worker_unblock(worker_id=bad_row.worker_id)
    assert simulator.ledger()["blocks"] == {}


def test_a_rejection_needs_a_message_and_a_synced_approval_cannot_become_a_rejection(
        fake, simulator, django_capture_on_commit_callbacks):
    batch = launched_batch(batch_plausibility_project(items=1), django_capture_on_commit_callbacks)
    submitted_assignment(simulator, batch.hits.get(), "AMSG1")
    collect.batch_collect(batch_id=batch.pk)
    assignment = Assignment.objects.get()
    with pytest.raises(ValidationError, match="message"):
        decisions.assignment_reject(assignment_id=assignment.pk, message="")
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=assignment.pk)
    with pytest.raises(ValidationError, match="cannot be rejected"):
        decisions.assignment_reject(assignment_id=assignment.pk, message="no")


def test_expire_extend_and_add_assignments(fake, simulator, django_capture_on_commit_callbacks):
    batch = launched_batch(batch_plausibility_project(items=1), django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    tasks.extend_hit(hit.pk, 30 * 24 * 3600)
    hit.refresh_from_db()
    remote = fake.world.hits[hit.provider_hit_id]
    assert abs(remote.expiration - hit.expires_at.timestamp()) < 1
    tasks.extend_hit(hit.pk, 3600)  # already later: nothing to do
    assert simulator.stats()["calls"]["UpdateExpirationForHIT"] == 1
    result = tasks.add_assignments.apply(args=(hit.pk, 2), task_id="job-1").get()
    assert result == 6 and fake.world.hits[hit.provider_hit_id].max_assignments == 6
    tasks.add_assignments.apply(args=(hit.pk, 2), task_id="job-1").get()  # a retried job
    assert fake.world.hits[hit.provider_hit_id].max_assignments == 6
    assert Hit.objects.get(pk=hit.pk).max_assignments == 6
    with pytest.raises(ValidationError, match="more than 9"):
        decide.hit_add_assignments(hit_id=hit.pk, count=4, request_token="job-2")
    tasks.expire_hit(hit.pk)
    assert fake.world.hits[hit.provider_hit_id].expiration <= fake.world.clock.now()
    assert list(hit.events.values_list("kind", flat=True)) == [
        "hit_published", "hit_extended", "assignments_added", "hit_expired"]


def test_notify_workers_of_the_project(fake, simulator, django_capture_on_commit_callbacks):
    batch = launched_batch(batch_plausibility_project(items=1), django_capture_on_commit_callbacks)
    submitted_assignment(simulator, batch.hits.get(), "ANOTE1")
    collect.batch_collect(batch_id=batch.pk)
    worker = Worker.objects.get(external_id="ANOTE1")
    stranger = Worker.objects.create(provider="mturk", external_id="ASTRANGER")
    failed = tasks.notify_workers(batch.project_id, [worker.pk, stranger.pk], "New batch",
                                  "More HITs are up.")
    assert failed == []
    assert [n["WorkerId"] for n in simulator.ledger()["notifications"]] == ["ANOTE1"]


def test_a_custom_qualification_test_is_created_once_and_required(
        fake, simulator, django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=2)
    qualification = Qualification.objects.create(
        project=project, name="Plausibility test", passing_score=4,
        questions=[{"id": f"q{n}", "text": f"Rate {n}", "options": ["1", "5"], "answer": "5"}
                   for n in range(4)])
    batch = launched_batch(project, django_capture_on_commit_callbacks,
                           qualification_id=qualification.pk, min_percent_approved=90)
    qualification.refresh_from_db()
    type_id = qualification.provider_qualification_type_id
    assert type_id and "AnswerKey" in fake.world.qualification_types[type_id]["AnswerKey"]
    hit = batch.hits.get()
    requirements = fake.world.hits[hit.provider_hit_id].hit_type["QualificationRequirements"]
    assert {"QualificationTypeId": type_id, "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [4]} in requirements
    simulator.register_worker("ANOQUAL")
    with pytest.raises(Exception, match="NotQualified"):
        simulator.accept("ANOQUAL", hit.provider_hit_id)
    simulator.register_worker("AQUAL", qualifications={type_id: 4})
    simulator.accept("AQUAL", hit.provider_hit_id)


def test_batch_becomes_complete_when_all_work_is_decided(fake, simulator,
                                                         django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=1,
                                         redundancy={"train": 1, "dev": 1, "test": 1})
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    submitted_assignment(simulator, batch.hits.get(), "ADONE1")
    collect.batch_collect(batch_id=batch.pk)
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.PUBLISHED
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=Assignment.objects.get().pk)
    collect.batch_collect(batch_id=batch.pk)
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.COMPLETE
    assert collect.open_batch_ids() == []


def test_the_pages_summary_only_answer_of_a_fully_saved_assignment_is_accepted(
        fake, simulator, django_capture_on_commit_callbacks):
    """Our task page saves every item in our database, then posts only ``summary`` to MTurk."""
    batch = launched_batch(batch_plausibility_project(items=2), django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    simulator.register_worker("ASUMMARY")
    accepted = simulator.accept("ASUMMARY", hit.provider_hit_id)
    worker = Worker.objects.create(provider="mturk", external_id="ASUMMARY")
    saved = Assignment.objects.create(hit=hit, worker=worker,
                                      provider_assignment_id=accepted["assignment_id"],
                                      status=Assignment.Status.SUBMITTED)
    for item_id in hit_item_ids(hit):
        Annotation.objects.create(project=batch.project, item_id=item_id, worker=worker,
                                  assignment=saved, source="mturk", payload={"rating": 5},
                                  rating=5)
    simulator.external_submit(accepted["assignment_id"],
                              {"summary": "unpack:claire:2 items saved"})
    result = collect.batch_collect(batch_id=batch.pk)
    assert (result.assignments_created, result.annotations_created, result.invalid_answers) == (
        0, 0, 0)
    saved.refresh_from_db()
    assert "unpack:claire:2 items saved" in saved.raw_answer
    assert not saved.events.filter(kind="answer_invalid").exists()
    assert Annotation.objects.count() == 2
