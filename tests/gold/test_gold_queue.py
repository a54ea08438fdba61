"""Gold items in the local queue: served at the project's gold rate, to every worker, never
filled, never counted as progress; failing them flags the worker and, when the project says
so, stops them (the submit answers no next item and the task page refuses them)."""

import json

import pytest

from annotation.models import Annotation, Flag, Item, WorkerProjectBlock
from annotation.selectors.progress import annotator_progress
from annotation.selectors.qc import progress_by_split
from annotation.services.gold import gold_item_due
from annotation.services.work_queue import work_queue_next_item
from annotation.services.workers import worker_for_user
from tests.factories import local_answer, local_submit, local_worker, plausibility_project

pytestmark = pytest.mark.django_db

GOLD_RATING = 4


def gold_project(*, items=20, gold=3, rate=0.2, **fields):
    project = plausibility_project("gold-queue", items=items,
                                   redundancy={"train": 1, "dev": 1, "test": 1})
    project.gold_rate = rate
    for name, value in fields.items():
        setattr(project, name, value)
    project.save()
    gold_ids = list(Item.objects.filter(project=project).order_by("pk")
                    .values_list("pk", flat=True)[:gold])
    Item.objects.filter(pk__in=gold_ids).update(is_gold=True, gold_answer=GOLD_RATING)
    return project, set(gold_ids)


def work_through(project, worker, rating=GOLD_RATING) -> list[int]:
    served = []
    while (item := work_queue_next_item(project=project, worker=worker)) is not None:
        served.append(item.pk)
        local_answer(project, item, worker, rating=rating)
    return served


def test_every_fifth_item_is_gold_at_rate_0_2_and_every_worker_gets_them():
    project, gold = gold_project(items=20, gold=3, rate=0.2,
                                 redundancy={"train": 2, "dev": 2, "test": 2})
    for name in ("first", "second"):
        served = work_through(project, local_worker(name))
        assert [index for index, item_id in enumerate(served, 1)
                if item_id in gold] == [5, 10, 15]
        assert len(served) == 20
    # Two answers fill the ordinary items, never the gold ones; a third worker gets nothing:
    # gold is mixed into work, never served instead of it.
    assert not Item.objects.filter(pk__in=gold, filled=True).exists()
    assert Item.objects.filter(project=project, is_gold=False, filled=False).count() == 0
    assert work_through(project, local_worker("third")) == []


def test_no_gold_is_served_at_rate_zero():
    project, gold = gold_project(rate=0.0)
    served = work_through(project, local_worker("plain"))
    assert len(served) == 17 and not set(served) & gold


def test_gold_is_never_progress():
    project, _ = gold_project(items=10, gold=2, rate=0.5)
    worker = local_worker("w")
    assert annotator_progress(project=project, worker=worker).left == 8
    work_through(project, worker)
    [train] = progress_by_split(project=project)
    assert (train["items"], train["complete"], train["annotations"]) == (8, 8, 8)
    assert annotator_progress(project=project, worker=worker).left == 0


def test_due_counts_the_answer_being_stored():
    project, _ = gold_project(items=10, gold=2, rate=0.5)
    worker = local_worker("w")
    assert not gold_item_due(project=project, worker=worker)  # 1 × 0.5 → 0 gold due
    ordinary = Item.objects.filter(project=project, is_gold=False).first()
    assert gold_item_due(project=project, worker=worker, answering=ordinary.pk)


def page_item(client, project) -> int:
    response = client.get(f"/annotate/{project.slug}/")
    assert response.status_code == 200
    return response.context["items"][0]["item_id"]


def submit(client, project, item_id, rating) -> dict:
    response = local_submit(client, project, item_id, {"rating": rating})
    assert response.status_code == 200, response.content
    return json.loads(response.content)


@pytest.mark.parametrize("stop", [True, False])
def test_failing_gold_flags_the_worker_and_stops_them_when_the_project_says_so(
        annotator_client, annotator_user, stop):
    project, gold = gold_project(items=20, gold=3, rate=0.5, gold_failures_stop=stop,
                                 flag_settings={"min_gold_items": 2,
                                                "max_gold_failure_rate": 0.25})
    worker = worker_for_user(user=annotator_user)
    item_id = page_item(annotator_client, project)
    answered_gold = 0
    while answered_gold < 2:
        is_gold = item_id in gold
        body = submit(annotator_client, project, item_id, 1 if is_gold else 3)
        answered_gold += is_gold
        if answered_gold < 2:
            item_id = body["next"]["item"]["item_id"]
    flag = Flag.objects.get(project=project, worker=worker, reason="failed_gold")
    assert flag.detail == "failed 2 of 2 gold items" and flag.score == 1.0
    blocks = WorkerProjectBlock.objects.filter(project=project, worker=worker)
    if stop:
        assert body["next"] is None
        assert blocks.get().reason == "failed gold items: failed 2 of 2 gold items"
        refused = annotator_client.get(f"/annotate/{project.slug}/")
        assert refused.status_code == 403
        assert b"can no longer annotate this project" in refused.content
    else:
        assert body["next"] is not None and not blocks.exists()


def test_passing_gold_raises_no_flag(annotator_client, annotator_user):
    project, gold = gold_project(items=10, gold=3, rate=0.5, gold_failures_stop=True,
                                 flag_settings={"min_gold_items": 1})
    item_id = page_item(annotator_client, project)
    while item_id is not None:
        body = submit(annotator_client, project, item_id, GOLD_RATING)
        item_id = body["next"]["item"]["item_id"] if body["next"] else None
    worker = worker_for_user(user=annotator_user)
    assert Annotation.objects.filter(worker=worker, item_id__in=gold).count() == 3
    assert not Flag.objects.filter(project=project, reason="failed_gold").exists()
    assert not WorkerProjectBlock.objects.exists()


def test_gold_first_serves_a_workers_first_items_from_the_gold_items_then_the_rate():
    project, gold = gold_project(items=20, gold=3, rate=0.2, flag_settings={"gold_first": 2},
                                 redundancy={"train": 2, "dev": 2, "test": 2})
    served = work_through(project, local_worker("first"))
    # The first two are gold; they count towards the rate (3 gold due at the 15th item).
    assert [index for index, item_id in enumerate(served, 1) if item_id in gold] == [1, 2, 15]
    assert len(served) == 20
