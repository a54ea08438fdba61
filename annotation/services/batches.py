"""MTurk (and local) batches: plan, launch, publish, collect and the review decisions.

The flow, each step a service here and a thin Celery task in ``annotation.tasks``::

    batch_plan (pure read: which items, grouped into which HITs, at what cost)
      -> batch_launch (writes the Batch + pending Hits; enqueues publish_batch)
      -> batch_publish (CreateHITType once, CreateHITWithHITType per pending Hit)
      -> batch_collect (ListReviewableHITs + ListAssignmentsForHIT; stores annotations)
      -> assignment_decide / assignment_sync_decision, bonus_create / bonus_send,
         worker_set_blocked / worker_sync_block, hit_expire, hit_extend, hit_add_assignments

Every provider write is safe to retry: HITs carry ``Hit.unique_request_token``, bonuses
``Bonus.unique_request_token``, additional assignments a token derived from the job id; every
database update after a provider call is a compare-and-set (``filter(old state).update(...)``),
so a job retried after a crash never acts twice. No transaction is held open across a provider
call: each HIT is committed as soon as it exists, so a publish killed half-way resumes where it
stopped.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from .. import hit_templates
from ..models import (
    Annotation,
    Assignment,
    Batch,
    Bonus,
    Flag,
    Hit,
    HitItem,
    Item,
    Project,
    Qualification,
    StatusEvent,
    TaskKind,
    Worker,
)
from ..providers import (
    AnnotationProvider,
    CollectedAssignment,
    HitTypeSpec,
    ProviderPermanentError,
    QualificationRequirementSpec,
    get_provider,
)
from ..providers.base import LocaleValue
from ..selectors_annotate import VERIFIED_KEY, page_provenance, unverified_q, verified_q
from .annotations import ASSIGNMENT_GRACE, RELEASED_ASSIGNMENT_STATUSES
from .statistics import planner_statistics_refresh_grown

logger = logging.getLogger(__name__)

# --- MTurk's price list and limits ------------------------------------------------------------

#: MTurk charges 20% on top of reward and bonus ...
MTURK_COMMISSION = Decimal("0.20")
#: ... plus 20% more for HITs with 10 or more assignments, ...
MTURK_LARGE_HIT_SURCHARGE = Decimal("0.20")
MTURK_LARGE_HIT_THRESHOLD = 10
#: ... with a minimum fee of $0.01 per assignment.
MTURK_MINIMUM_FEE_CENTS = 1
#: We never create a HIT with 10+ assignments: a higher redundancy becomes several HITs.
MAX_ASSIGNMENTS_PER_HIT = MTURK_LARGE_HIT_THRESHOLD - 1
MAX_ITEMS_PER_HIT = 50

#: Kinds whose Item group must be worked on in one HIT, in order: a CANARD annotator rewrites
#: one dialogue's questions one after the other, seeing the earlier answers.
WHOLE_GROUP_KINDS = frozenset({TaskKind.REWRITE})

#: Batches whose HITs count as open work for an item (a failed or cancelled one does not).
ACTIVE_BATCH_STATUSES = (Batch.Status.DRAFT, Batch.Status.PUBLISHING, Batch.Status.PUBLISHED,
                         Batch.Status.COMPLETE)
#: Hit statuses whose remote state can still change, so collection looks at them.
OPEN_HIT_STATUSES = (Hit.Status.ASSIGNABLE, Hit.Status.UNASSIGNABLE, Hit.Status.REVIEWABLE,
                     Hit.Status.REVIEWING)

# --- The answer our ExternalQuestion page posts to MTurk (QuestionFormAnswers fields) ----------
#: JSON object {"<item id>": <payload of the project's kind>, ...} -- one entry per HIT item.
ANSWER_FIELD_PAYLOADS = "unpack_payload"
#: Optional JSON object {"<item id>": {"duration_ms": int, "client_warnings": [...],
#: "overridden_warnings": [...]}} -- what the browser measured and showed.
ANSWER_FIELD_META = "unpack_meta"

REMOTE_ASSIGNMENT_STATUS = {
    "Submitted": Assignment.Status.SUBMITTED,
    "Approved": Assignment.Status.APPROVED,
    "Rejected": Assignment.Status.REJECTED,
}
REMOTE_HIT_STATUS = {
    "Assignable": Hit.Status.ASSIGNABLE,
    "Unassignable": Hit.Status.UNASSIGNABLE,
    "Reviewable": Hit.Status.REVIEWABLE,
    "Reviewing": Hit.Status.REVIEWING,
    "Disposed": Hit.Status.DISPOSED,
}
DEFAULT_LOCALES = ("US", "GB")


# --- Planning ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchOptions:
    """What a researcher chooses when launching a batch (validated by ``validate``)."""

    title: str
    reward_cents: int
    items_per_hit: int = 5
    splits: tuple[str, ...] = ()
    item_ids: tuple[int, ...] = ()
    assignments: int | None = None  # overrides the project's redundancy for the split
    description: str = ""
    keywords: str = ""
    lifetime_seconds: int = 7 * 24 * 3600
    assignment_duration_seconds: int = 3600
    auto_approval_delay_seconds: int = 3 * 24 * 3600
    locales: tuple[str, ...] = DEFAULT_LOCALES
    min_percent_approved: int | None = None
    min_hits_approved: int | None = None
    qualification_id: int | None = None  # a Qualification row whose test workers must pass
    provider: str = "mturk"
    live: bool = False

    def validate(self) -> LaunchOptions:
        errors: dict[str, str] = {}
        if not self.title.strip():
            errors["title"] = "a title is required"
        if self.reward_cents < 1:
            errors["reward"] = "the reward must be at least $0.01"
        if not 1 <= self.items_per_hit <= MAX_ITEMS_PER_HIT:
            errors["items_per_hit"] = f"must be between 1 and {MAX_ITEMS_PER_HIT}"
        if not self.splits and not self.item_ids:
            errors["selection"] = "choose a split or explicit item ids"
        if self.assignments is not None and not 1 <= self.assignments <= 50:
            errors["assignments"] = "must be between 1 and 50"
        if not 60 <= self.lifetime_seconds <= 365 * 24 * 3600:
            errors["lifetime"] = "must be between 1 minute and 1 year"
        if not 30 <= self.assignment_duration_seconds <= 365 * 24 * 3600:
            errors["duration"] = "must be between 30 seconds and 1 year"
        if not 0 <= self.auto_approval_delay_seconds <= 30 * 24 * 3600:
            errors["auto_approve"] = "must be between 0 and 30 days"
        if self.min_percent_approved is not None and not 0 <= self.min_percent_approved <= 100:
            errors["min_approval"] = "must be a percentage from 0 to 100"
        if self.min_hits_approved is not None and self.min_hits_approved < 0:
            errors["min_approved"] = "must not be negative"
        if any(len(code) != 2 or not code.isalpha() for code in self.locales):
            errors["locale"] = "use two-letter ISO country codes, e.g. US,GB"
        if self.provider not in ("mturk", "local"):
            errors["provider"] = "must be mturk or local"
        if self.live and self.provider != "mturk":
            errors["live"] = "only MTurk batches can be live"
        if errors:
            raise ValidationError(errors)
        return self


@dataclass(frozen=True)
class PlannedHit:
    item_ids: tuple[int, ...]
    max_assignments: int


@dataclass(frozen=True)
class CostEstimate:
    """Money a batch commits, in cents: rewards plus MTurk's fee (local work is free)."""

    hits: int
    assignments: int
    reward_cents: int
    fee_cents: int

    @property
    def total_cents(self) -> int:
        return self.reward_cents + self.fee_cents

    def as_dict(self) -> dict:
        return {**dataclasses.asdict(self), "total_cents": self.total_cents,
                "total_dollars": f"{Decimal(self.total_cents) / 100:.2f}"}


