"""Each reviewer decision through every way in -- the service, the review pages, the ``review``
command, the staff API and a Django admin action -- has identical effects: the same rows, the
same audit rows and the same calls at the (stand-in) provider."""

from __future__ import annotations

from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction

from annotation.models import (
    Annotation,
    Assignment,
    Bonus,
    Flag,
    StatusEvent,
    Worker,
    WorkerProjectBlock,
)
from annotation.services import decisions
from annotation.services.batches import collect
from tests.factories import batch_plausibility_project, launched_batch, submitted_assignment

pytestmark = pytest.mark.django_db

ENTRY_POINTS = ("service", "web", "cli", "api", "admin")


class Rollback(Exception):
    pass


def scenario(simulator, capture) -> dict:
    """One submitted MTurk assignment (an answer flagged, its worker flagged) and one local
    answer (flagged)."""
    project = batch_plausibility_project(items=1, redundancy={"train": 1, "dev": 1, "test": 1})
    batch = launched_batch(project, capture)
    submitted_assignment(simulator, batch.hits.get(), "ADECIDE1")
    collect.batch_collect(batch_id=batch.pk)
    assignment = Assignment.objects.get()
    answer = assignment.annotations.get()
    worker = assignment.worker
    Flag.objects.create(project=project, annotation=answer, assignment=assignment,
                        worker=worker, reason="too_fast", fingerprint="too_fast:a")
    worker_flag = Flag.objects.create(project=project, worker=worker, reason="worker_outlier",
                                      fingerprint="worker_outlier:w")
    local_worker = Worker.objects.create(provider=Worker.Provider.LOCAL, external_id="anna")
    local = Annotation.objects.create(project=project, item=answer.item, worker=local_worker,
                                      source=Annotation.Source.LOCAL, rating=2)
    Flag.objects.create(project=project, annotation=local, worker=local_worker,
                        reason="too_fast", fingerprint="too_fast:local")
    return {"project": project, "assignment": assignment, "worker": worker,
            "worker_flag": worker_flag, "local": local, "remote_id": worker.external_id}


def _assignment(ctx):
    return ctx["assignment"]


