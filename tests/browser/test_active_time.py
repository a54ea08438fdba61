"""What a task page reports as "time on this item" (duration_ms), in a real browser.

A multi-item page saved at once on Submit reports each item's active time -- while that item
was the one being worked on, the page visible -- never "time since the page opened"; the
claims of a page add up to no more than the server saw the page open, so QC raises no
``timing_mismatch`` on honest work (the field report: 109 of 150 honest answers flagged)."""

import time

import pytest

from annotation.models import Annotation, Flag
from annotation.services.qc import project_qc_run
from tests.browser.conftest import open_task
from tests.browser.test_mturk_task import task_url, turk  # noqa: F401 (fixture)
from tests.factories import plausibility_project, publish_hit, rewrite_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HIDE = """() => {
  Object.defineProperty(document, "visibilityState", {value: "hidden", configurable: true});
  document.dispatchEvent(new Event("visibilitychange"));
}"""
SHOW = """() => {
  Object.defineProperty(document, "visibilityState", {value: "visible", configurable: true});
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def test_a_multi_item_page_reports_each_items_active_time(page, live_server, turk):  # noqa: F811
    origin, _ = turk
    page.set_default_navigation_timeout(30_000)  # the first page of a session, on a busy host
    project = plausibility_project(items=3)
    publish_hit(project)
    # The test's own clock brackets each step: the page's claims must fit inside (a loaded
    # machine stretches the steps, never the claims beyond them).
    opened = time.monotonic()
    open_task(page, task_url(live_server, project, assignmentId="ATIME1", hitId="HIT123",
                             workerId="AWTIME1", turkSubmitTo=origin))
    items = page.locator(".task-item")
    page.wait_for_timeout(1200)  # item 1 is shown ready: its clock runs
    items.nth(0).locator(".rating-stop[data-value='4']").click()
    second = time.monotonic()
    items.nth(1).locator(".rating-stop[data-value='2']").click()
    page.wait_for_timeout(600)
    page.evaluate(HIDE)  # another tab: no item's clock runs
    page.wait_for_timeout(1500)
    page.evaluate(SHOW)
    third = time.monotonic()
    items.nth(2).locator(".rating-stop[data-value='5']").click()
    page.click(".finish-hit")
    page.locator("#thanks").wait_for()
    done = time.monotonic()

    stored = list(Annotation.objects.order_by("item_id"))
    claims = [answer.duration_ms for answer in stored]
    assert 1150 <= claims[0] <= (second - opened) * 1000 + 100, claims
    # the hidden 1.5 s are nobody's
    assert 550 <= claims[1] <= (third - second) * 1000 - 1400, claims
    assert claims[2] <= (done - third) * 1000 + 100, claims
    # not "since the page opened"
    assert claims[2] < (done - opened) * 1000 - 3000, claims
    served = stored[0].served_at
    assert {answer.served_at for answer in stored} == {served}
    page_seconds = (max(answer.submitted_at for answer in stored) - served).total_seconds()
    assert sum(claims) / 1000 <= page_seconds
    project_qc_run(project=project)
    assert not Flag.objects.filter(reason__in=["timing_mismatch", "too_fast"]).exists()


def test_canard_reveal_times_each_question_from_when_it_is_worked_on(page, live_server,
                                                                     turk):  # noqa: F811
    origin, _ = turk
    project = rewrite_project()
    publish_hit(project)
    open_task(page, task_url(live_server, project, assignmentId="ATIME2", hitId="HIT123",
                             workerId="AWTIME2", turkSubmitTo=origin))
    items = page.locator(".task-item")
    rewrites = ["What was the first album of the Mothers of Invention?",
                "When did the Mothers of Invention disband?",
                "Did Frank Zappa form any band other than the Mothers of Invention?"]
    for index, rewrite in enumerate(rewrites):
        page.wait_for_timeout(400 * (index + 1))
        items.nth(index).locator(".rewrite-text").fill(rewrite)
        items.nth(index).locator(".save-item").click()
        items.nth(index).locator(".revealed-answer").wait_for()
    stored = list(Annotation.objects.order_by("item__position"))
    previous = stored[0].served_at
    for index, answer in enumerate(stored):
        # Like with like: each question's claim fits in the time since the one before was
        # saved, and holds at least the time it was looked at.
        since_previous = (answer.submitted_at - previous).total_seconds() * 1000
        assert 400 * (index + 1) - 50 <= answer.duration_ms <= since_previous + 50
        previous = answer.submitted_at
    project_qc_run(project=project)
    assert not Flag.objects.filter(reason="timing_mismatch").exists()
