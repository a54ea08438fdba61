"""Collect submitted work: ListReviewableHITs + ListAssignmentsForHIT, answers checked and stored
as annotations, remote statuses copied, unreported assignments released.

Prolific (a study per HIT, a submission per assignment) goes through the same code: its
submission statuses arrive in the same words (``providers.prolific.SUBMISSION_STATUS``), a
session it reports as RETURNED or TIMED-OUT frees its slot (the assignment becomes returned or
abandoned and its answers stop counting), and answers are never rebuilt from Prolific (it
holds none: the task page stored them here)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ...models import (
    Annotation,
    Assignment,
    Batch,
    Flag,
    Hit,
    Item,
    Worker,
)
from ...providers import (
    AnnotationProvider,
    CollectedAssignment,
)
from ...selectors.annotate import page_assignment_is_theirs
from ...selectors.qc import anonymous_worker_id
from ..annotations import (
    ASSIGNMENT_GRACE,
    RELEASED_ASSIGNMENT_STATUSES,
    annotation_state,
    annotations_confirm,
    annotations_release,
    annotations_set_review_status,
    item_filled_marks_kept,
)
from ..statistics import planner_statistics_refresh_grown
from .common import (
    OPEN_HIT_STATUSES,
    REMOTE_ASSIGNMENT_STATUS,
    REMOTE_HIT_STATUS,
    provider_for_batch,
    record_status_event,
    set_batch_status,
)
from .decide import batch_places_follow

logger = logging.getLogger(__name__)


# --- The answer our ExternalQuestion page posts to MTurk (QuestionFormAnswers fields) ----------
#: JSON object {"<item id>": <payload of the project's kind>, ...} -- one entry per HIT item.
ANSWER_FIELD_PAYLOADS = "unpack_payload"
#: Optional JSON object {"<item id>": {"duration_ms": int, "client_warnings": [...],
#: "overridden_warnings": [...]}} -- what the browser measured and showed.
ANSWER_FIELD_META = "unpack_meta"

# --- Collect -----------------------------------------------------------------------------------


@dataclass
class CollectResult:
    hits_seen: int = 0
    assignments_seen: int = 0
    assignments_created: int = 0
    annotations_created: int = 0
    status_changes: int = 0
    invalid_answers: int = 0
    #: page-saved assignments MTurk reported for the first time (their answers now count)
    assignments_verified: int = 0
    #: page-saved assignments MTurk never reported in time (abandoned, flagged)
    assignments_released: int = 0
    errors: list[str] = field(default_factory=list)

    def merge(self, other: CollectResult) -> None:
        for name in ("hits_seen", "assignments_seen", "assignments_created",
                     "annotations_created", "status_changes", "invalid_answers",
                     "assignments_verified", "assignments_released"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.extend(other.errors)


#: Remote statuses of a session given back (Prolific's RETURNED and TIMED-OUT): its slot is free.
REMOTE_RELEASED_STATUS = {
    "Returned": Assignment.Status.RETURNED,
    "Abandoned": Assignment.Status.ABANDONED,
}
#: A session still being worked on (Prolific's ACTIVE, RESERVED).
REMOTE_IN_PROGRESS = "Accepted"
#: Batch providers whose answers are collected from the provider (MTurk's QuestionFormAnswers);
#: a Prolific submission carries none.
ANSWERS_AT_PROVIDER = frozenset({"mturk"})
#: The batches the periodic collection visits (``open_batch_ids``) and the staff pages offer
#: to collect: MTurk's and Prolific's, while open. Their ``provider`` is a ``Worker.Provider``
#: (the workers' provider and the answers' source; its label names it in messages).
COLLECTED_PROVIDERS = (Worker.Provider.MTURK, Worker.Provider.PROLIFIC)
COLLECTED_STATUSES = (Batch.Status.PUBLISHING, Batch.Status.PUBLISHED)


def batch_is_collected(batch: Batch) -> bool:
    """Whether the periodic collection visits ``batch`` (so whether staff may collect it)."""
    return batch.provider in COLLECTED_PROVIDERS and batch.status in COLLECTED_STATUSES


class AnswerError(ValueError):
    """A collected answer that cannot become annotations; stored for a reviewer to see."""


def parse_answer_payloads(answers: dict, item_ids: Sequence[int]) -> tuple[dict, dict]:
    """``({item_id: raw payload}, {item_id: meta})`` from our page's QuestionFormAnswers fields.

    Every item of the HIT must have a payload; unknown item ids are an error (a page posting
    for another HIT's items must not write into this one).
    """
    raw = answers.get(ANSWER_FIELD_PAYLOADS)
    if not isinstance(raw, str) or not raw.strip():
        raise AnswerError(f"the answer has no {ANSWER_FIELD_PAYLOADS} field")
    try:
        by_item = json.loads(raw)
    except ValueError as error:
        raise AnswerError(f"{ANSWER_FIELD_PAYLOADS} is not JSON: {error}") from error
    if not isinstance(by_item, dict):
        raise AnswerError(f"{ANSWER_FIELD_PAYLOADS} must be a JSON object keyed by item id")
    meta_raw = answers.get(ANSWER_FIELD_META) or "{}"
    try:
        meta = json.loads(meta_raw) if isinstance(meta_raw, str) else {}
    except ValueError:
        meta = {}
    expected = {str(item_id) for item_id in item_ids}
    unknown = set(by_item) - expected
    if unknown:
        raise AnswerError(f"payloads for items not in this HIT: {sorted(unknown)[:10]}")
    missing = expected - set(by_item)
    if missing:
        raise AnswerError(f"no payload for items {sorted(missing, key=int)[:10]}")
    return ({int(key): value for key, value in by_item.items()},
            {int(key): value for key, value in meta.items()
             if key in expected and isinstance(value, dict)})


def _clean_payload(item: Item, raw: object) -> tuple[dict, dict]:
    """The canonical payload and denormalised columns, through ``annotation.payloads``."""
    from ... import payloads
    from ...selectors.annotate import item_context

    try:
        clean = payloads.validate_payload(item.project.kind, raw, item_context(item))
    except payloads.PayloadError as error:
        raise AnswerError(f"item {item.pk}: {error}") from error
    return clean.payload, clean.columns


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _warning_list(value: object) -> list:
    return [w for w in value if isinstance(w, dict)][:20] if isinstance(value, list) else []


def assignment_record_collected(*, hit: Hit, collected: CollectedAssignment) -> CollectResult:
    """Store one collected assignment idempotently (by AssignmentId).

    A new assignment gets a Worker (provider mturk), an Assignment and one annotation per HIT
    item, validated per kind; items the task page already saved for this assignment are left
    as they are, so collecting twice (or after the page) stores nothing twice. A remote status
    change (auto-approval, a decision made on the MTurk site) is copied unless a local decision
    is still waiting to be sent. An answer that cannot be parsed keeps the raw XML and an
    ``answer_invalid`` event for a reviewer; it never stops the collection.
    """
    result = CollectResult(assignments_seen=1)
    remote_status = REMOTE_ASSIGNMENT_STATUS.get(collected.status)
    if collected.status in REMOTE_RELEASED_STATUS or collected.status == REMOTE_IN_PROGRESS:
        _record_session_state(hit, collected, result)
        return result
    if remote_status is None:
        return result
    with transaction.atomic():
        worker, _ = Worker.objects.get_or_create(provider=Worker.Provider(hit.batch.provider),
                                                 external_id=collected.worker_id)
        assignment, created = Assignment.objects.select_for_update().get_or_create(
            provider_assignment_id=collected.assignment_id,
            defaults={"hit": hit, "worker": worker, "status": remote_status,
                      "accepted_at": collected.accept_time,
                      "submitted_at": collected.submit_time,
                      "raw_answer": collected.answer_xml, "confirmed_at": timezone.now(),
                      "reviewed_at": timezone.now() if remote_status != "submitted" else None},
        )
        if created:
            result.assignments_created = 1
            record_status_event(batch=hit.batch, hit=hit, assignment=assignment,
                                kind="assignment_collected", new=remote_status,
                                detail={"worker": worker.anonymous_id})
            if hit.batch.provider not in ANSWERS_AT_PROVIDER:
                # Finished at Prolific without one answer saved on our task page (a code typed
                # in by hand): nothing to store, a reviewer decides (e.g. NO_DATA).
                record_status_event(batch=hit.batch, hit=hit, assignment=assignment,
                                    kind="submission_without_answers")
        else:
            if assignment.hit_id != hit.pk or assignment.worker_id != worker.pk:
                # The task page stored this AssignmentId for another worker or HIT than MTurk
                # reports: that work was not MTurk's. Left out (provisional) and flagged.
                _flag_mismatch(hit, assignment, collected)
                return result
            result.assignments_verified = _verify(hit, assignment)
            if assignment.confirmed_at is None:  # MTurk vouches for it: it holds a slot now
                assignment.confirmed_at = timezone.now()
                assignment.save(update_fields=["confirmed_at"])
            if not assignment.raw_answer and collected.answer_xml:
                assignment.raw_answer = collected.answer_xml
                assignment.save(update_fields=["raw_answer"])
            result.status_changes += _copy_remote_status(assignment, remote_status)
            if assignment.submitted_at is None and collected.submit_time is not None:
                assignment.submitted_at = collected.submit_time
                assignment.save(update_fields=["submitted_at"])
        if hit.batch.provider not in ANSWERS_AT_PROVIDER:
            pass  # answers live in our database only (the task page saved them)
        elif assignment.status == Assignment.Status.SUBMITTED or created:
            created_annotations = _store_annotations(hit, assignment, worker, collected)
            if created_annotations is None:
                result.invalid_answers = 1
            else:
                result.annotations_created = created_annotations
    return result


def _record_session_state(hit: Hit, collected: CollectedAssignment,
                          result: CollectResult) -> None:
    """A session the provider reports in progress (it vouches for it: it holds a slot from now
    on) or given back (returned, timed out: it is released, its answers stop counting). Only a
    session the task page stored for this worker and HIT is touched; one nobody saved anything
    in has nothing to record."""
    with transaction.atomic():
        assignment = (Assignment.objects.select_for_update().select_related("worker")
                      .filter(provider_assignment_id=collected.assignment_id).first())
        if assignment is None:
            return
        if not page_assignment_is_theirs(assignment, hit=hit,
                                         provider=Worker.Provider(hit.batch.provider),
                                         worker_id=collected.worker_id):
            _flag_mismatch(hit, assignment, collected)
            return
        if collected.status == REMOTE_IN_PROGRESS:
            if assignment.confirmed_at is None and assignment.status not in \
                    RELEASED_ASSIGNMENT_STATUSES:
                assignment.confirmed_at = timezone.now()
                assignment.save(update_fields=["confirmed_at"])
            return
        released = REMOTE_RELEASED_STATUS[collected.status]
        if assignment.status not in (Assignment.Status.ACCEPTED, Assignment.Status.SUBMITTED):
            return  # already released, or decided (a decision stands)
        old = assignment.status
        assignment.status = released
        assignment.save(update_fields=["status"])
        freed = annotations_release(annotations=assignment.annotations.all())
        record_status_event(batch=hit.batch, hit=hit, assignment=assignment,
                            kind="assignment_released", old=old, new=released,
                            detail={"remote_status": collected.status, "annotations": freed})
        result.assignments_released += 1
        result.status_changes += 1


def _verify(hit: Hit, assignment: Assignment) -> int:
    """MTurk reports this assignment of this worker on this HIT: the answers the task page
    stored for it stop being provisional (exports, QC and coverage count them from now on).
    1 when this collection verified it."""
    verified = annotations_confirm(annotations=assignment.annotations.all())
    if verified:
        record_status_event(batch=hit.batch, hit=hit, assignment=assignment,
                            kind="assignment_verified", detail={"annotations": verified})
    return 1 if verified else 0


def _flag_mismatch(hit: Hit, assignment: Assignment, collected: CollectedAssignment) -> None:
    if assignment.events.filter(kind="assignment_mismatch").exists():
        return
    # Staff see pseudonyms, never the WorkerId the provider reports (as everywhere else).
    provider = Worker.Provider(hit.batch.provider)
    reported_worker = anonymous_worker_id(provider, collected.worker_id)
    label = provider.label
    record_status_event(batch=hit.batch, hit=hit, assignment=assignment,
                        kind="assignment_mismatch",
                        detail={"reported_worker": reported_worker,
                                "reported_hit": collected.hit_id})
    project = hit.batch.project
    Flag.objects.get_or_create(
        project=project, fingerprint=f"assignment_mismatch:{assignment.pk}",
        defaults={"assignment": assignment, "worker": assignment.worker,
                  "reason": "assignment_mismatch", "score": 1.0,
                  "raised_by": Flag.RaisedBy.COLLECTION,
                  "detail": (f"{label} reports assignment {assignment.provider_assignment_id} "
                             f"for worker {reported_worker} on HIT {collected.hit_id}; the task "
                             "page stored it for another worker or HIT. Its answers are left "
                             "out of exports and QC.")})


def _release_unreported(hit: Hit, reported: set[str], *, listed_at: datetime) -> int:
    """Assignments of ``hit`` that MTurk does not report although it must have by now: accepted
    or submitted on our side (by the task page) more than the assignment duration (plus
    ``ASSIGNMENT_GRACE``) before the listing started. A real assignment is submitted within
    its duration from MTurk's AcceptTime, which is before our first save, so it would be in
    the listing; these were invented, or returned or abandoned by the worker. They become
    abandoned (their slot is free again), their answers stay provisional (never exported or
    counted), and those that hold answers are flagged for review. The number released."""
    deadline = listed_at - timedelta(seconds=hit.batch.assignment_duration_seconds) \
        - ASSIGNMENT_GRACE
    stale = (Assignment.objects.filter(hit=hit, accepted_at__lt=deadline, status__in=(
        Assignment.Status.ACCEPTED, Assignment.Status.SUBMITTED))
        .exclude(provider_assignment_id__in=reported).select_related("worker"))
    released = 0
    label = Worker.Provider(hit.batch.provider).label
    for assignment in stale:
        with transaction.atomic():
            if not Assignment.objects.filter(pk=assignment.pk, status=assignment.status).update(
                    status=Assignment.Status.ABANDONED):
                continue
            released += 1
            record_status_event(batch=hit.batch, hit=hit, assignment=assignment,
                                kind="assignment_not_reported", old=assignment.status,
                                new=Assignment.Status.ABANDONED)
            answers = assignment.annotations.count()
            if answers:
                Flag.objects.get_or_create(
                    project=hit.batch.project, fingerprint=f"not_reported:{assignment.pk}",
                    defaults={"assignment": assignment, "worker": assignment.worker,
                              "reason": f"not_reported_by_{hit.batch.provider}", "score": 1.0,
                              "raised_by": Flag.RaisedBy.COLLECTION,
                              "detail": (
                                  f"The task page stored {answers} answer(s) for assignment "
                                  f"{assignment.provider_assignment_id} (worker "
                                  f"{assignment.worker.anonymous_id}), which {label} never "
                                  "reported: an invented assignment id, or work returned "
                                  "or abandoned. Left out of exports, QC and coverage.")})
    return released


def _copy_remote_status(assignment: Assignment, remote_status: str) -> int:
    local = assignment.status
    if local == remote_status:
        return 0
    # Accepted on our side (the page's finish never ran) or released as never reported (clock
    # skew beyond the grace), and MTurk reports it: MTurk's status is the truth, and the page
    # takes no more answers into it.
    reported_late = local == Assignment.Status.ACCEPTED or local in RELEASED_ASSIGNMENT_STATUSES
    if not reported_late:
        if not assignment.decision_synced:
            return 0  # our own decision is on its way to the provider
        if remote_status == Assignment.Status.SUBMITTED:
            return 0  # the provider has not caught up with a decision we already synced
    assignment.status = remote_status
    fields = ["status"]
    if remote_status != Assignment.Status.SUBMITTED:
        assignment.reviewed_at = timezone.now()
        fields.append("reviewed_at")
        review = (Annotation.Review.APPROVED if remote_status == Assignment.Status.APPROVED
                  else Annotation.Review.REJECTED)
        annotations_set_review_status(
            annotations=assignment.annotations.filter(review_status=Annotation.Review.PENDING),
            review_status=review)
    assignment.save(update_fields=fields)
    record_status_event(batch=assignment.hit.batch, hit=assignment.hit, assignment=assignment,
                        kind="assignment_status_collected", old=local, new=remote_status)
    return 1


def _store_annotations(hit: Hit, assignment: Assignment, worker: Worker,
                       collected: CollectedAssignment) -> int | None:
    items = list(Item.objects.filter(hititem__hit=hit).select_related(
        "project", "target_sentence__document", "turn__dialogue", "complex_sentence")
        .order_by("hititem__order"))
    existing = set(assignment.annotations.values_list("item_id", flat=True))
    if existing >= {item.pk for item in items}:
        return 0
    try:
        payloads_by_item, meta_by_item = parse_answer_payloads(
            dict(collected.answers), [item.pk for item in items])
        cleaned = {item.pk: _clean_payload(item, payloads_by_item[item.pk])
                   for item in items if item.pk not in existing}
    except AnswerError as error:
        if not assignment.events.filter(kind="answer_invalid").exists():
            record_status_event(batch=hit.batch, hit=hit, assignment=assignment,
                                kind="answer_invalid", detail={"error": str(error)})
        return None
    review = {Assignment.Status.APPROVED: Annotation.Review.APPROVED,
              Assignment.Status.REJECTED: Annotation.Review.REJECTED}.get(
        assignment.status, Annotation.Review.PENDING)
    annotations = []
    for item in items:
        if item.pk not in cleaned:
            continue
        payload, columns = cleaned[item.pk]
        meta = meta_by_item.get(item.pk, {})
        annotations.append(Annotation(
            project=item.project, item=item, worker=worker, assignment=assignment,
            source=Annotation.Source.MTURK, payload=payload, review_status=review,
            state=annotation_state(source=Annotation.Source.MTURK, review_status=review,
                                   reported=bool(columns.get("problem"))),
            submitted_at=collected.submit_time, started_at=collected.accept_time,
            duration_ms=_int_or_none(meta.get("duration_ms")),
            client_warnings=_warning_list(meta.get("client_warnings")),
            overridden_warnings=_warning_list(meta.get("overridden_warnings")),
            provenance={"provider": "mturk", "assignment_id": collected.assignment_id,
                        "hit_id": collected.hit_id},
            **columns,
        ))
    with item_filled_marks_kept(item.pk for item in items if item.pk in cleaned):
        Annotation.objects.bulk_create(annotations)
    return len(annotations)


def _sync_hit_status(hit: Hit, remote_status: str) -> int:
    new_status = REMOTE_HIT_STATUS.get(remote_status)
    if new_status is None or new_status == hit.status:
        return 0
    updated = Hit.objects.filter(pk=hit.pk, status=hit.status).update(status=new_status)
    if updated:
        record_status_event(batch=hit.batch, hit=hit, kind="hit_status_collected", old=hit.status,
                            new=new_status)
        hit.status = new_status
    return updated


def batch_collect(*, batch_id: int, provider: AnnotationProvider | None = None) -> CollectResult:
    """Fetch every submitted assignment of the batch's open HITs and store it (idempotent).

    ListReviewableHITs (every page) marks HITs whose work is done; ListAssignmentsForHIT (every
    page) runs for each open HIT, so work on HITs still collecting assignments is reviewed
    early. Each assignment is stored in its own transaction. A batch whose HITs are all
    reviewable and whose assignments are all decided and synced becomes complete.
    """
    batch = Batch.objects.get(pk=batch_id)
    result = CollectResult()
    provider = provider or provider_for_batch(batch)
    if not provider.collects_remotely or batch.status not in (
            Batch.Status.PUBLISHING, Batch.Status.PUBLISHED, Batch.Status.COMPLETE):
        return result
    hits = {hit.provider_hit_id: hit for hit in Hit.objects.select_related("batch").filter(
        batch=batch, provider_hit_id__isnull=False, status__in=OPEN_HIT_STATUSES)}
    if batch.provider_hit_type_id:
        # A HIT type is shared by identical specs, so other batches' HITs may be listed too.
        # (Prolific has no "Reviewing": its provider lists nothing for it, without a call.)
        for status in ("Reviewable", "Reviewing"):
            for remote in provider.list_reviewable_hits(hit_type_id=batch.provider_hit_type_id,
                                                        status=status):
                hit = hits.get(remote.hit_id)
                if hit is not None:
                    result.status_changes += _sync_hit_status(hit, remote.status)
    for provider_hit_id, hit in hits.items():
        result.hits_seen += 1
        listed_at = timezone.now()
        reported = set()
        for collected in provider.list_assignments_for_hit(provider_hit_id):
            reported.add(collected.assignment_id)
            result.merge(assignment_record_collected(hit=hit, collected=collected))
        result.assignments_released += _release_unreported(hit, reported, listed_at=listed_at)
    # Adaptive redundancy: studies whose answers (counted from now on) disagree get the
    # places their items need (nothing for other providers or projects).
    batch_places_follow(batch=batch)
    _complete_if_done(batch)
    planner_statistics_refresh_grown(written={Annotation: result.annotations_created,
                                              Assignment: result.assignments_created})
    return result


def _complete_if_done(batch: Batch) -> None:
    if batch.status != Batch.Status.PUBLISHED:
        return
    hits = Hit.objects.filter(batch=batch)
    if hits.exclude(status__in=(Hit.Status.REVIEWABLE, Hit.Status.REVIEWING,
                                Hit.Status.DISPOSED)).exists():
        return
    undecided = Assignment.objects.filter(hit__batch=batch).filter(
        Q(status=Assignment.Status.SUBMITTED) | Q(decision_synced=False))
    if undecided.exists():
        return
    set_batch_status(batch.pk, old=(Batch.Status.PUBLISHED,), new=Batch.Status.COMPLETE,
                      kind="batch_complete")


def open_batch_ids() -> list[int]:
    """Batches the periodic collection visits: MTurk's and Prolific's, while open."""
    return list(Batch.objects.filter(
        provider__in=COLLECTED_PROVIDERS, status__in=COLLECTED_STATUSES)
        .order_by("pk").values_list("pk", flat=True))


