"""The data browser's sort, bulk actions and download in a real browser (Debian chromium):
sort by worker from the column heading, tick every answer and approve — the blocked worker's
and the unconfirmed work are held back and the page says so, in counts — and download the
filtered answers as CSV, with a formula-looking answer made harmless."""

from __future__ import annotations

import csv
import io

import pytest

from annotation.models import Assignment
from tests.browser.conftest import login_browser, screenshot
from tests.factories import submitted_hit_answers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sort_tick_approve_and_download(page, live_server, staff_user):
    project, answers = submitted_hit_answers(slug="canard-bulk",
                                             local_text="=1+1 (a formula)")
    login_browser(page, live_server, staff_user)

    page.goto(f"{live_server.url}/staff/projects/{project.slug}/answers/")
    page.locator("a[data-sort=worker]").click()
    page.wait_for_url("**sort=worker**")
    shown = [int(pk) for pk in page.locator("[data-testid=browse-rows] tbody tr")
             .evaluate_all("rows => rows.map(row => row.dataset.answer)")]
    assert shown == [a.pk for a in sorted(answers.values(), key=lambda a: (a.worker_id, a.pk))]
    assert "by worker" in page.locator("[data-testid=browse-summary]").inner_text()

    for box in page.locator("input[name=answers]").all():
        box.check()
    page.locator("button[name=action][value=approve]").click()
    page.wait_for_url("**sort=worker**")
    said = page.locator("[data-testid=browse-message]").inner_text()
    assert said == ("Approved 1 whole HIT (holding 1 answer of those chosen; a HIT is decided "
                    "whole) and 1 answer outside a HIT. Held back: 1 answer of a worker "
                    "blocked for this project (decide each on its own); 1 answer not "
                    "confirmed by the provider yet (collect the batch first).")
    screenshot(page, "data_browser_bulk")
    assert dict(Assignment.objects.values_list("provider_assignment_id", "status")) == {
        "ASG-good": "approved", "ASG-blocked": "submitted", "ASG-waiting": "submitted"}

    with page.expect_download() as caught:
        page.locator("[data-testid=download-csv]").click()
    download = caught.value
    assert download.suggested_filename == "canard-bulk-answers.csv"
    with open(download.path(), encoding="utf-8") as handle:
        rows = list(csv.DictReader(io.StringIO(handle.read())))
    assert [int(row["answer"]) for row in rows] == shown  # the page's sort, every answer
    local = next(row for row in rows if int(row["answer"]) == answers["local"].pk)
    assert local["text"] == "'=1+1 (a formula)" and local["review_status"] == "approved"
