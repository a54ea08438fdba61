"""A Prolific bonus whose pay reply is lost (the stand-in pays, then closes the connection
without answering): settled from the submission's ``bonus_payments`` (GET /submissions/{id}/),
never paid again; a pay Prolific never made is checked again and left to a human only after
the settle time. Commands and the review page say exactly what happened (issue 22.11). Jobs
run inline (the embedded default): transactional tests, so they run at commit."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Bonus
from tests.prolific.test_decisions import payments, scenario

pytestmark = pytest.mark.django_db(transaction=True)


def review(*args: str) -> str:
    out = StringIO()
    call_command("review", *args, stdout=out)
    return out.getvalue()


def test_a_lost_reply_to_a_paid_bonus_is_settled_from_prolifics_list(
        prolific_app, simulator, client, django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    reference = ctx["assignment"].provider_assignment_id
    simulator.withhold_replies("pay_bonus")
    said = review("bonus", reference, "--amount", "0.50", "--reason", "Careful work")
    bonus = Bonus.objects.get()
    assert said.strip() == (f"bonus {bonus.pk}: £0.50 paid: the reply to the pay call was "
                            "lost, and Prolific's list of payments shows it paid (nothing was "
                            "sent again)")
    assert bonus.sent_at is not None and bonus.error == ""
    assert prolific_app.world.calls["pay_bonus"] == 1 and len(payments(prolific_app)) == 1
    # Asking again is refused (it is paid), and nothing is paid twice.
    with pytest.raises(CommandError, match="already got a bonus"):
        review("bonus", reference, "--amount", "0.50", "--reason", "Careful work")
    assert len(payments(prolific_app)) == 1


def test_a_pay_prolific_never_made_says_outcome_unknown_then_asks_a_human(
        prolific_app, simulator, client, django_capture_on_commit_callbacks, settings):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    reference = ctx["assignment"].provider_assignment_id
    simulator.fault("pay_bonus", count=1, status=502, retry_after=None)
    with pytest.raises(CommandError) as unknown:
        review("bonus", reference, "--amount", "0.50", "--reason", "Careful work")
    bonus = Bonus.objects.get()
    text = str(unknown.value)
    assert text.startswith(f"bonus {bonus.pk}: £0.50: outcome unknown: the reply to paying "
                           "£0.50 was lost")
    assert "Prolific may have paid it; Prolific lists no such payment yet" in text
    assert f"run `python manage.py review bonus-check {bonus.pk}`" in text
    assert "queued" not in text and "sent again" not in text
    # Replaying the command checks again; it neither claims a resend nor pays.
    with pytest.raises(CommandError) as again:
        review("bonus", reference, "--amount", "0.50", "--reason", "Careful work")
    assert "outcome unknown" in str(again.value) and "sent again" not in str(again.value)
    assert prolific_app.world.calls["pay_bonus"] == 1 and payments(prolific_app) == []
    # Past the settle time with nothing listed, only a human can tell.
    settings.UNPACK_BONUS_SETTLE_SECONDS = 0
    with pytest.raises(CommandError) as human:
        review("bonus-check", str(bonus.pk))
    assert f"review bonus-resolve {bonus.pk} --paid` or `--not-paid`" in str(human.value)
    review("bonus-resolve", str(bonus.pk), "--not-paid")
    bonus.refresh_from_db()
    assert bonus.sent_at is not None and len(payments(prolific_app)) == 1


def test_the_review_page_says_what_happened(prolific_app, simulator, client, staff_client,
                                            django_capture_on_commit_callbacks):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    simulator.withhold_replies("pay_bonus")
    answer = staff_client.post(
        f"/staff/review/{ctx['project'].slug}/assignments/{ctx['assignment'].pk}/bonus/",
        {"amount_cents": "50", "reason": "Careful work"}, follow=True)
    page = answer.content.decode()
    assert "list of payments shows it paid (nothing was sent again)" in page
    assert "queued" not in page
    simulator.fault("pay_bonus", count=1, status=502, retry_after=None)
    answer = staff_client.post(
        f"/staff/review/{ctx['project'].slug}/assignments/{ctx['assignment'].pk}/bonus/",
        {"amount_cents": "30", "reason": "More", "again": "on"}, follow=True)
    page = answer.content.decode()
    assert "outcome unknown: the reply to paying £0.30 was lost" in page
    assert "Prolific may have paid it" in page


def test_a_lost_reply_while_prolific_cannot_be_asked_says_so(
        prolific_app, simulator, client, django_capture_on_commit_callbacks, monkeypatch):
    ctx = scenario(simulator, django_capture_on_commit_callbacks, client=client)
    reference = ctx["assignment"].provider_assignment_id
    simulator.withhold_replies("pay_bonus")
    world = prolific_app.world
    real_pay = world.op_pay_bonus

    def pay_then_unreachable(setup_id):
        # Paid, reply lost, and then reading the submission answers 503 past the retries.
        paid = real_pay(setup_id)
        world.faults["get_submission"] = [(503, None)] * 20
        return paid

    monkeypatch.setattr(world, "op_pay_bonus", pay_then_unreachable)
    with pytest.raises(CommandError) as unknown:
        review("bonus", reference, "--amount", "0.50", "--reason", "Careful work")
    text = str(unknown.value)
    assert "outcome unknown" in text and "Prolific may have paid it" in text
    assert "Prolific could not be asked for its payments just now" in text
    assert "lists no such payment" not in text  # it was never asked successfully
    prolific_app.world.faults.clear()
    bonus = Bonus.objects.get()
    assert review("bonus-check", str(bonus.pk)).strip().endswith("(nothing was sent again)")
    assert prolific_app.world.calls["pay_bonus"] == 1 and len(payments(prolific_app)) == 1
