"""What a text answer's page records about how it was written (issue 25, point 4), in a real
browser: a paste is counted (and a paste of the page's own text told apart), typing is
counted and timed, and the words typed or pasted go nowhere but into the answer itself."""

import json

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task
from tests.factories import plausibility_project, sluice_project, split_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TYPED = "Who went to the zebraquokka"
PASTED = " fair with the two otterlynx?"


def save(page) -> None:
    """Save the item, over the live checks' warnings if any (a second press saves anyway)."""
    page.click(".save-item")
    page.wait_for_function("() => document.querySelector('.item-status')?.textContent.trim()")
    if page.locator(".item-status.warn").count():
        page.click(".save-item")
    page.locator(".item-status.ok").wait_for()


def test_a_paste_is_recorded_and_typed_text_is_sent_only_as_the_answer(page, live_server,
                                                                       annotator_user):
    project = sluice_project()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                   origin=live_server.url)
    sent = []
    page.on("request", lambda request: sent.append((request.url, request.post_data or "")))
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    field = page.locator(".full-question")
    field.click()
    page.wait_for_timeout(300)
    page.keyboard.type(TYPED, delay=40)
    # A paste from elsewhere (another program put it on the clipboard), by the keyboard.
    page.evaluate("(text) => navigator.clipboard.writeText(text)", PASTED)
    page.keyboard.press("Control+V")
    assert field.input_value() == TYPED + PASTED
    # The page's own words copied and pasted back: a paste, but not from outside the page.
    page.keyboard.press("Shift+Home")
    page.keyboard.press("Control+C")
    page.keyboard.press("End")
    page.keyboard.press("Control+V")
    save(page)

    answer = Annotation.objects.get()
    assert answer.text == TYPED + PASTED + TYPED + PASTED
    effort = answer.effort
    assert effort["pastes"] == 2
    assert effort["pasted_chars"] == len(PASTED) + len(TYPED + PASTED)
    assert effort["pasted_from_page_chars"] == len(TYPED + PASTED)
    assert effort["typed_chars"] == len(TYPED)
    # each keystroke after the first counts its interval (40 ms asked; a busy host is slower)
    assert 30 * (len(TYPED) - 1) <= effort["typing_ms"] <= 2000 * (len(TYPED) - 1)
    assert effort["focus_losses"] == 0
    assert 250 <= effort["first_input_ms"] <= 60_000

    submits = [body for url, body in sent if url.endswith(f"/annotate/{project.slug}/submit/")]
    assert len(submits) == 1
    body = json.loads(submits[0])
    assert body["payload"]["full_question"] == answer.text
    assert body["effort"] == effort
    without_answer = json.dumps({key: value for key, value in body.items() if key != "payload"})
    others = [f"{url} {data}" for url, data in sent if data != submits[0]] + [without_answer]
    for words in ("zebraquokka", "otterlynx"):
        assert not [request for request in others if words in request], words


def test_leaving_the_page_counts_a_focus_loss_against_the_item_worked_on(page, live_server,
                                                                         annotator_user):
    project = sluice_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    page.locator(".full-question").click()
    page.keyboard.type("Who went?")
    # another tab: the window loses the focus and the page is hidden -- one loss, not two
    page.evaluate("""() => {
      window.dispatchEvent(new Event("blur"));
      Object.defineProperty(document, "visibilityState", {value: "hidden", configurable: true});
      document.dispatchEvent(new Event("visibilitychange"));
      Object.defineProperty(document, "visibilityState", {value: "visible", configurable: true});
      document.dispatchEvent(new Event("visibilitychange"));
      window.dispatchEvent(new Event("focus"));
    }""")
    save(page)
    assert Annotation.objects.get().effort["focus_losses"] == 1


def saved_body(page, sent, project) -> dict:
    [body] = [json.loads(data) for url, data in sent
              if url.endswith(f"/annotate/{project.slug}/submit/")]
    return body


def test_split_pages_send_a_summary_and_rating_pages_none(page, live_server, annotator_user):
    split, ratings = split_project(), plausibility_project()
    sent = []
    page.on("request", lambda request: sent.append((request.url, request.post_data or "")))
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{split.slug}/")
    rows = page.locator(".simple-sentence")
    rows.nth(0).click()
    page.keyboard.type("He was born in 1892.")
    rows.nth(1).click()
    page.keyboard.type("He died in 1961.")
    save(page)
    effort = saved_body(page, sent, split)["effort"]
    assert effort["typed_chars"] == len("He was born in 1892.He died in 1961.")
    assert effort["pastes"] == 0
    assert Annotation.objects.get(project=split).effort == effort

    open_task(page, f"{live_server.url}/annotate/{ratings.slug}/")
    page.locator(".rating-stop[data-value='4']").click()
    save(page)
    assert "effort" not in saved_body(page, sent, ratings)
    assert Annotation.objects.get(project=ratings).effort is None
