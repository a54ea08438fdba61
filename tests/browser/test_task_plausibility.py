"""Plausibility page in a real browser: no default rating, keyboard slider, escaped filler."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import assert_no_injected_script, login_browser, open_task, screenshot
from tests.factories import XSS, plausibility_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_rating_is_a_decision_made_by_keyboard_or_click(page, live_server, annotator_user):
    project = plausibility_project(items=2)
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    assert page.locator("u.filler").inner_text() == f"the cleft lip {XSS}"
    assert page.locator(".article-title").inner_text().endswith(XSS)
    assert_no_injected_script(page)
    slider = page.get_by_role("slider")
    assert slider.get_attribute("aria-valuenow") is None
    page.click(".save-item")
    assert "Choose a rating" in page.locator(".item-status").inner_text()
    assert Annotation.objects.count() == 0
    slider.focus()
    page.keyboard.press("ArrowRight")  # first press: the middle
    page.keyboard.press("ArrowRight")
    assert slider.get_attribute("aria-valuenow") == "4"
    screenshot(page, "plausibility")
    page.keyboard.press("Control+Enter")
    page.locator(".item-status.ok").wait_for()
    annotation = Annotation.objects.get()
    assert annotation.payload == {"rating": 4} and annotation.rating == 4

    # The submit answer carried the next item: "Next item" swaps it in, no page load (a marker
    # set on this page survives), and the new item starts unrated and unsaved.
    page.evaluate("window.__samePage = true")
    page.click(".next-item")
    page.wait_for_selector("#task-page[data-ready=true]")
    assert page.evaluate("window.__samePage === true")
    assert page.locator(".task-item").count() == 1
    assert page.locator(".next-item").is_hidden()
    assert page.get_by_role("slider").get_attribute("aria-valuenow") is None
    assert_no_injected_script(page)
    page.locator(".rating-stop[data-value='1']").click()
    page.locator("body").press("2")
    assert page.get_by_role("slider").get_attribute("aria-valuenow") == "2"
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    assert sorted(Annotation.objects.values_list("rating", flat=True)) == [2, 4]
    assert len({*Annotation.objects.values_list("item_id", flat=True)}) == 2

    # None left: "Next item" loads the page, which says so.
    page.keyboard.press("n")
    page.locator("#no-more-work").wait_for()
    assert page.evaluate("window.__samePage === undefined")
