"""Issue 24, point 1 in a real browser (Debian chromium): the project dashboard after "Run QC
now" — labelled counts, agreement with its interval, cost in each provider's currency, plots
with axis titles, the worker table sorted by a click, and a row leading to the queue filtered
to that worker."""

from __future__ import annotations

import pytest

from tests.browser.conftest import login_browser, screenshot
from tests.review.dashboard_world import mixed_crowd_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_dashboard_after_run_qc_sorts_workers_and_links_to_their_flags(
        page, live_server, staff_user, settings):
    settings.PROLIFIC_CURRENCY = "GBP"
    project, crowd = mixed_crowd_project()
    login_browser(page, live_server, staff_user)
    page.set_default_timeout(30000)  # QC runs inline in the request; the machine is shared
    page.goto(f"{live_server.url}/staff/review/{project.slug}/dashboard/")
    assert "No QC run with dashboard figures" in page.inner_text("[data-testid=qc-source]")
    page.click("text=Run QC now")
    page.wait_for_url(f"**/staff/review/{project.slug}/dashboard/")
    assert "computed" in page.inner_text("[data-testid=qc-source]")
    counted = page.locator("[data-testid=answer-counts] tr[data-count=counted] td")
    assert counted.nth(0).inner_text().startswith("counted: answers filling")
    assert counted.nth(1).inner_text() == "24"
    assert "Fleiss' κ" in page.inner_text("[data-testid=agreement]")
    assert "resamples" in page.inner_text("[data-testid=agreement]")
    cost = page.inner_text("[data-testid=cost]")
    # Fees included (tests/review/test_dashboard.py spells the sums out): MTurk spent $2.40,
    # Prolific committed £3.07.
    assert "$2.40" in cost and "£3.07" in cost and "GBP" in cost
    # Plots: inline SVG with axis titles.
    assert page.locator("svg.plot").count() == 4
    titles = " ".join(page.locator("svg.plot .axis-title").all_text_contents())
    assert "day submitted (UTC)" in titles and "seconds per answer" in titles
    # Sort by median time, slowest first: two clicks on the heading.
    page.click("[data-testid=workers] a[data-sort=median_seconds]")
    page.click("[data-testid=workers] a[data-sort=median_seconds]")
    first = page.locator("[data-testid=workers] tr[data-worker]").first
    assert first.get_attribute("data-worker") == str(crowd["participant"].pk)
    screenshot(page, "dashboard")
    # The blocked worker is labelled; their row leads to their flags in the queue.
    clicker = crowd["clicker"]
    row = page.locator(f"[data-testid=workers] tr[data-worker='{clicker.pk}']")
    assert "blocked from this project" in row.inner_text()
    assert row.locator("[data-testid=worker-blocked]").inner_text() == "blocked"
    assert row.locator("[data-testid=worker-name]").inner_text() == clicker.anonymous_id
    row.locator("[data-testid=worker-queue]").click()
    page.wait_for_url(f"**/staff/review/{project.slug}/?by=worker&worker={clicker.pk}")
    assert clicker.anonymous_id in page.inner_text("[data-testid=queue-worker-filter]")
    assert "too_fast" in page.content()
