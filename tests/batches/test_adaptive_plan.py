"""Adaptive redundancy in batch planning: start judgements first, then one more only where the
answers disagree; an explicit number of assignments overrides the policy."""

from __future__ import annotations

import pytest

from annotation.models import Project
from annotation.services.adaptive import adaptive_targets
from annotation.services.batches.plan import LaunchOptions, batch_plan
from annotation.services.projects import validate_flag_settings
from qc.redundancy import RedundancyPolicy, adaptive_target
from tests.factories import annotate, decontext_sample, plausibility_project, workers

pytestmark = pytest.mark.django_db


def adaptive_project():
    project = plausibility_project(items=3, redundancy={"train": 5})
    Project.objects.filter(pk=project.pk).update(
        flag_settings={"adaptive_redundancy": {"start": 3, "maximum": 7}})
    project.refresh_from_db()
    empty, clear, unclear = project.items.order_by("id")
    crowd = workers(3)
    for worker, rating in zip(crowd, [5, 5, 5], strict=True):
        annotate(clear, worker, rating=rating)
    for worker, rating in zip(crowd, [4, 3, 5], strict=True):  # mean 4: on a boundary
        annotate(unclear, worker, rating=rating)
    return project, empty, clear, unclear


def test_the_plan_asks_more_only_where_answers_disagree():
    project, empty, clear, unclear = adaptive_project()
    assert adaptive_targets(project=project, item_ids=[empty.pk, clear.pk, unclear.pk]) == {
        empty.pk: 3, clear.pk: 3, unclear.pk: 4}
    plan = batch_plan(project=project, options=LaunchOptions(
        title="More", reward_cents=10, items_per_hit=1, splits=("train",)))
    assert {hit.item_ids[0]: hit.max_assignments for hit in plan.hits} == {
        empty.pk: 3, unclear.pk: 1}
    assert plan.skipped_item_ids == (clear.pk,)
    fixed = batch_plan(project=project, options=LaunchOptions(
        title="More", reward_cents=10, items_per_hit=1, splits=("train",), assignments=5))
    assert {hit.item_ids[0]: hit.max_assignments for hit in fixed.hits} == {
        empty.pk: 5, clear.pk: 2, unclear.pk: 2}


def test_without_a_policy_the_split_redundancy_decides():
    project, empty, clear, unclear = adaptive_project()
    Project.objects.filter(pk=project.pk).update(flag_settings={})
    project.refresh_from_db()
    assert adaptive_targets(project=project, item_ids=[empty.pk]) is None
    plan = batch_plan(project=project, options=LaunchOptions(
        title="More", reward_cents=10, items_per_hit=1, splits=("train",)))
    assert {hit.item_ids[0]: hit.max_assignments for hit in plan.hits} == {
        empty.pk: 5, clear.pk: 2, unclear.pk: 2}


def test_categories_and_the_maximum():
    project, item = decontext_sample()
    Project.objects.filter(pk=project.pk).update(
        flag_settings={"adaptive_redundancy": {"start": 3, "maximum": 4}})
    project.refresh_from_db()
    for worker, category in zip(workers(4), ["DONE", "IMPOSSIBLE", "DONE", "IMPOSSIBLE"],
                                strict=True):
        annotate(item, worker, category=category)
    assert adaptive_targets(project=project, item_ids=[item.pk]) == {item.pk: 4}  # at maximum
    policy = RedundancyPolicy(start=3, maximum=7)
    assert adaptive_target(["DONE", "DONE", "IMPOSSIBLE"], policy, numeric=False) == 4
    assert adaptive_target(["DONE"] * 3, policy, numeric=False) == 3


def test_a_bad_policy_is_refused_where_settings_are_validated():
    with pytest.raises(Exception, match="adaptive_redundancy: start must be at least 1"):
        validate_flag_settings({"adaptive_redundancy": {"start": 9}})
    with pytest.raises(Exception, match="unknown adaptive redundancy settings: typo"):
        validate_flag_settings({"adaptive_redundancy": {"typo": 1}})
