"""Audit events (``StatusEvent``) written for people: what happened, in a sentence, instead of
the stored kind and detail dict (``{'hits': 20}``). Unknown kinds and keys still show, in
words made from their names, so nothing recorded is hidden."""

from __future__ import annotations

from annotation.money import money_text, provider_currency
from annotation.providers.prolific import REJECTION_CATEGORY_WORDS

#: What each kind of event says happened.
KIND_WORDS = {
    "annotation_decided": "answer decided", "annotation_revised": "answer changed",
    "annotation_superseded": "older answer replaced", "answer_invalid": "answer not readable",
    "assignment_collected": "collected", "assignment_decided": "decided",
    "assignment_mismatch": "reported for another worker or HIT",
    "assignment_not_reported": "not reported by the provider",
    "assignment_released": "given back", "assignment_status_collected": "status collected",
    "assignment_verified": "answers confirmed by collection",
    "assignments_added": "places added", "batch_cancelled": "batch cancelled",
    "batch_complete": "batch complete", "batch_failed": "batch failed",
    "batch_launched": "batch launched", "batch_published": "batch published",
    "batch_publishing": "publishing started", "batch_resumed": "publishing resumed",
    "block_synced": "block sent to the provider", "bonus_created": "bonus queued",
    "bonus_failed": "bonus refused", "bonus_resent": "unpaid bonus sent again",
    "bonus_resolved": "bonus checked by hand", "bonus_sent": "bonus paid",
    "bonus_set_up": "bonus set up", "bonus_unconfirmed": "bonus outcome unknown",
    "decision_sync_failed": "decision not accepted by the provider",
    "decision_synced": "decision sent to the provider", "flag_closed": "flag closed",
    "hit_expired": "stopped", "hit_extended": "extended", "hit_failed": "failed to publish",
    "hit_published": "published", "hit_status_collected": "status collected",
    "problem_reported": "problem reported", "study_paused": "study paused",
    "submission_without_answers": "finished without a saved answer",
    "worker_blocked": "worker blocked", "worker_unblocked": "worker unblocked",
}


def _money(cents: object, currency: str | None = None) -> str:
    # In the currency of the provider the batch went through (``annotation.money``); "cents"
    # without a symbol only when the caller does not know it.
    return money_text(cents, currency) if isinstance(cents, int) else str(cents)


def _count(noun: str):
    return lambda value: f"{value} {noun}{'' if value == 1 else 's'}" if isinstance(
        value, int) else f"{noun}s: {', '.join(map(str, value))}" if isinstance(
            value, list) else f"{noun}: {value}"


def _estimate(value: object) -> str:
    if not isinstance(value, dict):
        return f"estimate: {value}"
    places = "places" if value.get("provider") == "prolific" else "assignments"
    currency = provider_currency(str(value.get("provider") or "mturk"))
    return (f"estimate: {value.get('hits')} HITs, {value.get('assignments')} {places}, "
            f"{_money(value.get('total_cents'), currency)} in all (rewards "
            f"{_money(value.get('reward_cents'), currency)}, fees "
            f"{_money(value.get('fee_cents'), currency)}, "
            f"VAT {_money(value.get('vat_cents'), currency)})")


#: How each detail key reads; ``None``: not shown (an internal id with no meaning to people).
DETAIL_WORDS = {
    "hits": _count("HIT"), "count": _count("place"), "annotations": _count("answer"),
    # Amounts (``MONEY_WORDS``) read in the batch's currency, given by the caller.
    "message": lambda v: f"message: “{v}”" if v else None,
    "reason": lambda v: f"reason: “{v}”" if v else None,
    "error": lambda v: f"error: {v}", "remote_status": lambda v: f"provider says {v}" if v
    else None, "worker": lambda v: f"worker {v}", "reported_worker": lambda v: f"reported "
    f"worker {v}", "reported_hit": lambda v: f"reported HIT {v}",
    "project": lambda v: f"project {v}", "paid": lambda v: "paid" if v else "not paid",
    "bulk": lambda v: "in one bulk call" if v else None,
    "rejection_category": lambda v: REJECTION_CATEGORY_WORDS.get(v, v),
    "command_line_user": lambda v: f"by {v} on the command line",
    "expires_at": lambda v: f"until {str(v)[:16].replace('T', ' ')}",
    "estimate": _estimate, "live": lambda v: "on MTurk's live site" if v else None,
    "skipped_items": lambda v: f"{v} item{'' if v == 1 else 's'} skipped" if v else None,
    "bonus_id": None, "token": None, "setup_id": None, "superseded_by": None,
    "supersedes": None,
}


#: Detail keys holding an amount in the smallest unit of the batch's currency.
MONEY_WORDS = {"amount_cents": "{}", "fees_cents": "fees {}"}


def describe_event(event, currency: str | None = None) -> str:
    """One line for people: the kind in words, its status change, then each detail; amounts
    in ``currency`` (the provider's of the event's batch, ``annotation.money``)."""
    parts = [KIND_WORDS.get(event.kind, event.kind.replace("_", " "))]
    if event.old_status or event.new_status:
        parts[0] += (f" ({event.old_status} → {event.new_status})" if event.old_status
                     else f" ({event.new_status})")
    for key, value in (event.detail or {}).items():
        if key in MONEY_WORDS:
            text = MONEY_WORDS[key].format(_money(value, currency))
        elif key in DETAIL_WORDS:
            words = DETAIL_WORDS[key]
            text = None if words is None else words(value)
        else:
            text = f"{key.replace('_', ' ')}: {value}"
        if text:
            parts.append(text)
    return "; ".join(parts)