@dataclass(frozen=True)
class BatchPlan:
    hits: tuple[PlannedHit, ...]
    skipped_item_ids: tuple[int, ...]  # already annotated or covered by open HITs
    estimate: CostEstimate


def mturk_fee_cents(reward_cents: int, max_assignments: int) -> int:
    """MTurk's fee on one assignment: 20% (40% on HITs with 10+ assignments), at least 1 cent."""
    rate = MTURK_COMMISSION
    if max_assignments >= MTURK_LARGE_HIT_THRESHOLD:
        rate += MTURK_LARGE_HIT_SURCHARGE
    fee = (Decimal(reward_cents) * rate).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return max(MTURK_MINIMUM_FEE_CENTS, int(fee))


def cost_estimate(hits: Sequence[PlannedHit], *, reward_cents: int, provider: str) -> CostEstimate:
    assignments = sum(hit.max_assignments for hit in hits)
    fee = 0
    if provider == "mturk":
        fee = sum(mturk_fee_cents(reward_cents, hit.max_assignments) * hit.max_assignments
                  for hit in hits)
    return CostEstimate(hits=len(hits), assignments=assignments,
                        reward_cents=reward_cents * assignments, fee_cents=fee)


def split_assignments(count: int) -> list[int]:
    """``count`` assignments as per-HIT counts of at most 9, as even as possible (10 -> 5+5)."""
    if count <= 0:
        return []
    hits = math.ceil(count / MAX_ASSIGNMENTS_PER_HIT)
    base, extra = divmod(count, hits)
    return [base + 1] * extra + [base] * (hits - extra)


def _selected_items(project: Project, options: LaunchOptions) -> list[Item]:
    items = Item.objects.filter(project=project)
    if options.splits:
        items = items.filter(split__in=options.splits)
    if options.item_ids:
        items = items.filter(pk__in=options.item_ids)
        found = set(items.values_list("pk", flat=True))
        missing = sorted(set(options.item_ids) - found)
        if missing:
            raise ValidationError({"item_ids": f"not items of {project.slug}: {missing[:20]}"})
    return list(items.order_by("group_key", "position", "pk"))


