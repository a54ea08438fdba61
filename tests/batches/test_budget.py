"""An optional per-project budget (issue 24): set on the settings page and the API, shown on the
dashboard as spent, committed and left with the providers' fees, and a launch that would go
past it refused by the batch service (every way in: page, CLI, API)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotation.models import Batch, Project
from annotation.money import fees_cents
from annotation.selectors.dashboard import budget_figures, cost_by_currency
from annotation.services.projects import project_update
from tests.factories import ItemFactory, batch_plausibility_project, launched_batch

pytestmark = pytest.mark.django_db


def more_items(project, n: int) -> None:
    for _ in range(n):
        ItemFactory(project=project, split="dev")


def test_fees_follow_each_providers_rule():
    # MTurk: 20% per assignment (40% on HITs of 10+), at least a cent; 20% per bonus.
    assert fees_cents("mturk", places=[(50, 4, 8), (50, 10, 1), (3, 1, 2)],
                      bonuses=[(25, 2)]) == 8 * 10 + 20 + 2 * 1 + 2 * 5
    # Prolific: the service fee (33.3%) on rewards and bonuses together.
    assert fees_cents("prolific", places=[(100, 1, 3)], bonuses=[(30, 1)]) == 110
    assert fees_cents("local", places=[(100, 1, 3)]) == 0


def test_a_launch_past_the_budget_is_refused_and_open_places_count_as_committed():
    project = batch_plausibility_project(items=10)  # 2 HITs x 4 places of 50 cents + 20% fee
    project_update(project=project, budget_cents=400, budget_currency="USD")
    with pytest.raises(ValidationError) as refused:
        launched_batch(project)
    assert refused.value.message_dict["budget"] == [
        "this batch would cost $4.80 with fees, more than the $4.00 left of the project's "
        "budget of $4.00 (spent $0.00, committed $0.00, fees included): raise the budget on "
        "the project's settings page or launch fewer items; nothing was launched"]
    assert not Batch.objects.exists()
    project_update(project=project, budget_cents=1000, budget_currency="USD")
    launched_batch(project)
    # Its 8 places are open (nobody took them yet): committed with their fees.
    figures = budget_figures(project=project, cost=cost_by_currency(project=project))
    assert (figures["committed_cents"], figures["left_cents"]) == (480, 520)
    more_items(project, 10)
    launched_batch(project)  # 480 more: 40 left
    more_items(project, 10)
    with pytest.raises(ValidationError, match=r"more than the \$0.40 left"):
        launched_batch(project)
    assert Batch.objects.count() == 2


def test_a_budget_in_another_currency_refuses_the_launch():
    project = batch_plausibility_project(items=10)
    project_update(project=project, budget_cents=100_000, budget_currency="GBP")
    with pytest.raises(ValidationError, match="the project's budget is in GBP but mturk pays "
                                              "in USD"):
        launched_batch(project)
    assert not Batch.objects.exists()


def test_the_command_line_launch_says_why(settings):
    project = batch_plausibility_project(items=10)
    project_update(project=project, budget_cents=100, budget_currency="USD")
    with pytest.raises(CommandError, match=r"would cost \$4.80 with fees, more than the \$1.00"):
        call_command("launch_batch", project.slug, "--split", "dev", "--reward", "0.50",
                     "--title", "Rate", "--yes", stdout=StringIO())
    assert not Batch.objects.exists()


def test_the_settings_page_and_the_api_set_the_budget(staff_client):
    project = batch_plausibility_project(items=1)
    url = f"/staff/projects/{project.slug}/settings/"
    form = {"name": "CLAIRE", "instructions": "", "reward_cents": "20", "status": "open",
            "redundancy_train": "2", "redundancy_dev": "4", "redundancy_test": "4"}
    page = staff_client.get(url).content.decode()
    assert 'name="budget_cents"' in page and '<option value="USD">USD</option>' in page
    refused = staff_client.post(url, {**form, "budget_cents": "5000", "budget_currency": ""})
    assert "a budget needs its currency" in refused.content.decode()
    project.refresh_from_db()
    assert project.budget_cents is None
    staff_client.post(url, {**form, "budget_cents": "5000", "budget_currency": "USD"})
    project.refresh_from_db()
    assert (project.budget_cents, project.budget_currency) == (5000, "USD")
    api = f"/api/projects/{project.slug}/"
    assert staff_client.get(api).json()["budget_cents"] == 5000
    bad = staff_client.patch(api, json.dumps({"budget_currency": "usd"}),
                             content_type="application/json")
    assert bad.status_code == 400 and "three-letter currency code" in json.dumps(bad.json())
    changed = staff_client.patch(api, json.dumps({"budget_cents": 9000}),
                                 content_type="application/json")
    assert changed.status_code == 200 and changed.json()["budget_cents"] == 9000
    assert Project.objects.get(pk=project.pk).budget_cents == 9000


def test_the_dashboard_shows_what_is_left_as_qc_report_json_has_it(staff_client):
    project = batch_plausibility_project(items=10)
    project_update(project=project, budget_cents=1000, budget_currency="USD")
    launched_batch(project)
    out = StringIO()
    call_command("qc_report", project.slug, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["dashboard"]["budget"] == {
        "currency": "USD", "budget_cents": 1000, "spent_cents": 0, "committed_cents": 480,
        "left_cents": 520, "other_currencies": []}
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    page = staff_client.get(f"/staff/review/{project.slug}/dashboard/").content.decode()
    table = page.split('data-testid="budget"', 1)[1].split("</table>", 1)[0]
    assert "<td>$10.00</td><td>$0.00</td><td>$4.80</td><td>$5.20</td>" in table
