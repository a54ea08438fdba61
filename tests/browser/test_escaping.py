"""Hostile dataset, worker and MTurk text in chromium: every staff page, the admin's lists,
the home page and the task pages show it as text; nothing runs, nothing is injected.

The data is ``tests.factories.hostile_world``: ``<img onerror>``, ``<script>``, ``<svg onload>`` and
quote-breaking payloads in every field any page renders (review queue, dashboard with its
inline SVG plots, batch pages, home, admin list and change pages, task pages).
"""

from __future__ import annotations

import pytest

from annotation.services.staff_jobs import job_start
from tests.browser.conftest import login_browser
from tests.factories import annotator_pages, hostile_world, mturk_page, staff_pages

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def assert_inert(page, url: str, dialogs: list[str]) -> None:
    page.goto(url)
    page.wait_for_load_state("load")
    # Task pages finish rendering in their module script.
    if page.locator("#task-page").count():
        page.wait_for_selector("#task-page[data-ready=true]")
    injected = page.evaluate(
        "() => Array.from(document.querySelectorAll('[id^=xss], [onerror], [onload]'))"
        ".map((el) => el.outerHTML.slice(0, 80))")
    assert injected == [], url
    assert page.evaluate("window.__xss") is None, url
    assert dialogs == [], url


def test_staff_and_admin_pages_render_hostile_text_inert(page, live_server, staff_user):
    world = hostile_world()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    login_browser(page, live_server, staff_user)
    for url in staff_pages(world):
        assert_inert(page, live_server.url + url, dialogs)
    # The texts are shown: e.g. the flag detail and the plot titles on the dashboard.
    page.goto(f"{live_server.url}/staff/review/{world.plausibility.slug}/")
    assert page.get_by_text("<img id=\"xss-flag-detail\"", exact=False).count() >= 1
    job_start(kind="qc", project=world.plausibility)  # the per-worker plot: the latest QC job
    page.goto(f"{live_server.url}/staff/review/{world.plausibility.slug}/dashboard/")
    assert page.locator("svg.plot").count() == 3


def test_task_pages_render_hostile_text_inert(page, live_server, annotator_user):
    world = hostile_world()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    login_browser(page, live_server, annotator_user)
    for url in annotator_pages(world):
        assert_inert(page, live_server.url + url, dialogs)
    page.context.clear_cookies()
    assert_inert(page, live_server.url + mturk_page(world), dialogs)
    assert page.locator(".filler").first.inner_text().startswith("filler-1 \"'><img")
