"""CANARD page in a real browser: one question at a time, each live check, answer revealed only
after saving, XSS in a rewrite shown as text."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import (
    assert_no_injected_script,
    login_browser,
    open_task,
    screenshot,
    warning_codes,
)
from tests.factories import XSS, rewrite_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_conversation_one_question_at_a_time(page, live_server, annotator_user):
    project = rewrite_project()
    login_browser(page, live_server, annotator_user)
    url = f"{live_server.url}/annotate/{project.slug}/"
    open_task(page, url)
    assert "Freak Out!" not in page.content()  # the answer is not in the page before saving
    box = page.locator(".rewrite-text")
    box.fill("What was that")
    box.dispatch_event("input")
    assert warning_codes(page) == ["rewrite_too_short", "rewrite_ambiguous_words"]
    box.fill("")
    box.type("What was its first album?")
    assert warning_codes(page) == ["rewrite_pronoun_left"]
    box.fill("")
    box.type("What was the Mothers of Invention's debut album?")
    assert warning_codes(page) == ["rewrite_new_words"]
    box.fill("")
    box.type("What was the first album of the Mothers of Invention?")
    assert warning_codes(page) == []
    page.keyboard.press("Control+Enter")
    page.locator(".revealed-answer").wait_for()
    assert page.locator(".revealed-answer").inner_text().endswith("Freak Out! in 1966.")
    screenshot(page, "rewrite")

    page.click(".next-item")
    page.wait_for_selector("#task-page[data-ready=true]")
    assert page.locator(".history li").count() == 1
    assert "In 1969." not in page.content()
    page.locator(".rewrite-text").type(f"When did the Mothers of Invention disband {XSS}?")
    page.click(".save-item")
    page.get_by_role("button", name="Save anyway").wait_for()
    page.click(".save-item")
    page.locator(".revealed-answer").wait_for()

    page.click(".next-item")
    page.wait_for_selector("#task-page[data-ready=true]")
    box = page.locator(".rewrite-text")
    box.type("Did Frank Zappa form any other band?")
    assert warning_codes(page) == ["rewrite_other_without_phrase"]
    box.fill("")
    box.type("Did Frank Zappa form any band other than the Mothers of Invention?")
    assert warning_codes(page) == []
    page.click(".save-item")
    page.locator(".revealed-answer").wait_for()
    assert page.locator(".answer-text").inner_text() == "I don't know."
    rewrites = list(Annotation.objects.order_by("item__position").values_list("text", flat=True))
    assert rewrites == ["What was the first album of the Mothers of Invention?",
                        f"When did the Mothers of Invention disband {XSS}?",
                        "Did Frank Zappa form any band other than the Mothers of Invention?"]
    second = Annotation.objects.get(item__position=2)
    assert "rewrite_new_words" in [w["code"] for w in second.overridden_warnings]
    assert second.server_warnings == second.overridden_warnings

    # Someone reading the stored rewrite on a page sees text, not a script.
    page.goto(url)
    assert_no_injected_script(page)
