"""Decontextualization editor in a real browser: swap copied from the page, delete, add typed,
undo/redo, preview and diff; INFEASIBLE and unchanged FEASIBLE; the stored operations."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import assert_no_injected_script, login_browser, open_task, screenshot
from tests.factories import XSS, ZINC_TARGET, decontext_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def token(page, text):
    return page.locator(".sentence-tokens .tok", has_text=text).first


def test_decontext_edit_with_the_three_operations(page, live_server, annotator_user):
    project = decontext_project(items=3)
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    assert page.locator(".page-title").inner_text() == f"Zinc {XSS}"
    assert page.locator("mark.target-sentence").inner_text() == ZINC_TARGET
    assert_no_injected_script(page)
    assert page.locator(".op-delete").is_disabled()

    page.get_by_label("FEASIBLE", exact=False).first.check()
    # Swap "It" for "Zinc", taken from the page by double-clicking the word.
    page.locator('[data-paragraph="0"] .seg').dblclick(position={"x": 8, "y": 10})
    assert page.locator(".op-text").input_value() == "Zinc"
    token(page, "It").click()
    page.select_option(".edit-type", "PRONOUN/NP SWAP")
    page.click(".op-swap")
    # Delete "at room temperature" (two clicks select the range), by keyboard shortcut.
    token(page, "at").click()
    token(page, "temperature").click()
    page.locator("body").press("d")
    # Add typed text before "brittle".
    page.locator('.sentence-tokens .gap[data-position="6"]').click()
    page.fill(".op-text", "very")
    page.select_option(".edit-type", "ADDITION")
    page.click(".op-add")
    assert page.locator(".result-sentence").inner_text() == "Zinc is very brittle."
    assert page.locator(".result-diff ins").count() >= 1
    assert page.locator(".result-diff del").count() >= 1
    page.locator("body").press("Control+z")
    assert page.locator(".result-sentence").inner_text() == "Zinc is brittle."
    page.locator("body").press("Control+y")
    assert page.locator(".result-sentence").inner_text() == "Zinc is very brittle."
    assert page.locator(".op-list li").count() == 3
    screenshot(page, "decontext")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()

    annotation = Annotation.objects.get()
    assert annotation.category == "DONE"
    assert annotation.text == "Zinc is very brittle."
    assert annotation.payload["decontextualized_sentence"] == "Zinc is very brittle."
    assert annotation.edit_operations == [
        {"op": "swap", "start": 0, "end": 2, "text": "Zinc",
         "source": {"paragraph": 0, "start": 0, "end": 4}, "edit_type": "PRONOUN/NP SWAP"},
        {"op": "delete", "start": 13, "end": 33, "text": "", "source": None, "edit_type": None},
        {"op": "add", "start": 6, "end": 6, "text": "very ", "source": None,
         "edit_type": "ADDITION"},
    ]

    # Second item: INFEASIBLE is stored as IMPOSSIBLE, by keyboard.
    page.click(".next-item")
    page.wait_for_selector("#task-page[data-ready=true]")
    page.locator("body").press("i")
    page.keyboard.press("Control+Enter")
    page.locator(".item-status.ok").wait_for()
    # Third item: FEASIBLE without edits is stored as UNNECESSARY.
    page.click(".next-item")
    page.wait_for_selector("#task-page[data-ready=true]")
    page.locator("body").press("f")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    categories = list(Annotation.objects.order_by("id").values_list("category", "text"))
    assert categories == [("DONE", "Zinc is very brittle."), ("IMPOSSIBLE", ZINC_TARGET),
                          ("UNNECESSARY", ZINC_TARGET)]


def test_decontext_draft_survives_a_reload(page, live_server, annotator_user):
    project = decontext_project()
    login_browser(page, live_server, annotator_user)
    url = f"{live_server.url}/annotate/{project.slug}/"
    open_task(page, url)
    page.locator("body").press("f")
    token(page, "It").click()
    page.fill(".op-text", "Zinc")
    page.click(".op-swap")
    page.reload()
    page.wait_for_selector("#task-page[data-ready=true]")
    assert page.locator(".result-sentence").inner_text() == "Zinc is brittle at room temperature."
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    assert Annotation.objects.get().edit_operations[0]["source"] is None
    drafts = "Object.keys(localStorage).filter((k) => k.startsWith('unpack:draft'))"
    assert page.evaluate(drafts) == []
