"""Plan a batch (which items, grouped into which HITs, at what cost) and launch it: the Batch
and its pending Hits are written and publishing is enqueued."""

from __future__ import annotations

import dataclasses
import logging
import math
import secrets
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import partial

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Sum

from ...models import (
    Annotation,
    Assignment,
    Batch,
    Hit,
    HitItem,
    Item,
    Project,
    Qualification,
)
from ...money import (
    money_text,
    mturk_fee_cents,
    prolific_fee_cents,
    provider_currency,
    provider_money_text,
)
from ...providers import (
    QualificationRequirementSpec,
)
from ...selectors.dashboard import budget_figures, cost_by_currency
from ..adaptive import adaptive_policy, adaptive_targets, expected_judgements
from ..annotations import slots_required
from ..gold import gold_items_per_page, with_gold_items
from ..jobs import JobQueueUnavailable, check_job_queue, enqueue_after_commit
from .common import (
    ACTIVE_BATCH_STATUSES,
    DEFAULT_LOCALES,
    MAX_ASSIGNMENTS_PER_HIT,
    MAX_ITEMS_PER_HIT,
    WHOLE_GROUP_KINDS,
    new_request_token,
    record_status_event,
)

logger = logging.getLogger(__name__)


# --- Planning ----------------------------------------------------------------------------------

#: Where a batch can be launched. Local annotators need no batch: the local work queue serves
#: every item of a project to any logged-in annotator until the item's redundancy is met, so a
#: local "batch" would only be a second, disagreeing count of the same work (docs/batches.md).
LAUNCH_PROVIDERS = {"mturk": "MTurk", "prolific": "Prolific"}

#: Devices a Prolific study can admit (its ``device_compatibility``).
PROLIFIC_DEVICES = ("desktop", "tablet", "mobile")
#: Prolific's filter ids (its public API reference, "Filters"): the approval rate in percent and
#: the number of approved submissions are ranges; the first language is a choice among the ids
#: ``GET /api/v1/filters/`` lists for ``first-language``.
PROLIFIC_FILTER_APPROVAL_RATE = "approval_rate"
PROLIFIC_FILTER_APPROVALS = "approval_numbers"
PROLIFIC_FILTER_FIRST_LANGUAGE = "first-language"
#: Completion codes: unguessable (a participant who guesses one could claim unfinished work).
COMPLETION_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
COMPLETION_CODE_LENGTH = 12


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
    # Prolific only: the study's estimated completion time (required; the hourly rate is
    # computed from it), the devices it admits and the first languages (Prolific's choice
    # ids) participants must have. ``assignment_duration_seconds`` is the study's maximum
    # allowed time; ``min_percent_approved`` and ``min_hits_approved`` become Prolific's
    # approval-rate and approved-submissions filters.
    estimated_minutes: int | None = None
    devices: tuple[str, ...] = ("desktop",)
    first_languages: tuple[str, ...] = ()

    def validate(self) -> LaunchOptions:
        errors: dict[str, str] = {}
        if self.provider == "prolific":
            errors.update(self._prolific_errors())
        if not self.title.strip():
            errors["title"] = "a title is required"
        if self.reward_cents < 1:
            errors["reward"] = ("the reward must be at least "
                                f"{money_text(1, provider_currency(self.provider))}")
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
        if self.provider not in LAUNCH_PROVIDERS:
            errors["provider"] = (f"must be one of: {', '.join(LAUNCH_PROVIDERS)} (local "
                                  "annotators need no batch: they work from /annotate/<project>/)")
        if self.live and self.provider != "mturk":
            errors["live"] = "only MTurk batches can be live"
        if errors:
            raise ValidationError(errors)
        return self

    def _prolific_errors(self) -> dict[str, str]:
        """What Prolific needs or refuses: an estimated time, a maximum allowed time not below
        it, known devices, and a reward of at least its minimum hourly rate."""
        errors: dict[str, str] = {}
        minutes = self.estimated_minutes
        if minutes is None:
            errors["estimated_minutes"] = ("Prolific needs the estimated completion time in "
                                           "minutes (the hourly rate is computed from it)")
        elif not 1 <= minutes <= 24 * 60:
            errors["estimated_minutes"] = "must be between 1 minute and 24 hours"
        elif self.assignment_duration_seconds < minutes * 60:
            allowed = self.assignment_duration_seconds // 60
            errors["duration"] = (f"the maximum allowed time ({allowed} minutes) must not be "
                                  f"below the estimated {minutes} minutes")
        elif self.reward_cents >= 1:
            hourly = Decimal(self.reward_cents) * 60 / minutes
            minimum = settings.PROLIFIC_MIN_HOURLY_REWARD_CENTS
            if hourly < minimum:
                # Prolific's amounts are in the workspace's currency (annotation.money).
                currency = provider_currency("prolific")
                errors["reward"] = (
                    f"{money_text(self.reward_cents, currency)} for {minutes} minutes is "
                    f"{money_text(round(hourly), currency)} an hour; Prolific's minimum is "
                    f"{money_text(minimum, currency)} an hour")
        if not self.devices or not set(self.devices) <= set(PROLIFIC_DEVICES):
            errors["devices"] = f"choose one or more of: {', '.join(PROLIFIC_DEVICES)}"
        if any(not code.strip().isalnum() for code in self.first_languages):
            errors["first_languages"] = ("use the ids of Prolific's first-language choices "
                                         "(e.g. 19), comma-separated")
        if self.qualification_id is not None:
            errors["qualification"] = ("Prolific has no qualification tests: screen "
                                       "participants with its filters")
        return errors

    def prolific_filters(self) -> list[dict]:
        """Prolific filter objects for the study (the blocklist group is added at publish)."""
        filters: list[dict] = []
        if self.first_languages:
            filters.append({"filter_id": PROLIFIC_FILTER_FIRST_LANGUAGE,
                            "selected_values": [code.strip() for code in self.first_languages]})
        if self.min_percent_approved is not None:
            filters.append({"filter_id": PROLIFIC_FILTER_APPROVAL_RATE,
                            "selected_range": {"lower": self.min_percent_approved,
                                               "upper": 100}})
        if self.min_hits_approved is not None:
            filters.append({"filter_id": PROLIFIC_FILTER_APPROVALS,
                            "selected_range": {"lower": self.min_hits_approved}})
        return filters