def _coverage_by_item(item_ids: Sequence[int]) -> dict[int, int]:
    """Annotations an item has or will get: collected (not imported) annotations outside active
    HITs that were not rejected and are not provisional (see ``selectors_annotate.verified_q``),
    plus the assignment slots of active HITs (minus their rejected assignments, which MTurk
    won't redo)."""
    coverage: dict[int, int] = defaultdict(int)
    active_hit_items = HitItem.objects.filter(
        item_id__in=item_ids, hit__batch__status__in=ACTIVE_BATCH_STATUSES,
    ).exclude(hit__status=Hit.Status.FAILED)
    for row in active_hit_items.values("item_id").annotate(slots=Sum("hit__max_assignments")):
        coverage[row["item_id"]] += row["slots"]
    rejected = (Assignment.objects.filter(status=Assignment.Status.REJECTED,
                                          hit__hititem__item_id__in=item_ids,
                                          hit__batch__status__in=ACTIVE_BATCH_STATUSES)
                .values("hit__hititem__item_id").annotate(n=Count("pk")))
    for row in rejected:
        coverage[row["hit__hititem__item_id"]] -= row["n"]
    # Imported annotations (a dataset's released answers) fill no slot, as in the work queue:
    # a project collects its own redundancy on top of what it imported. Answers the MTurk page
    # stored for an assignment MTurk never reported fill none either.
    outside = (Annotation.objects.filter(verified_q(), item_id__in=item_ids)
               .exclude(source=Annotation.Source.IMPORT)
               .exclude(review_status=Annotation.Review.REJECTED)
               .exclude(assignment__hit__batch__status__in=ACTIVE_BATCH_STATUSES)
               .values("item_id").annotate(n=Count("pk")))
    for row in outside:
        coverage[row["item_id"]] += row["n"]
    return coverage


def _units(project: Project, items: list[Item]) -> list[list[Item]]:
    """What must stay together in one HIT: a whole dialogue for rewriting, else single items."""
    if project.kind not in WHOLE_GROUP_KINDS:
        return [[item] for item in items]
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.group_key, []).append(item)
    return list(groups.values())


def batch_plan(*, project: Project, options: LaunchOptions) -> BatchPlan:
    """Which items go into which HITs with how many assignments, and what it costs. Reads only.

    Assignments wanted per item = ``options.assignments`` or the project's redundancy for the
    item's split, minus what the item already has (see ``_coverage_by_item``). Items needing the
    same number are packed ``items_per_hit`` to a HIT in (group, position) order; a rewriting
    dialogue is one HIT of its own however long. A need above 9 becomes several HITs over the
    same items (10 -> 5 + 5) so no HIT pays MTurk's 10+-assignment surcharge.
    """
    options.validate()
    items = _selected_items(project, options)
    coverage = _coverage_by_item([item.pk for item in items])

    def needed(item: Item) -> int:
        wanted = options.assignments or project.redundancy_for(item.split)
        return max(0, wanted - coverage.get(item.pk, 0))

    skipped: list[int] = []
    units_by_need: dict[int, list[list[Item]]] = defaultdict(list)
    for unit in _units(project, items):
        need = max(needed(item) for item in unit)
        if need == 0:
            skipped.extend(item.pk for item in unit)
        else:
            units_by_need[need].append(unit)

    planned: list[PlannedHit] = []
    whole_groups = project.kind in WHOLE_GROUP_KINDS
    for need in sorted(units_by_need):
        chunks: list[list[Item]] = []
        current: list[Item] = []
        for unit in units_by_need[need]:
            if current and (whole_groups or len(current) + len(unit) > options.items_per_hit):
                chunks.append(current)
                current = []
            current = current + unit
        if current:
            chunks.append(current)
        for chunk in chunks:
            for assignments in split_assignments(need):
                planned.append(PlannedHit(tuple(item.pk for item in chunk), assignments))
    estimate = cost_estimate(planned, reward_cents=options.reward_cents, provider=options.provider)
    return BatchPlan(hits=tuple(planned), skipped_item_ids=tuple(skipped), estimate=estimate)


def qualification_requirements(options: LaunchOptions) -> list[dict]:
    """The batch's requirements as stored on ``Batch.qualification_requirements``.

    System qualifications are stored in MTurk's wire shape; a custom test is stored as
    ``{"unpack_qualification_id": pk, "min_score": n}`` and resolved to its QualificationType
    when publishing (creating the type on first use).
    """
    requirements: list[dict] = []
    if options.locales:
        requirements.append(QualificationRequirementSpec.locale_in(*options.locales).to_mturk())
    if options.min_percent_approved is not None:
        requirements.append(QualificationRequirementSpec.percent_approved_at_least(
            options.min_percent_approved).to_mturk())
    if options.min_hits_approved is not None:
        requirements.append(QualificationRequirementSpec.number_approved_at_least(
            options.min_hits_approved).to_mturk())
    if options.qualification_id is not None:
        qualification = Qualification.objects.filter(pk=options.qualification_id).first()
        if qualification is None:
            raise ValidationError({"qualification": f"no qualification {options.qualification_id}"})
        requirements.append({"unpack_qualification_id": qualification.pk,
                             "min_score": qualification.passing_score})
    return requirements


# --- Launch ------------------------------------------------------------------------------------


def _event(*, batch: Batch, kind: str, hit: Hit | None = None,
           assignment: Assignment | None = None, old: str = "", new: str = "",
           detail: dict | None = None) -> StatusEvent:
    return StatusEvent.objects.create(batch=batch, hit=hit, assignment=assignment, kind=kind,
                                      old_status=old, new_status=new, detail=detail or {})


def _new_token(prefix: str) -> str:
    return f"unpack-{prefix}-{uuid.uuid4().hex}"


