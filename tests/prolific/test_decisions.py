"""Decisions on Prolific work through every way in: approve, reject (category + 100-character
message checked before anything is stored), bulk approve, bonuses paid exactly once in two
steps whatever is retried, block and unblock through the blocklist participant group."""

from __future__ import annotations

from collections import Counter
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import transaction

from annotation import tasks
from annotation.fake_prolific import SimulatorRefused
from annotation.models import Assignment, Bonus, StatusEvent, Worker
from annotation.providers import ProviderThrottled
from annotation.services import decisions
from annotation.services.batches.collect import batch_collect
from tests.batches.test_decisions_everywhere import ACTIONS, ENTRY_POINTS, Rollback, run_entry
from tests.factories import batch_plausibility_project, launch_prolific, participant_works

pytestmark = pytest.mark.django_db

REASON = ("Two of the three ratings were given in under a second each, faster than the "
          "sentences can be read, and the attention item was answered wrongly.")


def scenario(simulator, capture, *, client, sessions: int = 1) -> dict:
    """A launched study whose participants worked on our task page (through ``client``, the
    real page, when given) and were collected."""
    project = batch_plausibility_project(items=1, redundancy={"train": 3, "dev": 3, "test": 3})
    batch = launch_prolific(project, capture)
    hit = batch.hits.get()
    for _ in range(sessions):
        participant_works(simulator, hit, client=client)
    batch_collect(batch_id=batch.pk)
    assignments = list(Assignment.objects.order_by("pk"))
    return {"project": project, "batch": batch, "assignments": assignments,
            "assignment": assignments[0], "worker": assignments[0].worker,
            "remote_id": assignments[0].worker.external_id}


def remote(fake, assignment):
    return fake.world.submissions[assignment.provider_assignment_id]


@pytest.mark.parametrize(("message", "category", "field"), [
    (REASON, "", "rejection_category"),
    (REASON, "NOT_A_CATEGORY", "rejection_category"),
    ("Too fast.", "LOW_EFFORT", "message"),
])
def test_a_rejection_prolific_would_refuse_is_refused_first_and_changes_nothing(
        prolific_app, simulator, client, django_capture_on_commit_callbacks, message, category,
        field):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    events = StatusEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        decisions.assignment_reject(assignment_id=ctx["assignment"].pk, message=message,
                                    rejection_category=category)
    assert field in refused.value.message_dict
    ctx["assignment"].refresh_from_db()
    assert ctx["assignment"].status == Assignment.Status.SUBMITTED
    assert ctx["assignment"].decision_synced
    assert StatusEvent.objects.count() == events
    assert remote(prolific_app, ctx["assignment"]).status == "AWAITING REVIEW"


def test_every_way_in_says_why_a_rejection_is_refused(prolific_app, simulator, staff_client,
                                                      django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=staff_client)
    assignment = ctx["assignment"]
    slug = ctx["project"].slug
    page = staff_client.post(f"/staff/review/{slug}/assignments/{assignment.pk}/decide/",
                             {"action": "reject", "message": "Too fast."}, follow=True)
    assert "Prolific needs a rejection category" in page.content.decode()
    assert "at least 100 characters" in page.content.decode()
    with pytest.raises(CommandError, match="rejection category"):
        call_command("review", "reject", assignment.provider_assignment_id, "--message",
                     REASON, stdout=StringIO())
    api = staff_client.post(f"/api/assignments/{assignment.pk}/reject/",
                            {"message": "Too fast.", "rejection_category": "LOW_EFFORT"},
                            content_type="application/json")
    assert api.status_code == 400 and "message" in api.json()
    admin = staff_client.post("/admin/annotation/assignment/", {
        "action": "reject", "_selected_action": [assignment.pk], "apply": "yes",
        "message": REASON, "rejection_category": ""}, follow=True)
    assert "Prolific needs a rejection category" in admin.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED


def test_approve_and_reject_reach_prolific(prolific_app, simulator, client,
                                           django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, sessions=2,
                   client=client)
    first, second = ctx["assignments"]
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=first.pk)
        decisions.assignment_reject(assignment_id=second.pk, message=REASON,
                                    rejection_category="LOW_EFFORT")
    assert remote(prolific_app, first).status == "APPROVED"
    rejected = remote(prolific_app, second)
    assert rejected.status == "REJECTED"
    assert rejected.rejection == {"message": REASON, "category": "LOW_EFFORT"}
    for assignment in (first, second):
        assignment.refresh_from_db()
        assert assignment.decision_synced
    second.refresh_from_db()
    assert second.rejection_category == "LOW_EFFORT"


