"""The decontext editor's edit list: any edit can be removed (the others stay, their spans are
in the original sentence), edits are described in words, the preview does not claim a save
before one, and a stale message goes away."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task
from tests.factories import decontext_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


WORDS = ["It", "is", "brittle", "at", "room", "temperature", "."]


def token(page, text):
    return page.locator(f".sentence-tokens .tok[data-index='{WORDS.index(text)}']")


def test_edit_list_in_words_any_edit_removable(page, live_server, annotator_user):
    project = decontext_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    page.get_by_label("FEASIBLE", exact=False).first.check()
    assert "Saved" not in page.locator(".result-category").inner_text()
    assert page.locator(".result-category").inner_text() == (
        "Will be saved as FEASIBLE, no edit needed.")
    # 1: swap "It" for "Zinc"; 2: add "very" before "brittle"; 3: delete "at room temperature".
    token(page, "It").click()
    page.fill(".op-text", "Zinc")
    page.click(".op-swap")
    page.locator('.sentence-tokens .gap[data-position="6"]').click()
    page.fill(".op-text", "very")
    page.click(".op-add")
    token(page, "at").click()
    token(page, "temperature").click()
    page.click(".op-buttons .op-delete")
    assert page.locator(".result-sentence").inner_text() == "Zinc is very brittle."
    lines = page.locator(".op-list li .op-text-described").all_inner_texts()
    assert lines == ["swap \u201cIt\u201d \u2192 \u201cZinc\u201d",
                     "add \u201cvery\u201d before \u201cbrittle\u201d",
                     "delete \u201cat room temperature\u201d"]
    # An overlapping edit says so; choosing something else clears the message.
    token(page, "is").click()
    token(page, "brittle").click()
    page.click(".op-buttons .op-delete")
    assert "overlaps" in page.locator(".op-source").inner_text()
    token(page, "is").click()
    assert page.locator(".op-source").inner_text() == ""
    # Remove the first edit, not the last: the others stay.
    page.locator(".op-list li").first.locator(".op-remove").click()
    assert page.locator(".result-sentence").inner_text() == "It is very brittle."
    assert page.locator(".op-list li").count() == 2
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    annotation = Annotation.objects.get()
    assert annotation.text == "It is very brittle."
    assert [op["op"] for op in annotation.edit_operations] == ["add", "delete"]


def test_text_taken_from_the_page_title(page, live_server, annotator_user):
    """The instructions' own example: swap "It" for the page title."""
    project = decontext_project(title="Zinc")
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    page.get_by_label("FEASIBLE", exact=False).first.check()
    page.locator(".page-title .seg").dblclick()
    assert page.locator(".op-text").input_value() == "Zinc"
    assert page.locator(".op-source").inner_text() == "from the page"
    token(page, "It").click()
    page.click(".op-buttons .op-swap")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    [swap] = Annotation.objects.get().edit_operations
    assert swap["source"] == {"part": "title", "start": 0, "end": 4}
    assert Annotation.objects.get().text == "Zinc is brittle at room temperature."
