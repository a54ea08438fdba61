"""Reviewer decisions, one service per action, for every way in (review pages, the ``review``
command, the staff API, Django admin actions):

========================  ==========================================================
``assignment_approve``    approve a worker's whole HIT (their assignment) and pay it
``assignment_reject``     reject the whole HIT: every answer in the assignment
``assignments_approve``   approve many assignments at once (Prolific: one bulk call); never
                          a blocked worker's, never work collection has not confirmed
``assignments_reject``    reject many assignments with one message
``assignment_approve_and_bonus``  approve and pay a bonus in one step
``annotation_approve``    approve one answer given outside a HIT (local, imported);
``annotation_reject``     inside a HIT the decision is the assignment's (MTurk pays per HIT)
``bonus_create``          pay a bonus for an assignment (re-sends an unpaid one)
``worker_block``          stop a worker from taking more of our work (everywhere or one
                          project), rejecting their pending work or leaving it for review
``worker_unblock``        lift the block (everywhere or from one project)
``flag_dismiss``          the finding was looked at and the work is fine
``flags_dismiss``         many at once
========================  ==========================================================

Every service takes keyword arguments (ids, the acting staff user as ``actor``, the text the
worker reads), runs in one transaction, writes a ``StatusEvent`` for every state change
(``audit.record_status_event``) and enqueues the provider call after commit
(``jobs.enqueue_after_commit``); invalid requests raise ``ValidationError`` and change nothing.

The rules, where the two older stacks disagreed (see docs/review-and-export.md, "Decisions"):
a decision closes the open flags of the work it decides (dismissed on approval, upheld on
rejection); an approval may override a rejection (MTurk's ``OverrideRejection``), a rejection
may replace an approval only until the provider was told; a bonus needs submitted work and is
capped at ``MAX_BONUS_CENTS``.

The provider is the one the work went through (the batch's for an assignment, the worker's own
for a block), never a fixed one. Prolific differs in three checked places: a rejection needs
one of Prolific's rejection categories and a message of at least 100 characters (checked
before anything is stored, on every entry point); approvals made together go out in one bulk
call; and a bonus is paid in two steps (set up, store the set-up id, mark paying, pay), so a
retry never pays twice -- a pay whose outcome is unknown is left for a human to check.
The ``*_sync_*`` / ``bonus_send`` functions below are what the Celery jobs run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..models import (
    Annotation,
    Assignment,
    Batch,
    Bonus,
    Flag,
    Project,
    Worker,
    WorkerProjectBlock,
)
from ..money import provider_money_text
from ..providers import (
    AnnotationProvider,
    ProviderPermanentError,
    ProviderThrottled,
    ProviderTransientError,
    get_provider,
)
from ..selectors.blocks import assignment_unconfirmed, blocked_q, unconfirmed_q
from .annotations import annotations_set_review_status
from .audit import close_open_flags, record_status_event
from .batches.common import REMOTE_ASSIGNMENT_STATUS, new_request_token, provider_for_batch
from .batching import chunks
from .jobs import enqueue_after_commit
from .projects import project_settings_errors

logger = logging.getLogger(__name__)

#: A typo guard: 100.00 of the provider's currency for one assignment is never intended.
MAX_BONUS_CENTS = 10_000
#: Assignments a worker has submitted; only these can be decided or get a bonus.
DECIDABLE = (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED,
             Assignment.Status.REJECTED)
#: Workers known only to this app: blocking them needs no provider call.
APP_ONLY_WORKERS = (Worker.Provider.LOCAL, Worker.Provider.IMPORT)


# --- Assignments (a worker's whole HIT) --------------------------------------------------------


def _check_prolific_rejection(message: str, category: str) -> None:
    """Prolific refuses a rejection without one of its categories or with a message under
    ``MIN_REJECTION_MESSAGE_LENGTH`` characters: refuse it here, before anything is stored."""
    from ..providers.prolific import MIN_REJECTION_MESSAGE_LENGTH, REJECTION_CATEGORIES

    errors = {}
    if category not in REJECTION_CATEGORIES:
        errors["rejection_category"] = (
            "Prolific needs a rejection category, one of: "
            f"{', '.join(sorted(REJECTION_CATEGORIES))}")
    if len(message.strip()) < MIN_REJECTION_MESSAGE_LENGTH:
        errors["message"] = (
            f"Prolific needs a rejection message of at least {MIN_REJECTION_MESSAGE_LENGTH} "
            f"characters (this one has {len(message.strip())}): say what was wrong and how "
            "to do better")
    if errors:
        raise ValidationError(errors)


def _refuse_misconfigured(project) -> None:
    """A decision recounts the items' answers against the project's redundancy: with stored
    settings failing the validation it is refused, naming them, and nothing changes."""
    if errors := project_settings_errors(project):
        raise ValidationError(
            f"project {project.slug}: fix its settings before deciding on its work "
            f"({'; '.join(errors)})")


def _decide_assignment(*, assignment_id: int, approve: bool, message: str,
                       actor, rejection_category: str = "",
                       enqueue: bool = True) -> Assignment:
    assignment = (Assignment.objects.select_for_update(of=("self",))
                  .select_related("hit__batch__project").get(pk=assignment_id))
    new = Assignment.Status.APPROVED if approve else Assignment.Status.REJECTED
    if assignment.status == new:
        return assignment  # the same decision again (a double click, a re-run): nothing to do
    _refuse_unconfirmed(assignment, "decided")
    _refuse_misconfigured(assignment.hit.batch.project)
    prolific = assignment.hit.batch.provider == "prolific"
    if prolific and not approve:
        _check_prolific_rejection(message, rejection_category)
    allowed = {Assignment.Status.SUBMITTED, Assignment.Status.REJECTED} if approve else (
        {Assignment.Status.SUBMITTED}
        | ({Assignment.Status.APPROVED} if not assignment.decision_synced else set()))
    if assignment.status not in allowed:
        why = ("the approval was already sent to the provider" if assignment.status in DECIDABLE
               else "the worker never submitted it")
        raise ValidationError(f"assignment {assignment.provider_assignment_id} is "
                              f"{assignment.status}; it cannot be {new} now ({why})")
    old = assignment.status
    assignment.status, assignment.review_message = new, message
    assignment.rejection_category = rejection_category if prolific and not approve else ""
    assignment.reviewed_at, assignment.decision_synced = timezone.now(), False
    assignment.save(update_fields=["status", "review_message", "rejection_category",
                                   "reviewed_at", "decision_synced"])
    decided = annotations_set_review_status(
        annotations=assignment.annotations.all(),
        review_status=Annotation.Review.APPROVED if approve else Annotation.Review.REJECTED)
    record_status_event(kind="assignment_decided", assignment=assignment, actor=actor,
                        old=old, new=new, detail={"message": message, "annotations": decided})
    close_open_flags(
        Flag.objects.filter(Q(assignment=assignment) | Q(annotation__assignment=assignment)),
        status=Flag.Status.DISMISSED if approve else Flag.Status.UPHELD, actor=actor,
        note=message)
    if enqueue:
        enqueue_after_commit("annotation.tasks.sync_assignment_decision", assignment.pk)
    return assignment


def _refuse_unconfirmed(assignment: Assignment, what: str) -> None:
    """Crowd work collection has not confirmed yet (``selectors/blocks.py``) is neither
    decided nor paid: the provider may not know it as submitted work of this worker."""
    if assignment_unconfirmed(assignment):
        provider = Worker.Provider(assignment.hit.batch.provider).label
        noun = "session" if assignment.hit.batch.provider == "prolific" else "assignment"
        raise ValidationError(
            f"{provider} has not confirmed {noun} {assignment.provider_assignment_id} yet: "
            f"collect the batch first; until collection sees it submitted it cannot be {what}")


def _rejection_message(message: str) -> str:
    if not message.strip():
        raise ValidationError({"message": "a rejection needs a message the worker can read"})
    return message.strip()


@transaction.atomic
def assignment_approve(*, assignment_id: int, actor=None, message: str = "") -> Assignment:
    return _decide_assignment(assignment_id=assignment_id, approve=True,
                              message=message.strip(), actor=actor)


@transaction.atomic
def assignment_reject(*, assignment_id: int, message: str, actor=None,
                      rejection_category: str = "") -> Assignment:
    """Reject the whole HIT: every answer of the assignment (CANARD rejected a HIT when one of
    its rewrites was inadequate). On Prolific ``rejection_category`` is required and the
    message must have at least 100 characters."""
    return _decide_assignment(assignment_id=assignment_id, approve=False,
                              message=_rejection_message(message), actor=actor,
                              rejection_category=rejection_category.strip())


@transaction.atomic
def assignments_approve(*, assignment_ids, actor=None, message: str = "") -> list[Assignment]:
    """Approve many assignments at once (all or none: one refusal changes nothing). Their
    decisions go out in one job: one bulk call per Prolific account, one call each on MTurk."""
    ids = sorted({int(assignment_id) for assignment_id in assignment_ids})
    if not ids:
        raise ValidationError({"assignments": "choose at least one assignment"})
    found = {pk for chunk in chunks(ids)  # chunks: ids may outnumber a statement's parameters
             for pk in Assignment.objects.filter(pk__in=chunk).values_list("pk", flat=True)}
    if set(ids) - found:
        raise ValidationError({"assignments": f"no assignment {sorted(set(ids) - found)[:20]}"})
    held = list(Assignment.objects.filter(pk__in=ids)
                .filter(blocked_q(project="hit__batch__project"))
                .select_related("worker").order_by("pk")[:20])
    if held:
        raise ValidationError({"assignments": (
            "a bulk approval never pays a blocked worker; these assignments are of workers "
            "blocked for their project: " + ", ".join(
                f"{assignment.provider_assignment_id} ({assignment.worker.anonymous_id})"
                for assignment in held) + " (approve one on its own if you mean to pay it)")})
    decided = [_decide_assignment(assignment_id=assignment_id, approve=True,
                                  message=message.strip(), actor=actor, enqueue=False)
               for assignment_id in ids]
    pending = [assignment.pk for assignment in decided if not assignment.decision_synced]
    if pending:
        enqueue_after_commit("annotation.tasks.sync_assignment_decisions", pending)
    return decided


@transaction.atomic
def assignments_reject(*, assignment_ids, message: str, actor=None,
                       rejection_category: str = "") -> list[Assignment]:
    """Reject many assignments with one message (all or none: one refusal changes nothing).
    Prolific's need ``rejection_category`` and 100+ characters, checked before anything."""
    ids = sorted({int(assignment_id) for assignment_id in assignment_ids})
    if not ids:
        raise ValidationError({"assignments": "choose at least one assignment"})
    found = set(Assignment.objects.filter(pk__in=ids).values_list("pk", flat=True))
    if set(ids) - found:
        raise ValidationError({"assignments": f"no assignment {sorted(set(ids) - found)[:20]}"})
    message = _rejection_message(message)
    if Assignment.objects.filter(pk__in=ids, hit__batch__provider="prolific").exists():
        _check_prolific_rejection(message, rejection_category.strip())
    return [_decide_assignment(assignment_id=assignment_id, approve=False, message=message,
                               actor=actor, rejection_category=rejection_category.strip())
            for assignment_id in ids]