@transaction.atomic
def batch_launch(*, project: Project, options: LaunchOptions, confirmed_total_cents: int,
                 created_by=None) -> Batch:
    """Create the Batch and its pending Hits and enqueue ``publish_batch``.

    ``confirmed_total_cents`` is the estimate the researcher saw and confirmed: if the plan
    changed since (other work launched, items annotated) the launch is refused so nobody pays
    an amount they did not see. Launching the same selection twice is harmless: the second plan
    finds every item covered by the first batch's HITs and there is nothing to launch.
    """
    # Serialise launches of one project so two concurrent launches cannot both plan the items.
    Project.objects.select_for_update().filter(pk=project.pk).first()
    plan = batch_plan(project=project, options=options)
    if not plan.hits:
        raise ValidationError({"selection": "nothing to launch: every selected item already has "
                                            "its annotations or open assignments"})
    if plan.estimate.total_cents != confirmed_total_cents:
        raise ValidationError({"confirm": (
            f"the estimate is now ${plan.estimate.total_cents / 100:.2f}, not the "
            f"${confirmed_total_cents / 100:.2f} confirmed; review it and confirm again")})
    batch = Batch.objects.create(
        project=project,
        provider=options.provider,
        live=options.live,
        title=options.title.strip(),
        description=options.description or options.title.strip(),
        keywords=options.keywords,
        reward_cents=options.reward_cents,
        items_per_hit=options.items_per_hit,
        lifetime_seconds=options.lifetime_seconds,
        assignment_duration_seconds=options.assignment_duration_seconds,
        auto_approval_delay_seconds=options.auto_approval_delay_seconds,
        qualification_requirements=qualification_requirements(options),
        selection={"splits": list(options.splits), "item_ids": list(options.item_ids),
                   "assignments": options.assignments,
                   "estimate": plan.estimate.as_dict()},
        created_by=created_by,
    )
    hit_items: list[HitItem] = []
    for planned in plan.hits:
        hit = Hit.objects.create(batch=batch, unique_request_token=_new_token("hit"),
                                 max_assignments=planned.max_assignments)
        hit_items.extend(HitItem(hit=hit, item_id=item_id, order=order)
                         for order, item_id in enumerate(planned.item_ids))
    HitItem.objects.bulk_create(hit_items)
    _event(batch=batch, kind="batch_launched", new=Batch.Status.DRAFT,
           detail={"estimate": plan.estimate.as_dict(), "live": options.live,
                   "skipped_items": len(plan.skipped_item_ids)})
    batch_id = batch.pk
    transaction.on_commit(lambda: _enqueue("publish_batch", batch_id))
    return batch


def _enqueue(task_name: str, *args) -> None:
    from .. import tasks

    getattr(tasks, task_name).delay(*args)


@transaction.atomic
def batch_resume(*, batch_id: int) -> Batch:
    """Publish a failed or interrupted batch again: failed HITs go back to pending. HITs that
    already exist at MTurk are skipped and the others reuse their tokens, so nothing doubles."""
    batch = Batch.objects.select_for_update().get(pk=batch_id)
    if batch.status not in (Batch.Status.FAILED, Batch.Status.PUBLISHING, Batch.Status.DRAFT):
        raise ValidationError(f"batch {batch_id} is {batch.status}; only a draft, publishing or "
                              "failed batch can be resumed")
    Hit.objects.filter(batch=batch, status=Hit.Status.FAILED,
                       provider_hit_id__isnull=True).update(status=Hit.Status.PENDING, error="")
    _event(batch=batch, kind="batch_resumed", old=batch.status, new=Batch.Status.PUBLISHING)
    batch.status, batch.error = Batch.Status.PUBLISHING, ""
    batch.save(update_fields=["status", "error", "updated_at"])
    transaction.on_commit(lambda: _enqueue("publish_batch", batch_id))
    return batch


# --- Providers ---------------------------------------------------------------------------------


def provider_for(*, name: str, live: bool) -> AnnotationProvider:
    """The provider a batch was launched through; ``live`` (recorded on the Batch) decides
    between MTurk production and the sandbox, whatever the MTURK_LIVE default says."""
    return get_provider(name, live=live if name == "mturk" else None)


def provider_for_batch(batch: Batch) -> AnnotationProvider:
    return provider_for(name=batch.provider, live=batch.live)


# --- Publish -----------------------------------------------------------------------------------


def task_page_url(project: Project) -> str:
    return f"{settings.UNPACK_PUBLIC_URL.rstrip('/')}/mturk/task/{project.slug}/"


def _qualification_type_id(qualification: Qualification, provider: AnnotationProvider) -> str:
    """The provider's QualificationType for ``qualification``, created (test + AnswerKey) once.

    MTurk has no request token for CreateQualificationType; the type name carries the row id so
    a create whose answer was lost fails loudly on retry ("already created") rather than making
    a second type.
    """
    if qualification.provider_qualification_type_id:
        return qualification.provider_qualification_type_id
    questions = [
        hit_templates.QualificationQuestion(
            identifier=str(question["id"]), text=str(question["text"]),
            options=tuple((str(option), str(option)) for option in question["options"]),
            accepted_answer=str(question["answer"]))
        for question in qualification.questions
    ]
    test = hit_templates.render_qualification_test(
        title=qualification.name, instructions=qualification.description or qualification.name,
        questions=questions, passing_score=qualification.passing_score)
    type_id = provider.create_qualification_type(
        name=f"{qualification.name} (unpack #{qualification.pk})",
        description=qualification.description or qualification.name,
        test_xml=test.test_xml, answer_key_xml=test.answer_key_xml,
        test_duration_seconds=20 * 60)
    Qualification.objects.filter(pk=qualification.pk,
                                 provider_qualification_type_id__isnull=True).update(
        provider_qualification_type_id=type_id)
    return type_id


