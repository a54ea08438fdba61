"""Managing live HITs (Prolific: studies): expiring (stopping) and extending them, pausing and
resuming a study, adding assignments (places), notifying workers; ``batch_manage`` is what the
staff batch page calls. Reviewer decisions (approve, reject, bonus, block) are
``annotation.services.decisions``."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ...models import (
    Batch,
    Hit,
    Worker,
)
from ...providers import (
    AnnotationProvider,
)
from ..adaptive import adaptive_policy
from ..jobs import enqueue_after_commit
from .common import (
    MAX_ASSIGNMENTS_PER_HIT,
    OPEN_HIT_STATUSES,
    provider_for,
    provider_for_batch,
    record_status_event,
)
from .plan import hits_places_needed

logger = logging.getLogger(__name__)


def workers_notify(*, project_id: int, worker_ids: Iterable[int], subject: str, message: str,
                   provider: AnnotationProvider | None = None) -> list[str]:
    """Message MTurk workers of a project; returns the WorkerIds the provider could not reach.
    Workers who never worked on this project's batches are not messaged."""
    if not subject.strip() or not message.strip():
        raise ValidationError("a notification needs a subject and a message")
    workers = Worker.objects.filter(
        pk__in=list(worker_ids), provider=Worker.Provider.MTURK,
        assignments__hit__batch__project_id=project_id).distinct()
    external_ids = sorted({worker.external_id for worker in workers})
    if not external_ids:
        return []
    if provider is None:
        latest = Batch.objects.filter(project_id=project_id,
                                      provider=Worker.Provider.MTURK).order_by("-pk")
        batch = latest.first()
        provider = provider_for(name=Worker.Provider.MTURK, live=bool(batch and batch.live))
    failures = provider.notify_workers(external_ids, subject=subject[:200], message=message)
    return [failure.worker_id for failure in failures]


def _published_hit(hit_id: int) -> Hit:
    hit = Hit.objects.select_related("batch").get(pk=hit_id)
    if not hit.provider_hit_id:
        raise ValidationError(f"hit {hit_id} is not published")
    return hit


def hit_expire(*, hit_id: int, provider: AnnotationProvider | None = None) -> Hit:
    """Stop a HIT taking new workers now (work in progress can still be submitted)."""
    hit = _published_hit(hit_id)
    now = timezone.now()
    if hit.expires_at is not None and hit.expires_at <= now:
        return hit
    (provider or provider_for_batch(hit.batch)).update_expiration(hit.provider_hit_id,
                                                                  expire_at=now)
    with transaction.atomic():
        if Hit.objects.filter(pk=hit_id, expires_at=hit.expires_at).update(expires_at=now):
            record_status_event(batch=hit.batch, hit=hit, kind="hit_expired",
                                detail={"expires_at": now.isoformat()})
    hit.refresh_from_db()
    return hit


def hit_extend(*, hit_id: int, seconds: int, provider: AnnotationProvider | None = None) -> Hit:
    """Keep a HIT open until at least ``seconds`` from now.

    The target is "now + seconds" (never "old expiry + seconds"), so a retried job lands on
    about the same moment instead of extending twice; an expiry already later stays.
    """
    if seconds < 60:
        raise ValidationError({"seconds": "extend by at least 60 seconds"})
    hit = _published_hit(hit_id)
    target = timezone.now() + timedelta(seconds=seconds)
    if hit.expires_at is not None and hit.expires_at >= target:
        return hit
    (provider or provider_for_batch(hit.batch)).update_expiration(hit.provider_hit_id,
                                                                  expire_at=target)
    with transaction.atomic():
        if Hit.objects.filter(pk=hit_id, expires_at=hit.expires_at).update(expires_at=target):
            record_status_event(batch=hit.batch, hit=hit, kind="hit_extended",
                                detail={"expires_at": target.isoformat()})
    hit.refresh_from_db()
    return hit