# action -> (service call, web POST, review command, API POST, admin action)
ACTIONS = {
    "approve": dict(
        service=lambda c, actor: decisions.assignment_approve(
            assignment_id=c["assignment"].pk, actor=actor, message="Good work"),
        web=lambda c: (f"assignments/{c['assignment'].pk}/decide/",
                       {"action": "approve", "message": "Good work"}),
        cli=lambda c: ["approve", c["assignment"].provider_assignment_id,
                       "--message", "Good work"],
        api=lambda c: (f"assignments/{c['assignment'].pk}/approve/", {"message": "Good work"}),
        admin=lambda c: ("assignment", "approve", c["assignment"].pk, {"message": "Good work"}),
    ),
    "reject_hit": dict(
        service=lambda c, actor: decisions.assignment_reject(
            assignment_id=c["assignment"].pk, actor=actor, message="Random ratings"),
        web=lambda c: (f"assignments/{c['assignment'].pk}/decide/",
                       {"action": "reject", "message": "Random ratings"}),
        cli=lambda c: ["reject", c["assignment"].provider_assignment_id,
                       "--message", "Random ratings"],
        api=lambda c: (f"assignments/{c['assignment'].pk}/reject/",
                       {"message": "Random ratings"}),
        admin=lambda c: ("assignment", "reject", c["assignment"].pk,
                         {"message": "Random ratings"}),
    ),
    "approve_answer": dict(
        service=lambda c, actor: decisions.annotation_approve(
            annotation_id=c["local"].pk, actor=actor, message="fine"),
        web=lambda c: (f"annotations/{c['local'].pk}/decide/",
                       {"action": "approve", "message": "fine"}),
        cli=lambda c: ["approve-answer", str(c["local"].pk), "--message", "fine"],
        api=lambda c: (f"annotations/{c['local'].pk}/approve/", {"message": "fine"}),
        admin=lambda c: ("annotation", "approve", c["local"].pk, {"message": "fine"}),
    ),
    "reject_answer": dict(
        service=lambda c, actor: decisions.annotation_reject(
            annotation_id=c["local"].pk, actor=actor, message="off topic"),
        web=lambda c: (f"annotations/{c['local'].pk}/decide/",
                       {"action": "reject", "message": "off topic"}),
        cli=lambda c: ["reject-answer", str(c["local"].pk), "--message", "off topic"],
        api=lambda c: (f"annotations/{c['local'].pk}/reject/", {"message": "off topic"}),
        admin=lambda c: ("annotation", "reject", c["local"].pk, {"message": "off topic"}),
    ),
    "bonus": dict(
        service=lambda c, actor: decisions.bonus_create(
            assignment_id=c["assignment"].pk, actor=actor, amount_cents=25,
            reason="Careful work"),
        web=lambda c: (f"assignments/{c['assignment'].pk}/bonus/",
                       {"amount_cents": "25", "reason": "Careful work"}),
        cli=lambda c: ["bonus", c["assignment"].provider_assignment_id, "--amount", "0.25",
                       "--reason", "Careful work"],
        api=lambda c: (f"assignments/{c['assignment'].pk}/bonus/",
                       {"amount_cents": 25, "reason": "Careful work"}),
        admin=lambda c: ("assignment", "bonus", c["assignment"].pk,
                         {"amount_cents": "25", "reason": "Careful work"}),
    ),
    "block": dict(
        service=lambda c, actor: decisions.worker_block(
            worker_id=c["worker"].pk, actor=actor, reason="Random ratings"),
        web=lambda c: (f"workers/{c['worker'].pk}/block/",
                       {"reason": "Random ratings", "scope": "everywhere", "pending": "leave"}),
        cli=lambda c: ["block", c["remote_id"], "--reason", "Random ratings"],
        api=lambda c: (f"workers/{c['worker'].pk}/block/", {"reason": "Random ratings"}),
        admin=lambda c: ("worker", "block", c["worker"].pk,
                         {"reason": "Random ratings", "scope": "everywhere",
                          "pending": "leave"}),
    ),
    # Blocked everywhere, the pending HIT rejected at the provider with the message.
    "block_reject_pending": dict(
        service=lambda c, actor: decisions.worker_block(
            worker_id=c["worker"].pk, actor=actor, reason="Random ratings",
            pending="reject", message="Random ratings in every HIT"),
        web=lambda c: (f"workers/{c['worker'].pk}/block/",
                       {"reason": "Random ratings", "scope": "everywhere", "pending": "reject",
                        "message": "Random ratings in every HIT"}),
        cli=lambda c: ["block", c["remote_id"], "--reason", "Random ratings", "--pending",
                       "reject", "--message", "Random ratings in every HIT"],
        api=lambda c: (f"workers/{c['worker'].pk}/block/",
                       {"reason": "Random ratings", "pending": "reject",
                        "message": "Random ratings in every HIT"}),
        admin=lambda c: ("worker", "block", c["worker"].pk,
                         {"reason": "Random ratings", "scope": "everywhere",
                          "pending": "reject", "message": "Random ratings in every HIT"}),
    ),
    # Blocked from this project only: no provider call, the pending work left for review.
    "block_project": dict(
        service=lambda c, actor: decisions.worker_block(
            worker_id=c["worker"].pk, actor=actor, reason="Random ratings", scope="project",
            project_id=c["project"].pk),
        web=lambda c: (f"workers/{c['worker'].pk}/block/",
                       {"reason": "Random ratings", "scope": "project", "pending": "leave"}),
        cli=lambda c: ["block", c["remote_id"], "--reason", "Random ratings", "--project",
                       c["project"].slug],
        api=lambda c: (f"workers/{c['worker'].pk}/block/",
                       {"reason": "Random ratings", "scope": "project",
                        "project": c["project"].slug}),
        admin=lambda c: ("worker", "block", c["worker"].pk,
                         {"reason": "Random ratings", "scope": "project",
                          "project": c["project"].slug, "pending": "leave"}),
    ),
    "unblock": dict(
        setup=lambda c: decisions.worker_block(worker_id=c["worker"].pk, reason="by mistake"),
        service=lambda c, actor: decisions.worker_unblock(worker_id=c["worker"].pk,
                                                          actor=actor),
        web=lambda c: (f"workers/{c['worker'].pk}/block/", {"action": "unblock"}),
        cli=lambda c: ["unblock", c["remote_id"]],
        api=lambda c: (f"workers/{c['worker'].pk}/unblock/", {}),
        admin=lambda c: ("worker", "unblock", c["worker"].pk, {}),
    ),
    "dismiss": dict(
        service=lambda c, actor: decisions.flag_dismiss(flag_id=c["worker_flag"].pk,
                                                        actor=actor, note="looked fine"),
        web=lambda c: (f"flags/{c['worker_flag'].pk}/dismiss/", {"note": "looked fine"}),
        cli=lambda c: ["dismiss", str(c["worker_flag"].pk), "--note", "looked fine"],
        api=lambda c: (f"flags/{c['worker_flag'].pk}/dismiss/", {"note": "looked fine"}),
        admin=lambda c: ("flag", "dismiss", c["worker_flag"].pk, {"note": "looked fine"}),
    ),
}


