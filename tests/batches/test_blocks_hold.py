"""Issue 24, point 4: blocks that hold, against the MTurk stand-in.

Blocking asks the scope and what to do with the pending work; with "reject" the worker's
pending assignments are rejected at the provider and nothing is paid; with "leave", no bulk
approval (review page, API, ``review approve --all-pending``, admin) ever approves or pays a
blocked worker's work; unblocking is on the worker's page; a blocked local annotator reads a
plain message."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Assignment, StatusEvent, Worker, WorkerProjectBlock
from annotation.services import decisions
from annotation.services.batches import collect
from tests.factories import (
    SCRIPT,
    batch_plausibility_project,
    launched_batch,
    local_worker,
    sluice_project,
    submitted_assignment,
)

pytestmark = pytest.mark.django_db

MESSAGE = "Your ratings were random: the same score for every filler, in under a second each."


def two_workers(simulator, capture, *, slug: str = "claire") -> dict:
    """Two HITs of one item each; a careless and a careful worker submit both; collected."""
    project = batch_plausibility_project(items=2, redundancy={"train": 2, "dev": 2, "test": 2},
                                         slug=slug)
    batch = launched_batch(project, capture, items_per_hit=1)
    hits = list(batch.hits.order_by("pk"))
    ids = {"careless": [], "careful": []}
    for hit in hits:
        ids["careless"].append(submitted_assignment(simulator, hit, "ACARELESS1"))
        ids["careful"].append(submitted_assignment(simulator, hit, "ACAREFUL22"))
    collect.batch_collect(batch_id=batch.pk)
    careless = Worker.objects.get(external_id="ACARELESS1")
    return {"project": project, "batch": batch, "ids": ids, "careless": careless,
            "careful": Worker.objects.get(external_id="ACAREFUL22")}


def remote_status(fake, assignment_ids) -> list[str]:
    return sorted(fake.world.assignments[a].status for a in assignment_ids)


def test_the_block_page_asks_scope_and_pending_work(fake, simulator, staff_client,
                                                    django_capture_on_commit_callbacks):
    ctx = two_workers(simulator, django_capture_on_commit_callbacks)
    worker = ctx["careless"]
    page = staff_client.get(f"/staff/workers/{worker.pk}/block/?project=claire")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'name="scope" value="project"' in html and 'name="scope" value="everywhere"' in html
    assert 'name="pending" value="reject"' in html and 'name="pending" value="leave"' in html
    # Its figures are this worker's pending work: two submitted assignments, in this project.
    assert "In claire: 2 assignment(s)" in html
    assert "MTurk approves and pays submitted assignments by itself" in html
    # Without a scope or a choice for the pending work, nothing happens.
    refused = staff_client.post(f"/staff/workers/{worker.pk}/block/?project=claire",
                                {"reason": "random"})
    assert refused.status_code == 400
    worker.refresh_from_db()
    assert not worker.is_blocked and not WorkerProjectBlock.objects.exists()
    assert "the scope is one of" in refused.content.decode()


def test_block_rejecting_pending_work_rejects_it_at_mturk_and_pays_nothing(
        fake, simulator, staff_client, django_capture_on_commit_callbacks):
    ctx = two_workers(simulator, django_capture_on_commit_callbacks)
    worker = ctx["careless"]
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(f"/staff/workers/{worker.pk}/block/?project=claire", {
            "reason": "random ratings", "scope": "everywhere", "pending": "reject",
            "message": MESSAGE}, follow=True)
    html = response.content.decode()
    assert "blocked everywhere. Rejected 2 pending assignment(s) and 0 pending answer(s)." in html
    assert remote_status(fake, ctx["ids"]["careless"]) == ["Rejected", "Rejected"]
    assert {a.requester_feedback for a in fake.world.assignments.values()
            if a.assignment_id in ctx["ids"]["careless"]} == {MESSAGE}
    assert simulator.ledger()["blocks"] == {"ACARELESS1": "random ratings"}
    # A bulk approval afterwards approves the careful worker's work only.
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post("/staff/review/claire/assignments/approve/", {})
    assert remote_status(fake, ctx["ids"]["careless"]) == ["Rejected", "Rejected"]
    assert remote_status(fake, ctx["ids"]["careful"]) == ["Approved", "Approved"]
    assert simulator.ledger()["bonuses"] == []


def test_bulk_approval_after_a_block_pays_nothing_to_the_blocked_worker(
        fake, simulator, staff_client, django_capture_on_commit_callbacks):
    ctx = two_workers(simulator, django_capture_on_commit_callbacks)
    worker = ctx["careless"]
    staff_client.post(f"/staff/workers/{worker.pk}/block/?project=claire", {
        "reason": "random ratings", "scope": "project", "pending": "leave"})
    assert WorkerProjectBlock.objects.filter(worker=worker, project=ctx["project"]).exists()
    held = list(Assignment.objects.filter(worker=worker).values_list("pk", flat=True))
    # The queue names the worker blocked and counts only what a bulk approval takes.
    queue = staff_client.get("/staff/review/claire/").content.decode()
    assert "Approve the 2 submitted assignments without an open flag" in queue
    # The API, given the blocked worker's assignments, refuses everything.
    events = StatusEvent.objects.count()
    api = staff_client.post("/api/assignments/approve/", {"assignments": held},
                            content_type="application/json")
    assert api.status_code == 400 and "never pays a blocked worker" in api.content.decode()
    assert StatusEvent.objects.count() == events
    # The admin's bulk action likewise, all or none.
    admin = staff_client.post("/admin/annotation/assignment/", {
        "action": "approve", "_selected_action": held, "apply": "yes", "message": ""},
        follow=True)
    assert "nothing done" in admin.content.decode()
    # The command's --all-pending and the review page's button approve the careful worker's.
    with django_capture_on_commit_callbacks(execute=True):
        call_command("review", "approve", "--all-pending", "--project", "claire",
                     stdout=StringIO())
    with pytest.raises(CommandError, match="may be approved in bulk"):
        call_command("review", "approve", "--all-pending", "--project", "claire",
                     stdout=StringIO())
    with django_capture_on_commit_callbacks(execute=True):
        page = staff_client.post("/staff/review/claire/assignments/approve/", {}, follow=True)
    assert "No submitted assignment without an open flag is waiting." in page.content.decode()
    assert remote_status(fake, ctx["ids"]["careless"]) == ["Submitted", "Submitted"]
    assert remote_status(fake, ctx["ids"]["careful"]) == ["Approved", "Approved"]
    assert set(Assignment.objects.filter(worker=worker).values_list("status", flat=True)) == {
        "submitted"}
    # Shown apart, and decided one by one if the reviewer means to.
    held_page = staff_client.get("/staff/projects/claire/held/").content.decode()
    assert held_page.count("ACARELESS1") == 0 and worker.anonymous_id in held_page
    assert 'data-testid="worker-blocked"' in held_page
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=held[0])
    assert remote_status(fake, ctx["ids"]["careless"]) == ["Approved", "Submitted"]


def test_a_block_from_one_project_leaves_the_others(fake, simulator, staff_client,
                                                    django_capture_on_commit_callbacks):
    ctx = two_workers(simulator, django_capture_on_commit_callbacks)
    worker = ctx["careless"]
    other = sluice_project(slug="other-project", items=1)
    outcome = decisions.worker_block(worker_id=worker.pk, reason="random", scope="project",
                                     project_id=ctx["project"].pk, pending="reject",
                                     message=MESSAGE)
    assert len(outcome.rejected_assignments) == 2 and not outcome.worker.is_blocked
    assert simulator.ledger()["blocks"] == {}  # this app's block only
    page = staff_client.get(f"/staff/workers/{worker.pk}/").content.decode()
    assert "blocked from claire" in page and "blocked everywhere" not in page
    unblocked = staff_client.post(f"/staff/workers/{worker.pk}/unblock/",
                                  {"project": other.slug}, follow=True).content.decode()
    assert "was not blocked from other-project" in unblocked
    assert WorkerProjectBlock.objects.count() == 1
    unblocked = staff_client.post(f"/staff/workers/{worker.pk}/unblock/",
                                  {"project": "claire"}, follow=True).content.decode()
    assert f"Worker {worker.anonymous_id} unblocked from claire." in unblocked
    assert not WorkerProjectBlock.objects.exists()


def test_a_prolific_pending_rejection_needs_its_category_before_anything_changes(
        fake, simulator, staff_client, django_capture_on_commit_callbacks):
    ctx = two_workers(simulator, django_capture_on_commit_callbacks)
    ctx["batch"].__class__.objects.filter(pk=ctx["batch"].pk).update(provider="prolific")
    worker = ctx["careless"]
    api = staff_client.post(f"/api/workers/{worker.pk}/block/", {
        "reason": "random", "pending": "reject", "message": "Too fast."},
        content_type="application/json")
    assert api.status_code == 400
    body = api.json()
    assert "rejection_category" in body and "message" in body
    worker.refresh_from_db()
    assert not worker.is_blocked
    assert set(Assignment.objects.values_list("status", flat=True)) == {"submitted"}


def test_a_blocked_local_annotator_reads_a_plain_message(client, django_user_model):
    project = sluice_project(slug="blocked-here", items=2)
    sluice_project(slug="still-open", items=2)
    user = django_user_model.objects.create_user(username="anna", password="x")
    worker = local_worker("anna", user=user)
    decisions.worker_block(worker_id=worker.pk, reason="spam", scope="project",
                           project_id=project.pk)
    client.force_login(user)
    page = client.get("/annotate/blocked-here/")
    assert page.status_code == 403
    text = page.content.decode()
    assert "Your account can no longer annotate this project." in text
    assert "HIT" not in text and "Prolific" not in text
    assert client.get("/annotate/still-open/").status_code == 200
    lease = client.post("/annotate/blocked-here/lease/", {"item_ids": []},
                        content_type="application/json")
    assert lease.status_code == 403


def test_worker_page_names_the_worker_once_and_escapes(staff_client, django_user_model):
    user = django_user_model.objects.create_user(username=SCRIPT, password="x")
    worker = local_worker("anna-local", user=user)
    page = staff_client.get(f"/staff/workers/{worker.pk}/").content.decode()
    assert worker.anonymous_id in page
    assert SCRIPT not in page and "&lt;script&gt;" in page  # the username, escaped
    assert staff_client.get("/staff/workers/999999/").status_code == 404
