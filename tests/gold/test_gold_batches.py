"""Gold items in MTurk HITs and Prolific places: the batch plan (both providers launch from
it) leaves them out of the work it packs and mixes them into its pages at the gold rate."""

import pytest

from annotation.models import Item
from annotation.services.batches.plan import LaunchOptions, batch_plan
from annotation.services.gold import with_gold_items
from tests.factories import PROLIFIC_LAUNCH, batch_plausibility_project

pytestmark = pytest.mark.django_db

MTURK = {"title": "Rate fillers", "reward_cents": 50, "items_per_hit": 4, "splits": ("dev",)}


def project_with_gold(*, items=16, gold=4, rate=0.2):
    project = batch_plausibility_project(items=items)
    gold_ids = list(Item.objects.filter(project=project).order_by("pk")
                    .values_list("pk", flat=True)[:gold])
    Item.objects.filter(pk__in=gold_ids).update(is_gold=True, gold_answer=4)
    project.gold_rate = rate
    project.save()
    return project, gold_ids


@pytest.mark.parametrize("launch", [MTURK, {**PROLIFIC_LAUNCH, "items_per_hit": 4}],
                         ids=["mturk", "prolific"])
def test_every_page_gets_its_share_of_gold_items(launch):
    project, gold_ids = project_with_gold(items=16, gold=4, rate=0.2)
    plan = batch_plan(project=project, options=LaunchOptions(**launch))
    pages = [hit.item_ids for hit in plan.hits]
    # 12 items of work, 4 to a page; gold is a fifth of each page: one each, each a new one.
    assert [len(page) for page in pages] == [5, 5, 5]
    gold_per_page = [[item for item in page if item in gold_ids] for page in pages]
    assert [len(found) for found in gold_per_page] == [1, 1, 1]
    assert len({found[0] for found in gold_per_page}) == 3
    assert all(page[-1] not in gold_ids for page in pages)  # among the items, not last
    assert not set(plan.skipped_item_ids) & set(gold_ids)


def test_no_gold_in_pages_at_rate_zero_and_gold_is_never_work():
    project, gold_ids = project_with_gold(rate=0.0)
    plan = batch_plan(project=project, options=LaunchOptions(**MTURK))
    placed = [item for hit in plan.hits for item in hit.item_ids]
    assert len(placed) == 12 and not set(placed) & set(gold_ids)


def test_the_rate_holds_over_the_batch_when_pages_are_small():
    pool = [100, 101, 102]
    placed = gold = 0
    pages = []
    for page in range(9):
        mixed = with_gold_items([page], pool, rate=0.1, items_before=placed, gold_before=gold)
        pages.append(mixed)
        placed, gold = placed + 1, gold + len(mixed) - 1
    # One gold item per nine items of work: 10 % of the 10 items placed.
    assert gold == 1 and sum(len(page) for page in pages) == 10
    assert with_gold_items([1, 2], [], rate=0.5, items_before=0, gold_before=0) == (1, 2)
