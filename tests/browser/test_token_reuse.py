"""A repeated client token with another answer is no retry (issue 22, point 1): two tabs that
restored one draft (so one token) save different answers; the second is told its answer was not
stored and shown the stored one, never "Saved (already stored)." beside text that is not
stored, and the database holds what the page says."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task
from tests.factories import rewrite_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STORED = "What was the first album of the Mothers of Invention?"
OTHER = "What was the debut record of the Mothers of Invention?"  # warns: new words


def draft_token(page) -> str | None:
    return page.evaluate("""() => {
        const key = Object.keys(localStorage).find((k) => k.startsWith('unpack:draft:'));
        return key ? JSON.parse(localStorage.getItem(key)).token : null;
    }""")


def test_two_tabs_sharing_a_draft_token_are_told_the_truth(page, live_server, annotator_user):
    project = rewrite_project()
    login_browser(page, live_server, annotator_user)
    url = f"{live_server.url}/annotate/{project.slug}/"
    open_task(page, url)
    page.locator(".rewrite-text").fill("What was the first")
    token = draft_token(page)
    assert token

    # Tab B restores the same draft, with its token, and saves answer X.
    tab_b = page.context.new_page()
    tab_b.goto(url)
    tab_b.wait_for_selector("#task-page[data-ready=true]")
    assert tab_b.locator(".rewrite-text").input_value() == "What was the first"
    assert draft_token(tab_b) == token
    tab_b.locator(".rewrite-text").fill(STORED)
    tab_b.click(".save-item")
    tab_b.locator(".item-status.ok").wait_for()
    assert Annotation.objects.get().client_token == token

    # Tab A changes its text to Y and presses Enter twice (the second is "Save anyway").
    box = page.locator(".rewrite-text")
    box.fill(OTHER)
    box.press("Enter")
    page.get_by_role("button", name="Save anyway").wait_for()
    box.press("Enter")
    status = page.locator(".item-status")
    page.wait_for_function(
        "() => !/Saving|Please look/.test(document.querySelector('.item-status').textContent)")
    text = status.inner_text()
    assert "Saved (already stored)" not in text and "Saved." not in text
    assert "was not stored" in text and STORED in text
    # The database holds what the page says is stored.
    assert list(Annotation.objects.values_list("text", "state")) == [(STORED, "counted")]

    # Replacing it stores Y as a new version (a token of its own), and says so truthfully.
    page.click(".replace-stored")
    page.locator(".item-status.ok").wait_for()
    assert "Replaced" in page.locator(".item-status").inner_text()
    rows = list(Annotation.objects.order_by("id").values_list("text", "state"))
    assert rows == [(STORED, "superseded"), (OTHER, "counted")]
    tab_b.close()
