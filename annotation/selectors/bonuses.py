"""What became of a bonus someone asked for, in words a command or a page can show as is."""

from __future__ import annotations

from celery import current_app
from django.db import transaction

from ..models import Bonus, StatusEvent
from ..money import provider_money_text


def bonus_check_command(bonus_id: int) -> str:
    """The command that checks an unsettled bonus again (runs its job now)."""
    return f"python manage.py review bonus-check {bonus_id}"


def bonus_report(bonus_id: int) -> tuple[bool, str]:
    """``(done, text)``: whether the bonus is settled (paid, or in a worker's hands) and
    exactly what happened, read back from the database after its job ran (inline) or was
    queued (a worker). Never "queued" for a job that already ran, never "sent again" for a
    bonus the provider had paid: the words come from what the bonus job recorded."""
    bonus = Bonus.objects.select_related("assignment__hit__batch").get(pk=bonus_id)
    provider = bonus.assignment.hit.batch.provider
    label = "Prolific" if provider == "prolific" else "MTurk"
    head = f"bonus {bonus.pk}: {provider_money_text(bonus.amount_cents, provider)}"
    if bonus.sent_at is not None:
        found = StatusEvent.objects.filter(kind="bonus_found_paid",
                                           detail__bonus_id=bonus.pk).exists()
        if found:
            return True, (f"{head} paid: the reply to the pay call was lost, and {label}'s "
                          "list of payments shows it paid (nothing was sent again)")
        return True, f"{head} paid"
    if bonus.error:
        return False, f"{head}: {bonus.error}"
    if current_app.conf.task_always_eager:
        if transaction.get_connection().in_atomic_block:
            return True, f"{head}: it is paid when the surrounding transaction commits"
        return False, (f"{head} not paid yet: {label} could not be reached or kept asking us "
                       "to slow down; nothing retries it here (no job worker): run "
                       f"`{bonus_check_command(bonus.pk)}`")
    return True, f"{head} queued: the job worker pays it"
