"""Sluice page in a real browser: live checks, override recorded, skip, stored annotation."""

import pytest

from annotation.models import Annotation
from tests.browser.conftest import login_browser, open_task, warning_codes
from tests.factories import sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]




def test_sluice_live_checks_override_and_save(page, live_server, annotator_user):
    project = sluice_project(items=2)
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    field = page.locator(".full-question")
    field.type("Did he leave the band?")
    assert warning_codes(page) == ["sluice_wrong_start", "sluice_copies_q1"]
    field.fill("")
    field.type("Why")
    assert warning_codes(page) == ["sluice_too_short"]
    page.keyboard.press("Control+Enter")
    page.get_by_role("button", name="Save anyway").wait_for()
    assert Annotation.objects.count() == 0
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    annotation = Annotation.objects.get()
    assert annotation.payload == {"full_question": "Why", "skipped": False}
    assert [w["code"] for w in annotation.overridden_warnings] == ["sluice_too_short"]
    # Shown for the final text at save time, not for what was typed on the way.
    assert [w["code"] for w in annotation.client_warnings] == ["sluice_too_short"]
    assert [w["code"] for w in annotation.server_warnings] == ["sluice_too_short"]
    assert annotation.text == "Why" and annotation.source == "local"

    page.click(".next-item")
    page.wait_for_selector("#task-page[data-ready=true]")
    page.locator(".full-question").type("Why did he leave the band in 1975?")
    assert warning_codes(page) == []
    page.keyboard.press("Alt+s")
    page.locator(".item-status.ok").wait_for()
    skipped = Annotation.objects.order_by("id").last()
    assert skipped.skipped is True and skipped.payload["full_question"] == ""
    page.click(".next-item")
    page.locator("#no-more-work").wait_for()