@transaction.atomic
def assignment_approve_and_bonus(*, assignment_id: int, amount_cents: int, reason: str,
                                 actor=None, message: str = "") -> BonusOutcome:
    """Approve a worker's HIT and pay them a bonus in one step: both or neither."""
    assignment_approve(assignment_id=assignment_id, actor=actor, message=message)
    return bonus_create(assignment_id=assignment_id, amount_cents=amount_cents, reason=reason,
                        actor=actor)


# --- Answers outside a HIT ---------------------------------------------------------------------


def _decide_annotation(*, annotation_id: int, approve: bool, message: str, actor,
                       rejection_category: str = "") -> Annotation:
    annotation = Annotation.objects.select_for_update().get(pk=annotation_id)
    if annotation.assignment_id is not None:
        _decide_assignment(assignment_id=annotation.assignment_id, approve=approve,
                           message=message, actor=actor, rejection_category=rejection_category)
        annotation.refresh_from_db()
        return annotation
    new = Annotation.Review.APPROVED if approve else Annotation.Review.REJECTED
    if annotation.review_status == new:
        return annotation
    _refuse_misconfigured(annotation.project)
    old = annotation.review_status
    annotations_set_review_status(annotations=Annotation.objects.filter(pk=annotation.pk),
                                  review_status=new)
    annotation.refresh_from_db(fields=["review_status", "state"])
    record_status_event(kind="annotation_decided", annotation=annotation,
                        worker=annotation.worker, actor=actor, old=old, new=new,
                        detail={"message": message})
    close_open_flags(annotation.flags.all(),
                     status=Flag.Status.DISMISSED if approve else Flag.Status.UPHELD,
                     actor=actor, note=message)
    return annotation