def hit_add_assignments(*, hit_id: int, count: int, request_token: str,
                        provider: AnnotationProvider | None = None) -> Hit:
    """Ask for ``count`` more assignments once per ``request_token`` (the job's id).

    MTurk will not take a HIT created with fewer than 10 assignments to 10 or more, and 10+
    would cost the surcharge anyway: beyond 9, launch another batch for the items.
    """
    if count < 1:
        raise ValidationError({"count": "add at least one assignment"})
    if not request_token:
        raise ValidationError("adding assignments needs the request token of the job")
    hit = _published_hit(hit_id)
    token = f"unpack-add-{request_token}"[:64]
    if hit.events.filter(kind="assignments_added", detail__token=token).exists():
        return hit
    provider = provider or provider_for_batch(hit.batch)
    if hit.batch.provider == "prolific":
        # A study's places are set to a target computed from OUR count, so a retried job
        # (the call went through, our record did not) sets the same number again.
        provider.set_total_places(hit.provider_hit_id, hit.max_assignments + count)
    else:
        if hit.max_assignments + count > MAX_ASSIGNMENTS_PER_HIT:
            raise ValidationError({"count": (
                f"hit {hit_id} has {hit.max_assignments} assignments; more than "
                f"{MAX_ASSIGNMENTS_PER_HIT} in total is refused (MTurk's 10+ rule and "
                "surcharge)")})
        provider.create_additional_assignments(hit.provider_hit_id, count=count,
                                               unique_request_token=token)
    with transaction.atomic():
        locked = Hit.objects.select_for_update().get(pk=hit_id)
        if not locked.events.filter(kind="assignments_added", detail__token=token).exists():
            locked.max_assignments += count
            locked.save(update_fields=["max_assignments", "updated_at"])
            record_status_event(batch=hit.batch, hit=locked, kind="assignments_added",
                                detail={"token": token, "count": count})
    hit.refresh_from_db()
    return hit


def hit_places_adapt(*, hit_id: int, request_token: str,
                     provider: AnnotationProvider | None = None) -> int:
    """Adaptive redundancy on Prolific: add to the study the places its items need now
    (``plan.hits_places_needed``, computed when the job runs, so a second job for the same
    study adds nothing once the first's places are recorded), once per ``request_token``
    (``hit_add_assignments``). The number of places added (0: none needed)."""
    need = hits_places_needed(hit_ids=[hit_id]).get(hit_id, 0)
    if need:
        hit_add_assignments(hit_id=hit_id, count=need, request_token=request_token,
                            provider=provider)
    return need


def batch_places_follow(*, batch: Batch) -> list[int]:
    """Queue ``hit_places_adapt`` for the open studies of a Prolific batch whose items need
    more places now (adaptive projects: answers that disagree); after commit. The studies
    queued (none for other providers, projects without a policy, or batches not
    published). Collection calls it after storing answers, the batch page on request."""
    if (batch.provider != "prolific" or batch.status != Batch.Status.PUBLISHED
            or adaptive_policy(batch.project) is None):
        return []
    hits = Hit.objects.filter(batch=batch, provider_hit_id__isnull=False,
                              status__in=OPEN_HIT_STATUSES).values_list("pk", flat=True)
    needed = sorted(hits_places_needed(hit_ids=hits))
    for hit_id in needed:
        enqueue_after_commit(MANAGE_ACTIONS["adapt"], hit_id)
    return needed


def _transition_study(*, hit_id: int, pause: bool,
                      provider: AnnotationProvider | None) -> Hit:
    hit = _published_hit(hit_id)
    if hit.batch.provider != "prolific":
        raise ValidationError("only a Prolific study can be paused or resumed (expire an "
                              "MTurk HIT instead)")
    provider = provider or provider_for_batch(hit.batch)
    study = provider.get_study(hit.provider_hit_id)
    wanted = "PAUSED" if pause else "ACTIVE"
    if study.status != wanted:  # already there (a retried job): nothing to send
        if (pause and study.status != "ACTIVE") or (not pause and study.status != "PAUSED"):
            raise ValidationError(f"study {hit.provider_hit_id} is {study.status}; it cannot "
                                  f"be {'paused' if pause else 'resumed'}")
        study = provider.pause_study(hit.provider_hit_id) if pause \
            else provider.resume_study(hit.provider_hit_id)
    new_status = Hit.Status.UNASSIGNABLE if pause else Hit.Status.ASSIGNABLE
    with transaction.atomic():
        if Hit.objects.filter(pk=hit_id).exclude(status=new_status).update(status=new_status):
            record_status_event(batch=hit.batch, hit=hit,
                                kind="study_paused" if pause else "study_resumed",
                                old=hit.status, new=new_status)
    hit.refresh_from_db()
    return hit


