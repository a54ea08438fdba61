"""MTurk batches end to end: a real Celery worker on Redis publishes to and collects from the
MTurk stand-in; simulated workers accept HITs and post the form our task page posts."""

from __future__ import annotations

import pytest
from django.conf import settings

from annotation import tasks
from annotation.fake_mturk import MTurkApiError
from annotation.models import Annotation, Assignment, Batch, Bonus, Hit, Worker
from annotation.selectors.qc import exportable_annotations
from annotation.services import decisions
from annotation.services.batches import publish
from tests.factories import (
    batch_plausibility_project,
    hit_item_ids,
    launched_batch,
    page_answer_fields,
    page_work,
)
from tests.integration.conftest import wait_for, wait_for_idle_worker

pytestmark = pytest.mark.integration


def batch_status(batch: Batch, *statuses: str):
    def check():
        batch.refresh_from_db()
        return batch.status in statuses
    return check


def submit(simulator, hit: Hit, worker_id: str, rating: int = 4) -> str:
    simulator.register_worker(worker_id)
    accepted = simulator.accept(worker_id, hit.provider_hit_id)
    assert accepted["task_url"].startswith("https://unpack.example.org/mturk/task/claire/?")
    simulator.external_submit(accepted["assignment_id"],
                              page_answer_fields(hit_item_ids(hit), rating))
    return accepted["assignment_id"]


def test_launch_collect_review_and_pay(mturk, simulator):
    batch = launched_batch(batch_plausibility_project(items=12))  # 3 HITs x 4 assignments
    wait_for(batch_status(batch, Batch.Status.PUBLISHED), what="the batch to be published")
    assert len(mturk.world.hits) == 3
    hits = list(batch.hits.order_by("pk"))
    assignment_ids = [submit(simulator, hit, f"AE2E{n}W{w}", rating=1 + w)
                      for n, hit in enumerate(hits) for w in range(4)]
    tasks.collect_open_batches.delay()
    wait_for(lambda: Annotation.objects.count() == 4 * 5 + 4 * 5 + 4 * 2, timeout=60,
             what="every annotation to be collected")
    wait_for_idle_worker()
    calls_before = simulator.stats()["calls"]["ListAssignmentsForHIT"]
    tasks.collect_batch.delay(batch.pk)  # collecting again stores nothing twice
    tasks.collect_batch.delay(batch.pk)
    wait_for_idle_worker()
    assert simulator.stats()["calls"]["ListAssignmentsForHIT"] == calls_before + 6
    assert Annotation.objects.count() == 48
    assert Assignment.objects.count() == 12
    assert Worker.objects.filter(provider="mturk").count() == 12

    good = Assignment.objects.get(provider_assignment_id=assignment_ids[0])
    bad = Assignment.objects.get(provider_assignment_id=assignment_ids[1])
    decisions.assignment_approve(assignment_id=good.pk)
    decisions.assignment_reject(assignment_id=bad.pk, message="Ratings are random.")
    bonus = decisions.bonus_create(assignment_id=good.pk, amount_cents=30, reason="Thank you").bonus
    decisions.worker_block(worker_id=bad.worker_id, reason="Random ratings")
    wait_for(lambda: Assignment.objects.filter(decision_synced=True, pk__in=[good.pk, bad.pk])
             .count() == 2, what="the decisions to reach MTurk")
    wait_for(lambda: Bonus.objects.get(pk=bonus.pk).sent_at, what="the bonus to be paid")
    wait_for(lambda: simulator.ledger()["blocks"], what="the block")
    world = mturk.world
    assert world.assignments[assignment_ids[0]].status == "Approved"
    assert world.assignments[assignment_ids[1]].status == "Rejected"
    assert [b["BonusAmount"] for b in simulator.ledger()["bonuses"]] == ["0.30"]
    assert simulator.ledger()["blocks"] == {bad.worker.external_id: "Random ratings"}
    # A replayed job (e.g. redelivered after a crash) pays nothing twice.
    Bonus.objects.filter(pk=bonus.pk).update(sent_at=None)
    tasks.send_bonus.delay(bonus.pk)
    wait_for(lambda: Bonus.objects.get(pk=bonus.pk).sent_at, what="the replayed bonus job")
    assert len(simulator.ledger()["bonuses"]) == 1


def test_the_pages_answers_count_once_the_worker_collects_them(mturk, simulator, client,
                                                              monkeypatch):
    """The page saves in our database (provisional: it cannot authenticate the worker), posts to
    MTurk; collection on the Celery worker sees the assignment at MTurk and verifies them."""
    monkeypatch.setattr(settings, "UNPACK_MTURK_SUBMIT_ORIGINS", (mturk.base_url,))
    project = batch_plausibility_project(items=2)
    batch = launched_batch(project)  # 1 HIT x 4 assignments
    wait_for(batch_status(batch, Batch.Status.PUBLISHED), what="the batch to be published")
    hit = batch.hits.get()
    simulator.register_worker("APAGE1")
    accepted = simulator.accept("APAGE1", hit.provider_hit_id)
    fields = page_work(client, accepted["task_url"], rating=5)
    assert Annotation.objects.count() == 2
    assert not exportable_annotations(project=project).exists()
    simulator.external_submit(accepted["assignment_id"], fields)
    tasks.collect_batch.delay(batch.pk)
    wait_for(lambda: exportable_annotations(project=project).count() == 2,
             what="the page's answers to be verified by collection")
    wait_for_idle_worker()
    assert Annotation.objects.count() == 2
    assert Assignment.objects.get().events.filter(kind="assignment_verified").count() == 1


