"""Keyboard first: the input has the focus on load and after Next, Enter saves a single-line
answer (and a pasted line break becomes a space), and the decontext words are one tab stop that
arrow keys move through (Shift+arrows extend the selection)."""

import pytest
from playwright.sync_api import TimeoutError

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task
from tests.factories import decontext_project, rewrite_project, sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def focused(page, selector: str) -> bool:
    """The focus is on ``selector`` (waiting a little: closing the instructions dialog moves
    the focus in its "close" event, a task after the click)."""
    try:
        page.wait_for_function("(s) => document.activeElement?.matches(s)", arg=selector,
                               timeout=2000)
    except TimeoutError:
        return False
    return True


def test_focus_on_load_and_after_next_and_enter_saves(page, live_server, annotator_user):
    project = sluice_project(items=2)
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    assert focused(page, ".full-question")
    page.keyboard.type("Why did he leave the band in 1975?")
    page.keyboard.press("Enter")
    page.locator(".item-status.ok").wait_for()
    assert focused(page, ".next-item")
    page.keyboard.press("Enter")  # follows "Next item"
    page.locator(".item-status.ok").wait_for(state="detached")
    assert page.locator(".full-question").input_value() == ""
    assert focused(page, ".full-question")
    assert Annotation.objects.count() == 1


def test_a_pasted_line_break_is_never_sent(page, live_server, annotator_user):
    project = rewrite_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    assert focused(page, ".rewrite-text")
    # What a paste of two lines does to the field.
    page.evaluate("""() => {
        const box = document.querySelector('.rewrite-text');
        box.focus();
        document.execCommand('insertText', false,
                             'What was the first album\\nof the Mothers of Invention?');
    }""")
    assert page.locator(".rewrite-text").input_value() == (
        "What was the first album of the Mothers of Invention?")
    page.keyboard.press("Enter")
    page.locator(".item-status.ok").wait_for()
    assert Annotation.objects.get().text == "What was the first album of the Mothers of Invention?"


def test_decontext_words_by_arrow_keys(page, live_server, annotator_user):
    project = decontext_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    assert focused(page, ".step1 input[value=feasible]")
    page.keyboard.press("f")
    page.keyboard.press("Tab")
    assert focused(page, ".sentence-tokens .tok[data-index='0']")  # "It"
    page.keyboard.press("ArrowRight")
    assert focused(page, ".sentence-tokens .gap[data-position='3']")
    page.keyboard.press("ArrowRight")  # "is"
    page.keyboard.press("Shift+ArrowRight")  # "is brittle"
    page.keyboard.press("Shift+ArrowRight")  # "is brittle at"
    page.keyboard.press("Shift+ArrowLeft")  # back to "is brittle"
    assert page.locator(".sentence-tokens .tok.selected").all_inner_texts() == ["is", "brittle"]
    page.keyboard.press("d")
    assert page.locator(".result-sentence").inner_text() == "It at room temperature."
    assert focused(page, ".sentence-tokens [tabindex='0']")
    # The words are one tab stop: Save is a few Tabs away, not 2 per word.
    tabs = 0
    while not focused(page, ".save-item") and tabs < 20:
        page.keyboard.press("Tab")
        tabs += 1
    assert tabs <= 9, tabs
    page.keyboard.press("Enter")
    page.locator(".item-status.ok").wait_for()
    assert Annotation.objects.get().text == "It at room temperature."