@transaction.atomic
def annotation_approve(*, annotation_id: int, actor=None, message: str = "") -> Annotation:
    return _decide_annotation(annotation_id=annotation_id, approve=True,
                              message=message.strip(), actor=actor)


@transaction.atomic
def annotation_reject(*, annotation_id: int, message: str, actor=None,
                      rejection_category: str = "") -> Annotation:
    return _decide_annotation(annotation_id=annotation_id, approve=False,
                              message=_rejection_message(message), actor=actor,
                              rejection_category=rejection_category.strip())


# --- Flags -------------------------------------------------------------------------------------


@transaction.atomic
def flag_dismiss(*, flag_id: int, actor=None, note: str = "") -> Flag:
    """Un-flag: the finding was looked at and the work is fine; the work itself is unchanged."""
    flag = Flag.objects.select_for_update().get(pk=flag_id)
    if flag.status != Flag.Status.OPEN:
        raise ValidationError(f"flag {flag.pk} was already decided ({flag.status})")
    close_open_flags(Flag.objects.filter(pk=flag.pk), status=Flag.Status.DISMISSED,
                     actor=actor, note=note.strip())
    flag.refresh_from_db()
    return flag


@transaction.atomic
def flags_dismiss(*, flag_ids, actor=None, note: str = "") -> list[Flag]:
    """Dismiss many open flags at once (all or none: an unknown or decided one refuses)."""
    ids = sorted({int(flag_id) for flag_id in flag_ids})
    if not ids:
        raise ValidationError({"flags": "choose at least one flag"})
    found = set(Flag.objects.filter(pk__in=ids).values_list("pk", flat=True))
    if set(ids) - found:
        raise ValidationError({"flags": f"no flag {sorted(set(ids) - found)[:20]}"})
    return [flag_dismiss(flag_id=flag_id, actor=actor, note=note) for flag_id in ids]


# --- Bonuses -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BonusOutcome:
    bonus: Bonus
    #: True when an earlier bonus that was never paid is being sent again (same token).
    resent: bool


@transaction.atomic
def bonus_create(*, assignment_id: int, amount_cents: int, reason: str, actor=None,
                 again: bool = False) -> BonusOutcome:
    """Pay a bonus for a submitted assignment, once.

    A bonus keeps its ``unique_request_token`` until it is paid: asking again while one is
    unpaid re-sends that one (the provider pays a token once) instead of minting a second; a
    second bonus for an assignment already bonused needs ``again=True``.
    """
    assignment = (Assignment.objects.select_for_update(of=("self",))
                  .select_related("hit__batch").get(pk=assignment_id))
    if not 0 < amount_cents <= MAX_BONUS_CENTS:
        provider = assignment.hit.batch.provider
        raise ValidationError({"amount_cents": "a bonus must be between "
                               f"{provider_money_text(1, provider)} and "
                               f"{provider_money_text(MAX_BONUS_CENTS, provider)}"})
    if not reason.strip():
        raise ValidationError({"reason": "a bonus needs a reason the worker can read"})
    if assignment.status not in DECIDABLE:
        raise ValidationError(f"assignment {assignment.provider_assignment_id} is "
                              f"{assignment.status}: the worker never submitted it, so it "
                              "cannot get a bonus")
    _refuse_unconfirmed(assignment, "paid a bonus")
    unpaid = assignment.bonuses.filter(sent_at__isnull=True).order_by("pk").first()
    if unpaid is not None:
        Bonus.objects.filter(pk=unpaid.pk).update(error="")
        record_status_event(kind="bonus_resent", assignment=assignment, actor=actor,
                            detail={"bonus_id": unpaid.pk, "amount_cents": unpaid.amount_cents})
        enqueue_after_commit("annotation.tasks.send_bonus", unpaid.pk)
        unpaid.refresh_from_db()
        return BonusOutcome(unpaid, resent=True)
    if assignment.bonuses.exists() and not again:
        raise ValidationError(f"assignment {assignment.provider_assignment_id} already got a "
                              "bonus; a second one needs an explicit 'again'")
    bonus = Bonus.objects.create(assignment=assignment, amount_cents=amount_cents,
                                 reason=reason.strip(),
                                 unique_request_token=new_request_token("bonus"))
    record_status_event(kind="bonus_created", assignment=assignment, actor=actor,
                        detail={"bonus_id": bonus.pk, "amount_cents": amount_cents})
    enqueue_after_commit("annotation.tasks.send_bonus", bonus.pk)
    return BonusOutcome(bonus, resent=False)


# --- Workers -----------------------------------------------------------------------------------


def _set_blocked(*, worker_id: int, blocked: bool, reason: str, actor) -> Worker:
    worker = Worker.objects.select_for_update().get(pk=worker_id)
    if worker.is_blocked == blocked:
        return worker
    remote = worker.provider not in APP_ONLY_WORKERS
    worker.is_blocked, worker.blocked_reason = blocked, reason if blocked else ""
    worker.block_synced = not remote
    worker.save(update_fields=["is_blocked", "blocked_reason", "block_synced"])
    record_status_event(kind="worker_blocked" if blocked else "worker_unblocked",
                        worker=worker, actor=actor, old="unblocked" if blocked else "blocked",
                        new="blocked" if blocked else "unblocked", detail={"reason": reason})
    if blocked:
        close_open_flags(Flag.objects.filter(worker=worker, annotation__isnull=True,
                                             assignment__isnull=True),
                         status=Flag.Status.UPHELD, actor=actor, note=reason)
    if remote:
        enqueue_after_commit("annotation.tasks.sync_worker_block", worker.pk)
    return worker


#: Where a block holds: "everywhere" (``Worker.is_blocked``, sent to the provider's block
#: list) or "project" (``WorkerProjectBlock``: this app refuses them that project's work).
BLOCK_SCOPES = ("everywhere", "project")
#: What a block does with the worker's submitted, undecided work in its scope: "reject" it
#: (with the message; Prolific: a category and 100+ characters) or "leave" it for review.
PENDING_CHOICES = ("leave", "reject")


