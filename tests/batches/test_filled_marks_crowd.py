"""``Item.filled`` and the crowd's writers (issue 15): answers collection stores, the task page's
provisional answers confirmed by collection or released, and decisions made here or collected
from the provider (the local writers are in tests/frontend/test_filled_marks.py)."""

from __future__ import annotations

import pytest

from annotation.models import Annotation, Assignment, Item
from annotation.services import decisions
from annotation.services.annotations import annotations_release
from annotation.services.batches import collect
from tests.factories import (
    batch_plausibility_project,
    hit_item_ids,
    launched_batch,
    page_work,
    submitted_assignment,
)

pytestmark = pytest.mark.django_db

TWO_PER_ITEM = {"train": 1, "dev": 2, "test": 2}


def filled_items(item_ids) -> list[bool]:
    marks = dict(Item.objects.filter(pk__in=item_ids).values_list("pk", "filled"))
    return [marks[item_id] for item_id in item_ids]


def test_collected_answers_fill_their_items_and_a_rejection_reopens_them(
        fake, simulator, staff_user, django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=3, redundancy=TWO_PER_ITEM)
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    items = hit_item_ids(hit)
    submitted_assignment(simulator, hit, "AFIRST1")
    collect.batch_collect(batch_id=batch.pk)
    assert filled_items(items) == [False] * 3
    second = submitted_assignment(simulator, hit, "ASECOND1")
    collect.batch_collect(batch_id=batch.pk)
    assert filled_items(items) == [True] * 3
    rejected = Assignment.objects.get(provider_assignment_id=second)
    decisions.assignment_reject(assignment_id=rejected.pk, message="Not what was asked.",
                                actor=staff_user)
    assert filled_items(items) == [False] * 3


def test_page_answers_fill_only_once_confirmed_and_a_release_reopens_them(
        fake, simulator, client, settings, django_capture_on_commit_callbacks):
    settings.UNPACK_MTURK_SUBMIT_ORIGINS = (fake.base_url,)
    project = batch_plausibility_project(items=2, redundancy=TWO_PER_ITEM)
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    items = hit_item_ids(hit)
    for worker_id in ("APAGE1", "APAGE2"):
        simulator.register_worker(worker_id)
        accepted = simulator.accept(worker_id, hit.provider_hit_id)
        simulator.external_submit(accepted["assignment_id"],
                                  page_work(client, accepted["task_url"], 4))
    assert set(Annotation.objects.values_list("state", flat=True)) == {"provisional"}
    assert filled_items(items) == [False, False]
    result = collect.batch_collect(batch_id=batch.pk)
    assert result.assignments_verified == 2
    assert filled_items(items) == [True, True]
    # The provider gives one session back (a Prolific return): its answers stop counting.
    released = Assignment.objects.filter(worker__external_id="APAGE2").get()
    annotations_release(annotations=released.annotations.all())
    assert filled_items(items) == [False, False]


def test_a_rejection_collected_from_the_provider_reopens_the_items(
        fake, simulator, django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=2, redundancy={"train": 1, "dev": 1, "test": 1})
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    items = hit_item_ids(hit)
    assignment_id = submitted_assignment(simulator, hit, "AREJ1")
    collect.batch_collect(batch_id=batch.pk)
    assert filled_items(items) == [True, True]
    # Rejected at the provider (e.g. by the requester on MTurk's own site): collection copies it.
    fake.world.assignments[assignment_id].status = "Rejected"
    collect.batch_collect(batch_id=batch.pk)
    assert Assignment.objects.get(provider_assignment_id=assignment_id).status == "rejected"
    assert filled_items(items) == [False, False]
