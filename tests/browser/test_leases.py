"""Leases in a real browser: an item the page holds as the next one, completed by others
meanwhile (its lease expired), is marked as no longer usable as soon as it is swapped in,
before any work goes into it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Annotation, ItemLease, Worker
from tests.browser.conftest import login_browser, open_task
from tests.factories import local_answer, plausibility_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_page_says_when_the_next_item_can_no_longer_be_used(page, live_server,
                                                                  annotator_user):
    project = plausibility_project(items=2, redundancy={"train": 1})
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    page.locator("body").press("4")
    page.click(".save-item")
    page.locator(".item-status.ok").wait_for()
    [mine] = Annotation.objects.all()
    held = project.items.exclude(pk=mine.item_id).get()
    assert ItemLease.objects.filter(item=held, worker__user=annotator_user).exists()
    # The annotator pauses; their lease on the item the page holds runs out and someone else
    # completes it.
    ItemLease.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    local_answer(project, held, Worker.objects.create(provider="local", external_id="quick"))
    page.click(".next-item")
    page.wait_for_selector("#task-page[data-ready=true]")
    status = page.locator(".item-status.warn")
    status.wait_for()
    assert "can no longer be used" in status.inner_text()
    assert page.locator(".save-item").is_hidden()
    assert Annotation.objects.count() == 2