def test_paging_over_100_hits_and_over_100_assignments_on_one_hit(mturk, simulator):
    project = batch_plausibility_project(items=101, redundancy={"train": 1, "dev": 1, "test": 1})
    batch = launched_batch(project, items_per_hit=1)
    # One HIT built outside the planner's <= 9 rule, as an imported legacy HIT might be.
    big = Hit.objects.create(batch=Batch.objects.get(pk=batch.pk),
                             unique_request_token="unpack-hit-big", max_assignments=120)
    big.items.add(project.items.order_by("pk").first(), through_defaults={"order": 0})
    wait_for(batch_status(batch, Batch.Status.PUBLISHED, Batch.Status.FAILED), timeout=90,
             what="102 HITs to be published")
    assert batch.status == Batch.Status.PUBLISHED, batch.error
    assert len(mturk.world.hits) == 102
    big.refresh_from_db()
    for number in range(105):
        submit(simulator, big, f"ABIG{number}")
    for hit in batch.hits.exclude(pk=big.pk):
        submit(simulator, hit, "ASMALL1")
    tasks.collect_batch.delay(batch.pk)
    wait_for_idle_worker(timeout=120)
    assert Assignment.objects.filter(hit=big).count() == 105
    assert Assignment.objects.count() == 105 + 101
    assert Hit.objects.filter(batch=batch, status=Hit.Status.REVIEWABLE).count() == 101
    calls = simulator.stats()["calls"]
    # 101 reviewable HITs take 2 pages; the big HIT's 105 assignments take 2 pages.
    assert calls["ListReviewableHITs"] >= 3
    assert calls["ListAssignmentsForHIT"] == 102 + 1


def test_publish_failing_after_k_hits_then_resumed_creates_no_duplicate(mturk, simulator):
    world = mturk.world
    real_create = world.op_CreateHITWithHITType
    created = []

    def fail_after_four(params):
        if len(created) >= 4:
            raise MTurkApiError("Insufficient funds to create this HIT",
                                error_type="RequestError")
        created.append(params)
        return real_create(params)

    world.op_CreateHITWithHITType = fail_after_four
    batch = launched_batch(batch_plausibility_project(items=10), items_per_hit=1)
    wait_for(batch_status(batch, Batch.Status.FAILED), what="the batch to fail")
    assert "Insufficient funds" in batch.error
    assert len(world.hits) == 4
    assert Hit.objects.filter(batch=batch, provider_hit_id__isnull=False).count() == 4

    # The next attempt creates the HIT but its answer is lost (a 500 after the work was done):
    # the provider's retry meets the duplicate token and adopts the HIT made the first time.
    lost_once = []

    def answer_lost_once(params):
        result = real_create(params)
        if not lost_once:
            lost_once.append(result["HIT"]["HITId"])
            raise MTurkApiError("We encountered an unexpected error", error_type="ServiceFault",
                                http_status=500)
        return result

    world.op_CreateHITWithHITType = answer_lost_once
    publish.batch_resume(batch_id=batch.pk)
    wait_for(batch_status(batch, Batch.Status.PUBLISHED), what="the resumed publish")
    del world.op_CreateHITWithHITType
    assert len(world.hits) == 10
    published = set(Hit.objects.filter(batch=batch).values_list("provider_hit_id", flat=True))
    assert published == set(world.hits)
    assert lost_once[0] in published


def test_throttling_is_retried_by_the_celery_job(mturk, simulator):
    # Each throttle is retried where it failed, inside the job on the worker.
    simulator.inject_fault("CreateHITWithHITType", count=3)
    batch = launched_batch(batch_plausibility_project(items=5))
    wait_for(batch_status(batch, Batch.Status.PUBLISHED), timeout=60,
             what="publishing through throttling")
    assert simulator.stats()["calls"]["CreateHITWithHITType"] == 1 + 3
    assert len(mturk.world.hits) == 1


def test_a_permanent_error_is_surfaced_on_the_batch(mturk, simulator):
    simulator.inject_fault("CreateHITType", error="RequestError",
                           message="QualificationType 3XYZ does not exist.")
    batch = launched_batch(batch_plausibility_project(items=5))
    wait_for(batch_status(batch, Batch.Status.FAILED), what="the batch to fail")
    assert "QualificationType 3XYZ does not exist." in batch.error
    assert simulator.stats()["calls"]["CreateHITType"] == 1
    assert not mturk.world.hits
