"""The `N` shortcut goes to the next item and types nothing into it (issue 22, point 2): after a
save, `N` swaps in the next item and focuses its first box, which must stay empty; the answers
stored never begin with a stray "n"."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task
from tests.factories import rewrite_project, sluice_project, split_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# kind: (project builder, the first box's selector, answers typed item after item)
KINDS = {
    "rewrite": (rewrite_project, ".rewrite-text",
                ["What was the first album of the Mothers of Invention?",
                 "When did the Mothers of Invention disband?"]),
    "sluice": (lambda: sluice_project(items=2), ".full-question",
               ["Why did he leave the band?", "Why did he leave the band in 1975?"]),
    "split": (lambda: split_project(items=2), ".simple-sentence",
              ["Alan Bean was born in Wheeler, Texas.", "Alan Bean was a test pilot."]),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_n_moves_on_without_typing_n(page, live_server, annotator_user, kind):
    build, box, answers = KINDS[kind]
    project = build()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    for number, answer in enumerate(answers):
        first = page.locator(box).first
        page.wait_for_function("(s) => document.activeElement?.matches(s)", arg=box)
        assert first.input_value() == "", (kind, number)
        if kind == "split":
            page.keyboard.type(answers[0])
            page.keyboard.press("Tab")  # to "Remove" (disabled: skipped), then the second row
            page.locator(box).nth(1).focus()
            page.keyboard.type(answers[1])
        else:
            page.keyboard.type(answer)
        page.keyboard.press("Control+Enter")
        status = page.locator(".item-status")
        page.wait_for_function("() => /Saved|Please look/.test("
                               "document.querySelector('.item-status').textContent)")
        if "Please look" in status.inner_text():
            page.keyboard.press("Control+Enter")  # Save anyway
        page.locator(".item-status.ok").wait_for()
        saved_id = page.locator(".task-item").first.get_attribute("data-item-id")
        if number + 1 < len(answers):
            page.keyboard.press("n")
            page.wait_for_function(
                "(id) => document.querySelector('.task-item')?.dataset.itemId !== id",
                arg=saved_id)
    texts = list(Annotation.objects.values_list("text", flat=True))
    assert len(texts) == len(answers)
    assert not any(text.startswith("n") for text in texts), texts
