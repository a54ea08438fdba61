"""The cost estimate with adaptive redundancy (issue 25, point 5): besides what the batch
commits, the expected and the maximum cost of finishing its items -- expected from ``start`` and
the extra rate measured on the project's own items (or the bench's prior while too few are
measured), maximum at the policy's ``maximum`` -- on the launch page, ``launch_batch`` and the
API, each figure what it says."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Project, TaskKind
from annotation.services.adaptive import MEASURED_ITEMS, PRIOR_EXTRA
from annotation.services.batches.plan import LaunchOptions, batch_plan
from annotation.services.projects import project_update
from tests.factories import annotate, batch_plausibility_project, workers

pytestmark = pytest.mark.django_db

#: MTurk: 10 cents reward + 2 cents fee (20%) an assignment.
PER_ASSIGNMENT = 12


def options(**overrides) -> LaunchOptions:
    return LaunchOptions(**{"title": "Rate", "reward_cents": 10, "items_per_hit": 1,
                            "splits": ("dev",), **overrides})


def adaptive(project: Project) -> Project:
    return project_update(project=project, flag_settings={
        "adaptive_redundancy": {"start": 2, "maximum": 7}})


def test_without_answers_the_prior_gives_the_expected_cost_and_maximum_the_most():
    project = adaptive(batch_plausibility_project(items=10))
    estimate = batch_plan(project=project, options=options()).estimate
    assert (estimate.assignments, estimate.total_cents) == (20, 20 * PER_ASSIGNMENT)
    cost = estimate.adaptive
    assert not cost.measured and cost.measured_items == 0
    per_item = 2 + PRIOR_EXTRA[TaskKind.PLAUSIBILITY]
    assert cost.expected_per_item == pytest.approx(per_item)
    assert cost.planned_judgements == 20 and cost.items == 10
    assert cost.expected_judgements == pytest.approx(10 * per_item)
    assert cost.maximum_judgements == 70
    assert cost.expected_cents == round(10 * per_item * PER_ASSIGNMENT)
    assert cost.maximum_cents == 70 * PER_ASSIGNMENT
    fixed = batch_plan(project=batch_plausibility_project(items=1, slug="fixed"),
                       options=options()).estimate
    assert fixed.adaptive is None and fixed.as_dict()["adaptive"] is None


def measured_project() -> tuple[Project, list, list]:
    """30 items answered twice: 20 clear (5, 5: done at 2) and 10 on the boundary 4 (4, 4:
    a third asked), and 4 items without answers."""
    project = batch_plausibility_project(items=MEASURED_ITEMS + 4)
    items = list(project.items.order_by("id"))
    crowd = workers(2)
    for index, item in enumerate(items[:MEASURED_ITEMS]):
        for worker in crowd:
            annotate(item, worker, rating=5 if index < 20 else 4)
    return adaptive(project), items[20:MEASURED_ITEMS], items[MEASURED_ITEMS:]


def test_the_extra_rate_is_measured_on_the_projects_items():
    project, unclear, fresh = measured_project()
    cost = batch_plan(project=project, options=options()).estimate.adaptive
    assert cost.measured and cost.measured_items == MEASURED_ITEMS
    # extra: 10 of 30 items asked one more judgement: 1/3 an item
    assert cost.expected_per_item == pytest.approx(2 + 1 / 3, abs=0.01)
    # the unclear items get the 1 the plan asks (above the 1/3 expected); the fresh ones 2 1/3
    assert cost.planned_judgements == len(unclear) * 1 + len(fresh) * 2
    assert cost.expected_judgements == pytest.approx(len(unclear) + len(fresh) * (2 + 1 / 3),
                                                     abs=0.01)
    assert cost.maximum_judgements == len(unclear) * 5 + len(fresh) * 7
    assert cost.expected_cents == round(cost.expected_judgements * PER_ASSIGNMENT)
    assert cost.maximum_cents == cost.maximum_judgements * PER_ASSIGNMENT


def test_the_cli_the_api_and_the_launch_page_show_both_figures(staff_client):
    project, _, _ = measured_project()
    cost = batch_plan(project=project, options=options()).estimate.adaptive
    expected = f"${cost.expected_cents / 100:.2f}"
    maximum = f"${cost.maximum_cents / 100:.2f}"
    out = io.StringIO()
    call_command("launch_batch", project.slug, "--split", "dev", "--reward", "0.10",
                 "--title", "Rate", "--items-per-hit", "1", stdout=out)
    text = out.getvalue()
    assert (f"Expected cost of finishing these items: {expected} "
            f"({cost.expected_judgements:g} judgements, {cost.expected_per_item:g} an item "
            f"from the extra rate measured on {MEASURED_ITEMS} items past 2)") in text
    assert (f"Maximum cost of finishing these items: {maximum} "
            f"({cost.maximum_judgements} judgements, 7 an item)") in text
    assert f"this batch asks {cost.planned_judgements} judgements for 14 items" in text
    answer = staff_client.post("/api/batches/launch/", json.dumps({
        "project": project.slug, "title": "Rate", "reward_cents": 10, "splits": ["dev"],
        "items_per_hit": 1}), content_type="application/json")
    assert answer.status_code == 200, answer.content
    shown = answer.json()["estimate"]["adaptive"]
    assert (shown["expected_cents"], shown["maximum_cents"], shown["measured"]) == (
        cost.expected_cents, cost.maximum_cents, True)
    page = staff_client.post("/staff/batches/new/", {
        "project": project.slug, "title": "Rate", "splits": ["dev"], "items_per_hit": 1,
        "reward": "0.10", "lifetime": "7d", "duration": "30m", "auto_approve": "3d",
        "locales": "", "provider": "mturk"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="estimate-adaptive"' in html
    assert f"Expected cost of finishing these items: {expected}" in html
    assert f"Maximum cost of finishing these items: {maximum}" in html
