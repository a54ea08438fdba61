"""Going back in a real browser (issue 12, points 4 and 2): "Previous" and "Your recent
answers" reopen an answer filled in; Save stores a new version (the old one kept, superseded);
a reviewed answer is read-only; a second tab told another answer is stored can replace it."""

import pytest

from annotation.models import Annotation
from annotation.services import decisions
from tests.browser.conftest import login_browser, open_task, screenshot
from tests.frontend.builders import decontext_project, sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_previous_reopens_the_answer_and_save_stores_a_new_version(
        page, live_server, annotator_user, staff_user):
    project = sluice_project(items=2)
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    first_item = int(page.locator(".task-item").get_attribute("data-item-id"))
    page.locator(".full-question").fill("Why did he leave the band?")
    page.locator(".full-question").press("Enter")
    page.locator(".item-status.ok").wait_for()
    page.click(".next-item")
    page.wait_for_function(
        f"() => document.querySelector('.task-item').dataset.itemId !== '{first_item}'")

    page.click(".previous-answer")
    page.wait_for_selector("#task-page[data-ready=true]")
    assert "Your answer as stored" in page.locator("#stored-notice").inner_text()
    box = page.locator(".full-question")
    assert box.input_value() == "Why did he leave the band?"
    assert page.evaluate("() => document.activeElement.classList.contains('full-question')")
    box.fill("Why did he leave the Mothers of Invention?")
    screenshot(page, "going_back_edit")
    page.click(".save-item")
    status = page.locator(".item-status.ok")
    status.wait_for()
    assert "saved as a new version" in status.inner_text()
    rows = list(Annotation.objects.filter(item_id=first_item).order_by("id")
                .values_list("state", "text", "supersedes_id"))
    old_id = Annotation.objects.filter(item_id=first_item).order_by("id").first().pk
    assert rows == [("superseded", "Why did he leave the band?", None),
                    ("counted", "Why did he leave the Mothers of Invention?", old_id)]

    page.click(".page-actions >> text=Your recent answers")
    page.wait_for_selector("#recent-answers")
    assert page.locator("#recent-answers tbody tr").count() == 1
    assert "Mothers of Invention" in page.locator(".answer-text").inner_text()
    screenshot(page, "recent_answers")

    # Reviewed: the answer page is read-only and says why.
    latest = Annotation.objects.get(item_id=first_item, state="counted")
    decisions.annotation_approve(annotation_id=latest.pk, actor=staff_user)
    page.click(".open-answer")
    page.wait_for_selector("#task-page[data-ready=true]")
    assert "has been reviewed (approved)" in page.locator("#stored-notice").inner_text()
    assert page.locator(".save-item").is_hidden()
    assert page.locator(".full-question").evaluate("(input) => input.readOnly")
    assert Annotation.objects.filter(item_id=first_item).count() == 2


def test_a_decontext_answer_reopens_with_its_edits(page, live_server, annotator_user):
    project = decontext_project(items=2)
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    page.get_by_label("FEASIBLE", exact=False).first.check()
    page.locator(".sentence-tokens .tok", has_text="at").first.click()
    page.locator(".sentence-tokens .tok", has_text="temperature").first.click()
    page.click(".op-delete")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    page.click(".previous-answer")
    page.wait_for_selector("#task-page[data-ready=true]")
    assert page.locator(".result-sentence").inner_text() == "It is brittle."
    assert page.locator(".op-list li").count() == 1
    # Undo the delete: unchanged FEASIBLE is a new version (UNNECESSARY).
    page.locator("body").press("Control+z")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    assert list(Annotation.objects.order_by("id").values_list("state", "category")) == [
        ("superseded", "DONE"), ("counted", "UNNECESSARY")]


def test_a_second_tab_can_replace_the_stored_answer(page, live_server, annotator_user):
    project = sluice_project()
    login_browser(page, live_server, annotator_user)
    url = f"{live_server.url}/annotate/{project.slug}/"
    open_task(page, url)
    other_tab = page.context.new_page()
    other_tab.goto(url)
    other_tab.wait_for_selector("#task-page[data-ready=true]")
    other_tab.evaluate("localStorage.clear()")
    page.locator(".full-question").fill("Why did he leave the band?")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()

    other_tab.locator(".full-question").fill("Why did Frank Zappa leave the Mothers?")
    other_tab.click(".save-item")
    other_tab.locator(".item-status.warn").wait_for()
    assert "Why did he leave the band?" in other_tab.locator(".item-status").inner_text()
    other_tab.click(".replace-stored")
    status = other_tab.locator(".item-status.ok")
    status.wait_for()
    assert "Replaced" in status.inner_text()
    assert list(Annotation.objects.order_by("id").values_list("state", "text")) == [
        ("superseded", "Why did he leave the band?"),
        ("counted", "Why did Frank Zappa leave the Mothers?")]
    other_tab.close()