def hit_pause(*, hit_id: int, provider: AnnotationProvider | None = None) -> Hit:
    """Pause a Prolific study: nobody new starts it; sessions in progress go on."""
    return _transition_study(hit_id=hit_id, pause=True, provider=provider)


def hit_resume(*, hit_id: int, provider: AnnotationProvider | None = None) -> Hit:
    """Resume a paused Prolific study."""
    return _transition_study(hit_id=hit_id, pause=False, provider=provider)


#: What the staff batch page can ask of a batch's live HITs (studies), and the job for each.
MANAGE_ACTIONS = {"stop": "annotation.tasks.expire_hit", "pause": "annotation.tasks.pause_hit",
                  "resume": "annotation.tasks.resume_hit",
                  "add": "annotation.tasks.add_assignments",
                  "adapt": "annotation.tasks.adapt_places"}


@transaction.atomic
def batch_manage(*, batch_id: int, action: str, hit_ids: Iterable[int] = (),
                 count: int | None = None, actor=None) -> list[int]:
    """Stop (expire), pause or resume the batch's published HITs (``hit_ids``, or all), or add
    ``count`` assignments (Prolific: places) to each, or (``adapt``, Prolific, adaptive
    projects) the places each study's items need now (``hit_places_adapt``: only studies that
    need some are queued); one job per HIT, after commit. Checked first (nothing is queued on
    bad input); returns the HIT ids the jobs were queued for."""
    batch = Batch.objects.select_for_update().get(pk=batch_id)
    if action not in MANAGE_ACTIONS:
        raise ValidationError({"action": f"one of {', '.join(MANAGE_ACTIONS)}"})
    if action in ("pause", "resume") and batch.provider != "prolific":
        raise ValidationError({"action": "only Prolific studies can be paused or resumed"})
    if action == "adapt":
        if batch.provider != "prolific":
            raise ValidationError({"action": "places follow adaptive redundancy on Prolific "
                                             "studies only"})
        if adaptive_policy(batch.project) is None:
            raise ValidationError({"action": f"project {batch.project.slug} has no adaptive "
                                             "redundancy policy"})
    if action == "add" and (count is None or not 1 <= count <= 1000):
        raise ValidationError({"count": "add between 1 and 1000"})
    hits = Hit.objects.filter(batch=batch, provider_hit_id__isnull=False)
    wanted = [int(hit_id) for hit_id in hit_ids]
    if wanted:
        hits = hits.filter(pk__in=wanted)
        missing = sorted(set(wanted) - set(hits.values_list("pk", flat=True)))
        if missing:
            raise ValidationError({"hits": f"not published HITs of batch {batch_id}: "
                                           f"{missing[:20]}"})
    if action == "add" and batch.provider != "prolific":
        full = [hit.provider_hit_id for hit in hits
                if hit.max_assignments + count > MAX_ASSIGNMENTS_PER_HIT]
        if full:
            raise ValidationError({"count": (
                f"HITs {full[:20]} would have more than {MAX_ASSIGNMENTS_PER_HIT} assignments "
                "(MTurk's 10+ rule and surcharge): launch another batch for their items")})
    chosen = list(hits.order_by("pk").values_list("pk", flat=True))
    if not chosen:
        raise ValidationError({"hits": f"batch {batch_id} has no published HIT"})
    if action == "adapt":
        # Only the studies whose items need more places now (their answers disagree).
        chosen = sorted(hits_places_needed(hit_ids=chosen))
        if not chosen:
            raise ValidationError({"hits": (
                "no study needs more places now: every item's answers are clear, or its "
                "places already cover its target")})
    record_status_event(batch=batch, kind=f"hits_{action}_requested", actor=actor,
                        detail={"hits": chosen[:200], "count": count})
    for hit_id in chosen:
        if action == "add":
            enqueue_after_commit(MANAGE_ACTIONS[action], hit_id, count)
        else:
            enqueue_after_commit(MANAGE_ACTIONS[action], hit_id)
    return chosen


DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration_seconds(text: str) -> int:
    """``"7d"``, ``"1h"``, ``"30m"``, ``"90s"`` or a plain number of seconds."""
    value = text.strip().lower()
    unit = DURATION_UNITS.get(value[-1:]) if value else None
    number = value[:-1] if unit else value
    if not number.isdigit():
        raise ValueError(f"{text!r} is not a duration like 7d, 1h, 30m or 3600")
    return int(number) * (unit or 1)