def test_bulk_approve_from_the_review_page_is_one_call(prolific_app, simulator, staff_client,
                                                       django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, sessions=3,
                   client=staff_client)
    queue = staff_client.get(f"/staff/review/{ctx['project'].slug}/")
    assert b"Approve the 3 submitted assignments without an open flag" in queue.content
    before = Counter(prolific_app.world.stats()["calls"])
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/review/{ctx['project'].slug}/assignments/approve/", {})
    calls = Counter(prolific_app.world.stats()["calls"]) - before
    assert calls == Counter({"bulk_approve": 1})
    for assignment in ctx["assignments"]:
        assignment.refresh_from_db()
        assert assignment.status == Assignment.Status.APPROVED and assignment.decision_synced
        assert remote(prolific_app, assignment).status == "APPROVED"


def test_bulk_approve_from_the_api_and_the_command(prolific_app, simulator, client,
                                                   staff_client,
                                                   django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, sessions=3,
                   client=client)
    first, second, _third = ctx["assignments"]
    with django_capture_on_commit_callbacks(execute=True):
        answer = staff_client.post("/api/assignments/approve/",
                                   {"assignments": [first.pk, second.pk]},
                                   content_type="application/json")
    assert answer.status_code == 200 and answer.json() == {"approved": [first.pk, second.pk]}
    with django_capture_on_commit_callbacks(execute=True):
        call_command("review", "approve", "--all-pending", stdout=StringIO())
    # The command runs the review page's job service: the one left goes in a bulk call of one.
    assert prolific_app.world.stats()["calls"]["bulk_approve"] == 2
    assert {remote(prolific_app, a).status for a in ctx["assignments"]} == {"APPROVED"}
    refused = staff_client.post("/api/assignments/approve/", {"assignments": [999999]},
                                content_type="application/json")
    assert refused.status_code == 400


def _bonus(ctx, capture) -> Bonus:
    with capture(execute=False):
        return decisions.bonus_create(assignment_id=ctx["assignment"].pk, amount_cents=50,
                                      reason="Careful work").bonus


def payments(fake) -> list:
    return fake.world.ledger()["payments"]