@dataclass(frozen=True)
class BlockOutcome:
    worker: Worker
    scope: str
    project: Project | None
    #: the worker's assignments this block rejected (ids), and their answers outside a HIT
    rejected_assignments: tuple[int, ...] = ()
    rejected_answers: tuple[int, ...] = ()
    #: submitted work collection has not confirmed: it could not be rejected now
    unconfirmed_left: int = 0
    #: submitted, undecided work left for review (``pending="leave"``)
    left_for_review: int = 0

    @property
    def pk(self) -> int:
        return self.worker.pk

    @property
    def is_blocked(self) -> bool:
        return self.worker.is_blocked or self.scope == "project"

    def summary(self) -> str:
        """What the reviewer reads: every figure is what this block did."""
        where = "everywhere" if self.scope == "everywhere" else f"from {self.project.slug}"
        parts = [f"Worker {self.worker.anonymous_id} blocked {where}."]
        if self.rejected_assignments or self.rejected_answers:
            parts.append(f"Rejected {len(self.rejected_assignments)} pending assignment(s) "
                         f"and {len(self.rejected_answers)} pending answer(s).")
        if self.left_for_review:
            parts.append(f"{self.left_for_review} pending assignment(s)/answer(s) left for "
                         "review; bulk approvals skip them.")
        if self.unconfirmed_left:
            parts.append(f"{self.unconfirmed_left} assignment(s) not yet confirmed by "
                         "collection were left: decide them once collected.")
        return " ".join(parts)


def _pending_in_scope(worker: Worker, project: Project | None):
    """The worker's submitted, undecided assignments and answers outside a HIT in scope."""
    assignments = Assignment.objects.filter(worker=worker, status=Assignment.Status.SUBMITTED)
    answers = Annotation.objects.filter(worker=worker, assignment__isnull=True,
                                        review_status=Annotation.Review.PENDING,
                                        state=Annotation.State.COUNTED)
    if project is not None:
        assignments = assignments.filter(hit__batch__project=project)
        answers = answers.filter(project=project)
    return assignments.select_related("hit__batch"), answers


@transaction.atomic
def worker_block(*, worker_id: int, reason: str, actor=None, scope: str = "everywhere",
                 project_id: int | None = None, pending: str = "leave", message: str = "",
                 rejection_category: str = "") -> BlockOutcome:
    """Block a worker everywhere (the reason is required: MTurk shows it to them; their open
    worker-level flags are upheld) or from one project, and settle their pending work: with
    ``pending="reject"`` every submitted, undecided assignment (and answer outside a HIT) in
    the scope is rejected with ``message`` (Prolific: with ``rejection_category`` and 100+
    characters, checked before anything changes); with ``"leave"`` it waits for review, and
    bulk approvals never take it (``selectors/blocks.py``). All or nothing."""
    if not reason.strip():
        raise ValidationError({"reason": "blocking a worker needs a reason"})
    if scope not in BLOCK_SCOPES:
        raise ValidationError({"scope": f"the scope is one of {', '.join(BLOCK_SCOPES)}"})
    if pending not in PENDING_CHOICES:
        raise ValidationError({"pending": "say what to do with the pending work: "
                                          f"{' or '.join(PENDING_CHOICES)}"})
    project = None
    if scope == "project":
        project = Project.objects.filter(pk=project_id).first() if project_id else None
        if project is None:
            raise ValidationError({"project": "blocking from one project needs the project"})
    worker = Worker.objects.get(pk=worker_id)
    assignments, answers = _pending_in_scope(worker, project)
    unconfirmed = set(assignments.filter(unconfirmed_q()).values_list("pk", flat=True))
    decidable = [assignment for assignment in assignments.order_by("pk")
                 if assignment.pk not in unconfirmed]
    answer_ids = list(answers.order_by("pk").values_list("pk", flat=True))
    if pending == "reject":
        message = _rejection_message(message)
        if any(assignment.hit.batch.provider == "prolific" for assignment in decidable):
            _check_prolific_rejection(message, rejection_category.strip())
    if scope == "everywhere":
        worker = _set_blocked(worker_id=worker.pk, blocked=True, reason=reason.strip(),
                              actor=actor)
    else:
        _, created = WorkerProjectBlock.objects.get_or_create(
            worker=worker, project=project,
            defaults={"reason": reason.strip(), "created_by": actor})
        if created:
            record_status_event(kind="worker_blocked", worker=worker, actor=actor,
                                old="unblocked", new="blocked",
                                detail={"reason": reason.strip(), "project": project.slug})
    if pending == "leave":
        return BlockOutcome(worker, scope, project, unconfirmed_left=len(unconfirmed),
                            left_for_review=len(decidable) + len(answer_ids))
    for assignment in decidable:
        _decide_assignment(assignment_id=assignment.pk, approve=False, message=message,
                           actor=actor, rejection_category=rejection_category.strip())
    for annotation_id in answer_ids:
        _decide_annotation(annotation_id=annotation_id, approve=False, message=message,
                           actor=actor)
    return BlockOutcome(worker, scope, project,
                        rejected_assignments=tuple(a.pk for a in decidable),
                        rejected_answers=tuple(answer_ids), unconfirmed_left=len(unconfirmed))


@transaction.atomic
def worker_unblock(*, worker_id: int, actor=None, reason: str = "",
                   project_id: int | None = None) -> Worker:
    """Lift the block everywhere, or (``project_id``) the block from that project."""
    if project_id is None:
        return _set_blocked(worker_id=worker_id, blocked=False, reason=reason.strip(),
                            actor=actor)
    worker = Worker.objects.get(pk=worker_id)
    block = (WorkerProjectBlock.objects.select_for_update().select_related("project")
             .filter(worker=worker, project_id=project_id).first())
    if block is not None:
        block.delete()
        record_status_event(kind="worker_unblocked", worker=worker, actor=actor,
                            old="blocked", new="unblocked",
                            detail={"reason": reason.strip(), "project": block.project.slug})
    return worker


# --- What the jobs run: tell the provider ------------------------------------------------------


