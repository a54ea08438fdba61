""""Skip / report a problem with this item" in a real browser (issue 12, point 5), on every
kind: the reason and words are stored instead of an answer and the annotator moves on; on a
multi-item MTurk page the report goes with Submit. Sluice keeps its own Skip. And (point 10) a
context the items of a MTurk page share is shown once."""

import pytest

from annotation.models import Annotation, Document, Flag, Item, TargetSentence
from tests.browser.conftest import login_browser, open_task, screenshot
from tests.browser.test_mturk_task import task_url, turk  # noqa: F401 (fixture)
from tests.frontend.builders import (
    BUILDERS,
    ZINC_PARAGRAPHS,
    ZINC_TARGET,
    decontext_project,
    publish_hit,
    sluice_project,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def report(section, reason_label: str, note: str = "", shot: str = "") -> None:
    section.locator(".report-problem summary").click()
    section.get_by_label(reason_label).check()
    if note:
        section.locator(".problem-note").fill(note)
    if shot:
        screenshot(section.page, shot)
    section.locator(".report-item").click()


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_report_and_skip_on_every_kind_moves_on(kind, page, live_server, annotator_user):
    builder = BUILDERS[kind]
    project = builder(f"{kind.replace('_', '-')}-r", **(
        {"dialogues": 1} if kind == "rewrite" else {"items": 2}))
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    section = page.locator(".task-item")
    first_item = section.get_attribute("data-item-id")
    summary = section.locator(".report-problem summary").inner_text()
    if kind == "sluice":
        # Sluice keeps its own Skip (an answer); the report is a separate control.
        assert summary == "Report a problem with this item"
        assert section.locator(".skip-item").is_visible()
    else:
        assert summary == "Skip / report a problem with this item"
    report(section, "The source text is broken", "Half of the sentence <b>is missing</b>",
           shot="report_problem" if kind == "split_rephrase" else "")
    page.wait_for_function(
        f"() => document.querySelector('.task-item').dataset.itemId !== '{first_item}'")
    assert "report on the last item was sent" in page.locator(".page-notice").inner_text()
    stored = Annotation.objects.get()
    assert (stored.item_id, stored.state, stored.problem, stored.problem_note) == (
        int(first_item), "reported", "broken_source", "Half of the sentence <b>is missing</b>")
    assert Flag.objects.get().raised_by == "annotator"


def test_a_report_needs_a_reason(page, live_server, annotator_user):
    project = sluice_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    page.locator(".report-problem summary").click()
    page.click(".report-item")
    assert "Choose what is wrong" in page.locator(".item-status.error").inner_text()
    assert not Annotation.objects.exists()


def test_a_report_on_a_multi_item_mturk_page_goes_with_submit(page, live_server, turk):  # noqa: F811
    origin, posts = turk
    project = sluice_project(items=2)
    publish_hit(project)
    open_task(page, task_url(live_server, project, assignmentId="ASSIGNR", hitId="HIT123",
                             workerId="AWORKERR", turkSubmitTo=origin))
    items = page.locator(".task-item")
    report(items.nth(0), "I can’t understand it")
    assert "sent with Submit" in items.nth(0).locator(".item-status").inner_text()
    assert page.evaluate("() => document.activeElement.classList.contains('full-question')")
    items.nth(1).locator(".full-question").type("Why did he leave the band?")
    assert not Annotation.objects.exists()
    page.click(".finish-hit")
    page.locator("#thanks").wait_for()
    stored = list(Annotation.objects.order_by("item_id").values_list("problem", "text"))
    assert stored == [("unclear", ""), ("", "Why did he leave the band?")]
    assert posts[0]["form"]["summary"] == ["unpack:sluice-demo:2 items saved"]


def test_a_shared_page_is_shown_once_and_the_item_in_use_takes_the_selection(
        page, live_server, turk):  # noqa: F811
    origin, _ = turk
    project = decontext_project(items=1)
    document = Document.objects.get(project=project)
    text = ZINC_PARAGRAPHS[1]["text"]
    before = text[:text.index(ZINC_TARGET)].rstrip()
    second = TargetSentence.objects.create(document=document, paragraph_index=1, start_byte=0,
                                           end_byte=len(before.encode()), text=before)
    Item.objects.create(project=project, external_id="d-second",
                        group_key=document.external_id, target_sentence=second)
    publish_hit(project)
    open_task(page, task_url(live_server, project, assignmentId="ASSIGNS", hitId="HIT123",
                             workerId="AWORKERS", turkSubmitTo=origin))
    items = page.locator(".task-item")
    assert page.locator(".page-text").count() == 1
    assert "shown once, with item 1 above" in items.nth(1).locator(".shared-context").inner_text()
    items.nth(0).get_by_label("FEASIBLE", exact=False).first.check()
    items.nth(1).get_by_label("FEASIBLE", exact=False).first.check()
    # Text selected on the page shown once goes to the item in use (item 2), not to item 1.
    page.locator('[data-paragraph="0"] .seg').dblclick(position={"x": 8, "y": 10})
    assert items.nth(1).locator(".op-text").input_value() == "Zinc"
    assert items.nth(0).locator(".op-text").input_value() == ""
    screenshot(page, "mturk_shared_context")
