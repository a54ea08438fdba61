"""One definition of counted work (``Annotation.state``, kept by
``annotation.services.annotations``): the work queue, the submit's capacity check, batch
planning, the dashboard, QC and the exports agree on which answers fill an item's slots."""

from __future__ import annotations

import uuid

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import Annotation, Assignment, Batch, Hit, HitItem, Worker
from annotation.payloads import validate_payload
from annotation.selectors import qc as qc_selectors
from annotation.selectors.annotate import item_context, item_for_submit, page_provenance
from annotation.services.annotations import (
    SubmitRefused,
    annotation_submit,
    annotations_confirm,
)
from annotation.services.batches.plan import LaunchOptions, batch_plan
from annotation.services.decisions import annotation_reject, worker_block
from annotation.services.work_queue import work_queue_next_item
from tests.factories import AnnotationFactory, sluice_project

pytestmark = pytest.mark.django_db

REDUNDANCY = 2


def answer(project, item, worker, *, assignment=None, skipped=False):
    """Store an answer through the submit service, as the local or the MTurk page does."""
    raw = {"full_question": "", "skipped": True} if skipped else {
        "full_question": "Why did he leave the band?", "skipped": False}
    context = item_context(item)
    source = Annotation.Source.LOCAL if assignment is None else Annotation.Source.MTURK
    provenance = None if assignment is None else page_provenance(assignment=assignment,
                                                                  hit=assignment.hit)
    return annotation_submit(
        worker=worker, item=item_for_submit(project=project, item_id=item.pk),
        clean=validate_payload(project.kind, raw, context), context=context, source=source,
        client_token=uuid.uuid4().hex, assignment=assignment, provenance=provenance,
    ).annotation


def local(name):
    return Worker.objects.create(provider=Worker.Provider.LOCAL, external_id=name)


def mturk_assignment(project, items, worker_id, *, batch_status=Batch.Status.CANCELLED):
    """An assignment on a HIT of ``items``. By default its batch is cancelled: its HIT slots
    promise no more work, so batch planning counts only the answers it got (in an active
    batch planning counts the slots instead, see ``plan._coverage_by_item``)."""
    batch = Batch.objects.create(project=project, provider="mturk", title="b",
                                 status=batch_status)
    hit = Hit.objects.create(batch=batch, provider_hit_id=f"HIT{worker_id}",
                             unique_request_token=uuid.uuid4().hex,
                             max_assignments=1, status=Hit.Status.REVIEWABLE)
    HitItem.objects.bulk_create(HitItem(hit=hit, item=item, order=order)
                                for order, item in enumerate(items))
    worker = Worker.objects.create(provider=Worker.Provider.MTURK, external_id=worker_id)
    return Assignment.objects.create(hit=hit, worker=worker,
                                     provider_assignment_id=f"ASG{worker_id}")


def mixed_project(reviewer):
    """Items (redundancy 2, train) whose answers are, by design, worth 2, 1 or 0 slots."""
    project = sluice_project(items=8, redundancy={"train": REDUNDANCY})
    items = dict(zip(["verified", "provisional", "rejected", "skipped", "blocked",
                      "imported", "mturk", "empty"], project.items.order_by("id"), strict=True))
    answer(project, items["verified"], local("v1"))
    answer(project, items["verified"], local("v2"))
    # An MTurk page's answer MTurk has not reported: no slot, until collection confirms it.
    answer(project, items["provisional"], local("p1"))
    page = mturk_assignment(project, [items["provisional"]], "APAGE")
    answer(project, items["provisional"], page.worker, assignment=page)
    # A reviewer rejects one of two local answers: the slot opens again.
    answer(project, items["rejected"], local("r1"))
    rejected = answer(project, items["rejected"], local("r2"))
    annotation_reject(annotation_id=rejected.pk, actor=reviewer, message="Not a question.")
    # A skip is an answer ("the context is not enough"): it fills its slot.
    answer(project, items["skipped"], local("s1"), skipped=True)
    answer(project, items["skipped"], local("s2"))
    # Blocking a worker stops their future work; what they did counts until rejected.
    blocked = local("b1")
    answer(project, items["blocked"], blocked)
    answer(project, items["blocked"], local("b2"))
    worker_block(worker_id=blocked.pk, actor=reviewer, reason="Too fast.")
    # A released dataset's answers fill no slot: the project collects its own on top.
    AnnotationFactory(item=items["imported"], source=Annotation.Source.IMPORT, rating=None)
    AnnotationFactory(item=items["imported"], source=Annotation.Source.IMPORT, rating=None)
    # MTurk work confirmed by collection counts like local work.
    collected = mturk_assignment(project, [items["mturk"]], "ACOLLECTED")
    answer(project, items["mturk"], collected.worker, assignment=collected)
    annotations_confirm(annotations=collected.annotations.all())
    answer(project, items["mturk"], local("m1"))
    return project, items


EXPECTED_COUNTED = {"verified": 2, "provisional": 1, "rejected": 1, "skipped": 2,
                    "blocked": 2, "imported": 0, "mturk": 2, "empty": 0}