def _requirement_specs(batch: Batch, provider: AnnotationProvider
                       ) -> tuple[QualificationRequirementSpec, ...]:
    specs = []
    for stored in batch.qualification_requirements:
        if "unpack_qualification_id" in stored:
            qualification = Qualification.objects.get(pk=stored["unpack_qualification_id"])
            type_id = _qualification_type_id(qualification, provider)
            specs.append(QualificationRequirementSpec.score_at_least(type_id,
                                                                     stored["min_score"]))
            continue
        specs.append(QualificationRequirementSpec(
            qualification_type_id=stored["QualificationTypeId"],
            comparator=stored["Comparator"],
            integer_values=tuple(stored.get("IntegerValues", ())),
            locale_values=tuple(LocaleValue(locale["Country"], locale.get("Subdivision"))
                                for locale in stored.get("LocaleValues", ())),
        ))
    return tuple(specs)


def hit_type_spec(batch: Batch, provider: AnnotationProvider) -> HitTypeSpec:
    return HitTypeSpec(
        title=batch.title,
        description=batch.description or batch.title,
        reward=Decimal(batch.reward_cents) / 100,
        assignment_duration_seconds=batch.assignment_duration_seconds,
        auto_approval_delay_seconds=batch.auto_approval_delay_seconds,
        keywords=tuple(word.strip() for word in batch.keywords.split(",") if word.strip()),
        qualification_requirements=_requirement_specs(batch, provider),
    )


def _set_batch_status(batch_id: int, *, old: Sequence[str], new: str, kind: str,
                      error: str = "", detail: dict | None = None) -> bool:
    """Compare-and-set the batch status; records an event when it changed."""
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch_id)
        if batch.status not in old:
            return False
        _event(batch=batch, kind=kind, old=batch.status, new=new, detail=detail)
        batch.status = new
        batch.error = error
        batch.save(update_fields=["status", "error", "updated_at"])
        return True


def _fail_publish(batch: Batch, hit: Hit | None, error: ProviderPermanentError) -> None:
    reason = f"{error.operation or 'provider'}: {error}"
    with transaction.atomic():
        if hit is not None:
            Hit.objects.filter(pk=hit.pk, provider_hit_id__isnull=True).update(
                status=Hit.Status.FAILED, error=reason)
            _event(batch=batch, hit=hit, kind="hit_failed", old=Hit.Status.PENDING,
                   new=Hit.Status.FAILED, detail={"error": reason})
        _set_batch_status(batch.pk, old=(Batch.Status.DRAFT, Batch.Status.PUBLISHING),
                          new=Batch.Status.FAILED, kind="batch_failed", error=reason)


def batch_publish(*, batch_id: int, provider: AnnotationProvider | None = None) -> Batch:
    """Create the batch's HIT type (once) and every pending HIT at the provider.

    Safe to call again at any point: a Hit holding ``provider_hit_id`` is skipped, and a HIT
    whose create answer was lost is recovered by its UniqueRequestToken (the provider resolves
    MTurk's duplicate-token error to the existing HIT). Throttled/transient provider errors
    propagate (the task retries with backoff); a permanent one marks the HIT and the batch
    failed with the reason in ``.error``.
    """
    batch = Batch.objects.select_related("project").get(pk=batch_id)
    if batch.status not in (Batch.Status.DRAFT, Batch.Status.PUBLISHING):
        return batch
    _set_batch_status(batch_id, old=(Batch.Status.DRAFT,), new=Batch.Status.PUBLISHING,
                      kind="batch_publishing")
    provider = provider or provider_for_batch(batch)
    try:
        if not batch.provider_hit_type_id:
            hit_type_id = provider.create_hit_type(hit_type_spec(batch, provider))
            Batch.objects.filter(pk=batch_id).update(provider_hit_type_id=hit_type_id)
            batch.provider_hit_type_id = hit_type_id
    except ProviderPermanentError as error:
        _fail_publish(batch, None, error)
        batch.refresh_from_db()
        return batch
    question_xml = hit_templates.render_external_question(url=task_page_url(batch.project))
    pending = Hit.objects.filter(batch_id=batch_id, status=Hit.Status.PENDING,
                                 provider_hit_id__isnull=True).order_by("pk")
    for hit in pending.iterator():
        try:
            published = provider.create_hit(
                hit_type_id=batch.provider_hit_type_id,
                question_xml=question_xml,
                max_assignments=hit.max_assignments,
                lifetime_seconds=batch.lifetime_seconds,
                unique_request_token=hit.unique_request_token,
                requester_annotation=f"unpack batch {batch_id} hit {hit.pk}",
            )
        except ProviderPermanentError as error:
            _fail_publish(batch, hit, error)
            batch.refresh_from_db()
            return batch
        _record_published_hit(batch, hit, published.hit_id, published.status,
                              published.expiration)
    if not Hit.objects.filter(batch_id=batch_id, provider_hit_id__isnull=True).exists():
        _set_batch_status(batch_id, old=(Batch.Status.PUBLISHING,), new=Batch.Status.PUBLISHED,
                          kind="batch_published",
                          detail={"hits": Hit.objects.filter(batch_id=batch_id).count()})
    batch.refresh_from_db()
    return batch