def provider_for_worker(worker: Worker) -> AnnotationProvider:
    """The provider (and MTurk environment) the worker last worked through, else their own
    provider with the configured default environment."""
    latest = (Batch.objects.filter(hits__assignments__worker=worker)
              .order_by("-pk").only("provider", "live").first())
    if latest is not None:
        return provider_for_batch(latest)
    return get_provider(worker.provider, live=bool(settings.MTURK_LIVE)
                        if worker.provider == Worker.Provider.MTURK else None)


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
    Throttled and transient errors propagate: the job retries them.
    """
    assignment = Assignment.objects.select_related("hit__batch").get(pk=assignment_id)
    if assignment.decision_synced:
        return True
    if assignment.status not in (Assignment.Status.APPROVED, Assignment.Status.REJECTED):
        return False
    decided = assignment.status
    provider = provider or provider_for_batch(assignment.hit.batch)
    try:
        if decided == Assignment.Status.APPROVED:
            provider.approve_assignment(assignment.provider_assignment_id,
                                        feedback=assignment.review_message)
        elif assignment.hit.batch.provider == "prolific":
            provider.reject_assignment(assignment.provider_assignment_id,
                                       message=assignment.review_message,
                                       rejection_category=assignment.rejection_category)
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
            record_status_event(kind="decision_sync_failed", assignment=assignment,
                                new=decided,
                                detail={"error": str(error), "remote_status": remote or ""})
            return False
    with transaction.atomic():
        # Only the decision we sent is marked synced; a newer one keeps waiting for its job.
        _mark_decision_synced(assignment, decided)
    return True


def _mark_decision_synced(assignment: Assignment, decided: str, *,
                          detail: dict | None = None) -> bool:
    """Mark ``assignment`` synced if its decision is still ``decided`` and unsynced; one audit
    row when it was. Whether it was."""
    if not Assignment.objects.filter(pk=assignment.pk, status=decided,
                                     decision_synced=False).update(decision_synced=True):
        return False
    record_status_event(kind="decision_synced", assignment=assignment, new=decided,
                        detail=detail)
    return True


def assignments_sync_decisions(*, assignment_ids, provider: AnnotationProvider | None = None
                               ) -> int:
    """Send the approvals of ``assignments_approve``: Prolific's in one bulk call per batch
    provider, any other one by one (``assignment_sync_decision``). The number synced."""
    assignments = [assignment for chunk in chunks(sorted(set(assignment_ids)))
                   for assignment in Assignment.objects.select_related("hit__batch").filter(
                       pk__in=chunk, decision_synced=False,
                       status=Assignment.Status.APPROVED)]
    synced = 0
    bulk = []
    for assignment in assignments:
        if assignment.hit.batch.provider == "prolific":
            bulk.append(assignment)
        else:
            synced += assignment_sync_decision(assignment_id=assignment.pk, provider=provider)
    if bulk:
        (provider or provider_for_batch(bulk[0].hit.batch)).approve_assignments(
            [assignment.provider_assignment_id for assignment in bulk])
        for assignment in bulk:
            with transaction.atomic():
                synced += _mark_decision_synced(assignment, Assignment.Status.APPROVED,
                                                detail={"bulk": True})
    return synced


def _bonus_failed(bonus: Bonus, message: str) -> Bonus:
    """Store ``message`` (the provider's refusal, as staff may read it) on the unsent bonus."""
    Bonus.objects.filter(pk=bonus.pk, sent_at__isnull=True).update(error=message)
    record_status_event(kind="bonus_failed", assignment=bonus.assignment,
                        detail={"bonus_id": bonus.pk, "error": message})
    bonus.refresh_from_db()
    return bonus


def _bonus_sent(bonus: Bonus, *, found_paid: bool = False) -> Bonus:
    """Mark the bonus paid. ``found_paid``: nothing was sent now, the provider's own list of
    payments shows an earlier pay call (whose reply was lost) paid it (``bonus_found_paid``)."""
    with transaction.atomic():
        if Bonus.objects.filter(pk=bonus.pk, sent_at__isnull=True).update(
                sent_at=timezone.now(), error=""):
            record_status_event(kind="bonus_found_paid" if found_paid else "bonus_sent",
                                assignment=bonus.assignment,
                                detail={"bonus_id": bonus.pk, "amount_cents": bonus.amount_cents})
    bonus.refresh_from_db()
    return bonus


def _provider_label(bonus: Bonus) -> str:
    return "Prolific" if bonus.assignment.hit.batch.provider == "prolific" else "MTurk"


def _bonus_outcome_unknown(bonus: Bonus, *, human_needed: bool, asked: bool = True) -> Bonus:
    """The reply to a pay call was lost and the provider does not list the payment (yet):
    say exactly that on the bonus, and what happens next. Never paid again automatically
    where the provider could still be paying it (Prolific pays asynchronously)."""
    from celery import current_app

    from ..selectors.bonuses import bonus_check_command

    bonus.refresh_from_db()
    if bonus.sent_at is not None:
        return bonus
    label = _provider_label(bonus)
    started = f"{bonus.paying_started_at:%Y-%m-%d %H:%M:%S}"
    paying = provider_money_text(bonus.amount_cents, bonus.assignment.hit.batch.provider)
    what = (f"outcome unknown: the reply to paying {paying} was lost "
            f"at {started}, so {label} may have paid it")
    listed = (f"{label} lists no such payment yet ({label} pays bonuses within minutes)"
              if asked else f"{label} could not be asked for its payments just now")
    if label == "MTurk":  # MTurk's list is immediate and its token pays once
        text = (f"{what}; MTurk's list of payments is read before it is sent again (with the "
                "same request token, which MTurk pays at most once): " + (
                    f"nothing checks again by itself here: run `{bonus_check_command(bonus.pk)}`"
                    if current_app.conf.task_always_eager
                    else "the job tries again with backoff, then the periodic job"))
        kind = "bonus_unknown"
    elif human_needed:
        text = (f"{what}, and {label} still lists no such payment for this submission "
                f"{settings.UNPACK_BONUS_SETTLE_SECONDS // 60} minutes later: check the "
                f"participant's payments on {label}, then `python manage.py review "
                f"bonus-resolve {bonus.pk} --paid` or `--not-paid` (it is never paid again "
                "automatically)")
        kind = "bonus_unconfirmed"
    elif current_app.conf.task_always_eager:
        text = (f"{what}; {listed}; nothing checks again by itself here: run "
                f"`{bonus_check_command(bonus.pk)}` in a few minutes")
        kind = "bonus_unknown"
    else:
        text = (f"{what}; {listed}; checking again every minute (the periodic job), and "
                f"asking a human after {settings.UNPACK_BONUS_SETTLE_SECONDS // 60} minutes")
        kind = "bonus_unknown"
    with transaction.atomic():
        if Bonus.objects.filter(pk=bonus.pk, sent_at__isnull=True).exclude(error=text).update(
                error=text):
            record_status_event(kind=kind, assignment=bonus.assignment,
                                detail={"bonus_id": bonus.pk,
                                        "setup_id": bonus.provider_setup_id})
    bonus.refresh_from_db()
    return bonus


def _bonus_settle(bonus: Bonus, provider: AnnotationProvider) -> Bonus | None:
    """A pay call of ``bonus`` was sent and its reply lost (``paying_started_at``). Ask the
    provider's own list of payments: listed -> marked paid, nothing sent again. Not listed:
    None when the provider can tell it was not paid (MTurk: its list is immediate, and a
    SendBonus repeated with the same token pays once), so the caller sends it once; the bonus
    with its outcome still unknown when the provider may still be paying it (Prolific pays
    asynchronously: checked again, and a human is asked after UNPACK_BONUS_SETTLE_SECONDS)."""
    try:
        paid = _paid_by_an_earlier_attempt(provider, bonus)
    except (ProviderThrottled, ProviderTransientError):
        # The provider cannot be asked now: still unknown, and it says so; asked again later.
        _bonus_outcome_unknown(bonus, human_needed=False, asked=False)
        raise
    if paid:
        return _bonus_sent(bonus, found_paid=True)
    if not getattr(provider, "two_step_bonus", False):
        return None
    waited = (timezone.now() - bonus.paying_started_at).total_seconds()
    return _bonus_outcome_unknown(bonus,
                                  human_needed=waited >= settings.UNPACK_BONUS_SETTLE_SECONDS)


def _bonus_send_two_step(bonus: Bonus, provider: AnnotationProvider) -> Bonus:
    """Prolific: set up (its id stored), mark paying, pay, mark sent. A set-up never paid costs
    nothing, so a crash before paying is simply resumed; after ``paying_started_at`` (a crash,
    a lost reply) it is never paid again automatically: it is settled from Prolific's list of
    the submission's payments, or reported for a human (``_bonus_settle``)."""
    assignment = bonus.assignment
    if bonus.paying_started_at is not None:
        return _bonus_settle(bonus, provider)
    if not bonus.provider_setup_id:
        try:
            setup = provider.set_up_bonus(worker_id=assignment.worker.external_id,
                                          assignment_id=assignment.provider_assignment_id,
                                          amount=Decimal(bonus.amount_cents) / 100,
                                          reason=bonus.reason)
        except ProviderPermanentError as error:
            return _bonus_failed(bonus, str(error))
        with transaction.atomic():
            if Bonus.objects.filter(pk=bonus.pk, provider_setup_id="").update(
                    provider_setup_id=setup.id):
                record_status_event(kind="bonus_set_up", assignment=assignment,
                                    detail={"bonus_id": bonus.pk, "setup_id": setup.id,
                                            "fees_cents": setup.fees_cents})
        bonus.refresh_from_db()
    # Claim the one pay call: whoever sets paying_started_at pays, anybody later does not.
    if not Bonus.objects.filter(pk=bonus.pk, sent_at__isnull=True,
                                paying_started_at__isnull=True).update(
            paying_started_at=timezone.now()):
        bonus.refresh_from_db()
        return bonus if bonus.sent_at else _bonus_settle(bonus, provider)
    try:
        provider.pay_bonus(bonus.provider_setup_id)
    except (ProviderThrottled, ProviderPermanentError) as error:
        # Refused before anything was paid (429: slow down; 4xx: the call is wrong): the
        # claim is given back, so a retry (or a resend) may pay.
        _bonus_claim_given_back(bonus)
        if isinstance(error, ProviderThrottled):
            raise
        return _bonus_failed(bonus, str(error))
    except ProviderTransientError as error:
        if not error.request_sent:  # never reached Prolific: nothing can have been paid
            _bonus_claim_given_back(bonus)
            raise
        # The reply was lost: Prolific may have paid. Settle from its own list, never resend.
        bonus.refresh_from_db()
        return _bonus_settle(bonus, provider)
    return _bonus_sent(bonus)


def _bonus_claim_given_back(bonus: Bonus) -> None:
    Bonus.objects.filter(pk=bonus.pk, sent_at__isnull=True).update(paying_started_at=None)


@transaction.atomic
def bonus_resolve(*, bonus_id: int, paid: bool, actor=None) -> Bonus:
    """A human checked an unconfirmed bonus on the provider's site: ``paid`` marks it sent;
    otherwise it may be paid again (with the same set-up, which was never paid)."""
    bonus = Bonus.objects.select_for_update().select_related("assignment").get(pk=bonus_id)
    if bonus.sent_at is not None or bonus.paying_started_at is None:
        raise ValidationError(f"bonus {bonus_id} is not waiting for a check")
    if paid:
        bonus.sent_at, bonus.error = timezone.now(), ""
        bonus.save(update_fields=["sent_at", "error"])
    else:
        bonus.paying_started_at, bonus.error = None, ""
        bonus.save(update_fields=["paying_started_at", "error"])
        enqueue_after_commit("annotation.tasks.send_bonus", bonus.pk)
    record_status_event(kind="bonus_resolved", assignment=bonus.assignment, actor=actor,
                        detail={"bonus_id": bonus.pk, "paid": paid})
    return bonus


@transaction.atomic
def bonus_check(*, bonus_id: int, actor=None) -> Bonus:
    """Check an unpaid bonus again now (its job: settle a lost reply from the provider's list
    of payments, or pay a bonus that was never sent). Refused for a paid one."""
    bonus = Bonus.objects.select_for_update().select_related("assignment__hit__batch").get(
        pk=bonus_id)
    if bonus.sent_at is not None:
        raise ValidationError(f"bonus {bonus_id} is paid already")
    record_status_event(kind="bonus_checked", assignment=bonus.assignment, actor=actor,
                        detail={"bonus_id": bonus.pk})
    enqueue_after_commit("annotation.tasks.send_bonus", bonus.pk)
    return bonus


def bonus_send(*, bonus_id: int, provider: AnnotationProvider | None = None) -> Bonus:
    """Pay the bonus once: its token makes a repeated SendBonus a no-op at the provider
    (MTurk); Prolific's two steps are ``_bonus_send_two_step``. A SendBonus whose reply was
    lost is settled from MTurk's ListBonusPayments before anything is sent again."""
    bonus = Bonus.objects.select_related("assignment__worker", "assignment__hit__batch").get(
        pk=bonus_id)
    if bonus.sent_at is not None:
        return bonus
    assignment = bonus.assignment
    provider = provider or provider_for_batch(assignment.hit.batch)
    if getattr(provider, "two_step_bonus", False):
        return _bonus_send_two_step(bonus, provider)
    for attempt in (1, 2):
        if bonus.paying_started_at is not None:
            settled = _bonus_settle(bonus, provider)
            if settled is not None:
                return settled  # MTurk lists it: paid by the call whose reply was lost
        try:
            provider.send_bonus(worker_id=assignment.worker.external_id,
                                assignment_id=assignment.provider_assignment_id,
                                amount=Decimal(bonus.amount_cents) / 100, reason=bonus.reason,
                                unique_request_token=bonus.unique_request_token)
        except ProviderPermanentError as error:
            if not _paid_by_an_earlier_attempt(provider, bonus):
                # Staff read the error: the worker by pseudonym, as everywhere.
                return _bonus_failed(bonus, str(error).replace(
                    assignment.worker.external_id, assignment.worker.anonymous_id))
        except ProviderTransientError as error:
            if not error.request_sent:
                raise
            # The reply was lost: MTurk may have paid. Its ListBonusPayments is read before
            # sending once more (the same token: MTurk pays it at most once).
            Bonus.objects.filter(pk=bonus.pk, sent_at__isnull=True,
                                 paying_started_at__isnull=True).update(
                paying_started_at=timezone.now())
            bonus.refresh_from_db()
            if attempt == 2:
                _bonus_outcome_unknown(bonus, human_needed=False)
                raise
            continue
        return _bonus_sent(bonus)
    raise AssertionError("unreachable")  # pragma: no cover


def _paid_by_an_earlier_attempt(provider: AnnotationProvider, bonus: Bonus) -> bool:
    """Whether the provider's own list of payments shows this bonus paid by an earlier call
    whose reply was lost (MTurk's ListBonusPayments; Prolific's ``bonus_payments`` of the
    submission). Never read from an error's wording: it lists more payments of this amount
    (and reason, where the provider reports one) to this worker for this assignment than this
    app has recorded as sent (a second bonus with the same amount, ``again``, is counted).
    False when the provider cannot list."""
    try:
        payments = provider.bonus_payments(
            assignment_id=bonus.assignment.provider_assignment_id)
    except ProviderPermanentError:
        return False  # cannot tell: the refusal stands (a throttled listing is retried)
    if payments is None:
        return False
    amount = Decimal(bonus.amount_cents) / 100
    # Prolific lists amounts only: then every bonus of this amount counts, whatever its reason.
    with_reasons = all(payment.reason for payment in payments)
    listed = sum(1 for payment in payments
                 if payment.worker_id in ("", bonus.assignment.worker.external_id)
                 and payment.amount == amount
                 and (not with_reasons or payment.reason == bonus.reason))
    recorded = Bonus.objects.filter(assignment_id=bonus.assignment_id, sent_at__isnull=False,
                                    amount_cents=bonus.amount_cents).exclude(pk=bonus.pk)
    if with_reasons:
        recorded = recorded.filter(reason=bonus.reason)
    return listed > recorded.count()


def worker_sync_block(*, worker_id: int, provider: AnnotationProvider | None = None) -> bool:
    """Make the provider's block list match ``Worker.is_blocked`` (both calls are idempotent).
    Returns False for workers only this app knows (local annotators, imported work)."""
    worker = Worker.objects.get(pk=worker_id)
    if worker.provider in APP_ONLY_WORKERS:
        return False
    if worker.block_synced:
        return True
    blocked = worker.is_blocked
    provider = provider or provider_for_worker(worker)
    if blocked:
        provider.create_worker_block(worker.external_id,
                                     reason=worker.blocked_reason or "blocked by the requester")
    else:
        provider.delete_worker_block(worker.external_id, reason="block lifted")
    with transaction.atomic():
        if Worker.objects.filter(pk=worker_id, is_blocked=blocked,
                                 block_synced=False).update(block_synced=True):
            record_status_event(kind="block_synced", worker=worker,
                                new="blocked" if blocked else "unblocked")
    return True


def unflagged_assignments_approve(*, project, actor=None, message: str = "",
                                  chunk_size: int = 500, progress=None) -> dict:
    """Approve the project's submitted assignments without an open flag, as they are now,
    through :func:`assignments_approve` (its rules: never a blocked worker's, never unconfirmed
    work) in transactions of ``chunk_size``; ``progress(done, total, message)`` hears each.
    What the review page's "Approve all unflagged" job and ``review approve --all-pending``
    run. Returns ``{"approved", "held_back": {"blocked", "unconfirmed"}, "refused",
    "refusal"}``: a part that changed since it was listed (flagged, blocked…) is refused whole
    and counted, not approved."""
    from ..selectors import batches as batch_selectors

    ids = list(batch_selectors.unflagged_submitted_assignment_ids(project=project))
    held_back = batch_selectors.unflagged_held_back_counts(project=project)
    approved, refused, refusal = 0, 0, ""
    if progress is not None:
        progress(0, len(ids), "approving")
    for part in chunks(ids, chunk_size):
        try:
            assignments_approve(assignment_ids=part, actor=actor, message=message)
        except ValidationError as error:
            refused += len(part)
            refusal = refusal or "; ".join(error.messages)
        else:
            approved += len(part)
        if progress is not None:
            progress(approved + refused, len(ids), "approving")
    return {"approved": approved, "held_back": held_back, "refused": refused,
            "refusal": refusal}


# --- A selection of answers (the data browser's bulk actions) -----------------------------------

#: What may be done to the answers chosen in the data browser.
SELECTION_ACTIONS = ("approve", "reject", "dismiss")
#: Answers one bulk action takes (a page shows 50).
MAX_SELECTION = 500


@dataclass(frozen=True)
class SelectionOutcome:
    """What a bulk action on chosen answers did, each count of the chosen answers."""

    action: str
    assignments: int = 0  # whole HITs decided (a HIT is decided whole)
    in_assignments: int = 0  # the chosen answers in those HITs
    answers: int = 0  # chosen answers outside a HIT decided
    flags: int = 0  # open flags dismissed
    held_blocked: int = 0  # answers of a worker blocked for the project: a bulk approval skips
    held_unconfirmed: int = 0  # answers whose crowd work collection has not confirmed yet
    not_decidable: int = 0  # superseded or imported, already so decided, or never submitted

    def summary(self) -> str:
        def answers(n: int) -> str:
            return f"{n} answer{'' if n == 1 else 's'}"

        if self.action == "dismiss":
            text = (f"Dismissed {self.flags} open flag{'' if self.flags == 1 else 's'} on "
                    f"{answers(self.answers)}.")
        else:
            verb = "Approved" if self.action == "approve" else "Rejected"
            parts = []
            if self.assignments:
                parts.append(f"{self.assignments} whole HIT{'' if self.assignments == 1 else 's'}"
                             f" (holding {answers(self.in_assignments)} of those chosen; a HIT "
                             "is decided whole)")
            if self.answers:
                parts.append(f"{answers(self.answers)} outside a HIT")
            text = f"{verb} {' and '.join(parts)}."
        return text + self.reasons()

    def reasons(self) -> str:
        """What was held back or not decided, and why ("" when nothing)."""

        def answers(n: int) -> str:
            return f"{n} answer{'' if n == 1 else 's'}"

        text = ""
        held = []
        if self.held_blocked:
            held.append(f"{answers(self.held_blocked)} of a worker blocked for this project "
                        "(decide each on its own)")
        if self.held_unconfirmed:
            held.append(f"{answers(self.held_unconfirmed)} not confirmed by the provider yet "
                        "(collect the batch first)")
        if held:
            text += " Held back: " + "; ".join(held) + "."
        if self.not_decidable:
            text += (f" Not decided: {answers(self.not_decidable)} (superseded or imported, "
                     "already decided so, or never submitted).")
        return text


def _selection_ids(project: Project, answer_ids) -> list[int]:
    ids = sorted({int(answer_id) for answer_id in answer_ids})
    if not ids:
        raise ValidationError({"answers": "choose at least one answer"})
    if len(ids) > MAX_SELECTION:
        raise ValidationError({"answers": f"at most {MAX_SELECTION} answers at once"})
    found = set(Annotation.objects.filter(pk__in=ids, project=project)
                .values_list("pk", flat=True))
    if set(ids) - found:
        raise ValidationError({"answers": f"no answer {sorted(set(ids) - found)[:20]} in "
                                          f"project {project.slug}"})
    return ids


@transaction.atomic
def answers_decide(*, project: Project, answer_ids, action: str, actor=None, message: str = "",
                   rejection_category: str = "") -> SelectionOutcome:
    """Approve, reject (one message) or dismiss the open flags of the chosen answers.

    An answer in a HIT is decided through its assignment (the whole HIT, as every decision);
    one outside a HIT on its own. Held back, never decided here and counted: work collection
    has not confirmed, and on approval a worker blocked for the project (the bulk rule of
    ``selectors/blocks.py``). Superseded and imported answers, and work already so decided or
    never submitted, are counted as not decided. Bad input (no answer, an answer of another
    project, a rejection without a message, a Prolific rejection without its category or 100
    characters) refuses the whole action and changes nothing."""
    if action not in SELECTION_ACTIONS:
        raise ValidationError({"action": f"one of {', '.join(SELECTION_ACTIONS)}"})
    ids = _selection_ids(project, answer_ids)
    if action == "dismiss":
        open_flags = list(Flag.objects.filter(annotation_id__in=ids, status=Flag.Status.OPEN)
                          .values_list("pk", "annotation_id"))
        if not open_flags:
            raise ValidationError({"answers": "none of the chosen answers has an open flag"})
        flags_dismiss(flag_ids=[pk for pk, _ in open_flags], actor=actor, note=message)
        return SelectionOutcome(action=action, flags=len(open_flags),
                                answers=len({answer for _, answer in open_flags}))
    approve = action == "approve"
    if not approve:
        message = _rejection_message(message)
    chosen = list(Annotation.objects.filter(pk__in=ids).select_related("assignment__hit__batch")
                  .order_by("pk"))
    assignment_ids = {answer.assignment_id for answer in chosen if answer.assignment_id}
    unconfirmed = set(Assignment.objects.filter(pk__in=assignment_ids).filter(unconfirmed_q())
                      .values_list("pk", flat=True))
    blocked_answers = (set(Annotation.objects.filter(pk__in=ids).filter(blocked_q())
                           .values_list("pk", flat=True)) if approve else set())
    target = Assignment.Status.APPROVED if approve else Assignment.Status.REJECTED
    review = Annotation.Review.APPROVED if approve else Annotation.Review.REJECTED
    counts = {"held_blocked": 0, "held_unconfirmed": 0, "not_decidable": 0}
    by_assignment: dict[int, list[int]] = {}
    alone: list[int] = []
    for answer in chosen:
        if answer.state in (Annotation.State.SUPERSEDED, Annotation.State.IMPORTED):
            counts["not_decidable"] += 1
        elif answer.assignment_id in unconfirmed:
            counts["held_unconfirmed"] += 1
        elif answer.pk in blocked_answers:
            counts["held_blocked"] += 1
        elif answer.assignment_id is not None:
            if (answer.assignment.status == target
                    or answer.assignment.status not in DECIDABLE):
                counts["not_decidable"] += 1
            else:
                by_assignment.setdefault(answer.assignment_id, []).append(answer.pk)
        elif answer.review_status == review:
            counts["not_decidable"] += 1
        else:
            alone.append(answer.pk)
    if not approve and any(answer.assignment.hit.batch.provider == "prolific"
                           for answer in chosen if answer.assignment_id in by_assignment):
        _check_prolific_rejection(message, rejection_category.strip())
    decided: list[Assignment] = []
    in_assignments = 0
    for assignment_id, answers_in in sorted(by_assignment.items()):
        try:
            decided.append(_decide_assignment(
                assignment_id=assignment_id, approve=approve, message=message.strip(),
                actor=actor, rejection_category=rejection_category.strip(), enqueue=False))
        except ValidationError:  # e.g. an approval already sent to the provider
            counts["not_decidable"] += len(answers_in)
        else:
            in_assignments += len(answers_in)
    for annotation_id in alone:
        _decide_annotation(annotation_id=annotation_id, approve=approve,
                           message=message.strip(), actor=actor)
    if not decided and not alone:
        reasons = SelectionOutcome(action=action, **counts).reasons()
        raise ValidationError({"answers": f"nothing was decided.{reasons}"})
    pending = [assignment.pk for assignment in decided if not assignment.decision_synced]
    if pending:
        enqueue_after_commit("annotation.tasks.sync_assignment_decisions", pending)
    return SelectionOutcome(action=action, assignments=len(decided),
                            in_assignments=in_assignments, answers=len(alone), **counts)