def test_a_bonus_is_set_up_stored_then_paid_once(prolific_app, simulator, client,
                                                 django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    bonus = _bonus(ctx, django_capture_on_commit_callbacks)
    decisions.bonus_send(bonus_id=bonus.pk)
    bonus.refresh_from_db()
    assert bonus.sent_at and bonus.provider_setup_id and bonus.paying_started_at
    assert [(p["to"], p["cents"]) for p in payments(prolific_app)] == [
        (ctx["assignment"].provider_assignment_id, 50)]
    decisions.bonus_send(bonus_id=bonus.pk)  # a retried job
    tasks.send_bonus(bonus.pk)
    assert len(payments(prolific_app)) == 1


def test_a_throttled_pay_is_retried_and_paid_once(prolific_app, simulator, client,
                                                  django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    bonus = _bonus(ctx, django_capture_on_commit_callbacks)
    # Two 429s: the pay call itself is retried where it failed (honouring Retry-After).
    simulator.fault("pay_bonus", count=2, status=429, retry_after=0.01)
    decisions.bonus_send(bonus_id=bonus.pk)
    bonus.refresh_from_db()
    assert bonus.sent_at is not None
    assert prolific_app.world.calls["pay_bonus"] == 3
    assert len(payments(prolific_app)) == 1
    # Throttled past the call's retries: the claim is given back, and the job pays later.
    second = decisions.bonus_create(assignment_id=ctx["assignment"].pk, amount_cents=30,
                                    reason="More", again=True).bonus
    simulator.fault("pay_bonus", count=50, status=429, retry_after=0.001)
    with pytest.raises(ProviderThrottled):
        decisions.bonus_send(bonus_id=second.pk)
    second.refresh_from_db()
    assert second.provider_setup_id and second.paying_started_at is None
    prolific_app.world.faults.clear()
    decisions.bonus_send(bonus_id=second.pk)
    second.refresh_from_db()
    assert second.sent_at is not None
    assert len(payments(prolific_app)) == 2
    assert len(prolific_app.world.bonus_setups) == 2  # each stored set-up was reused


def test_a_crash_after_paying_is_settled_from_prolifics_list_never_paid_again(
        prolific_app, simulator, client, django_capture_on_commit_callbacks, monkeypatch):
    from annotation.providers.prolific import ProlificProvider

    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    bonus = _bonus(ctx, django_capture_on_commit_callbacks)
    real_pay = ProlificProvider.pay_bonus

    def pay_then_die(self, setup_id):
        real_pay(self, setup_id)
        raise KeyboardInterrupt("worker killed after paying, before sent_at")

    monkeypatch.setattr(ProlificProvider, "pay_bonus", pay_then_die)
    with pytest.raises(KeyboardInterrupt):
        decisions.bonus_send(bonus_id=bonus.pk)
    monkeypatch.setattr(ProlificProvider, "pay_bonus", real_pay)
    # The retry reads the submission's bonus_payments: paid, so marked paid, nothing sent.
    decisions.bonus_send(bonus_id=bonus.pk)
    tasks.send_bonus(bonus.pk)
    assert len(payments(prolific_app)) == 1
    bonus.refresh_from_db()
    assert bonus.sent_at is not None and bonus.error == ""
    assert ctx["assignment"].events.filter(kind="bonus_found_paid").exists()
    assert prolific_app.world.calls["pay_bonus"] == 1


def test_a_pay_prolific_never_made_is_checked_then_left_to_a_human(
        prolific_app, simulator, client, django_capture_on_commit_callbacks, settings):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    bonus = _bonus(ctx, django_capture_on_commit_callbacks)
    simulator.fault("pay_bonus", count=1, status=502, retry_after=None)
    decisions.bonus_send(bonus_id=bonus.pk)  # 502: may have paid; Prolific lists nothing yet
    bonus.refresh_from_db()
    assert bonus.sent_at is None and bonus.error.startswith("outcome unknown: ")
    assert "Prolific may have paid it" in bonus.error
    assert f"review bonus-check {bonus.pk}" in bonus.error  # inline: says how to check again
    assert payments(prolific_app) == []
    from annotation.selectors.outbox import unfinished_work
    assert bonus.pk in unfinished_work(quiet_for_seconds=0).bonus_ids  # checked again
    # Past the settle time Prolific still lists nothing: a human is asked; never paid again.
    settings.UNPACK_BONUS_SETTLE_SECONDS = 0
    decisions.bonus_send(bonus_id=bonus.pk)
    bonus.refresh_from_db()
    assert bonus.sent_at is None and "review bonus-resolve" in bonus.error
    assert ctx["assignment"].events.filter(kind="bonus_unconfirmed").exists()
    assert prolific_app.world.calls["pay_bonus"] == 1
    with django_capture_on_commit_callbacks(execute=True):
        decisions.bonus_resolve(bonus_id=bonus.pk, paid=False)
    bonus.refresh_from_db()
    assert bonus.sent_at is not None and len(payments(prolific_app)) == 1
    with pytest.raises(ValidationError):
        decisions.bonus_resolve(bonus_id=bonus.pk, paid=False)


def test_block_and_unblock_use_the_blocklist_group(prolific_app, simulator, client,
                                                   django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    worker = ctx["worker"]
    assert worker.provider == Worker.Provider.PROLIFIC
    with django_capture_on_commit_callbacks(execute=True):
        decisions.worker_block(worker_id=worker.pk, reason="Random ratings")
    worker.refresh_from_db()
    assert worker.block_synced
    groups = prolific_app.world.ledger()["groups"]
    assert list(groups.values()) == [[worker.external_id]]
    # A later study excludes them.
    later = launch_prolific(batch_plausibility_project(items=1, slug="later"),
                            django_capture_on_commit_callbacks)
    with pytest.raises(SimulatorRefused) as refused:
        simulator.start(worker.external_id, later.hits.get().provider_hit_id)
    assert refused.value.code == "blocked"
    with django_capture_on_commit_callbacks(execute=True):
        decisions.worker_unblock(worker_id=worker.pk)
    assert list(prolific_app.world.ledger()["groups"].values()) == [[]]


# -- every way in: the same effects (tests/batches/test_decisions_everywhere.py, on Prolific) --

#: The MTurk table's own entries where the action is the same on Prolific; a rejection there
#: also needs a category and a message of at least 100 characters.
PROLIFIC_ACTIONS = {
    **{name: ACTIONS[name] for name in ("approve", "bonus", "block")},
    "reject_hit": dict(
        service=lambda c, actor: decisions.assignment_reject(
            assignment_id=c["assignment"].pk, actor=actor, message=REASON,
            rejection_category="LOW_EFFORT"),
        web=lambda c: (f"assignments/{c['assignment'].pk}/decide/",
                       {"action": "reject", "message": REASON,
                        "rejection_category": "LOW_EFFORT"}),
        cli=lambda c: ["reject", c["assignment"].provider_assignment_id, "--message", REASON,
                       "--category", "LOW_EFFORT"],
        api=lambda c: (f"assignments/{c['assignment'].pk}/reject/",
                       {"message": REASON, "rejection_category": "LOW_EFFORT"}),
        admin=lambda c: ("assignment", "reject", c["assignment"].pk,
                         {"message": REASON, "rejection_category": "LOW_EFFORT"}),
    ),
}


def prolific_effects(fake, calls_before: Counter, events_before: set[int]) -> dict:
    events = StatusEvent.objects.exclude(pk__in=events_before).order_by("pk")
    ledger = fake.world.ledger()
    return {
        "assignments": list(Assignment.objects.values_list(
            "status", "review_message", "rejection_category", "decision_synced")),
        "workers": sorted(Worker.objects.values_list("provider", "is_blocked",
                                                     "blocked_reason", "block_synced")),
        "bonuses": [(amount, reason, sent is not None) for amount, reason, sent in
                    Bonus.objects.values_list("amount_cents", "reason", "sent_at")],
        "audit": [event.kind for event in events],
        "provider_calls": Counter(fake.world.stats()["calls"]) - calls_before,
        "remote": sorted((s.status, str(s.rejection)) for s in fake.world.submissions.values()),
        "paid": [(p["cents"]) for p in ledger["payments"]],
        "groups": sorted(len(members) for members in ledger["groups"].values()),
    }


@pytest.mark.parametrize("name", sorted(PROLIFIC_ACTIONS))
def test_every_way_in_has_the_same_effects_on_prolific(name, prolific_app, simulator,
                                                       staff_client, staff_user,
                                                       django_capture_on_commit_callbacks):
    action = PROLIFIC_ACTIONS[name]
    seen = {}
    for entry in ENTRY_POINTS:
        prolific_app.world.reset()
        try:
            with transaction.atomic():
                ctx = scenario(simulator, django_capture_on_commit_callbacks,
                               client=staff_client)
                calls_before = Counter(prolific_app.world.stats()["calls"])
                events_before = set(StatusEvent.objects.values_list("pk", flat=True))
                with django_capture_on_commit_callbacks(execute=True):
                    run_entry(entry, action, ctx, staff_client, staff_user)
                seen[entry] = prolific_effects(prolific_app, calls_before, events_before)
                raise Rollback
        except Rollback:
            pass
    baseline = seen["service"]
    assert baseline["provider_calls"], "Prolific was told"
    for entry in ENTRY_POINTS[1:]:
        assert seen[entry] == baseline, entry


def test_an_unconfirmed_prolific_session_cannot_be_decided_or_paid_until_collected(
        prolific_app, simulator, client, staff_client, django_capture_on_commit_callbacks):
    """Issue 24, point 5: a session the participant finished on our page, which collection has
    not yet seen at Prolific, is shown apart, offers no Approve, and every way in refuses to
    approve, reject or pay it; once collected, it is decided as any other."""
    project = batch_plausibility_project(items=1, redundancy={"train": 3, "dev": 3, "test": 3})
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    assignment = participant_works(simulator, batch.hits.get(), client=client)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED  # finished on our page
    slug = project.slug
    queue = staff_client.get(f"/staff/review/{slug}/").content.decode()
    assert "Approve assignment" not in queue
    assert "Approve the 0 submitted assignments" in queue or "Approve the" not in queue
    held = staff_client.get(f"/staff/projects/{slug}/held/").content.decode()
    assert f"Prolific session {assignment.provider_assignment_id}" in held
    assert "Not confirmed by the provider yet (1)" in held
    worker_page = staff_client.get(f"/staff/workers/{assignment.worker_id}/").content.decode()
    assert assignment.provider_assignment_id in worker_page.split("Assignments (")[0]
    events = StatusEvent.objects.count()
    refused = "Prolific has not confirmed session"
    api = staff_client.post(f"/api/assignments/{assignment.pk}/approve/", {},
                            content_type="application/json")
    assert api.status_code == 400 and refused in api.content.decode()
    api = staff_client.post(f"/api/assignments/{assignment.pk}/bonus/",
                            {"amount_cents": 25, "reason": "thanks"},
                            content_type="application/json")
    assert api.status_code == 400 and refused in api.content.decode()
    api = staff_client.post("/api/assignments/approve/", {"assignments": [assignment.pk]},
                            content_type="application/json")
    assert api.status_code == 400 and refused in api.content.decode()
    with pytest.raises(CommandError, match=refused):
        call_command("review", "approve", assignment.provider_assignment_id, stdout=StringIO())
    with pytest.raises(CommandError, match=refused):
        call_command("review", "reject", assignment.provider_assignment_id, "--message", REASON,
                     "--category", "LOW_EFFORT", stdout=StringIO())
    page = staff_client.post(f"/staff/review/{slug}/assignments/{assignment.pk}/decide/",
                             {"action": "approve"}, follow=True)
    assert refused in page.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.decision_synced
    assert StatusEvent.objects.count() == events and not Bonus.objects.exists()
    assert remote(prolific_app, assignment).status == "AWAITING REVIEW"
    # Collected: it is Prolific's submitted work now, and may be approved.
    batch_collect(batch_id=batch.pk)
    queue = staff_client.get(f"/staff/review/{slug}/").content.decode()
    assert "Approve assignment" in queue
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=assignment.pk)
    assert remote(prolific_app, assignment).status == "APPROVED"
