"""Real-browser fixtures: Debian's chromium driven by Playwright (never a downloaded browser).

Tests skip with a reason when /usr/bin/chromium is absent, except in CI (CI=true), where a
missing browser is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test import Client

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make
# between browser steps are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but /usr/bin/chromium is missing (apt-get install chromium)")
        pytest.skip("/usr/bin/chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def requests_in_flight(context) -> set:
    """The context's requests not yet answered, kept up to date from its events."""
    in_flight: set = set()
    context.on("request", lambda request: in_flight.add(request))
    context.on("requestfinished", lambda request: in_flight.discard(request))
    context.on("requestfailed", lambda request: in_flight.discard(request))
    return in_flight


def settle(page, in_flight: set, *, seconds: float = 3.0) -> None:
    """Wait (at most ``seconds``) until the page's requests are answered before the context
    closes: a request the page sent last (a lease, a prefetch) otherwise still runs in the live
    server while the test's teardown empties the database, and on a loaded machine the two
    collide ("couldn't be flushed")."""
    waited = 0.0
    while in_flight and waited < seconds:
        page.wait_for_timeout(50)
        waited += 0.05


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(8000)
    in_flight = requests_in_flight(context)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.js_errors = errors
    yield page
    if not page.is_closed():
        settle(page, in_flight)
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def login_browser(page, live_server, user) -> None:
    """Give the browser ``user``'s session (the login form itself is Django's)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    page.context.add_cookies([{"name": "sessionid", "value": cookie.value,
                               "url": live_server.url}])


def open_task(page, url: str) -> None:
    """Open a task page and dismiss the first-visit instructions."""
    page.goto(url)
    page.wait_for_selector("#task-page[data-ready=true]")
    if page.locator("dialog#instructions[open]").count():
        page.click("#close-instructions")


SCREENSHOT_DIR = os.environ.get("UNPACK_SCREENSHOT_DIR", "")


def screenshot(page, name: str) -> None:
    """Save a full-page screenshot when UNPACK_SCREENSHOT_DIR is set (docs/screenshots)."""
    if SCREENSHOT_DIR:
        Path(SCREENSHOT_DIR).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOT_DIR) / f"{name}.png"), full_page=True)


def warning_codes(page, scope: str = "") -> list[str]:
    """The live-check warnings shown once the input has settled (the page checks a moment after
    the last keystroke; ``data-checking`` marks a pending check)."""
    page.wait_for_function("() => !document.querySelector('.task-item[data-checking]')")
    return page.locator(f"{scope} .warnings .warning").evaluate_all(
        "(ws) => ws.map((w) => w.dataset.code)")


def assert_no_injected_script(page) -> None:
    """Dataset strings with <script> were shown as text, never run."""
    assert page.evaluate("window.__xss") is None


#: A phone's CSS width (an iPhone 12/13/14): the pages must fit it without scrolling sideways.
WIDTH = 390


@pytest.fixture
def phone(browser):
    """A 390×844 touch screen (an iPhone 12/13/14's CSS viewport)."""
    assert CHROMIUM.exists()
    context = browser.new_context(viewport={"width": WIDTH, "height": 844}, has_touch=True,
                                  is_mobile=True, device_scale_factor=3)
    context.set_default_timeout(8000)
    in_flight = requests_in_flight(context)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    if not page.is_closed():
        settle(page, in_flight)
    context.close()
    assert not errors, errors


@pytest.fixture
def stand_in(settings, monkeypatch, live_server):
    """The stateful MTurk stand-in, the app's boto3 client pointed at it, and the app's public
    URL (the HITs' ExternalQuestion) the live server's."""
    from annotation.fake_mturk import FakeMTurk

    with FakeMTurk() as server:
        settings.MTURK_ENDPOINT_URL = server.base_url
        settings.MTURK_LIVE = False
        settings.UNPACK_PUBLIC_URL = live_server.url
        settings.UNPACK_MTURK_SUBMIT_ORIGINS = (server.base_url,)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDBROWSER")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "browser-secret")
        yield server


def two_workers_collected(stand_in, slug: str):
    """A plausibility batch of two one-item HITs at the stand-in, both submitted by two
    workers (ACARELESS1, ACAREFUL22) and collected: ``(project, the stand-in's simulator,
    assignment ids by WorkerId)``."""
    from annotation.fake_mturk import FakeMTurkSimulator
    from annotation.services.batches.collect import batch_collect
    from tests.factories import batch_plausibility_project, launched_batch, submitted_assignment

    project = batch_plausibility_project(items=2, redundancy={"train": 2, "dev": 2, "test": 2},
                                         slug=slug)
    batch = launched_batch(project, items_per_hit=1)
    simulator = FakeMTurkSimulator(stand_in.base_url)
    ids = {"ACARELESS1": [], "ACAREFUL22": []}
    for hit in batch.hits.order_by("pk"):
        for worker_id in ids:
            ids[worker_id].append(submitted_assignment(simulator, hit, worker_id))
    batch_collect(batch_id=batch.pk)
    return project, simulator, ids