def _money(cents: Decimal) -> str:
    return f"{(cents / 100).quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)}"


def new_completion_code() -> str:
    return "".join(secrets.choice(COMPLETION_CODE_ALPHABET)
                   for _ in range(COMPLETION_CODE_LENGTH))


def completion_codes() -> tuple[str, str]:
    """Two distinct, unguessable codes: finished work, and a failed attention check."""
    done = new_completion_code()
    failed = new_completion_code()
    while failed == done:
        failed = new_completion_code()
    return done, failed


@dataclass(frozen=True)
class PlannedHit:
    item_ids: tuple[int, ...]
    max_assignments: int


@dataclass(frozen=True)
class AdaptiveCost:
    """With adaptive redundancy, what finishing the batch's items costs beyond the batch: the
    batch asks ``planned_judgements`` now (``start`` an item, or one more where answers
    disagree); each item is expected to end at ``expected_per_item`` judgements
    (``services.adaptive.expected_judgements``: ``start`` + the extra rate measured on
    ``measured_items`` items, or the bench's prior while they are fewer than 30), and at most
    at ``maximum`` (the policy's). Cents at the batch's own cost per judgement (rewards,
    fees, VAT, gold items mixed in): ``total_cents`` × judgements / ``planned_judgements``."""

    start: int
    maximum: int
    expected_per_item: float
    measured_items: int
    measured: bool
    items: int
    planned_judgements: int
    expected_judgements: float
    maximum_judgements: int
    expected_cents: int
    maximum_cents: int


@dataclass(frozen=True)
class CostEstimate:
    """Money a batch commits, in cents: rewards plus the provider's fee (MTurk's commission,
    Prolific's service fee) plus VAT on that fee (Prolific, where it applies). ``adaptive``:
    with adaptive redundancy, the expected and the maximum cost of finishing its items."""

    hits: int
    assignments: int
    reward_cents: int
    fee_cents: int
    vat_cents: int = 0
    provider: str = "mturk"
    adaptive: AdaptiveCost | None = None

    @property
    def total_cents(self) -> int:
        return self.reward_cents + self.fee_cents + self.vat_cents

    def as_dict(self) -> dict:
        return {**dataclasses.asdict(self), "total_cents": self.total_cents,
                "total_dollars": f"{Decimal(self.total_cents) / 100:.2f}"}


