"""Accessibility (issue 22, point 7): axe-core finds no serious or critical violation on any task
page (nothing interactive inside the rating slider: ``nested-interactive``), and the rating
slider has the focus on load and after Next, so arrow keys rate at once.

axe-core is a test-only npm package (tests/browser/axe/package.json, installed by .ci/run with
``npm ci --prefix tests/browser/axe``); it is injected into the page by the test, never served
by the app. Without it the axe test skips, except in CI (CI=true), where it fails."""

import os
from pathlib import Path

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task
from tests.factories import (
    decontext_project,
    plausibility_project,
    rewrite_project,
    sluice_project,
    split_project,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
BUILDERS = {"decontext": decontext_project, "plausibility": plausibility_project,
            "rewrite": rewrite_project, "sluice": sluice_project, "split": split_project}


@pytest.fixture
def axe_page(browser):
    """A page whose context lets the test inject axe-core past the app's CSP (which allows no
    inline script: the app's own pages are what is tested, not the injection)."""
    if not AXE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {AXE} is missing (npm ci --prefix tests/browser/axe)")
        pytest.skip(f"{AXE} is not installed (npm ci --prefix tests/browser/axe)")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    context.set_default_timeout(8000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, errors


def serious_violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate("""async () => {
        const result = await axe.run(document, { resultTypes: ["violations"] });
        return result.violations
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => `${v.id} (${v.impact}): `
                 + v.nodes.map((n) => n.target.join(" ")).join(", "));
    }""")


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_axe_finds_no_serious_violation_on_a_task_page(axe_page, live_server, annotator_user,
                                                        kind):
    project = BUILDERS[kind]()
    login_browser(axe_page, live_server, annotator_user)
    open_task(axe_page, f"{live_server.url}/annotate/{project.slug}/")
    assert serious_violations(axe_page) == [], kind


def test_the_rating_slider_has_the_focus_on_load_and_after_next(page, live_server,
                                                                annotator_user):
    project = plausibility_project(items=2)
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    slider = page.get_by_role("slider")
    page.wait_for_function("() => document.activeElement?.getAttribute('role') === 'slider'")
    page.keyboard.press("ArrowRight")  # no click first: the first press lands on the middle
    page.keyboard.press("ArrowRight")
    assert slider.get_attribute("aria-valuenow") == "4"
    page.keyboard.press("Control+Enter")
    page.locator(".item-status.ok").wait_for()
    page.keyboard.press("n")
    page.locator(".item-status.ok").wait_for(state="detached")
    page.wait_for_function("() => document.activeElement?.getAttribute('role') === 'slider'")
    page.keyboard.press("ArrowLeft")
    assert page.get_by_role("slider").get_attribute("aria-valuenow") == "3"
    page.keyboard.press("Control+Enter")
    page.locator(".item-status.ok").wait_for()
    assert sorted(Annotation.objects.values_list("rating", flat=True)) == [3, 4]
