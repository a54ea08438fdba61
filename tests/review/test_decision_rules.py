"""The decision rules, held once in ``annotation.services.decisions`` (where the review pages
and the ``review`` command used to disagree), and the admin as a read-only view of the work."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation.models import Annotation, Assignment, Bonus, Flag, StatusEvent, Worker
from annotation.services import decisions
from tests.factories import flagged_rewrites

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch) -> list[tuple]:
    """The jobs the services queue (by task name), instead of running them."""
    jobs: list[tuple] = []
    monkeypatch.setattr("annotation.services.jobs.enqueue_now",
                        lambda name, *args: jobs.append((name, *args)))
    return jobs


def test_a_bonus_needs_submitted_work_and_is_capped(queued, django_capture_on_commit_callbacks):
    _, rows = flagged_rewrites(1)
    assignment = rows[0][0]
    with pytest.raises(ValidationError, match="between"):
        decisions.bonus_create(assignment_id=assignment.pk, amount_cents=10_001, reason="typo")
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.ACCEPTED)
    with pytest.raises(ValidationError, match="never submitted"):
        decisions.bonus_create(assignment_id=assignment.pk, amount_cents=10, reason="early")
    assert not Bonus.objects.exists() and not queued


def test_a_bonus_keeps_its_token_until_paid_and_a_second_needs_again(
        queued, django_capture_on_commit_callbacks):
    _, rows = flagged_rewrites(1)
    assignment = rows[0][0]
    with django_capture_on_commit_callbacks(execute=True):
        first = decisions.bonus_create(assignment_id=assignment.pk, amount_cents=10,
                                       reason="thanks")
        again = decisions.bonus_create(assignment_id=assignment.pk, amount_cents=10,
                                       reason="thanks")
    assert not first.resent and again.resent
    assert again.bonus.unique_request_token == first.bonus.unique_request_token
    assert queued == [("annotation.tasks.send_bonus", first.bonus.pk)] * 2
    Bonus.objects.update(sent_at="2026-01-01T00:00:00Z")
    with pytest.raises(ValidationError, match="again"):
        decisions.bonus_create(assignment_id=assignment.pk, amount_cents=10, reason="more")
    second = decisions.bonus_create(assignment_id=assignment.pk, amount_cents=10,
                                    reason="more", again=True)
    assert not second.resent and Bonus.objects.count() == 2


def test_every_decision_is_audited_and_closes_the_flags_of_the_work(
        queued, staff_user, django_capture_on_commit_callbacks):
    _, rows = flagged_rewrites(2)
    (approved, _, approved_flag, _), (rejected, _, rejected_flag, worker_flag) = rows
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=approved.pk, actor=staff_user)
        decisions.assignment_reject(assignment_id=rejected.pk, actor=staff_user,
                                    message="Pronouns left everywhere")
    approved_flag.refresh_from_db()
    rejected_flag.refresh_from_db()
    assert approved_flag.status == Flag.Status.DISMISSED
    assert rejected_flag.status == Flag.Status.UPHELD
    assert Flag.objects.get(pk=worker_flag.pk).status == Flag.Status.OPEN
    decided = StatusEvent.objects.filter(kind="assignment_decided").order_by("pk")
    assert [(e.assignment_id, e.old_status, e.new_status, e.actor_id) for e in decided] == [
        (approved.pk, "submitted", "approved", staff_user.pk),
        (rejected.pk, "submitted", "rejected", staff_user.pk)]
    assert StatusEvent.objects.filter(kind="flag_closed").count() == 2
    assert queued == [("annotation.tasks.sync_assignment_decision", approved.pk),
                      ("annotation.tasks.sync_assignment_decision", rejected.pk)]


def test_overriding_follows_the_provider(queued, django_capture_on_commit_callbacks):
    """An approval may override a rejection (MTurk's OverrideRejection); a rejection may
    replace an approval only until the provider was told."""
    _, rows = flagged_rewrites(1)
    assignment = rows[0][0]
    decisions.assignment_approve(assignment_id=assignment.pk)
    decisions.assignment_reject(assignment_id=assignment.pk, message="changed my mind")
    Assignment.objects.filter(pk=assignment.pk).update(decision_synced=True)
    decisions.assignment_approve(assignment_id=assignment.pk)
    Assignment.objects.filter(pk=assignment.pk).update(decision_synced=True)
    with pytest.raises(ValidationError, match="already sent"):
        decisions.assignment_reject(assignment_id=assignment.pk, message="too late")
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.APPROVED
    assert Annotation.objects.filter(assignment=assignment,
                                     review_status=Annotation.Review.APPROVED).count() == 2


def test_blocking_is_audited_upholds_worker_flags_and_names_the_workers_provider(
        queued, staff_user, django_capture_on_commit_callbacks):
    _, rows = flagged_rewrites(1)
    assignment, _, _, worker_flag = rows[0]
    local = Worker.objects.create(provider=Worker.Provider.LOCAL, external_id="anna")
    with django_capture_on_commit_callbacks(execute=True):
        decisions.worker_block(worker_id=assignment.worker_id, reason="random", actor=staff_user)
        decisions.worker_block(worker_id=local.pk, reason="random", actor=staff_user)
    assert Flag.objects.get(pk=worker_flag.pk).status == Flag.Status.UPHELD
    # Only the provider's worker needs a provider call; the local block is complete at once.
    assert queued == [("annotation.tasks.sync_worker_block", assignment.worker_id)]
    assert Worker.objects.get(pk=local.pk).block_synced
    assert not Worker.objects.get(pk=assignment.worker_id).block_synced
    assert set(StatusEvent.objects.filter(kind="worker_blocked")
               .values_list("worker_id", "actor_id")) == {(assignment.worker_id, staff_user.pk),
                                                          (local.pk, staff_user.pk)}


def test_the_admin_cannot_change_work_behind_the_services(staff_client):
    """Finding 5: blocking, statuses, review statuses and bonuses were editable in the admin."""
    _, rows = flagged_rewrites(1)
    assignment, annotation, flag, _ = rows[0]
    worker = assignment.worker
    for url, data in (
        (f"/admin/annotation/worker/{worker.pk}/change/",
         {"provider": "mturk", "external_id": worker.external_id, "is_blocked": "on"}),
        (f"/admin/annotation/assignment/{assignment.pk}/change/", {"status": "approved"}),
        (f"/admin/annotation/annotation/{annotation.pk}/change/", {"review_status": "approved"}),
        ("/admin/annotation/bonus/add/", {"assignment": assignment.pk, "amount_cents": 500,
                                          "reason": "x", "unique_request_token": "t"}),
        (f"/admin/annotation/flag/{flag.pk}/delete/", {"post": "yes"}),
    ):
        response = staff_client.post(url, data)
        assert response.status_code == 403, url
    assert not Worker.objects.get(pk=worker.pk).is_blocked
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SUBMITTED
    assert not Bonus.objects.exists() and Flag.objects.filter(pk=flag.pk).exists()
    # The pages still show the work, read-only.
    assert staff_client.get(f"/admin/annotation/assignment/{assignment.pk}/change/"
                            ).status_code == 200


def test_running_review_bonus_again_resends_the_unpaid_bonus_and_a_second_needs_again(
        queued, django_capture_on_commit_callbacks):
    """Finding 8: every ``review bonus`` minted a new token (paying again); none re-sent an
    interrupted one."""
    from io import StringIO

    from django.core.management import CommandError, call_command

    _, rows = flagged_rewrites(1)
    reference = rows[0][0].provider_assignment_id
    bonus = ("review", "bonus", reference, "--amount", "0.25", "--reason", "Careful work")
    first, second = StringIO(), StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command(*bonus, stdout=first)
        call_command(*bonus, stdout=second)
    # The job is queued (this test records it, running nothing): neither output claims a
    # payment or a resend that did not happen.
    for out in (first.getvalue(), second.getvalue()):
        assert "it is paid when the surrounding transaction commits" in out
        assert "sent again" not in out and "paid\n" not in out
    (row,) = Bonus.objects.all()
    assert queued == [("annotation.tasks.send_bonus", row.pk)] * 2
    Bonus.objects.update(sent_at="2026-01-01T00:00:00Z")
    with pytest.raises(CommandError, match="again"):
        call_command(*bonus, stdout=StringIO())
    call_command(*bonus, "--again", stdout=StringIO())
    assert Bonus.objects.count() == 2
    assert len(set(Bonus.objects.values_list("unique_request_token", flat=True))) == 2
