"""Template filters for the review rules of ``annotation/selectors/blocks.py``, so that any
staff template (the queue's rows included) shows "blocked" and "not confirmed yet" by the same
rule the services enforce."""

from __future__ import annotations

from django import template

from annotation.models import Annotation
from annotation.providers.prolific import REJECTION_CATEGORY_WORDS
from annotation.selectors.blocks import (
    assignment_unconfirmed,
    blocked_worker_ids,
    unconfirmed_assignment_ids,
    worker_blocked_for,
)

register = template.Library()


@register.filter
def blocked_for(worker, project) -> bool:
    """``{% if worker|blocked_for:project %}``: blocked everywhere or from ``project``."""
    if worker is None:
        return False
    if worker.is_blocked:
        return True
    if not project:
        return False
    if isinstance(project, int):
        return worker_blocked_for(worker, project)
    # One query per project and page, however many rows name a worker.
    if not hasattr(project, "_blocked_worker_ids"):
        project._blocked_worker_ids = blocked_worker_ids(project)
    return worker.pk in project._blocked_worker_ids


@register.filter
def unconfirmed(assignment) -> bool:
    """``{% if assignment|unconfirmed %}``: collection has not confirmed it (no decision, no
    pay yet). Uses the row's ``unconfirmed`` annotation when a selector added it."""
    if assignment is None:
        return False
    known = getattr(assignment, "unconfirmed", None)
    if known is not None:
        return bool(known)
    prefetched = getattr(assignment, "_prefetched_objects_cache", {}).get("annotations")
    if prefetched is not None:
        return any(a.state == Annotation.State.PROVISIONAL for a in prefetched)
    return assignment_unconfirmed(assignment)


@register.filter
def rejection_words(category: str) -> str:
    """A Prolific rejection category in words (the code itself when unknown)."""
    return REJECTION_CATEGORY_WORDS.get(category, category)


@register.simple_tag(takes_context=True)
def is_unconfirmed(context, assignment) -> bool:
    """``{% is_unconfirmed assignment as waiting %}``: the ``unconfirmed`` filter for pages
    listing many assignments of one project: one query per page (the project's undecided
    assignments collection has not confirmed, cached on the request), not one per row."""
    if assignment is None:
        return False
    if getattr(assignment, "unconfirmed", None) is not None or getattr(
            assignment, "_prefetched_objects_cache", {}).get("annotations") is not None:
        return unconfirmed(assignment)
    request = context.get("request")
    if request is None:
        return assignment_unconfirmed(assignment)
    cache = request.__dict__.setdefault("_unconfirmed_assignments", {})
    project_id = assignment.hit.batch.project_id
    if project_id not in cache:
        cache[project_id] = unconfirmed_assignment_ids(project_id)
    return assignment.pk in cache[project_id]


@register.filter
def event_words(event, currency: str | None = None) -> str:
    """An audit event in a sentence for people (``frontend/staff/events.py``), its amounts in
    ``currency`` (the batch's provider's)."""
    from frontend.staff.events import describe_event

    return describe_event(event, currency)


@register.filter
def provider_money(cents, provider: str) -> str:
    """``{{ batch.reward_cents|provider_money:batch.provider }}``: "$0.50", "£0.50"
    (``annotation.money``)."""
    from annotation.money import provider_money_text

    return provider_money_text(int(cents), provider)


@register.filter
def provider_minor_unit(provider: str) -> str:
    """``{{ batch.provider|provider_minor_unit }}``: what a whole-number amount is in, "cents
    (USD)", "pence (GBP)" (``annotation.money``)."""
    from annotation.money import minor_unit_text, provider_currency

    return minor_unit_text(provider_currency(provider))