@dataclass(frozen=True)
class BatchPlan:
    hits: tuple[PlannedHit, ...]
    skipped_item_ids: tuple[int, ...]  # already annotated or covered by open HITs
    estimate: CostEstimate


def cost_estimate(hits: Sequence[PlannedHit], *, reward_cents: int, provider: str) -> CostEstimate:
    assignments = sum(hit.max_assignments for hit in hits)
    rewards = reward_cents * assignments
    fee = vat = 0
    if provider == "mturk":
        fee = sum(mturk_fee_cents(reward_cents, hit.max_assignments) * hit.max_assignments
                  for hit in hits)
    elif provider == "prolific":
        fee, vat = prolific_fee_cents(rewards)
    return CostEstimate(hits=len(hits), assignments=assignments, reward_cents=rewards,
                        fee_cents=fee, vat_cents=vat, provider=provider)


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
    """Annotations an item has or will get: its counted annotations (``Annotation.State``, the
    one definition) outside active HITs, plus the assignment slots of active HITs (minus their
    rejected assignments, which MTurk won't redo)."""
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
    outside = (Annotation.objects.filter(item_id__in=item_ids, state=Annotation.State.COUNTED)
               .exclude(assignment__hit__batch__status__in=ACTIVE_BATCH_STATUSES)
               .values("item_id").annotate(n=Count("pk")))
    for row in outside:
        coverage[row["item_id"]] += row["n"]
    return coverage