def _record_published_hit(batch: Batch, hit: Hit, provider_hit_id: str, remote_status: str,
                          expiration: datetime | None) -> None:
    new_status = REMOTE_HIT_STATUS.get(remote_status, Hit.Status.ASSIGNABLE)
    expires_at = expiration or timezone.now() + timedelta(seconds=batch.lifetime_seconds)
    with transaction.atomic():
        updated = Hit.objects.filter(pk=hit.pk, provider_hit_id__isnull=True).update(
            provider_hit_id=provider_hit_id, status=new_status, expires_at=expires_at, error="")
        if updated:
            _event(batch=batch, hit=hit, kind="hit_published", old=Hit.Status.PENDING,
                   new=new_status, detail={"provider_hit_id": provider_hit_id})


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
    from .. import payloads
    from ..selectors_annotate import item_context

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
    if remote_status is None:
        return result
    with transaction.atomic():
        worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.MTURK,
                                                 external_id=collected.worker_id)
        assignment, created = Assignment.objects.select_for_update().get_or_create(
            provider_assignment_id=collected.assignment_id,
            defaults={"hit": hit, "worker": worker, "status": remote_status,
                      "accepted_at": collected.accept_time,
                      "submitted_at": collected.submit_time,
                      "raw_answer": collected.answer_xml,
                      "reviewed_at": timezone.now() if remote_status != "submitted" else None},
        )
        if created:
            result.assignments_created = 1
            _event(batch=hit.batch, hit=hit, assignment=assignment, kind="assignment_collected",
                   new=remote_status, detail={"worker": collected.worker_id})
        else:
            if assignment.hit_id != hit.pk or assignment.worker_id != worker.pk:
                # The task page stored this AssignmentId for another worker or HIT than MTurk
                # reports: that work was not MTurk's. Left out (provisional) and flagged.
                _flag_mismatch(hit, assignment, collected)
                return result
            result.assignments_verified = _verify(hit, assignment)
            if not assignment.raw_answer and collected.answer_xml:
                assignment.raw_answer = collected.answer_xml
                assignment.save(update_fields=["raw_answer"])
            result.status_changes += _copy_remote_status(assignment, remote_status)
            if assignment.submitted_at is None and collected.submit_time is not None:
                assignment.submitted_at = collected.submit_time
                assignment.save(update_fields=["submitted_at"])
        if assignment.status == Assignment.Status.SUBMITTED or created:
            created_annotations = _store_annotations(hit, assignment, worker, collected)
            if created_annotations is None:
                result.invalid_answers = 1
            else:
                result.annotations_created = created_annotations
    return result


def _verify(hit: Hit, assignment: Assignment) -> int:
    """MTurk reports this assignment of this worker on this HIT: the answers the task page
    stored for it stop being provisional (exports, QC and coverage count them from now on).
    1 when this collection verified it."""
    verified = assignment.annotations.filter(unverified_q()).update(
        provenance=page_provenance(assignment=assignment, hit=hit) | {VERIFIED_KEY: True})
    if verified:
        _event(batch=hit.batch, hit=hit, assignment=assignment, kind="assignment_verified",
               detail={"annotations": verified})
    return 1 if verified else 0


