"""Pages around the tasks on a phone (issue 22, point 8): at 390×844 the home page's table, the
answers list, the staff header and the task pages fit the screen (no sideways scrolling); the
end-of-queue page links to the annotator's answers; the keyboard help lists `N`, and CANARD's
page says that Enter saves."""

import pytest

from tests.browser.conftest import WIDTH, login_browser
from tests.browser.test_small_screens import page_width
from tests.factories import (
    decontext_project,
    local_submit,
    plausibility_project,
    rewrite_project,
    sluice_project,
    split_project,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_ANSWER = ("Why did Frank Zappa's band, the Mothers of Invention, disband in 1969 after "
               "Uncle-Meat-and-Burnt-Weeny-Sandwich-era-recordings-of-the-Mothers?")


def projects():
    built = [decontext_project(), plausibility_project(), rewrite_project(),
             sluice_project(items=2), split_project()]
    for project in built:
        project.name = f"{project.name} with a rather long project name for a phone"
        project.save()
    return built


def test_home_answers_and_done_pages_fit_a_phone(phone, live_server, annotator_user, client):
    *_, sluice, _ = projects()
    client.force_login(annotator_user)
    for item in sluice.items.order_by("id"):
        assert local_submit(client, sluice, item.pk, {"full_question": LONG_ANSWER,
                                                      "skipped": False}).status_code == 200
    login_browser(phone, live_server, annotator_user)
    phone.goto(f"{live_server.url}/")
    assert phone.locator("table.grid tbody tr").count() == 5
    assert page_width(phone) <= WIDTH, "home"
    phone.goto(f"{live_server.url}/annotate/{sluice.slug}/answers/")
    assert phone.locator("#recent-answers tbody tr").count() == 2
    assert page_width(phone) <= WIDTH, "answers"

    # Nothing left in the project: the page says so, and links back to the answers.
    phone.goto(f"{live_server.url}/annotate/{sluice.slug}/")
    phone.locator("#no-more-work").wait_for()
    assert page_width(phone) <= WIDTH, "done"
    phone.click("a.previous-answer")
    phone.wait_for_selector("#task-page[data-ready=true]")
    assert phone.locator(".full-question").input_value() == LONG_ANSWER
    phone.go_back()
    phone.click("a.recent-answers")
    phone.wait_for_selector("#recent-answers")


def test_the_staff_header_fits_a_phone(phone, live_server, staff_user):
    projects()
    login_browser(phone, live_server, staff_user)
    phone.goto(f"{live_server.url}/")
    assert phone.locator(".topbar a", has_text="Batches").is_visible()
    assert page_width(phone) <= WIDTH, "staff home"
    phone.goto(f"{live_server.url}/staff/review/")
    assert page_width(phone) <= WIDTH, "staff review"


def test_keyboard_help_lists_n_and_canard_says_enter_saves(page, live_server, annotator_user):
    project = rewrite_project()
    login_browser(page, live_server, annotator_user)
    page.goto(f"{live_server.url}/annotate/{project.slug}/")
    page.wait_for_selector("#task-page[data-ready=true]")
    keys = page.locator("#shortcut-list li, dialog#instructions ul.keys li").all_inner_texts()
    assert any(k.startswith("N") and "next item" in k for k in keys), keys
    assert any(k.startswith("Enter") and "saves" in k for k in keys), keys
    page.click("#close-instructions")
    # The page itself says it, beside Save and under the box.
    assert page.locator(".save-item kbd").inner_text() == "Enter"
