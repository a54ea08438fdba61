"""Small screens and touch: at 390×844 no task page scrolls sideways, keyboard hints are hidden
on a touch screen, and text for the decontext editor can be taken from the page by a touch
selection (which fires no mouseup)."""

import pytest

from tests.browser.conftest import WIDTH, login_browser, open_task
from tests.factories import (
    decontext_project,
    plausibility_project,
    publish_hit,
    rewrite_project,
    sluice_project,
    split_project,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BUILDERS = {"decontext": decontext_project, "plausibility": plausibility_project,
            "rewrite": rewrite_project, "sluice": sluice_project, "split": split_project}




def page_width(page) -> int:
    """The page's full width; a phone zooms out (widens its layout viewport) to show a page
    wider than the screen, so the screen's width is the measure, not innerWidth."""
    return page.evaluate("() => document.documentElement.scrollWidth")


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_no_task_page_scrolls_sideways_at_390px(phone, live_server, annotator_user, kind):
    project = BUILDERS[kind]()
    login_browser(phone, live_server, annotator_user)
    open_task(phone, f"{live_server.url}/annotate/{project.slug}/")
    if kind == "decontext":
        phone.get_by_label("FEASIBLE", exact=False).first.check()
    assert page_width(phone) <= WIDTH, kind
    # Keyboard hints mean nothing on a touch screen.
    assert phone.locator(".save-item kbd").is_hidden()


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_no_multi_item_task_page_scrolls_sideways_at_390px(phone, live_server, kind):
    project = BUILDERS[kind](**({} if kind == "rewrite" else {"items": 2}))
    publish_hit(project)
    open_task(phone, f"{live_server.url}/mturk/task/{project.slug}/?assignmentId=A390"
                     f"&hitId=HIT123&workerId=W390&turkSubmitTo=https://www.mturk.com")
    assert phone.locator(".task-item").count() >= 2
    assert page_width(phone) <= WIDTH, kind


def test_touch_selection_on_the_page_is_taken_for_the_editor(phone, live_server, annotator_user):
    project = decontext_project()
    login_browser(phone, live_server, annotator_user)
    open_task(phone, f"{live_server.url}/annotate/{project.slug}/")
    phone.get_by_label("FEASIBLE", exact=False).first.check()
    # What a long press and the selection handles do: a selection, and no mouseup.
    phone.evaluate("""() => {
        const text = document.querySelector('[data-paragraph="0"] .seg').firstChild;
        const range = document.createRange();
        range.setStart(text, 0);
        range.setEnd(text, 4);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
    }""")
    phone.wait_for_function("() => document.querySelector('.op-text').value === 'Zinc'")
    phone.locator(".sentence-tokens .tok[data-index='0']").tap()
    phone.locator(".op-buttons .op-swap").tap()
    assert phone.locator(".result-sentence").inner_text() == "Zinc is brittle at room temperature."