def _flag_mismatch(hit: Hit, assignment: Assignment, collected: CollectedAssignment) -> None:
    if assignment.events.filter(kind="assignment_mismatch").exists():
        return
    _event(batch=hit.batch, hit=hit, assignment=assignment, kind="assignment_mismatch",
           detail={"reported_worker": collected.worker_id, "reported_hit": collected.hit_id})
    project = hit.batch.project
    Flag.objects.get_or_create(
        project=project, fingerprint=f"assignment_mismatch:{assignment.pk}",
        defaults={"assignment": assignment, "worker": assignment.worker,
                  "reason": "assignment_mismatch", "score": 1.0,
                  "detail": (f"MTurk reports assignment {assignment.provider_assignment_id} for "
                             f"worker {collected.worker_id} on HIT {collected.hit_id}; the task "
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
    for assignment in stale:
        with transaction.atomic():
            if not Assignment.objects.filter(pk=assignment.pk, status=assignment.status).update(
                    status=Assignment.Status.ABANDONED):
                continue
            released += 1
            _event(batch=hit.batch, hit=hit, assignment=assignment,
                   kind="assignment_not_reported", old=assignment.status,
                   new=Assignment.Status.ABANDONED)
            answers = assignment.annotations.count()
            if answers:
                Flag.objects.get_or_create(
                    project=hit.batch.project, fingerprint=f"not_reported:{assignment.pk}",
                    defaults={"assignment": assignment, "worker": assignment.worker,
                              "reason": "not_reported_by_mturk", "score": 1.0,
                              "detail": (
                                  f"The task page stored {answers} answer(s) for assignment "
                                  f"{assignment.provider_assignment_id} (worker "
                                  f"{assignment.worker.external_id}), which MTurk never "
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
        assignment.annotations.filter(review_status=Annotation.Review.PENDING).update(
            review_status=review)
    assignment.save(update_fields=fields)
    _event(batch=assignment.hit.batch, hit=assignment.hit, assignment=assignment,
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
            _event(batch=hit.batch, hit=hit, assignment=assignment, kind="answer_invalid",
                   detail={"error": str(error)})
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
            submitted_at=collected.submit_time, started_at=collected.accept_time,
            duration_ms=_int_or_none(meta.get("duration_ms")),
            client_warnings=_warning_list(meta.get("client_warnings")),
            overridden_warnings=_warning_list(meta.get("overridden_warnings")),
            provenance={"provider": "mturk", "assignment_id": collected.assignment_id,
                        "hit_id": collected.hit_id},
            **columns,
        ))
    Annotation.objects.bulk_create(annotations)
    return len(annotations)


def _sync_hit_status(hit: Hit, remote_status: str) -> int:
    new_status = REMOTE_HIT_STATUS.get(remote_status)
    if new_status is None or new_status == hit.status:
        return 0
    updated = Hit.objects.filter(pk=hit.pk, status=hit.status).update(status=new_status)
    if updated:
        _event(batch=hit.batch, hit=hit, kind="hit_status_collected", old=hit.status,
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
    _set_batch_status(batch.pk, old=(Batch.Status.PUBLISHED,), new=Batch.Status.COMPLETE,
                      kind="batch_complete")


def open_batch_ids() -> list[int]:
    return list(Batch.objects.filter(
        provider="mturk", status__in=(Batch.Status.PUBLISHING, Batch.Status.PUBLISHED))
        .order_by("pk").values_list("pk", flat=True))


# --- Decisions ---------------------------------------------------------------------------------


@transaction.atomic
def assignment_decide(*, assignment_id: int, approve: bool, message: str = "",
                      reviewer=None) -> Assignment:
    """Record a reviewer's approve/reject and enqueue ``sync_assignment_decision``.

    Allowed from submitted, and between approved and rejected while the previous decision
    has not been synced or to override a rejection (MTurk lets an approval override it).
    A rejection needs a message: the worker reads it.
    """
    assignment = Assignment.objects.select_for_update().select_related("hit__batch").get(
        pk=assignment_id)
    new_status = Assignment.Status.APPROVED if approve else Assignment.Status.REJECTED
    if not approve and not message.strip():
        raise ValidationError({"message": "a rejection needs a message the worker can read"})
    if assignment.status == new_status:
        return assignment
    allowed = {Assignment.Status.SUBMITTED}
    if not assignment.decision_synced or approve:
        allowed |= {Assignment.Status.APPROVED, Assignment.Status.REJECTED}
    if assignment.status not in allowed:
        raise ValidationError(f"assignment {assignment.provider_assignment_id} is "
                              f"{assignment.status}; it cannot be {new_status} now")
    old = assignment.status
    assignment.status = new_status
    assignment.review_message = message
    assignment.reviewed_at = timezone.now()
    assignment.decision_synced = False
    assignment.save(update_fields=["status", "review_message", "reviewed_at",
                                   "decision_synced"])
    assignment.annotations.update(review_status=(
        Annotation.Review.APPROVED if approve else Annotation.Review.REJECTED))
    _event(batch=assignment.hit.batch, hit=assignment.hit, assignment=assignment,
           kind="assignment_decided", old=old, new=new_status,
           detail={"message": message, "reviewer": getattr(reviewer, "username", "")})
    transaction.on_commit(lambda: _enqueue("sync_assignment_decision", assignment_id))
    return assignment


def _remote_assignment_status(provider: AnnotationProvider, assignment: Assignment) -> str | None:
    for collected in provider.list_assignments_for_hit(assignment.hit.provider_hit_id):
        if collected.assignment_id == assignment.provider_assignment_id:
            return REMOTE_ASSIGNMENT_STATUS.get(collected.status)
    return None


def assignment_sync_decision(*, assignment_id: int,
                             provider: AnnotationProvider | None = None) -> bool:
    """Send an unsynced approve/reject to the provider; True when it is (now) synced.

    A retry after the provider acted but before we recorded it gets MTurk's "wrong status"
    error: the remote status is then read back and, when it already shows the decision, the
    sync counts as done. An approval of a remotely rejected assignment overrides the rejection.
    """
    assignment = Assignment.objects.select_related("hit__batch").get(pk=assignment_id)
    if assignment.decision_synced:
        return True
    if assignment.status not in (Assignment.Status.APPROVED, Assignment.Status.REJECTED):
        return False
    decided = assignment.status
    batch = assignment.hit.batch
    provider = provider or provider_for_batch(batch)
    try:
        if decided == Assignment.Status.APPROVED:
            provider.approve_assignment(assignment.provider_assignment_id,
                                        feedback=assignment.review_message)
        else:
            provider.reject_assignment(assignment.provider_assignment_id,
                                       message=assignment.review_message)
    except ProviderPermanentError as error:
        remote = _remote_assignment_status(provider, assignment)
        if remote == Assignment.Status.REJECTED and decided == Assignment.Status.APPROVED:
            provider.approve_assignment(assignment.provider_assignment_id,
                                        feedback=assignment.review_message,
                                        override_rejection=True)
        elif remote != decided:
            _event(batch=batch, hit=assignment.hit, assignment=assignment,
                   kind="decision_sync_failed", new=decided,
                   detail={"error": str(error), "remote_status": remote or ""})
            return False
    with transaction.atomic():
        # Only the decision we sent is marked synced; a newer one keeps waiting for its job.
        updated = Assignment.objects.filter(pk=assignment_id, status=decided,
                                            decision_synced=False).update(decision_synced=True)
        if updated:
            _event(batch=batch, hit=assignment.hit, assignment=assignment,
                   kind="decision_synced", new=decided)
    return True


@transaction.atomic
def bonus_create(*, assignment_id: int, amount_cents: int, reason: str) -> Bonus:
    """Record a bonus (with its own UniqueRequestToken) and enqueue ``send_bonus``."""
    if amount_cents < 1:
        raise ValidationError({"amount": "a bonus must be at least $0.01"})
    if not reason.strip():
        raise ValidationError({"reason": "a bonus needs a reason the worker can read"})
    assignment = Assignment.objects.select_related("hit__batch").get(pk=assignment_id)
    if assignment.status in (Assignment.Status.ACCEPTED, Assignment.Status.RETURNED,
                             Assignment.Status.ABANDONED):
        raise ValidationError(f"assignment {assignment.provider_assignment_id} was never "
                              "submitted; it cannot get a bonus")
    bonus = Bonus.objects.create(assignment=assignment, amount_cents=amount_cents,
                                 reason=reason.strip(), unique_request_token=_new_token("bonus"))
    _event(batch=assignment.hit.batch, hit=assignment.hit, assignment=assignment,
           kind="bonus_created", detail={"bonus_id": bonus.pk, "amount_cents": amount_cents})
    bonus_id = bonus.pk
    transaction.on_commit(lambda: _enqueue("send_bonus", bonus_id))
    return bonus


def bonus_send(*, bonus_id: int, provider: AnnotationProvider | None = None) -> Bonus:
    """Pay the bonus once: its token makes a retried SendBonus a no-op at MTurk."""
    bonus = Bonus.objects.select_related("assignment__worker", "assignment__hit__batch").get(
        pk=bonus_id)
    if bonus.sent_at is not None:
        return bonus
    assignment = bonus.assignment
    provider = provider or provider_for_batch(assignment.hit.batch)
    try:
        provider.send_bonus(worker_id=assignment.worker.external_id,
                            assignment_id=assignment.provider_assignment_id,
                            amount=Decimal(bonus.amount_cents) / 100, reason=bonus.reason,
                            unique_request_token=bonus.unique_request_token)
    except ProviderPermanentError as error:
        Bonus.objects.filter(pk=bonus_id, sent_at__isnull=True).update(error=str(error))
        bonus.refresh_from_db()
        return bonus
    with transaction.atomic():
        if Bonus.objects.filter(pk=bonus_id, sent_at__isnull=True).update(
                sent_at=timezone.now(), error=""):
            _event(batch=assignment.hit.batch, hit=assignment.hit, assignment=assignment,
                   kind="bonus_sent", detail={"bonus_id": bonus_id,
                                              "amount_cents": bonus.amount_cents})
    bonus.refresh_from_db()
    return bonus


@transaction.atomic
def worker_set_blocked(*, worker_id: int, blocked: bool, reason: str = "") -> Worker:
    """Block (reason required: MTurk shows it to the worker) or unblock; enqueues the sync."""
    worker = Worker.objects.select_for_update().get(pk=worker_id)
    if blocked and not reason.strip():
        raise ValidationError({"reason": "blocking a worker needs a reason"})
    worker.is_blocked = blocked
    worker.blocked_reason = reason.strip() if blocked else ""
    worker.save(update_fields=["is_blocked", "blocked_reason"])
    transaction.on_commit(lambda: _enqueue("sync_worker_block", worker_id))
    return worker


def _provider_for_worker(worker: Worker) -> AnnotationProvider:
    """The MTurk environment the worker worked in (their latest batch), else the default."""
    latest = Batch.objects.filter(hits__assignments__worker=worker).order_by("-pk").first()
    live = latest.live if latest is not None else bool(settings.MTURK_LIVE)
    return provider_for(name="mturk", live=live)


def worker_sync_block(*, worker_id: int, provider: AnnotationProvider | None = None) -> bool:
    """Make the provider's block list match ``Worker.is_blocked`` (both calls are idempotent).
    Returns False for workers the provider does not know (local annotators)."""
    worker = Worker.objects.get(pk=worker_id)
    if worker.provider != Worker.Provider.MTURK:
        return False
    provider = provider or _provider_for_worker(worker)
    if worker.is_blocked:
        provider.create_worker_block(worker.external_id,
                                     reason=worker.blocked_reason or "blocked by the requester")
    else:
        provider.delete_worker_block(worker.external_id, reason="block lifted")
    return True


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
        latest = Batch.objects.filter(project_id=project_id, provider="mturk").order_by("-pk")
        batch = latest.first()
        provider = provider_for(name="mturk", live=bool(batch and batch.live))
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
            _event(batch=hit.batch, hit=hit, kind="hit_expired",
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
            _event(batch=hit.batch, hit=hit, kind="hit_extended",
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
    if hit.max_assignments + count > MAX_ASSIGNMENTS_PER_HIT:
        raise ValidationError({"count": (
            f"hit {hit_id} has {hit.max_assignments} assignments; more than "
            f"{MAX_ASSIGNMENTS_PER_HIT} in total is refused (MTurk's 10+ rule and surcharge)")})
    (provider or provider_for_batch(hit.batch)).create_additional_assignments(
        hit.provider_hit_id, count=count, unique_request_token=token)
    with transaction.atomic():
        locked = Hit.objects.select_for_update().get(pk=hit_id)
        if not locked.events.filter(kind="assignments_added", detail__token=token).exists():
            locked.max_assignments += count
            locked.save(update_fields=["max_assignments", "updated_at"])
            _event(batch=hit.batch, hit=locked, kind="assignments_added",
                   detail={"token": token, "count": count})
    hit.refresh_from_db()
    return hit


DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration_seconds(text: str) -> int:
    """``"7d"``, ``"1h"``, ``"30m"``, ``"90s"`` or a plain number of seconds."""
    value = text.strip().lower()
    unit = DURATION_UNITS.get(value[-1:]) if value else None
    number = value[:-1] if unit else value
    if not number.isdigit():
        raise ValueError(f"{text!r} is not a duration like 7d, 1h, 30m or 3600")
    return int(number) * (unit or 1)
