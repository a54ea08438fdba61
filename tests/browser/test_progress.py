"""Progress: "N done · M left for you" on the local task page (counted by the server once,
then by the page's own saves), "k of n saved" on a multi-item task, and what is left per
project on the home page."""

import pytest

from annotation.models import Annotation, Worker
from tests.browser.conftest import login_browser, open_task
from tests.factories import plausibility_project, sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_local_page_and_home_show_what_is_done_and_left(page, live_server, annotator_user):
    project = sluice_project(items=3)
    full = plausibility_project(redundancy={"train": 1})
    other = Worker.objects.create(provider="local", external_id="someone-else")
    Annotation.objects.create(project=full, item=full.items.get(), worker=other,
                              source="local", rating=3)
    login_browser(page, live_server, annotator_user)
    page.goto(f"{live_server.url}/")
    rows = {row.locator("td").first.inner_text(): row.locator(".for-you").inner_text()
            for row in page.locator("tbody tr").all()}
    assert rows == {"Sluice demo": "0 done · 3 left", "CLAIRE demo": "0 done · 0 left"}

    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    progress = page.locator("#progress")
    assert progress.inner_text() == "0 done · 3 left for you"
    page.locator(".full-question").fill("Why did he leave the band in 1975?")
    page.keyboard.press("Control+Enter")
    page.locator(".item-status.ok").wait_for()
    assert progress.inner_text() == "1 done · 2 left for you"
    page.reload()
    page.wait_for_selector("#task-page[data-ready=true]")
    assert progress.inner_text() == "1 done · 2 left for you"
    page.goto(f"{live_server.url}/")
    assert page.locator("tbody tr", has_text="Sluice demo").locator(".for-you").inner_text() \
        == "1 done · 2 left"
