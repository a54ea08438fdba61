"""Adaptive redundancy in the local work queue (issue 25, point 5): an item stops being served
once its answers are clear at the policy's ``start``, and is served again, up to ``maximum``,
while they disagree -- the rule of ``qc.redundancy.needs_more``, stored as the item's target
(``Item.target_answers``) by every writer of counted answers, and read by the queue's SQL, the
submit's capacity check, lease renewal and progress."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation, Item, Project, Worker
from annotation.payloads import validate_payload
from annotation.selectors import annotate as annotate_selectors
from annotation.selectors.qc import progress_by_split
from annotation.services.annotations import (
    SubmitRefused,
    annotation_submit,
    annotations_set_review_status,
)
from annotation.services.projects import project_update
from annotation.services.work_queue import (
    item_leases_renew,
    work_queue_next_item,
)
from tests.factories import local_answer, local_submit, local_worker, plausibility_project

pytestmark = pytest.mark.django_db

POLICY = {"start": 3, "maximum": 5}


def adaptive(project: Project, policy: dict | None = POLICY) -> Project:
    return project_update(project=project, flag_settings=(
        {"adaptive_redundancy": policy} if policy else {}))


def stored(item: Item) -> tuple[int | None, bool]:
    return Item.objects.values_list("target_answers", "filled").get(pk=item.pk)


def worker(name: str) -> Worker:
    return (Worker.objects.filter(provider=Worker.Provider.LOCAL, external_id=name).first()
            or local_worker(name))


def answer(project: Project, item: Item, name: str, rating: int):
    return local_answer(project, item, worker(name), rating=rating)


def test_clear_answers_at_start_close_the_item_below_the_split_redundancy():
    project = adaptive(plausibility_project(items=1, redundancy={"train": 5}))
    item = project.items.get()
    for index in range(3):
        # start (3), not the split's 5: the queue serves it until its third answer
        assert work_queue_next_item(project=project, worker=worker(f"w{index}")) == item
        answer(project, item, f"w{index}", 5)
    assert stored(item) == (3, True)
    assert work_queue_next_item(project=project, worker=local_worker("fourth")) is None
    with pytest.raises(SubmitRefused) as refused:
        answer(project, item, "fourth", 5)
    assert refused.value.code == "item_full"


def test_disagreeing_answers_are_served_again_up_to_the_maximum(annotator_client):
    project = adaptive(plausibility_project(items=1, redundancy={"train": 2}))
    item = project.items.get()
    # Ratings around the boundary 4 (mean 4.0, 3.75, 4.0): never clear.
    for index, rating in enumerate([4, 3, 5]):
        answer(project, item, f"w{index}", rating)
    assert stored(item) == (4, False)
    assert work_queue_next_item(project=project, worker=local_worker("w3")) == item
    # the page's one-statement INSERT (PostgreSQL: without the in-statement mark) counts too
    saved = local_submit(annotator_client, project, item.pk, {"rating": 3})
    assert saved.json()["status"] == "saved"
    assert stored(item) == (5, False)
    answer(project, item, "w4", 5)
    assert stored(item) == (5, True)  # the maximum: no more, however unclear
    assert work_queue_next_item(project=project, worker=local_worker("w5")) is None


def test_a_fixed_project_keeps_its_split_redundancy_and_no_target():
    project = plausibility_project(items=1, redundancy={"train": 4})
    item = project.items.get()
    for index in range(3):
        answer(project, item, f"w{index}", 5)
    assert stored(item) == (None, False)
    assert work_queue_next_item(project=project, worker=local_worker("w3")) == item


def test_a_new_policy_recomputes_every_answered_item_and_none_clears_it():
    project = plausibility_project(items=2, redundancy={"train": 5})
    clear, unclear = project.items.order_by("id")
    for index in range(3):
        answer(project, clear, f"w{index}", 5)
        answer(project, unclear, f"w{index}", [4, 3, 5][index])
    assert stored(clear) == stored(unclear) == (None, False)
    adaptive(project)
    assert stored(clear) == (3, True) and stored(unclear) == (4, False)
    assert work_queue_next_item(project=project, worker=local_worker("w3")) == unclear
    adaptive(project, None)
    assert stored(clear) == stored(unclear) == (None, False)
    # Both are open again (3 of the split's 5): a new worker is served one, then the other
    # (which first depends on the queue's pivot for that worker, not on the policy).
    served = []
    for _ in range(2):
        item = work_queue_next_item(project=project, worker=worker("w4"))
        served.append(item)
        answer(project, item, "w4", 4)
    assert sorted(served, key=lambda item: item.pk) == [clear, unclear]


def test_a_rejection_moves_the_target_back():
    project = adaptive(plausibility_project(items=1, redundancy={"train": 5}))
    item = project.items.get()
    answers = [answer(project, item, f"w{index}", rating).annotation
               for index, rating in enumerate([5, 5, 1])]
    assert stored(item) == (4, False)
    annotations_set_review_status(annotations=Annotation.objects.filter(pk=answers[2].pk),
                                  review_status=Annotation.Review.REJECTED)
    assert stored(item) == (3, False)  # two clear answers: one more to reach start
    answer(project, item, "w3", 5)
    assert stored(item) == (3, True)


def test_lease_renewal_and_progress_read_the_target():
    project = adaptive(plausibility_project(items=1, redundancy={"train": 1}))
    item = project.items.get()
    late = local_worker("late")
    assert work_queue_next_item(project=project, worker=late) == item
    for index, rating in enumerate([4, 3, 5]):
        answer(project, item, f"w{index}", rating)
    # three counted answers fill the split's 1 but not the target 4: the page may go on
    assert item_leases_renew(project=project, worker=late, item_ids=[item.pk]) == []
    assert progress_by_split(project=project)[0]["complete"] == 0
    answer(project, item, "w3", 4)
    assert stored(item) == (5, False)
    answer(project, item, "w4", 4)
    assert item_leases_renew(project=project, worker=late, item_ids=[item.pk]) == [item.pk]
    assert progress_by_split(project=project)[0]["complete"] == 1


def _next_item_queries(project: Project, name: str) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        assert work_queue_next_item(project=project, worker=local_worker(name)) is not None
    return [query["sql"] for query in queries.captured_queries]


def test_the_next_item_costs_the_same_statements_with_a_policy():
    fixed = plausibility_project("fixed", items=3, redundancy={"train": 5})
    policy = adaptive(plausibility_project("adaptive", items=3, redundancy={"train": 5}))
    answer(policy, policy.items.order_by("id")[0], "w0", 4)
    fixed_queries = _next_item_queries(fixed, "a")
    adaptive_queries = _next_item_queries(policy, "b")
    assert len(adaptive_queries) == len(fixed_queries)
    assert "target_answers" in next(sql for sql in adaptive_queries if "COALESCE" in sql)


def test_an_adaptive_submit_reads_and_updates_the_item_after_the_insert(annotator_client):
    fixed = plausibility_project("fixed", items=2, redundancy={"train": 5})
    policy = adaptive(plausibility_project("adaptive", items=2, redundancy={"train": 5}))
    counts = {}
    for project in (fixed, policy, fixed, policy):  # the first of each: warm caches
        for item in project.items.order_by("id"):
            if not Annotation.objects.filter(item=item).exists():
                break
        with CaptureQueriesContext(connection) as queries:
            saved = local_submit(annotator_client, project, item.pk, {"rating": 3})
        assert saved.json()["status"] == "saved"
        counts[project.slug] = len(queries.captured_queries)
    # PostgreSQL marks a fixed item in the INSERT's statement, SQLite by a second one; an
    # adaptive item is read and updated after the INSERT on both.
    extra = 2 if connection.vendor == "postgresql" else 1
    assert counts["adaptive"] == counts["fixed"] + extra


def test_a_submit_reads_the_target_current_under_the_lock_not_the_one_it_loaded():
    project = adaptive(plausibility_project(items=1, redundancy={"train": 5}))
    item = project.items.get()
    for index, rating in enumerate([4, 4]):
        answer(project, item, f"w{index}", rating)
    assert stored(item) == (3, False)
    loaded = annotate_selectors.item_for_submit(project=project, item_id=item.pk)
    answer(project, item, "w2", 3)  # 4, 4, 3: still unclear, the target moves to 4
    assert loaded.target_answers == 3 and stored(item) == (4, False)
    context = annotate_selectors.item_context(loaded)
    result = annotation_submit(worker=worker("late"), item=loaded, context=context,
                               clean=validate_payload(project.kind, {"rating": 5}, context),
                               source="local", client_token="late-token")
    assert result.created  # the fourth slot was open, whatever the loaded item said
