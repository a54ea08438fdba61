"""The Content-Security-Policy in chromium: every page we serve runs under it without a single
violation or console message, and the task pages' ES modules still work (a real save).

Violations are caught twice: the ``securitypolicyviolation`` event (listened for from an init
script, before any page script runs) and the console, where chromium reports each refusal.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from annotation.models import Annotation
from annotation.services.staff_jobs import job_start
from tests.browser.conftest import login_browser, open_task
from tests.factories import (
    BUILDERS,
    annotate,
    claire_sample,
    plausibility_project,
    publish_hit,
    sluice_project,
    workers,
)
from tests.security.test_access import admin_urls

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__csp.push(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`
                    + ` (${event.sourceFile || ""}:${event.lineNumber || 0})`);
});
"""


def counts(message) -> bool:
    """Every console message counts (a refused script or style is an error there; so is a 404,
    e.g. of the /favicon.ico chromium asks every site for), but for chromium's own info/debug
    notes about itself (e.g. "Autofocus processing was blocked", when the admin's form has focus
    before the autofocus runs)."""
    return message.type not in ("info", "debug")


@pytest.fixture
def watched(page):
    """The browser page, recording CSP violations and console messages."""
    page.add_init_script(LISTEN)
    page.console_messages = []
    page.on("console", lambda message: page.console_messages.append(
        f"{message.type}: {message.text} ({message.location.get('url', '')})")
        if counts(message) else None)
    return page


def assert_clean(page, url: str) -> None:
    """No CSP violation and no console message on the page now shown."""
    page.wait_for_load_state("load")
    # Violation events are queued as tasks: let those of the last moments be delivered.
    page.evaluate("new Promise((resolve) => setTimeout(resolve, 100))")
    violations = page.evaluate("window.__csp")
    assert violations == [], f"{url}: CSP violations {violations}"
    assert page.console_messages == [], f"{url}: console {page.console_messages}"


def visit(page, url: str, ready: str = "body") -> None:
    response = page.goto(url)
    assert response is not None and response.status == 200, url
    assert "script-src 'self'" in response.headers["content-security-policy"], url
    page.wait_for_selector(ready)
    assert_clean(page, url)


def test_anonymous_pages(watched, live_server):
    visit(watched, f"{live_server.url}/accounts/login/", "form.login")
    visit(watched, f"{live_server.url}/admin/login/", "#login-form")
    visit(watched, f"{live_server.url}/api/docs/", ".swagger-ui .information-container")
    project = sluice_project(items=2)
    publish_hit(project)
    query = urlencode({"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "HIT123"})
    visit(watched, f"{live_server.url}/mturk/task/{project.slug}/?{query}",
          "#task-page[data-ready=true]")
    assert watched.locator("#preview-notice").is_visible()


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_every_task_kind_runs_under_the_policy(watched, live_server, annotator_user, kind):
    project = BUILDERS[kind]()
    login_browser(watched, live_server, annotator_user)
    url = f"{live_server.url}/annotate/{project.slug}/"
    open_task(watched, url)
    assert_clean(watched, url)
    # The instructions dialog and its shortcut list are the page's own module's work. ("?" is
    # a shortcut outside text fields; the page opens with the focus in the answer's field.)
    watched.click("h1")
    watched.keyboard.press("?")
    watched.locator("dialog#instructions[open]").wait_for()
    assert_clean(watched, url)


def test_staff_pages(watched, live_server, staff_user):
    project, items = claire_sample()
    for worker in workers(3):
        for k, item in enumerate(items):
            annotate(item, worker, rating=1 + k % 5, duration_ms=1000 * (k + 1))
    job_start(kind="qc", project=project)  # the per-worker plot is the latest QC job's
    login_browser(watched, live_server, staff_user)
    base = live_server.url
    visit(watched, f"{base}/", "main")
    visit(watched, f"{base}/staff/review/", "main")
    visit(watched, f"{base}/staff/review/{project.slug}/", "main")
    visit(watched, f"{base}/staff/review/{project.slug}/dashboard/", "svg.plot")
    assert watched.locator("svg.plot").count() == 3
    visit(watched, f"{base}/staff/batches/", "main")
    visit(watched, f"{base}/staff/batches/new/", "main")
    visit(watched, f"{base}/api/docs/", ".swagger-ui .opblock")
    # The browsable API (DRF's pages, with their syntax-highlighting style block).
    visit(watched, f"{base}/api/", ".response-info")
    visit(watched, f"{base}/api/projects/", ".response-info")
    visit(watched, f"{base}/api/projects/{project.slug}/", ".response-info")
    # The admin, every model's list and add form (inlines, filter_horizontal, raw id widgets),
    # and change forms with inlines.
    for url in admin_urls():
        visit(watched, f"{base}{url}", "#content")
    visit(watched, f"{base}/admin/annotation/project/{project.pk}/change/", "#content-main form")
    visit(watched, f"{base}/admin/annotation/clozeitem/{items[0].filler.cloze_id}/change/",
          "#content-main form")


def test_a_rating_is_saved_under_the_policy(watched, live_server, annotator_user):
    """The ES modules run: rate by keyboard, save with Ctrl+Enter, the server has it."""
    project = plausibility_project(items=1)
    login_browser(watched, live_server, annotator_user)
    url = f"{live_server.url}/annotate/{project.slug}/"
    open_task(watched, url)
    slider = watched.get_by_role("slider")
    slider.focus()
    watched.keyboard.press("ArrowRight")
    watched.keyboard.press("ArrowRight")
    assert slider.get_attribute("aria-valuenow") == "4"
    watched.keyboard.press("Control+Enter")
    watched.locator(".item-status.ok").wait_for()
    assert Annotation.objects.get().rating == 4
    assert_clean(watched, url)
