"""Issue 24's review-queue decisions in a real browser (Debian chromium), at the MTurk stand-in
where money or a decision leaves the app:

* approve and bonus in one step from the queue's row: the approval and the bonus both reach
  the stand-in;
* reject the ticked assignments with one message: every one rejected at the stand-in with
  that message; the page says how many;
* un-flag the ticked flags of the queue; reject ticked answers with one message in the data
  browser.
"""

from __future__ import annotations

import pytest

from annotation.models import Annotation, Assignment, Flag, Worker
from tests.browser.conftest import login_browser, screenshot, two_workers_collected
from tests.factories import annotate, canard_sample, flagged_rewrites, publish_hit, workers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MESSAGE = "Your ratings were random: the same score for every filler, in under a second each."


def test_approve_and_bonus_in_one_step_reaches_the_stand_in(page, stand_in, live_server,
                                                            staff_user):
    project, simulator, ids = two_workers_collected(stand_in, "claire-approve-bonus")
    careful = Worker.objects.get(external_id="ACAREFUL22")
    first = ids["ACAREFUL22"][0]
    login_browser(page, live_server, staff_user)
    page.set_default_timeout(30000)  # the approval and the bonus call the stand-in inline

    page.goto(f"{live_server.url}/staff/review/{project.slug}/")
    row = page.locator(f".unflagged-assignment:has-text('{first}')")
    assert careful.anonymous_id in row.inner_text()
    form = row.locator("[data-testid=approve-and-bonus]")
    assert form.locator("input[name=amount_cents]").get_attribute("placeholder") == "cents (USD)"
    form.locator("input[name=amount_cents]").fill("35")
    form.locator("input[name=reason]").fill("Careful ratings")
    form.locator("button:has-text('Approve and bonus')").click()
    said = page.locator(".review-messages li").first.inner_text()
    assert f"Assignment {first} approved" in said
    screenshot(page, "queue_approve_and_bonus")

    remote = stand_in.world.assignments
    assert remote[first].status == "Approved"
    assert [(b["AssignmentId"], b["WorkerId"], b["BonusAmount"], b["Reason"])
            for b in simulator.ledger()["bonuses"]] == [
        (first, "ACAREFUL22", "0.35", "Careful ratings")]
    # The other assignments were left alone.
    others = [a for a in ids["ACARELESS1"] + ids["ACAREFUL22"] if a != first]
    assert {remote[a].status for a in others} == {"Submitted"}


def test_reject_the_ticked_assignments_with_one_message(page, stand_in, live_server,
                                                        staff_user):
    project, simulator, ids = two_workers_collected(stand_in, "claire-bulk-reject")
    careless = Worker.objects.get(external_id="ACARELESS1")
    login_browser(page, live_server, staff_user)
    page.set_default_timeout(30000)

    page.goto(f"{live_server.url}/staff/review/{project.slug}/")
    rows = page.locator(".unflagged-assignment", has_text=careless.anonymous_id)
    assert rows.count() == 2
    for k in range(2):
        rows.nth(k).locator("input[name=assignment]").check()
    bulk = page.locator("[data-testid=bulk-reject]")
    bulk.locator("input[name=message]").fill(MESSAGE)
    bulk.locator("button:has-text('Reject the ticked assignments')").click()
    said = page.locator(".review-messages li").first.inner_text()
    listed = Assignment.objects.filter(provider_assignment_id__in=ids["ACARELESS1"]).order_by("pk")
    assert said == ("Rejected 2 assignments with one message: "
                    + ", ".join(a.provider_assignment_id for a in listed) + ".")
    screenshot(page, "queue_bulk_reject")

    remote = stand_in.world.assignments
    assert [(remote[a].status, remote[a].requester_feedback) for a in ids["ACARELESS1"]] == [
        ("Rejected", MESSAGE), ("Rejected", MESSAGE)]
    assert {remote[a].status for a in ids["ACAREFUL22"]} == {"Submitted"}
    assert simulator.ledger()["bonuses"] == []


def test_unflag_the_ticked_flags_of_the_queue(page, live_server, staff_user):
    project, rows = flagged_rewrites(2)
    login_browser(page, live_server, staff_user)

    page.goto(f"{live_server.url}/staff/review/{project.slug}/?by=answer")
    assert "4 open flags" in page.locator("[data-testid=queue-totals]").inner_text()
    # Tick the two answers' flags, leave the workers' "too fast" flags open.
    ticks = page.locator("input[name=flag]")
    ticked = []
    for k in range(ticks.count()):
        box = ticks.nth(k)
        if int(box.get_attribute("value")) in {flag.pk for _, _, flag, _ in rows}:
            box.check()
            ticked.append(int(box.get_attribute("value")))
    assert len(ticked) == 2
    page.locator("[data-testid=bulk-dismiss] button").click()
    said = page.locator(".review-messages li").first.inner_text()
    assert said == ("Un-flagged 2 flags (2 rewrite_pronoun_left); the answers themselves are "
                    "unchanged.")
    assert set(Flag.objects.filter(status=Flag.Status.DISMISSED).values_list("pk", flat=True)
               ) == set(ticked)
    assert Flag.objects.filter(status=Flag.Status.OPEN).count() == 2
    assert "2 open flags" in page.locator("[data-testid=queue-totals]").inner_text()
    assert set(Assignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_reject_ticked_answers_with_one_message_in_the_data_browser(page, live_server,
                                                                    staff_user):
    project, items = canard_sample(slug="canard-browse-reject")
    hit = publish_hit(project, items=items[:1], max_assignments=2)
    answers = []
    for k, worker in enumerate(workers(2)):
        assignment = Assignment.objects.create(hit=hit, worker=worker,
                                               provider_assignment_id=f"ASG-{k}",
                                               status=Assignment.Status.SUBMITTED)
        answers.append(annotate(items[0], worker, source="mturk", assignment=assignment,
                                text=f"Rewrite {k}"))
    login_browser(page, live_server, staff_user)

    page.goto(f"{live_server.url}/staff/projects/{project.slug}/answers/")
    for box in page.locator("input[name=answers]").all():
        box.check()
    bulk = page.locator("[data-testid=browse-bulk]")
    bulk.locator("input[name=message]").fill(MESSAGE)
    # The Prolific categories read in words here too, never as codes.
    assert "Malingering (answers not given in good faith)" in bulk.locator(
        "select[name=rejection_category]").inner_text()
    bulk.locator("button[name=action][value=reject]").click()
    said = page.locator("[data-testid=browse-message]").first.inner_text()
    assert said.startswith("Rejected 2 whole HITs"), said
    assert [(a.status, a.review_message) for a in Assignment.objects.order_by("pk")] == [
        ("rejected", MESSAGE), ("rejected", MESSAGE)]
    assert set(Annotation.objects.filter(pk__in=[a.pk for a in answers])
               .values_list("review_status", flat=True)) == {"rejected"}
