"""A whole MTurk round, rehearsed locally: nothing bypasses the real parts.

launch (services) → publish through boto3 to the stateful stand-in → a simulated worker accepts
the HIT there → chromium opens OUR ExternalQuestion page at the URL the stand-in hands out →
the worker types and submits → the page saves in our database (provisional), then posts to the
stand-in's /mturk/externalSubmit → collect through boto3 (nothing stored twice; the page's
answers verified) → approve and bonus, which the stand-in then reports.
"""

from __future__ import annotations

import json

import pytest

from annotation.fake_mturk import FakeMTurkSimulator
from annotation.models import Annotation, Assignment, Batch, Hit
from annotation.providers import get_provider
from annotation.selectors.qc import exportable_annotations
from annotation.services.batches.collect import batch_collect
from annotation.services.batches.plan import LaunchOptions, batch_launch, batch_plan
from annotation.services.decisions import assignment_approve, bonus_create
from tests.browser.conftest import open_task
from tests.factories import sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_batch_round_trip_through_the_real_page(page, stand_in, live_server):
    project = sluice_project(items=2)
    options = LaunchOptions(title="Resolve two sluices", reward_cents=26, items_per_hit=2,
                            splits=("train",), locales=("US",))
    estimate = batch_plan(project=project, options=options).estimate.total_cents
    batch = batch_launch(project=project, options=options, confirmed_total_cents=estimate)

    # Publishing ran (tasks run inline here) through boto3 against the stand-in.
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED, batch.error
    hit = Hit.objects.get(batch=batch)
    assert hit.provider_hit_id and hit.max_assignments == 1

    simulator = FakeMTurkSimulator(stand_in.base_url)
    worker_id = simulator.register_worker("AREHEARSALWORKER", country="US")
    accepted = simulator.accept(worker_id, hit.provider_hit_id)
    # The stand-in appends MTurk's four parameters to our ExternalQuestion URL.
    assert accepted["task_url"].startswith(f"{live_server.url}/mturk/task/{project.slug}/?")
    assert f"assignmentId={accepted['assignment_id']}" in accepted["task_url"]
    open_task(page, accepted["task_url"])
    items = page.locator(".task-item")
    items.nth(0).locator(".full-question").type("Why did he leave the band in 1975?")
    items.nth(1).locator(".skip-item").click()
    page.click(".finish-hit")  # one Submit: saves both items, then posts to MTurk
    page.wait_for_url(f"{stand_in.base_url}/mturk/externalSubmit**")

    # Saved in our database by the page, before MTurk heard of it: provisional until then
    # (the page cannot tell a real assignment from an invented one), so not exported yet.
    assignment = Assignment.objects.get(provider_assignment_id=accepted["assignment_id"])
    assert assignment.status == Assignment.Status.SUBMITTED
    assert Annotation.objects.filter(assignment=assignment).count() == 2
    assert not exportable_annotations(project=project).exists()

    # MTurk (the stand-in) holds the submitted assignment with the whole answer.
    provider = get_provider("mturk")
    (remote,) = provider.list_assignments_for_hit(hit.provider_hit_id)
    assert remote.status == "Submitted" and remote.worker_id == worker_id
    assert json.loads(remote.answers["unpack_payload"]) == {
        str(item.pk): payload for item, payload in zip(
            project.items.order_by("id"),
            [{"full_question": "Why did he leave the band in 1975?", "skipped": False},
             {"full_question": "", "skipped": True}], strict=True)}

    # Collecting (twice) stores nothing twice; it sees the assignment at MTurk, so the
    # page's answers now count.
    assert batch_collect(batch_id=batch.pk).assignments_verified == 1
    assert batch_collect(batch_id=batch.pk).assignments_verified == 0
    assert Annotation.objects.filter(project=project).count() == 2
    assert exportable_annotations(project=project).count() == 2

    # Approve and bonus: the decisions reach the stand-in through the provider's jobs.
    assignment_approve(assignment_id=assignment.pk)
    bonus_create(assignment_id=assignment.pk, amount_cents=10, reason="Careful work")
    (remote,) = provider.list_assignments_for_hit(hit.provider_hit_id)
    assert remote.status == "Approved"
    assignment.refresh_from_db()
    assert assignment.decision_synced
    (bonus,) = simulator.ledger()["bonuses"]
    assert (bonus["WorkerId"], bonus["AssignmentId"], bonus["BonusAmount"]) == (
        worker_id, accepted["assignment_id"], "0.10")