def run_entry(entry: str, action: dict, ctx: dict, client, user) -> None:
    if entry == "service":
        action["service"](ctx, user)
    elif entry == "web":
        url, data = action["web"](ctx)
        response = client.post(f"/staff/review/{ctx['project'].slug}/{url}", data)
        assert response.status_code == 302
    elif entry == "cli":
        call_command("review", *action["cli"](ctx), stdout=StringIO())
    elif entry == "api":
        url, data = action["api"](ctx)
        response = client.post(f"/api/{url}", data, content_type="application/json")
        assert response.status_code == 200, response.content
    else:
        model, name, pk, data = action["admin"](ctx)
        response = client.post(f"/admin/annotation/{model}/", {
            "action": name, "_selected_action": [pk], "apply": "yes", **data})
        assert response.status_code == 302, response.content.decode()[:2000]


def effects(simulator, fake, calls_before: Counter, events_before: set[int], user) -> dict:
    """What a decision did, without database ids (each run builds its own rows)."""
    events = StatusEvent.objects.exclude(pk__in=events_before).order_by("pk")
    decided_by = {event.actor_id for event in events if event.actor_id}
    return {
        "assignments": list(Assignment.objects.values_list(
            "status", "review_message", "decision_synced")),
        "annotations": sorted(Annotation.objects.values_list("source", "review_status")),
        "flags": sorted(Flag.objects.values_list("reason", "status", "decision_note")),
        "workers": sorted(Worker.objects.values_list("provider", "is_blocked",
                                                     "blocked_reason", "block_synced")),
        "project_blocks": sorted(WorkerProjectBlock.objects.values_list(
            "worker__provider", "project__slug", "reason")),
        "bonuses": [(amount, reason, sent is not None) for amount, reason, sent in
                    Bonus.objects.values_list("amount_cents", "reason", "sent_at")],
        "audit": [(event.kind, event.old_status, event.new_status, event.batch_id is not None,
                   event.assignment_id is not None, event.worker_id is not None,
                   event.annotation_id is not None, event.flag_id is not None)
                  for event in events],
        "actors": decided_by <= {user.pk},
        "provider_calls": Counter(simulator.stats()["calls"]) - calls_before,
        "remote_assignments": sorted((a.status, a.requester_feedback)
                                     for a in fake.world.assignments.values()),
        "ledger": [(paid["BonusAmount"], paid["Reason"], paid["WorkerId"])
                   for paid in simulator.ledger()["bonuses"]] + sorted(
                       simulator.ledger()["blocks"].items()),
    }


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_every_way_in_has_the_same_effects(name, fake, simulator, staff_client, staff_user,
                                           django_capture_on_commit_callbacks):
    action = ACTIONS[name]
    seen = {}
    for entry in ENTRY_POINTS:
        fake.world.reset()
        try:
            with transaction.atomic():
                ctx = scenario(simulator, django_capture_on_commit_callbacks)
                if "setup" in action:
                    with django_capture_on_commit_callbacks(execute=True):
                        action["setup"](ctx)
                calls_before = Counter(simulator.stats()["calls"])
                events_before = set(StatusEvent.objects.values_list("pk", flat=True))
                with django_capture_on_commit_callbacks(execute=True):
                    run_entry(entry, action, ctx, staff_client, staff_user)
                seen[entry] = effects(simulator, fake, calls_before, events_before,
                                      staff_user)
                raise Rollback
        except Rollback:
            pass
    baseline = seen["service"]
    assert baseline["audit"], "a decision writes audit rows"
    for entry in ENTRY_POINTS[1:]:
        assert seen[entry] == baseline, entry
    if name in ("approve", "reject_hit", "bonus", "block", "unblock", "block_reject_pending"):
        assert baseline["provider_calls"], "the provider was told"
    if name == "block_reject_pending":
        # The pending HIT is rejected at the stand-in, with the message; nothing is paid.
        assert baseline["remote_assignments"] == [("Rejected", "Random ratings in every HIT")]
        assert not [row for row in baseline["ledger"] if len(row) == 3], "no bonus paid"
        assert not any(kind == "bonus_sent" for kind, *_ in baseline["audit"])
        assert baseline["provider_calls"]["SendBonus"] == 0
        assert baseline["provider_calls"]["ApproveAssignment"] == 0
    if name == "block_project":
        assert baseline["project_blocks"] and not baseline["provider_calls"], (
            "a block from one project is this app's: no provider call")
