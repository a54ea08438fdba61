"""Live checks in the page look at settled input, with the shared Unicode-aware tokenizer, and
the recorded ``client_warnings`` are the warnings of the final text at save time."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task, warning_codes
from tests.factories import rewrite_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_checks_wait_for_settled_input_and_record_the_final_warnings(
        page, live_server, annotator_user):
    project = rewrite_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    box = page.locator(".rewrite-text")
    box.press_sequentially("W")
    assert page.locator(".warnings .warning").count() == 0  # not "too short" after one letter
    assert "rewrite_too_short" in warning_codes(page)  # once the input settled

    box.fill("")
    # A typographic apostrophe: "Zappa’s" is Zappa from the conversation, no stray "s".
    box.press_sequentially("What was Zappa\u2019s first album of the Mothe")
    assert warning_codes(page) == ["rewrite_new_words"]
    assert "(mothe)" in page.locator(".warnings .warning").inner_text()
    box.press_sequentially("rs of Invention?")
    assert warning_codes(page) == []
    page.keyboard.press("Enter")
    page.locator(".item-status.ok").wait_for()
    annotation = Annotation.objects.get()
    assert annotation.text == "What was Zappa\u2019s first album of the Mothers of Invention?"
    assert annotation.client_warnings == [] and annotation.server_warnings == []
