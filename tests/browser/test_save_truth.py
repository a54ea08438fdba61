"""The page says "Saved" only when the server confirmed that this item's answer is stored: an
ended session keeps the draft and offers to log in again (then saves with the same token), and
an item saved from another tab shows the stored answer, not the one on this page."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task
from tests.factories import sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def draft_token(page, project) -> str | None:
    return page.evaluate(
        """([project, itemId]) => {
            const key = Object.keys(localStorage).find(
                (k) => k.startsWith('unpack:draft:') && k.endsWith(`:${project}:${itemId}`));
            return key ? JSON.parse(localStorage.getItem(key)).token : null;
        }""", [project.slug, project.items.get().pk])


def test_ended_session_is_not_saved_and_login_again_saves_the_same_answer(
        page, live_server, annotator_user):
    project = sluice_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    page.locator(".full-question").fill("Why did he leave the band?")
    token = draft_token(page, project)
    assert token
    # The session ends (expired, or logged out in another tab): the cookie names no session.
    page.context.add_cookies([{"name": "sessionid", "value": "ended", "url": live_server.url}])
    page.click(".save-item")
    status = page.locator(".item-status.login-needed")
    status.wait_for()
    assert "Not saved" in status.inner_text() and "Saved." not in status.inner_text()
    assert Annotation.objects.count() == 0
    assert draft_token(page, project) == token  # the draft is kept

    # Log in again in a new tab, through the link the page offers (this rotates the CSRF token).
    with page.context.expect_page() as popup_info:
        page.click(".log-in-again")
    login = popup_info.value
    login.fill("input[name=username]", "annotator")
    login.fill("input[name=password]", "annotator-pass")
    login.click("form.login button[type=submit]")
    login.wait_for_load_state()
    login.close()

    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    annotation = Annotation.objects.get()
    assert annotation.client_token == token
    assert annotation.payload == {"full_question": "Why did he leave the band?", "skipped": False}
    assert draft_token(page, project) is None


def test_item_saved_in_another_tab_shows_the_stored_answer(page, live_server, annotator_user):
    project = sluice_project()
    login_browser(page, live_server, annotator_user)
    url = f"{live_server.url}/annotate/{project.slug}/"
    open_task(page, url)
    other_tab = page.context.new_page()
    other_tab.goto(url)
    other_tab.wait_for_selector("#task-page[data-ready=true]")
    # Each tab has its own answer (the draft is shared, so tab B starts a fresh one).
    other_tab.evaluate("localStorage.clear()")
    page.locator(".full-question").fill("Why did he leave the band?")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()

    other_tab.locator(".full-question").fill("Why did Frank Zappa leave the Mothers?")
    other_tab.click(".save-item")
    status = other_tab.locator(".item-status.warn")
    status.wait_for()
    text = status.inner_text()
    assert "already saved" in text and "Why did he leave the band?" in text
    assert "Saved (already stored)" not in text
    assert Annotation.objects.get().text == "Why did he leave the band?"
    other_tab.close()
