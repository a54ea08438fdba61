"""Live checks on the pages, for words as annotators write them (issue 22, points 5 and 6):
"Émile Zola was a writer." starts with a capital; "didn't" is not a word missing from the
conversation; "IT" in "the IT department" is no pronoun. The page and the server agree."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task, warning_codes
from tests.factories import rewrite_project, split_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_accented_capitals_start_a_simple_sentence(page, live_server, annotator_user):
    project = split_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    rows = page.locator(".simple-sentence")
    rows.nth(0).fill("Émile Zola was a writer.")
    rows.nth(1).fill("Ångström is a unit.")
    assert "split_not_a_sentence" not in warning_codes(page)
    rows.nth(0).fill("émile Zola was a writer.")
    assert "split_not_a_sentence" in warning_codes(page)
    rows.nth(0).fill("Émile Zola was a writer.")
    assert "split_not_a_sentence" not in warning_codes(page)
    page.click(".save-item")
    page.get_by_role("button", name="Save anyway").wait_for()  # low coverage, rightly
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    stored = Annotation.objects.get()
    assert "split_not_a_sentence" not in [w["code"] for w in stored.server_warnings]
    assert [w["code"] for w in stored.server_warnings] == [
        w["code"] for w in stored.client_warnings]


def test_contractions_and_acronyms_on_the_canard_page(page, live_server, annotator_user):
    project = rewrite_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    box = page.locator(".rewrite-text")
    box.fill("What was the first album of the IT department of the Mothers of Invention?")
    assert warning_codes(page) == ["rewrite_new_words"]  # "department"; "IT" is no pronoun
    assert "(department)" in page.locator(".warning").inner_text()
    box.fill("Didn't Frank Zappa's band the Mothers of Invention have a first album?")
    assert warning_codes(page) == []
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    assert page.locator(".item-status").inner_text() == "Saved."
    stored = Annotation.objects.get()
    assert stored.server_warnings == [] and stored.client_warnings == []
