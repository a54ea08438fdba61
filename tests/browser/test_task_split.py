"""Split-and-rephrase page in a real browser: rows, each live check, the coverage meter."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task, screenshot, warning_codes
from tests.factories import split_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_split_rows_checks_and_coverage(page, live_server, annotator_user):
    project = split_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    rows = page.locator(".simple-sentence")
    assert rows.count() == 2
    rows.nth(0).type("alan Bean was born in Wheeler")
    assert warning_codes(page) == ["split_too_few_sentences", "split_not_a_sentence",
                                   "split_low_coverage"]
    assert page.locator(".coverage-text").inner_text() == "57%"
    rows.nth(0).fill("")
    rows.nth(0).type("Alan Bean was born in Wheeler, Texas.")
    rows.nth(1).type("Alan Bean, born in Wheeler, Texas, was a test pilot.")
    assert warning_codes(page) == ["split_copies_input"]
    rows.nth(1).press("Alt+n")
    assert rows.count() == 3
    page.locator(".remove-row").nth(2).click()
    assert rows.count() == 2
    assert page.locator(".remove-row").nth(0).is_disabled()
    rows.nth(1).fill("")
    rows.nth(1).type("Alan Bean was a test pilot.")
    assert warning_codes(page) == []
    assert page.locator(".coverage-text").inner_text() == "100%"
    screenshot(page, "split_rephrase")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    annotation = Annotation.objects.get()
    assert annotation.payload == {"simple_sentences": ["Alan Bean was born in Wheeler, Texas.",
                                                       "Alan Bean was a test pilot."]}
    assert annotation.text == "Alan Bean was born in Wheeler, Texas. Alan Bean was a test pilot."
    assert annotation.server_warnings == []