def hits_places_needed(*, hit_ids: Iterable[int]) -> dict[int, int]:
    """Of these HITs (Prolific studies), those of adaptive projects whose items need more
    judgements now than they have or have coming, and how many more assignments (places) each
    needs: the most any of its items needs, an item's need being its target
    (``services.annotations.slots_required``: ``Item.target_answers``, kept from its counted
    answers) minus its coverage as ``batch_plan`` counts it (places of active batches, less
    rejected work, plus counted answers outside them). Gold items need nothing. A study's
    places cover all its items, so every item of it gets the added places."""
    pairs = list(HitItem.objects.filter(hit_id__in=list(hit_ids), item__is_gold=False)
                 .values_list("hit_id", "item_id"))
    items = Item.objects.select_related("project").in_bulk({item_id for _, item_id in pairs})
    adaptive_projects = {item.project_id for item in items.values()
                         if adaptive_policy(item.project) is not None}
    items = {pk: item for pk, item in items.items() if item.project_id in adaptive_projects}
    coverage = _coverage_by_item(list(items))
    needed: dict[int, int] = {}
    for hit_id, item_id in pairs:
        item = items.get(item_id)
        if item is not None:
            need = slots_required(item) - coverage.get(item_id, 0)
            if need > 0:
                needed[hit_id] = max(needed.get(hit_id, 0), need)
    return needed


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
    item's split (with adaptive redundancy: ``services.adaptive``'s target, from the item's
    counted answers), minus what the item already has (see ``_coverage_by_item``). Items needing the
    same number are packed ``items_per_hit`` to a HIT in (group, position) order, and gold items
    mixed in at the project's gold rate (``services.gold.with_gold_items``); a rewriting
    dialogue is one HIT of its own however long. A need above 9 becomes several HITs over the
    same items (10 -> 5 + 5) so no HIT pays MTurk's 10+-assignment surcharge.
    """
    options.validate()
    # Gold items are not the project's work: they are mixed into its HITs below.
    items = [item for item in _selected_items(project, options) if not item.is_gold]
    coverage = _coverage_by_item([item.pk for item in items])
    # An adaptive project (services.adaptive) asks per item; an explicit number overrides it.
    adaptive = None if options.assignments else adaptive_targets(
        project=project, item_ids=[item.pk for item in items])

    def needed(item: Item) -> int:
        wanted = (adaptive[item.pk] if adaptive is not None
                  else options.assignments or project.redundancy_for(item.split))
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
    # A dialogue's HIT stays the dialogue alone (its turns are one conversation).
    gold_pool = [] if whole_groups else gold_items_per_page(project=project)
    placed = gold_placed = 0
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
            item_ids = with_gold_items([item.pk for item in chunk], gold_pool,
                                       rate=project.gold_rate, items_before=placed,
                                       gold_before=gold_placed)
            placed += len(chunk)
            gold_placed += len(item_ids) - len(chunk)
            for assignments in split_assignments(need):
                planned.append(PlannedHit(item_ids, assignments))
    estimate = cost_estimate(planned, reward_cents=options.reward_cents, provider=options.provider)
    if adaptive is not None:
        planned_items = [item for units in units_by_need.values() for unit in units
                         for item in unit]
        estimate = dataclasses.replace(estimate, adaptive=adaptive_cost(
            project=project, estimate=estimate, needs=[
                (needed(item), coverage.get(item.pk, 0)) for item in planned_items]))
    return BatchPlan(hits=tuple(planned), skipped_item_ids=tuple(skipped), estimate=estimate)


def adaptive_cost_lines(cost: AdaptiveCost, money) -> list[str]:
    """The adaptive part of a cost estimate as the launch page and ``launch_batch`` show it
    (``money``: cents -> text in the provider's currency)."""
    basis = (f"the extra rate measured on {cost.measured_items} items past {cost.start}"
             if cost.measured else
             f"the prior extra rate of bench/bench_crowd.py (only {cost.measured_items} "
             "items past the start measured yet)")
    return [
        f"Adaptive redundancy ({cost.start} up to {cost.maximum} judgements an item): this "
        f"batch asks {cost.planned_judgements} judgements for {cost.items} items; more "
        "follow where their answers disagree.",
        f"Expected cost of finishing these items: {money(cost.expected_cents)} "
        f"({cost.expected_judgements:g} judgements, {cost.expected_per_item:g} an item from "
        f"{basis}).",
        f"Maximum cost of finishing these items: {money(cost.maximum_cents)} "
        f"({cost.maximum_judgements} judgements, {cost.maximum} an item).",
    ]


def adaptive_cost(*, project: Project, estimate: CostEstimate,
                  needs: Sequence[tuple[int, int]]) -> AdaptiveCost | None:
    """The expected and the maximum cost of finishing the items a batch plans under the
    project's adaptive policy (``needs``: each planned item's (judgements the batch asks,
    judgements it has or has coming)): an item is expected to end at the expected
    judgements an item and at most at the maximum, never below what the batch asks. None
    when the batch asks nothing."""
    policy = adaptive_policy(project)
    planned = sum(need for need, _ in needs)
    if policy is None or planned == 0:
        return None
    expected = expected_judgements(project=project, policy=policy)
    expected_total = sum(max(float(need), expected.per_item - have) for need, have in needs)
    maximum_total = sum(max(need, policy.maximum - have) for need, have in needs)
    per_judgement = Decimal(estimate.total_cents) / planned

    def cents(judgements: float) -> int:
        return int((per_judgement * Decimal(str(judgements))).quantize(
            Decimal(1), rounding=ROUND_HALF_UP))

    return AdaptiveCost(
        start=policy.start, maximum=policy.maximum,
        expected_per_item=round(expected.per_item, 2), measured_items=expected.measured_items,
        measured=expected.measured, items=len(needs), planned_judgements=planned,
        expected_judgements=round(expected_total, 2), maximum_judgements=maximum_total,
        expected_cents=cents(expected_total), maximum_cents=cents(maximum_total))


def qualification_requirements(options: LaunchOptions) -> list[dict]:
    """The batch's requirements as stored on ``Batch.qualification_requirements``.

    System qualifications are stored in MTurk's wire shape; a custom test is stored as
    ``{"unpack_qualification_id": pk, "min_score": n}`` and resolved to its QualificationType
    when publishing (creating the type on first use).
    """
    requirements: list[dict] = []
    if options.provider == "prolific":
        return []  # Prolific screens with filters (Batch.participant_filters)
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



def budget_check(*, project: Project, estimate: CostEstimate) -> None:
    """Refuse (``ValidationError`` on ``budget``) a launch whose cost with fees would take the
    project past its budget: spent + committed + this estimate > budget, all in the budget's
    currency with the providers' fees (``selectors.dashboard.budget_figures``). A hard stop,
    as a provider refuses work beyond the account's balance: whoever owns the money raises the
    budget on the project's settings page, on purpose. Work paid in another currency than the
    budget's cannot be checked against it and is refused too; unpaid (local) work passes."""
    if project.budget_cents is None or estimate.total_cents == 0:
        return
    currency = provider_currency(estimate.provider)
    budget_currency = project.budget_currency or None
    if currency != budget_currency:
        raise ValidationError({"budget": (
            f"the project's budget is in {budget_currency or 'no currency'} but "
            f"{estimate.provider} pays in {currency}: change the budget's currency on the "
            "project's settings page (or remove the budget); nothing was launched")})
    figures = budget_figures(project=project, cost=cost_by_currency(project=project))
    if estimate.total_cents > figures["left_cents"]:
        money = partial(money_text, currency=currency)
        raise ValidationError({"budget": (
            f"this batch would cost {money(estimate.total_cents)} with fees, more than the "
            f"{money(max(figures['left_cents'], 0))} left of the project's budget of "
            f"{money(figures['budget_cents'])} (spent {money(figures['spent_cents'])}, "
            f"committed {money(figures['committed_cents'])}, fees included): raise the "
            "budget on the project's settings page or launch fewer items; nothing was "
            "launched")})


@transaction.atomic
def batch_launch(*, project: Project, options: LaunchOptions, confirmed_total_cents: int,
                 created_by=None) -> Batch:
    """Create the Batch and its pending Hits and enqueue ``publish_batch``.

    ``confirmed_total_cents`` is the estimate the researcher saw and confirmed: if the plan
    changed since (other work launched, items annotated) the launch is refused so nobody pays
    an amount they did not see. Launching the same selection twice is harmless: the second plan
    finds every item covered by the first batch's HITs and there is nothing to launch.

    All or nothing as the researcher sees it: with the job queue unreachable the launch is
    refused before anything is written. Should the queue fail between that check and the
    commit, the batch waits as a draft on its page (Resume, Cancel) and the periodic
    ``resume_unfinished_work`` job publishes it once the queue is back.
    """
    try:
        check_job_queue()
    except JobQueueUnavailable as error:
        raise ValidationError(f"{error}; nothing was launched, try again once it is back") \
            from error
    # Serialise launches of one project so two concurrent launches cannot both plan the items.
    Project.objects.select_for_update().filter(pk=project.pk).first()
    plan = batch_plan(project=project, options=options)
    if not plan.hits:
        raise ValidationError({"selection": "nothing to launch: every selected item already has "
                                            "its annotations or open assignments"})
    if plan.estimate.total_cents != confirmed_total_cents:
        raise ValidationError({"confirm": (
            f"the estimate is now "
            f"{provider_money_text(plan.estimate.total_cents, options.provider)}, not the "
            f"{provider_money_text(confirmed_total_cents, options.provider)} confirmed; review "
            "it and confirm again")})
    budget_check(project=project, estimate=plan.estimate)
    prolific = options.provider == "prolific"
    done_code, failed_code = completion_codes() if prolific else ("", "")
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
        estimated_minutes=options.estimated_minutes if prolific else None,
        completion_code=done_code, failed_check_code=failed_code,
        participant_filters=options.prolific_filters() if prolific else [],
        device_compatibility=list(options.devices) if prolific else [],
        selection={"splits": list(options.splits), "item_ids": list(options.item_ids),
                   "assignments": options.assignments,
                   "estimate": plan.estimate.as_dict()},
        created_by=created_by,
    )
    hit_items: list[HitItem] = []
    for planned in plan.hits:
        hit = Hit.objects.create(batch=batch, unique_request_token=new_request_token("hit"),
                                 max_assignments=planned.max_assignments)
        hit_items.extend(HitItem(hit=hit, item_id=item_id, order=order)
                         for order, item_id in enumerate(planned.item_ids))
    HitItem.objects.bulk_create(hit_items)
    record_status_event(batch=batch, kind="batch_launched", new=Batch.Status.DRAFT,
                        actor=created_by,
                        detail={"estimate": plan.estimate.as_dict(), "live": options.live,
                                "skipped_items": len(plan.skipped_item_ids)})
    batch_id = batch.pk
    enqueue_after_commit("annotation.tasks.publish_batch", batch_id)
    return batch