def queue_open(project, items) -> set[str]:
    """Items the work queue would give a new annotator: probed one at a time by a worker who
    has 'done' every other item (imported answers, which fill no slot), rolled back."""
    found = set()
    for name, item in items.items():
        with transaction.atomic():
            probe = local(f"probe-{name}")
            for other in items.values():
                if other != item:
                    AnnotationFactory(item=other, worker=probe, source=Annotation.Source.IMPORT)
            if work_queue_next_item(project=project, worker=probe) == item:
                found.add(name)
            transaction.set_rollback(True)
    return found


def submit_open(project, items) -> set[str]:
    """Items a new annotator's answer is still accepted for (rolled back)."""
    found = set()
    for name, item in items.items():
        with transaction.atomic():
            try:
                answer(project, item, local(f"late-{name}"))
                found.add(name)
            except SubmitRefused as refused:
                assert refused.code == "item_full"
            transaction.set_rollback(True)
    return found


def test_every_reader_agrees_on_counted_work(staff_user):
    project, items = mixed_project(staff_user)
    names = {item.pk: name for name, item in items.items()}
    counted = {name: 0 for name in items}
    for item_id in Annotation.objects.filter(state=Annotation.State.COUNTED).values_list(
            "item_id", flat=True):
        counted[names[item_id]] += 1
    assert counted == EXPECTED_COUNTED
    incomplete = {name for name, n in EXPECTED_COUNTED.items() if n < REDUNDANCY}
    assert incomplete == {"provisional", "rejected", "imported", "empty"}

    # The local work queue and the submit's capacity check.
    assert queue_open(project, items) == incomplete
    assert submit_open(project, items) == incomplete
    # Batch planning: what each item still needs.
    plan = batch_plan(project=project, options=LaunchOptions(
        title="More", reward_cents=10, items_per_hit=1, splits=("train",)))
    needs = {names[hit.item_ids[0]]: hit.max_assignments for hit in plan.hits}
    assert needs == {name: REDUNDANCY - n for name, n in EXPECTED_COUNTED.items()
                     if name in incomplete}
    assert {names[item_id] for item_id in plan.skipped_item_ids} == set(items) - incomplete
    # The dashboard.
    [progress] = qc_selectors.progress_by_split(project=project)
    assert progress == {"split": "train", "items": 8, "complete": 8 - len(incomplete),
                        "annotations": sum(EXPECTED_COUNTED.values())}
    # Dataset exports: counted answers and the imported ones; QC: everything confirmed.
    exported = qc_selectors.exportable_annotations(project=project)
    assert exported.count() == sum(EXPECTED_COUNTED.values()) + 2
    assert not exported.filter(review_status=Annotation.Review.REJECTED).exists()
    qc_rows = qc_selectors.text_rows(project=project)
    assert len(qc_rows) == exported.count() + 1  # the rejected answer, with its status
    assert Annotation.objects.count() == len(qc_rows) + 1  # the provisional one is nowhere


def test_after_a_reviewer_rejects_a_local_answer_queue_planning_and_dashboard_agree(
        staff_user):
    """Finding 2: the dashboard said incomplete and planning re-launched the item while the
    queue said nothing was left."""
    project = sluice_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    first = answer(project, item, local("first"))
    options = LaunchOptions(title="More", reward_cents=10, splits=("train",))
    assert work_queue_next_item(project=project, worker=local("other")) is None
    assert batch_plan(project=project, options=options).estimate.assignments == 0
    annotation_reject(annotation_id=first.pk, actor=staff_user, message="No.")
    assert qc_selectors.progress_by_split(project=project)[0]["complete"] == 0
    assert batch_plan(project=project, options=options).estimate.assignments == 1
    assert work_queue_next_item(project=project, worker=local("another")) == item
    assert answer(project, item, local("again")).state == Annotation.State.COUNTED
    assert work_queue_next_item(project=project, worker=local("last")) is None
    assert batch_plan(project=project, options=options).estimate.assignments == 0
    assert qc_selectors.progress_by_split(project=project)[0]["complete"] == 1


def test_unconfirmed_work_is_decided_only_once_collection_confirms_it(staff_user):
    """Issue 24, point 5: crowd work collection has not confirmed is neither approved, rejected
    nor paid (the services refuse, and nothing changes); once confirmed it may be."""
    project = sluice_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    page = mturk_assignment(project, [item], "APAGE")
    provisional = answer(project, item, page.worker, assignment=page)
    assert provisional.state == Annotation.State.PROVISIONAL
    Assignment.objects.filter(pk=page.pk).update(status=Assignment.Status.SUBMITTED)
    with pytest.raises(ValidationError, match="has not confirmed assignment ASGAPAGE yet"):
        annotation_reject(annotation_id=provisional.pk, actor=staff_user, message="No.")
    provisional.refresh_from_db()
    page.refresh_from_db()
    assert provisional.state == Annotation.State.PROVISIONAL
    assert page.status == Assignment.Status.SUBMITTED
    assert annotations_confirm(annotations=page.annotations.all()) == 1
    annotation_reject(annotation_id=provisional.pk, actor=staff_user, message="No.")
    provisional.refresh_from_db()
    assert provisional.state == Annotation.State.REJECTED
