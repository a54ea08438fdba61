"""Issue 24 in a real browser (Debian chromium): blocks that hold and unconfirmed crowd work.

* Block a worker from the confirmation page with "reject their pending work": their
  assignments are rejected at the MTurk stand-in, nothing is paid; the review page's bulk
  approval then pays only the other worker; unblock on the worker's page.
* A Prolific session finished on our page but not yet collected: no Approve anywhere, shown
  apart on the held-back page and the worker's page.
"""

from __future__ import annotations

import uuid

import pytest

from annotation.models import Annotation, Assignment, Worker
from tests.browser.conftest import login_browser, screenshot, two_workers_collected
from tests.factories import (
    prolific_study_hit,
    sluice_project,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MESSAGE = "Your ratings were random: the same score for every filler, in under a second each."


def test_block_rejecting_pending_work_then_bulk_approve_pays_only_the_others(
        page, stand_in, live_server, staff_user):
    project, simulator, ids = two_workers_collected(stand_in, "claire-blocks")
    careless = Worker.objects.get(external_id="ACARELESS1")
    login_browser(page, live_server, staff_user)
    # Blocking and approving call the stand-in inline (no broker here): a loaded machine may
    # take longer than the default 8 s for those two submits.
    page.set_default_timeout(30000)

    # From the review page: "Block worker…" opens the confirmation, which asks.
    page.goto(f"{live_server.url}/staff/review/{project.slug}/")
    row = page.locator(".unflagged-assignment", has_text=careless.anonymous_id).first
    row.locator("a:has-text('Block worker')").click()
    assert "In claire-blocks: 2 assignment(s)" in page.locator(
        "[data-testid=pending-counts]").inner_text()
    page.locator("input[name=scope][value=everywhere]").check()
    page.locator("textarea[name=reason]").fill("random ratings")
    page.locator("input[name=pending][value=reject]").check()
    page.locator("textarea[name=message]").fill(MESSAGE)
    screenshot(page, "block_confirmation")
    page.locator("button:has-text('Block worker')").click()
    note = page.locator(".message").inner_text()
    assert "blocked everywhere" in note and "Rejected 2 pending assignment(s)" in note
    assert "blocked everywhere" in page.locator("[data-testid=block-status]").inner_text()
    remote = stand_in.world.assignments
    assert sorted(remote[a].status for a in ids["ACARELESS1"]) == ["Rejected", "Rejected"]

    # The bulk approval on the review page pays the careful worker only.
    page.goto(f"{live_server.url}/staff/review/{project.slug}/")
    page.locator("button:has-text('Approve the 2 submitted assignments')").click()
    assert sorted(remote[a].status for a in ids["ACAREFUL22"]) == ["Approved", "Approved"]
    assert sorted(remote[a].status for a in ids["ACARELESS1"]) == ["Rejected", "Rejected"]
    assert simulator.ledger()["bonuses"] == []

    # Unblock on the worker's page.
    page.goto(f"{live_server.url}/staff/workers/{careless.pk}/")
    page.locator("button:has-text('Unblock everywhere')").click()
    assert f"Worker {careless.anonymous_id} unblocked everywhere." in page.locator(
        ".message").inner_text()
    assert "not blocked" in page.locator("[data-testid=block-status]").inner_text()
    assert simulator.ledger()["blocks"] == {}


def test_an_unconfirmed_prolific_session_shows_no_approve(page, live_server, staff_user):
    project = sluice_project(slug="unconfirmed-study", items=1)
    hit = prolific_study_hit(project, study_id="64d3ab4de4bae1091e5de441")
    worker = Worker.objects.create(provider=Worker.Provider.PROLIFIC,
                                   external_id="5a9d64f5f6dfdd0001eaa73d")
    session = Assignment.objects.create(hit=hit, worker=worker,
                                        provider_assignment_id="6500aa00bb11cc22dd33ee44",
                                        status=Assignment.Status.SUBMITTED)
    Annotation.objects.create(project=project, item=project.items.get(), worker=worker,
                              assignment=session, source=Annotation.Source.PROLIFIC,
                              state=Annotation.State.PROVISIONAL, text="Why?",
                              client_token=uuid.uuid4().hex,
                              payload={"full_question": "Why?", "skipped": False})
    login_browser(page, live_server, staff_user)
    page.goto(f"{live_server.url}/staff/review/{project.slug}/")
    assert page.locator("button:has-text('Approve assignment')").count() == 0
    page.goto(f"{live_server.url}/staff/projects/{project.slug}/held/")
    held = page.locator("[data-testid=held-unconfirmed]").inner_text()
    assert "Prolific session 6500aa00bb11cc22dd33ee44" in held
    assert "cannot be approved, rejected or paid" in held
    assert page.locator("button:has-text('Approve assignment')").count() == 0
    page.goto(f"{live_server.url}/staff/workers/{worker.pk}/")
    assert "6500aa00bb11cc22dd33ee44" in page.locator("[data-testid=unconfirmed-list]").inner_text()
    assert worker.external_id not in page.content()  # the pseudonym only
    screenshot(page, "unconfirmed_session")
