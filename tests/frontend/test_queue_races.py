"""Real row-lock races on PostgreSQL (skipped on SQLite, whose IMMEDIATE transactions serialise
writers): the local submit's fast path and the chooser's SKIP LOCKED."""

from __future__ import annotations

import threading
import uuid

import pytest
from django.db import connection, connections, transaction

from annotation.models import Annotation
from annotation.services import decisions
from annotation.services.annotations import SubmitRefused, annotation_submit_item
from annotation.services.work_queue import work_queue_next_item
from tests.factories import local_worker, plausibility_project

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (row locks): run with DATABASE_URL=postgres://…")


def submit_item(project, item, worker, token=None):
    return annotation_submit_item(project_slug=project.slug, item_id=item.pk, payload={"rating": 3},
                                  worker=worker, source=Annotation.Source.LOCAL,
                                  client_token=token or uuid.uuid4().hex)


def race(count: int, attempt) -> list:
    """Run ``attempt(index)`` in ``count`` threads released together; their outcomes."""
    barrier = threading.Barrier(count)
    outcomes: list = [None] * count

    def run(index):
        barrier.wait()
        try:
            outcomes[index] = attempt(index)
        except SubmitRefused as refused:
            outcomes[index] = refused.code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_concurrent_fast_path_submits_for_the_last_slot_store_one():
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    workers = [local_worker(f"w{index}") for index in range(8)]
    outcomes = race(8, lambda index: submit_item(project, item, workers[index]).created)
    assert sorted(outcomes, key=str) == [True] + ["item_full"] * 7
    assert Annotation.objects.filter(item=item).count() == 1


def test_concurrent_fast_path_submits_fill_exactly_the_open_slots():
    project = plausibility_project(items=1, redundancy={"train": 3})
    item = project.items.get()
    workers = [local_worker(f"w{index}") for index in range(8)]
    outcomes = race(8, lambda index: submit_item(project, item, workers[index]).created)
    assert outcomes.count(True) == 3 and outcomes.count("item_full") == 5
    assert Annotation.objects.filter(item=item).count() == 3


def test_one_answer_sent_four_times_at_once_is_stored_once():
    project = plausibility_project(items=1, redundancy={"train": 3})
    item = project.items.get()
    worker = local_worker("double-clicker")
    results = race(4, lambda index: submit_item(project, item, worker, token="same-token-01"))
    assert [result.created for result in results].count(True) == 1
    assert len({result.annotation.pk for result in results}) == 1
    assert Annotation.objects.filter(item=item).count() == 1


def test_an_open_item_locked_for_a_moment_is_still_offered():
    """SKIP LOCKED skips rows locked by someone else's statement or submit; when every open
    item is, the worker must still be offered one, not told that nothing is left."""
    project = plausibility_project(items=1, redundancy={"train": 2})
    item = project.items.get()
    worker = local_worker("waiting")
    locked, release = threading.Event(), threading.Event()

    def hold_the_row():
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SELECT id FROM annotation_item WHERE id = %s FOR UPDATE",
                                   [item.pk])
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_row)
    holder.start()
    try:
        assert locked.wait(10)
        assert work_queue_next_item(project=project, worker=worker) == item
        assert work_queue_next_item(project=project, worker=worker,
                                    after_item_id=item.pk) == item
    finally:
        release.set()
        holder.join()
    # And when nothing is open, still nothing.
    submit_item(project, item, worker)
    submit_item(project, item, local_worker("other"))
    assert work_queue_next_item(project=project, worker=local_worker("late")) is None
    connections.close_all()


def test_rejections_and_submits_at_once_leave_every_mark_true():
    """``Item.filled`` under real races: reviewers reject answers while annotators fill the
    same items. Every change locks the items before it counts (assignment → item → answers),
    so no mark says "filled" over an open slot (the suite's end-of-test check) and nothing
    deadlocks."""
    project = plausibility_project(items=4, redundancy={"train": 2})
    items = list(project.items.order_by("id"))
    first = [submit_item(project, item, local_worker(f"first{item.pk}")).annotation
             for item in items]
    late = [local_worker(f"late{index}") for index in range(len(items))]

    def attempt(index):
        if index % 2 == 0:  # a reviewer rejects an item's first answer
            return decisions.annotation_reject(annotation_id=first[index // 2].pk,
                                               message="Not what was asked.").pk
        item = items[index // 2]  # an annotator fills the same item's second slot
        return submit_item(project, item, late[index // 2]).created

    outcomes = race(2 * len(items), attempt)
    assert outcomes[1::2] == [True] * len(items)
    for item in items:
        item.refresh_from_db()
        counted = item.annotations.filter(state=Annotation.State.COUNTED).count()
        assert counted == 1 and not item.filled
    # The next answers fill them: marked.
    for item in items:
        submit_item(project, item, local_worker(f"third{item.pk}"))
    assert set(project.items.values_list("filled", flat=True)) == {True}
