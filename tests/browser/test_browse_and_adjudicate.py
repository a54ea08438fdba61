"""Issue 24 in a real browser (Debian chromium): the data browser, adjudication, and a block
that leaves the worker's pending work for review, after which a bulk approval pays them
nothing (their assignments stay submitted at the MTurk stand-in)."""

from __future__ import annotations

import pytest

from annotation.models import ItemReference, StatusEvent, Worker
from tests.browser.conftest import login_browser, screenshot, two_workers_collected
from tests.factories import (
    SCRIPT,
    annotate,
    canard_sample,
    workers,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_block_leaving_pending_work_then_bulk_approve_pays_the_blocked_worker_nothing(
        page, stand_in, live_server, staff_user):
    project, simulator, ids = two_workers_collected(stand_in, "claire-leave")
    careless = Worker.objects.get(external_id="ACARELESS1")
    login_browser(page, live_server, staff_user)
    page.set_default_timeout(30000)  # the submits call the stand-in inline

    page.goto(f"{live_server.url}/staff/review/{project.slug}/")
    row = page.locator(".unflagged-assignment", has_text=careless.anonymous_id).first
    row.locator("a:has-text('Block worker')").click()
    page.locator("input[name=scope][value=project]").check()
    page.locator("textarea[name=reason]").fill("random ratings")
    page.locator("input[name=pending][value=leave]").check()
    page.locator("button:has-text('Block worker')").click()
    remote = stand_in.world.assignments
    assert sorted(remote[a].status for a in ids["ACARELESS1"]) == ["Submitted", "Submitted"]

    page.goto(f"{live_server.url}/staff/review/{project.slug}/")
    page.locator("button:has-text('Approve the 2 submitted assignments')").click()
    assert sorted(remote[a].status for a in ids["ACAREFUL22"]) == ["Approved", "Approved"]
    # Left for review, never approved in bulk: not paid.
    assert sorted(remote[a].status for a in ids["ACARELESS1"]) == ["Submitted", "Submitted"]
    assert simulator.ledger()["bonuses"] == []


def test_browse_filter_and_adjudicate_an_item(page, live_server, staff_user):
    project, items = canard_sample(slug="canard-browse")
    crowd = workers(3)
    answers = [annotate(items[1], worker, source="mturk", text=text) for worker, text in zip(
        crowd, ["When did the Mothers disband?", f"When did they split? {SCRIPT}",
                "When did Zappa's group end?"], strict=True)]
    annotate(items[0], crowd[0], source="mturk", text="What group did Zappa lead?")
    login_browser(page, live_server, staff_user)

    page.goto(f"{live_server.url}/staff/projects/{project.slug}/answers/")
    assert page.locator("[data-testid=browse-rows] tbody tr").count() == 4
    page.locator("input[name=q]").fill("when did")
    page.locator("button:has-text('Show')").click()
    rows = page.locator("[data-testid=browse-rows] tbody tr")
    assert rows.count() == 3
    assert "This page shows 3 answers, newest first" in page.locator(
        "[data-testid=browse-summary]").inner_text()
    assert page.locator("[data-testid=answer-diff] ins").count() >= 3
    assert page.evaluate("window.__xss") is None and not page.js_errors
    screenshot(page, "data_browser")

    rows.first.locator("a:has-text('compare answers')").click()
    assert page.locator(".answer-card").count() == 3
    page.locator(f"input[name=answer][value='{answers[2].pk}']").check()
    page.locator("input[name=note]").fill("the clearest")
    page.locator("button:has-text('Save the reference')").click()
    assert "Reference saved" in page.locator(".review-messages").inner_text()
    assert page.locator("[data-testid=reference-value]").inner_text() == (
        "When did Zappa's group end?")
    screenshot(page, "adjudication")
    reference = ItemReference.objects.get(item=items[1])
    assert reference.chosen_id == answers[2].pk and reference.decided_by == staff_user
    assert StatusEvent.objects.filter(kind="reference_set", actor=staff_user).count() == 1


def test_write_the_reference_when_no_answer_will_do(page, live_server, staff_user):
    """Adjudication's other path: none of the answers, the reviewer writes the reference (kept
    as written, escaped on the page, exported as the adjudicated reference)."""
    project, items = canard_sample(slug="canard-write")
    crowd = workers(2)
    for worker, text in zip(crowd, ["When did they split?", "Why did it end?"], strict=True):
        annotate(items[1], worker, source="mturk", text=text)
    login_browser(page, live_server, staff_user)
    page.goto(f"{live_server.url}/staff/projects/{project.slug}/items/{items[1].pk}/adjudicate/")
    assert page.locator(".answer-card").count() == 2
    page.locator("input[name=answer][value='']").check()
    written = f"When did the Mothers of Invention disband? {SCRIPT}"
    page.locator("textarea[name=text]").fill(written)
    page.locator("button:has-text('Save the reference')").click()
    assert "Reference saved" in page.locator(".review-messages").inner_text()
    assert page.locator("[data-testid=reference-value]").inner_text() == written
    assert page.evaluate("window.__xss") is None and not page.js_errors
    reference = ItemReference.objects.get(item=items[1])
    assert reference.chosen_id is None and reference.text == written
    assert reference.decided_by == staff_user


def test_a_blocked_local_annotator_reads_a_plain_message_in_the_browser(
        page, live_server, django_user_model):
    from annotation.services import decisions
    from tests.factories import local_worker, sluice_project

    project = sluice_project(slug="blocked-browser", items=2)
    user = django_user_model.objects.create_user(username="anna", password="x")
    worker = local_worker("anna", user=user)
    decisions.worker_block(worker_id=worker.pk, reason="spam", scope="project",
                           project_id=project.pk)
    login_browser(page, live_server, user)
    response = page.goto(f"{live_server.url}/annotate/{project.slug}/")
    assert response.status == 403
    text = page.inner_text("body")
    assert "Your account can no longer annotate this project." in text
    assert "HIT" not in text and "Prolific" not in text and "spam" not in text
    assert not page.js_errors


def test_the_queue_groups_by_hit_worker_and_answer_and_dismisses_from_any(
        page, live_server, staff_user):
    """The review queue's three groupings in the browser: switched by their links, an answer
    with two flags is one row listing both, and a flag dismissed from the by-answer view is gone
    from every view."""
    from annotation.models import Flag
    from tests.factories import flagged_rewrites

    project, rows = flagged_rewrites(2)
    _, annotation, flag, _ = rows[0]
    Flag.objects.create(project=project, annotation=annotation, worker=annotation.worker,
                        reason="copy_of_input", score=0.5,
                        fingerprint=f"copy_of_input:annotation:{annotation.pk}")
    login_browser(page, live_server, staff_user)
    page.goto(f"{live_server.url}/staff/review/{project.slug}/")
    assert page.locator("p:has-text('Group by') strong").inner_text() == "HIT"
    page.locator("p:has-text('Group by') a:has-text('worker')").click()
    assert page.locator("p:has-text('Group by') strong").inner_text() == "worker"
    page.locator("p:has-text('Group by') a:has-text('answer')").click()
    assert page.locator("p:has-text('Group by') strong").inner_text() == "answer"
    group = page.locator(f"[data-group='{annotation.pk}']")
    assert "2 open flags on 1 answer." in group.inner_text()
    assert "rewrite_pronoun_left" in group.inner_text() and "copy_of_input" in group.inner_text()
    group.locator(f"form[action$='/flags/{flag.pk}/dismiss/'] button").click()
    assert Flag.objects.get(pk=flag.pk).status == Flag.Status.DISMISSED
    assert "?by=answer" in page.url or "by=answer" in page.url
    for view in ("hit", "worker", "answer"):
        page.goto(f"{live_server.url}/staff/review/{project.slug}/?by={view}")
        assert f"/flags/{flag.pk}/dismiss/" not in page.content()
    assert not page.js_errors
