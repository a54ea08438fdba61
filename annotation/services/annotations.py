"""Storing annotators' answers (local pages, MTurk ExternalQuestion pages and Prolific study pages).

``annotation_submit`` is idempotent: the browser's ``client_token`` is unique, so a double submit
(or a retry after a lost response) returns the stored annotation instead of a second one. A
repeated token with ANOTHER answer is no retry (two tabs that restored one draft share its
token): the stored annotation is returned with ``SubmitResult.same_answer`` False, so that the
page says the answer sent was not stored. The
capacity re-check under the Item row lock is the concurrency guarantee of the work queue
(see ``annotation.services.work_queue``).

MTurk ExternalQuestion pages cannot authenticate the worker (MTurk's own model: the page gets
assignmentId/workerId in its URL, and the requester reconciles at collection). So the page's
answers are stored *provisional* (``Annotation.State.PROVISIONAL``) until collection sees the
assignment at MTurk (``annotations_confirm``); an assignment is created on its first saved item
only; only assignments the provider confirmed hold one of the HIT's ``max_assignments`` slots,
and an assignment takes no answer once it is submitted or decided. See docs/annotating.md,
"Trust".

Counted work. ``annotation_state`` is THE rule saying whether an answer fills one of its item's
redundancy slots; its result is stored in ``Annotation.state`` (indexed with the item) whenever
one of its inputs changes -- at the INSERT, by ``annotations_confirm`` (collection) and by
``annotations_set_review_status`` (every reviewer decision, collected remote decisions) -- and
every reader (work queue, submit, batch planning, dashboard, QC, exports) reads that column.

Filled items. ``Item.filled`` marks an item whose counted answers fill every redundancy slot of
its split, so that the work queue walks only the others (a partial index): it may be False for a
filled item (the queue then counts, as it does for every unmarked item) but never True for an
item with an open slot, which would hide it for good. So every change that can add a counted
answer, take one away, move the item to another split or change the project's redundancy keeps
it in its own transaction: the submit marks the item when its answer takes the last slot (under
the Item row lock, in the INSERT's statement on PostgreSQL); every other writer
(``annotations_set_review_status``, ``annotations_confirm``, ``annotations_release``,
``annotation_revise``, collection's stored answers, a deleted answer, ``make_splits``,
``project_update`` of the redundancy) runs inside ``item_filled_marks_kept``, which locks the
items first (the submit's order: item, then answers) and sets their marks from the counted
answers after the change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.db import IntegrityError, connection, connections, router, transaction
from django.db.models import Case, Count, Q, QuerySet, Value, When
from django.db.transaction import TransactionManagementError
from django.utils import timezone

from ..models import Annotation, Assignment, Flag, Hit, Item, Project, Worker
from ..payloads import CleanPayload, ItemContext, live_check_warnings, validate_payload
from ..selectors.access import REFUSALS, work_refusal
from ..selectors.annotate import (
    item_context,
    item_for_submit,
    page_assignment_is_theirs,
    project_and_item_for_submit,
)
from ..sql import submit as submit_sql
from .adaptive import adaptive_policy, adaptive_targets, item_adaptive_refresh, slots_by_split
from .audit import close_open_flags, record_status_event
from .batching import chunks
from .gold import gold_answer_checked
from .work_queue import (
    work_queue_lease,
    work_queue_next_item,
    work_queue_next_item_before_answer,
)

#: Clock skew and network delay allowed between MTurk and us when deciding that an assignment's
#: time is over: MTurk counts the assignment duration from its AcceptTime, which is before our
#: first save (``Assignment.accepted_at`` of a page-created assignment), so this is generous.
ASSIGNMENT_GRACE = timedelta(minutes=5)
#: Statuses of an assignment that no longer holds one of the HIT's slots at MTurk.
RELEASED_ASSIGNMENT_STATUSES = (Assignment.Status.RETURNED, Assignment.Status.ABANDONED)


#: ``Flag.reason`` of a problem report (``Flag.RaisedBy.ANNOTATOR``).
REPORT_FLAG_REASON = "annotator_report"
#: A client token already used for an answer to another item (a page's key is per item).
KEY_REUSED_MESSAGE = ("This page's submission key was already used for another answer: "
                      "reload the page to save this one.")


class SubmitRefused(Exception):
    """The submission cannot be stored; ``code`` is stable for the browser, ``message`` human."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class SubmitResult:
    annotation: Annotation
    created: bool
    item: Item | None = None
    # ``annotation_submit_item(choose_next=True)``: the worker's next item (None: none left),
    # leased to them.
    next_item: Item | None = None
    # Not created: whether the stored ``annotation`` holds the very answer submitted (a retry,
    # a double click). A repeated client token with another answer is no retry: the answer
    # submitted was NOT stored, and the caller must say so (``same_answer`` False).
    same_answer: bool = True
    # The answer (to a gold item) made the gold rule stop the worker in the project
    # (``services.gold.gold_answer_checked``): no next item is chosen.
    stopped: bool = False


def _same_answer(stored: Annotation, *, item: Item | None, clean: CleanPayload | None) -> bool:
    """Whether ``stored`` is the answer ``clean`` to ``item`` (the rule deciding that a repeated
    client token is a retry of the same answer, not another answer sent with a reused token)."""
    if item is not None and stored.item_id != item.pk:
        return False
    return clean is None or stored.payload == clean.payload


def annotation_state(*, source: str, review_status: str, confirmed: bool = True,
                     reported: bool = False, superseded: bool = False) -> str:
    """What an answer is worth to its project (``Annotation.State``); the one definition of
    counted work. ``confirmed`` is False for an MTurk task page's answer until collection sees
    its assignment at MTurk; ``reported``: the row is a problem report, not an answer;
    ``superseded``: the annotator changed it, a newer version replaces it.

    An older version counts nowhere, whatever else it is. Provisional wins over the rest (a
    decision on unconfirmed work counts once it is confirmed); a problem report fills no slot
    and enters no export or QC, whatever a reviewer decides about it; then a reviewer's
    rejection; a released dataset's answer (imported) fills no slot: a project collects its own
    redundancy on top of it."""
    if superseded:
        return Annotation.State.SUPERSEDED
    if not confirmed:
        return Annotation.State.PROVISIONAL
    if reported:
        return Annotation.State.REPORTED
    if review_status == Annotation.Review.REJECTED:
        return Annotation.State.REJECTED
    if source == Annotation.Source.IMPORT:
        return Annotation.State.IMPORTED
    return Annotation.State.COUNTED


def _confirmed_state_expression(review_status=None) -> Case:
    """SQL for ``annotation_state`` of a confirmed, live annotation, given its row's source,
    ``review_status`` (the row's own when None) and whether it is a problem report, built from
    the rule above."""
    reviews = Annotation.Review.values if review_status is None else [review_status]
    return Case(*[When(~Q(problem=""), source=source,
                       then=Value(annotation_state(source=source, review_status=review,
                                                   reported=True)),
                       **({"review_status": review} if review_status is None else {}))
                  for source in Annotation.Source.values for review in reviews],
                *[When(source=source, then=Value(annotation_state(
                    source=source, review_status=review)),
                       **({"review_status": review} if review_status is None else {}))
                  for source in Annotation.Source.values for review in reviews],
                default=Value(Annotation.State.COUNTED))


#: Items per statement when their marks are locked and set (bounded IN lists).
FILLED_CHUNK = 500


def _chunked(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), FILLED_CHUNK):
        yield ids[start:start + FILLED_CHUNK]


def items_filled_refresh(item_ids: Iterable[int]) -> None:
    """Set ``Item.filled`` of these items from their counted answers and the counted answers
    each needs: their project's redundancy for their split or, with adaptive redundancy, the
    target ``services.adaptive`` computes from those answers, stored with the mark
    (``Item.target_answers``; cleared when the project has no policy). Exact only under the
    items' row locks, which ``item_filled_marks_kept`` takes (a concurrent change waits for
    them, and the counts here are read after they are held)."""
    ids = sorted(set(item_ids))
    for chunk in _chunked(ids):
        rows = list(Item.objects.filter(pk__in=chunk).values_list(
            "pk", "project_id", "split", "filled", "is_gold", "target_answers"))
        counted = dict(Annotation.objects.filter(item_id__in=chunk,
                                                 state=Annotation.State.COUNTED)
                       .values("item_id").annotate(n=Count("pk")).values_list("item_id", "n"))
        projects = Project.objects.only("redundancy", "kind", "flag_settings").in_bulk(
            {row[1] for row in rows})
        targets: dict[int, int] = {}
        for project in projects.values():
            targets.update(adaptive_targets(project=project, item_ids=[
                row[0] for row in rows if row[1] == project.pk and not row[4]]) or {})
        changes: dict[tuple[bool, int | None], list[int]] = defaultdict(list)
        for item_id, project_id, split, filled, is_gold, target in rows:
            new_target = targets.get(item_id)
            required = (new_target if new_target is not None
                        else projects[project_id].redundancy_for(split))
            full = not is_gold and counted.get(item_id, 0) >= required
            if (full, new_target) != (filled, target):
                changes[full, new_target].append(item_id)
        for (full, new_target), changed in changes.items():
            Item.objects.filter(pk__in=changed).update(filled=full, target_answers=new_target)


@contextmanager
def item_filled_marks_kept(item_ids: Iterable[int]) -> Iterator[None]:
    """Around a change to what fills these items (their counted answers, their split, their
    project's redundancy), inside the change's transaction: the Item rows are locked first
    (PostgreSQL, in id order; the order every submit takes: item, then answers) and their
    ``filled`` marks set from the counted answers once the change is made. SQLite needs no
    lock: its writers are serialised by the IMMEDIATE transaction."""
    if not connection.in_atomic_block:
        raise TransactionManagementError("item_filled_marks_kept runs inside the change's "
                                         "transaction")
    ids = sorted(set(item_ids))
    items_lock(ids)
    yield
    items_filled_refresh(ids)


def items_lock(item_ids: Iterable[int]) -> None:
    """Lock these Item rows for the rest of the transaction (PostgreSQL, in id order: the
    order every submit takes, item then answers, so the two never deadlock); a submit to one
    of them waits until the transaction ends. SQLite needs none (IMMEDIATE transactions)."""
    if not connection.features.has_select_for_update:
        return
    for chunk in chunks(sorted(set(item_ids))):
        list(Item.objects.select_for_update().filter(pk__in=chunk).order_by("pk")
             .values_list("pk", flat=True))


def annotation_deleted(*, sender, instance: Annotation, **kwargs) -> None:
    """``post_delete`` of an Annotation (the admin's cleanup, a cascade from its assignment or
    from a newer version's old one): a counted answer gone may reopen its item, so the item's
    mark is cleared (False is always safe; the queue counts it again)."""
    if instance.state == Annotation.State.COUNTED:
        Item.objects.filter(pk=instance.item_id, filled=True).update(filled=False)


def _item_ids(annotations: QuerySet) -> list[int]:
    return list(annotations.order_by().values_list("item_id", flat=True).distinct())


@transaction.atomic
def annotations_set_review_status(*, annotations: QuerySet, review_status: str) -> int:
    """Set the review status of ``annotations`` and their ``state`` with it; the only writer of
    a review status after the INSERT (reviewer decisions on every entry point, decisions
    collected from the provider). Provisional answers stay provisional until confirmed, and an
    older version stays superseded (a decision on it changes nothing the project counts). The
    number of annotations updated. Their items' ``filled`` marks follow."""
    with item_filled_marks_kept(_item_ids(annotations)):
        return annotations.update(review_status=review_status, state=Case(
            When(state=Annotation.State.PROVISIONAL, then=Value(Annotation.State.PROVISIONAL)),
            When(state=Annotation.State.SUPERSEDED, then=Value(Annotation.State.SUPERSEDED)),
            default=_confirmed_state_expression(review_status)))


@transaction.atomic
def annotations_confirm(*, annotations: QuerySet) -> int:
    """MTurk reported the assignment of these provisional answers: they count from now on
    (or are rejected, if a reviewer said so meanwhile). The number confirmed; their items'
    ``filled`` marks follow."""
    provisional = annotations.filter(state=Annotation.State.PROVISIONAL)
    with item_filled_marks_kept(_item_ids(provisional)):
        return provisional.update(state=_confirmed_state_expression())


@transaction.atomic
def annotations_release(*, annotations: QuerySet) -> int:
    """The provider gave these answers' session back (a Prolific participant returned it or
    timed out): they stop counting, as answers no provider vouches for
    (``annotation_state(confirmed=False)``: provisional, never exported or counted). The
    number changed; their items' ``filled`` marks follow."""
    provisional = annotation_state(source=Annotation.Source.PROLIFIC,
                                   review_status=Annotation.Review.PENDING, confirmed=False)
    changing = annotations.exclude(state=provisional)
    with item_filled_marks_kept(_item_ids(changing)):
        return changing.update(state=provisional)


def _existing_for_token(*, client_token: str | None, worker: Worker) -> Annotation | None:
    if not client_token:
        return None
    existing = Annotation.objects.filter(client_token=client_token).first()
    if existing is not None and existing.worker_id != worker.pk:
        # Never reveal or overwrite another worker's annotation, whatever token is sent.
        raise SubmitRefused("token_conflict", "This submission key belongs to someone else.")
    return existing


@dataclass(frozen=True)
class _SubmitState:
    token_annotation_id: int | None
    token_worker_id: int | None
    own_annotation_id: int | None
    collected_by_others: int


def _submit_state(*, item: Item, worker: Worker, assignment: Assignment | None,
                  client_token: str | None) -> _SubmitState:
    params = {"token": client_token, "item_id": item.pk, "worker_id": worker.pk,
              "counted": Annotation.State.COUNTED}
    if assignment is None:
        sql = submit_sql.SUBMIT_STATE
    else:
        sql, params["assignment_id"] = submit_sql.SUBMIT_STATE_IN_ASSIGNMENT, assignment.pk
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        token_id, token_worker_id, own_id, collected = cursor.fetchone()
    return _SubmitState(token_id, token_worker_id, own_id, int(collected))


def _assignment_status(assignment: Assignment) -> str | None:
    """The assignment's status, read under a share lock until the transaction ends (PostgreSQL;
    SQLite's IMMEDIATE transaction already serialises writers): a decision, the page's finish or
    collection cannot change it between this check and the INSERT."""
    lock = " FOR SHARE" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        cursor.execute(submit_sql.ASSIGNMENT_STATUS + lock, {"assignment_id": assignment.pk})
        row = cursor.fetchone()
    return row[0] if row else None


#: The slots of a gold item: it has no redundancy, every worker may answer it (the work queue
#: serves it at the project's gold rate, ``services.gold_queue``), so it is never filled.
GOLD_SLOTS = 2**31 - 1


def slots_required(item: Item) -> int:
    """How many counted answers fill ``item``: its stored adaptive target
    (``Item.target_answers``), else its project's default for its split (the adaptive
    policy's ``start``, or the split's redundancy: ``services.adaptive.slots_by_split``);
    never for gold."""
    if item.is_gold:
        return GOLD_SLOTS
    if item.target_answers is not None:
        return item.target_answers
    return slots_by_split(item.project)[item.split]


def _lock_item(item: Item) -> None:
    """Lock the Item row until the transaction ends. SQLite has no row locks and needs none:
    the settings open every transaction IMMEDIATE, which already serialises writers."""
    if connection.features.has_select_for_update:
        with connection.cursor() as cursor:
            cursor.execute(submit_sql.LOCK_ITEM, {"item_id": item.pk})


def annotation_submit(
    *,
    worker: Worker,
    item: Item,
    clean: CleanPayload,
    context: ItemContext,
    source: str,
    client_token: str | None,
    assignment: Assignment | None = None,
    client_warnings: list[dict] | None = None,
    overridden_warnings: list[dict] | None = None,
    started_at: datetime | None = None,
    duration_ms: int | None = None,
    provenance: dict | None = None,
    assignment_deadline: datetime | None = None,
    served_at: datetime | None = None,
    effort: dict | None = None,
) -> SubmitResult:
    """Store ``worker``'s validated answer ``clean`` for ``item``; see the module docstring.

    Raises ``SubmitRefused`` when the worker is blocked, the item is already complete (local
    work only: MTurk bounds assignments per HIT, see ``assignment_get_or_create_mturk``), the
    token belongs to another worker, or ``assignment`` is no longer accepted (submitted,
    decided, returned or abandoned) or past ``assignment_deadline``: ``assignment_closed``. A
    retry of an answer already stored returns it in every case (nothing changes). Server
    warnings are the shared live checks re-run on the clean payload.

    Queries when stored: the row lock (PostgreSQL), one state query, the INSERT (plus BEGIN and
    COMMIT on SQLite) and, for a counted answer, the UPDATE of the item's filled mark; with an
    assignment, one more to read (and share-lock) its status first. A duplicate costs one more
    read to return the stored annotation.
    """
    fields = _Submission(worker=worker, source=source, client_token=client_token or None,
                         assignment=assignment, client_warnings=client_warnings,
                         overridden_warnings=overridden_warnings, started_at=started_at,
                         duration_ms=duration_ms, provenance=provenance,
                         assignment_deadline=assignment_deadline, served_at=served_at,
                         effort=effort)
    try:
        with transaction.atomic():
            # The assignment's status first: locks are taken assignment, item, answers, the
            # order of decisions and collection (which lock the assignment, then its items).
            status = None if assignment is None else _assignment_status(assignment)
            # The row lock serialises every submit for this item: the state read is exact.
            _lock_item(item)
            return _store_locked(fields, item=item, clean=clean, context=context,
                                 try_insert_first=False, assignment_status=status)
    except IntegrityError as error:
        return _concurrent_duplicate(fields, item=item, clean=clean, error=error)


def annotation_submit_item(
    *,
    project_slug: str,
    item_id: int,
    payload,
    worker: Worker,
    source: str,
    client_token: str | None,
    client_warnings: list[dict] | None = None,
    overridden_warnings: list[dict] | None = None,
    started_at: datetime | None = None,
    duration_ms: int | None = None,
    choose_next: bool = False,
    effort: dict | None = None,
) -> SubmitResult:
    """Validate ``payload`` against item ``item_id`` of the project ``project_slug`` and store
    it, as ``annotation_submit`` does (same refusals), for a local annotator's page: the hot
    path.

    Raises ``SubmitRefused("no_project")`` when there is no such project,
    ``SubmitRefused("no_item")`` when the project has no such item, and ``PayloadError`` when
    the payload is not valid for it; nothing is written then.

    The project and the item are loaded, and the item locked, by one statement inside the
    transaction (``project_and_item_for_submit``), and a new answer is stored by one INSERT
    that re-checks, after the lock, what the state query would (token and answer not stored
    yet, an open slot) and marks the item filled when the answer takes its last slot: BEGIN,
    project and item (+ dialogue turns for rewrite and sluice), INSERT, COMMIT on PostgreSQL.
    SQLite reads the project and item before its transaction (which holds the database's
    write lock, and serialises the INSERT's re-check) and marks by a second statement after
    the INSERT. Anything else (a retry, a full item, a blocked worker) is decided by
    ``annotation_submit``'s own path, in the same transaction.

    ``choose_next``: the worker's next item too (``SubmitResult.next_item``, as
    ``work_queue_next_item`` chooses it after this item), leased in the same transaction: one
    commit for the answer and the lease instead of two. On PostgreSQL it is chosen after the
    answer is stored; on SQLite before the transaction (``work_queue_next_item_before_answer``),
    which then only writes. A refusal leases nothing (its transaction is rolled back); after
    a concurrent duplicate the next item is chosen once the winner is read.
    """
    fields = _Submission(worker=worker, source=source, client_token=client_token or None,
                         client_warnings=client_warnings,
                         overridden_warnings=overridden_warnings, started_at=started_at,
                         duration_ms=duration_ms, effort=effort)
    # With row locks (PostgreSQL) the item is read and locked inside the transaction, and the
    # next item chosen (row locked, SKIP LOCKED) and leased in it. SQLite has none: its
    # IMMEDIATE transaction holds the database's one write lock, so the item is read, the
    # payload checked and the next item chosen before it, and the lock is held only to write
    # (the INSERT re-checks the slots itself, then the filled mark and the next item's lease).
    row_locks = connection.features.has_select_for_update
    item = following = clean = None
    try:
        if not row_locks:
            project, item, context, clean = _valid_submission(project_slug, item_id, payload,
                                                              worker, lock=False)
            if choose_next:
                following = work_queue_next_item_before_answer(
                    project=project, worker=worker, answered_item_id=item.pk)
        with transaction.atomic():
            if row_locks:
                project, item, context, clean = _valid_submission(project_slug, item_id,
                                                                  payload, worker, lock=True)
            result = _store_locked(fields, item=item, clean=clean, context=context,
                                   try_insert_first=True)
            if result.stopped:
                return result
            if choose_next and row_locks:
                following = work_queue_next_item(project=project, worker=worker,
                                                 after_item_id=item.pk)
            elif following is not None:
                work_queue_lease(item=following, worker=worker)
            return replace(result, next_item=following)
    except IntegrityError as error:
        result = _concurrent_duplicate(fields, item=item, clean=clean, error=error)
    # A concurrent duplicate won the race (this transaction rolled back): the next item is
    # chosen after it, in a transaction of its own.
    if choose_next:
        result = replace(result, next_item=work_queue_next_item(
            project=item.project, worker=worker, after_item_id=item.pk))
    return result


def _valid_submission(project_slug: str, item_id: int, payload, worker: Worker, *, lock: bool
                      ) -> tuple[Project, Item, ItemContext, CleanPayload]:
    """The project and item of a local submission (``lock``: the item's row locked) and the
    payload validated against the item; ``SubmitRefused`` (``no_project``, ``no_item``) or
    ``PayloadError``."""
    project, item = project_and_item_for_submit(project_slug=project_slug, item_id=item_id,
                                                lock=lock)
    if project is None:
        raise SubmitRefused("no_project", "No such project.")
    if item is None:
        raise SubmitRefused("no_item", "No such item in this project.")
    return project, item, *_valid_for(project, item, payload, worker)


def _valid_for(project: Project, item: Item, payload, worker: Worker
               ) -> tuple[ItemContext, CleanPayload]:
    """The item's context and the payload validated against it, once ``worker`` may work on
    the project now (``annotation.selectors.access``; ``SubmitRefused`` with its code)."""
    refusal = work_refusal(project=project, worker=worker)
    if refusal is not None:
        raise SubmitRefused(refusal, REFUSALS[refusal])
    context = item_context(item)
    return context, validate_payload(project.kind, payload, context)


@dataclass(frozen=True)
class _Submission:
    """Who submits and how: everything of a submission but the item and its payload."""

    worker: Worker
    source: str
    client_token: str | None
    assignment: Assignment | None = None
    client_warnings: list[dict] | None = None
    overridden_warnings: list[dict] | None = None
    started_at: datetime | None = None
    duration_ms: int | None = None
    provenance: dict | None = None
    assignment_deadline: datetime | None = None
    served_at: datetime | None = None  # when the server served the item (server's clock)
    effort: dict | None = None  # how the answer was written (qc.effort.EffortSummary.to_dict)


def _new_annotation(fields: _Submission, *, item: Item, clean: CleanPayload,
                    context: ItemContext) -> Annotation:
    return Annotation(
        project_id=item.project_id, item=item, worker=fields.worker,
        assignment=fields.assignment, source=fields.source, payload=clean.payload,
        client_token=fields.client_token, client_warnings=fields.client_warnings or [],
        overridden_warnings=fields.overridden_warnings or [],
        server_warnings=live_check_warnings(context, clean.payload,
                                            overrides=item.project.live_check_settings),
        started_at=fields.started_at, submitted_at=timezone.now(),
        duration_ms=fields.duration_ms, served_at=fields.served_at, effort=fields.effort,
        provenance=fields.provenance or {},
        # Stored into an assignment: the MTurk task page's answer, provisional until
        # collection confirms it.
        state=annotation_state(source=fields.source, review_status=Annotation.Review.PENDING,
                               confirmed=fields.assignment is None,
                               reported=bool(clean.columns.get("problem"))),
        **clean.columns,
    )


def _store_locked(fields: _Submission, *, item: Item, clean: CleanPayload,
                  context: ItemContext, try_insert_first: bool,
                  assignment_status: str | None = None) -> SubmitResult:
    """Store the answer; the caller holds the Item row lock, in its transaction, and with an
    assignment its share lock (``assignment_status``: its status read under it)."""
    worker, assignment = fields.worker, fields.assignment
    if (try_insert_first and assignment is None and not worker.is_blocked
            and fields.source == Annotation.Source.LOCAL):
        annotation = _new_annotation(fields, item=item, clean=clean, context=context)
        if _insert_if_open(annotation, required=slots_required(item)):
            _flag_if_report(annotation)
            return SubmitResult(annotation, created=True, item=item,
                                stopped=item.is_gold and gold_answer_checked(
                                    annotation=annotation))
    state = _submit_state(item=item, worker=worker, assignment=assignment,
                          client_token=fields.client_token)
    if state.token_annotation_id is not None:
        if state.token_worker_id != worker.pk:
            # Never reveal or overwrite another worker's annotation, whatever token.
            raise SubmitRefused("token_conflict",
                                "This submission key belongs to someone else.")
        stored = Annotation.objects.get(pk=state.token_annotation_id)
        if stored.item_id != item.pk:
            raise SubmitRefused("token_reused", KEY_REUSED_MESSAGE)
        return SubmitResult(stored, created=False, item=item,
                            same_answer=_same_answer(stored, item=item, clean=clean))
    if worker.is_blocked:
        raise SubmitRefused("blocked", "Your account cannot submit work for this project.")
    if state.own_annotation_id is not None:
        own = Annotation.objects.get(pk=state.own_annotation_id)
        return SubmitResult(own, created=False, item=item,
                            same_answer=_same_answer(own, item=item, clean=clean))
    if assignment is not None:
        if assignment_status != Assignment.Status.ACCEPTED:
            raise SubmitRefused(
                "assignment_closed",
                "This assignment is already submitted or closed: nothing more can be saved "
                "in it.")
        if fields.assignment_deadline is not None and timezone.now() > fields.assignment_deadline:
            raise SubmitRefused(
                "assignment_closed",
                "The time for this assignment is over: nothing more can be saved in it. "
                "Please return the HIT.")
    if (fields.source == Annotation.Source.LOCAL and state.collected_by_others
            >= _slots_now(item)):
        raise SubmitRefused("item_full", "Other annotators completed this item meanwhile.")
    annotation = _new_annotation(fields, item=item, clean=clean, context=context)
    annotation.save(force_insert=True)
    _mark_if_filled(annotation, required=slots_required(item))
    _flag_if_report(annotation)
    return SubmitResult(annotation, created=True, item=item,
                        stopped=item.is_gold and gold_answer_checked(annotation=annotation))


def _mark_if_filled(annotation: Annotation, *, required: int) -> None:
    """The new answer is stored under the Item row lock: if it is a counted one that takes the
    item's last slot, mark the item filled ("Filled items" above). With adaptive redundancy
    the answer may move the item's target: it is recomputed from the item's counted answers
    and stored with the mark (one read, one UPDATE)."""
    if annotation.state != Annotation.State.COUNTED:
        return
    if _adaptive(annotation):
        item_adaptive_refresh(item=annotation.item)
        return
    with connection.cursor() as cursor:
        cursor.execute(submit_sql.MARK_FILLED, {"item_id": annotation.item_id,
                                                "counted": Annotation.State.COUNTED,
                                                "required": required})


def _slots_now(item: Item) -> int:
    """``slots_required``, with an adaptive item's target read again under the lock (the
    caller may have loaded the item before its transaction: SQLite)."""
    if not item.is_gold and adaptive_policy(item.project) is not None:
        item.target_answers = Item.objects.values_list("target_answers", flat=True).get(
            pk=item.pk)
    return slots_required(item)


def _adaptive(annotation: Annotation) -> bool:
    """Whether the answer's item follows an adaptive policy (its target moves with answers)."""
    return not annotation.item.is_gold and adaptive_policy(annotation.item.project) is not None


def _flag_if_report(annotation: Annotation) -> None:
    """A problem report reaches the reviewers as an open flag raised by the annotator on the
    report (the review queue shows its reason and words); nothing for an answer."""
    if not annotation.problem:
        return
    label = Annotation.Problem(annotation.problem).label
    flag = Flag.objects.create(
        project_id=annotation.project_id, annotation=annotation, worker=annotation.worker,
        reason=REPORT_FLAG_REASON, raised_by=Flag.RaisedBy.ANNOTATOR,
        detail=f"{label}: {annotation.problem_note}" if annotation.problem_note else label,
        fingerprint=f"{REPORT_FLAG_REASON}:annotation:{annotation.pk}")
    # With its assignment (a crowd page's report): it shows on the batch's page too.
    record_status_event(kind="problem_reported", annotation=annotation,
                        worker=annotation.worker, assignment=annotation.assignment, flag=flag,
                        new=annotation.state, detail={"problem": annotation.problem})


def _concurrent_duplicate(fields: _Submission, *, item: Item | None,
                          clean: CleanPayload | None, error: IntegrityError) -> SubmitResult:
    """A concurrent duplicate (same token, or same worker and item) won the race: the
    transaction was rolled back, so read the winner in a fresh one and return it."""
    existing = _existing_for_token(client_token=fields.client_token, worker=fields.worker)
    if existing is not None:
        if item is not None and existing.item_id != item.pk:
            raise SubmitRefused("token_reused", KEY_REUSED_MESSAGE)
        return SubmitResult(existing, created=False, item=item,
                            same_answer=_same_answer(existing, item=item, clean=clean))
    if item is not None:
        existing = (Annotation.objects.filter(worker=fields.worker, item=item,
                                              assignment=fields.assignment)
                    .exclude(state=Annotation.State.SUPERSEDED).first())
    if existing is None:
        raise error
    return SubmitResult(existing, created=False, item=item,
                        same_answer=_same_answer(existing, item=item, clean=clean))


def _insert_if_open(annotation: Annotation, *, required: int) -> bool:
    """INSERT ``annotation`` (a new local answer, no assignment) if the checks of
    ``annotation.sql.submit``'s INSERT hold (its token is not stored yet, the worker has no
    local answer to the item, fewer than ``required`` slots are filled by others' counted
    answers);
    whether it was. Its fields are prepared as the ORM's INSERT prepares them
    (``pre_save``, ``get_db_prep_save``); on success it gets its primary key and is saved.
    Its ``served_at`` is its lease's (when the work queue handed the item to the worker),
    read by the statement. A counted answer that takes the item's last slot marks it filled: in
    the same statement on PostgreSQL, by a second one on SQLite."""
    using = router.db_for_write(Annotation)
    connection = connections[using]
    meta = Annotation._meta
    counted = annotation.state == Annotation.State.COUNTED
    mark_in_statement = (counted and connection.vendor == "postgresql"
                         and not _adaptive(annotation))
    fields, sql, served_converters = submit_sql.insert_if_open(
        using, mark_filled=mark_in_statement)
    params = {f"f{index}": field.get_db_prep_save(field.pre_save(annotation, add=True),
                                                  connection)
              for index, field in enumerate(fields) if field.name != "served_at"}
    params.update(token=annotation.client_token, item_id=annotation.item_id,
                  worker_id=annotation.worker_id, counted=Annotation.State.COUNTED,
                  required=required)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return False
    annotation.pk = meta.pk.to_python(row[0])
    annotation.served_at = row[1]
    for converter, column in served_converters:
        annotation.served_at = converter(annotation.served_at, column, connection)
    annotation._state.adding = False
    annotation._state.db = using
    if counted and not mark_in_statement:
        _mark_if_filled(annotation, required=required)
    return True


# --- going back: a changed answer is a new version -------------------------------------------


def annotation_editable(annotation: Annotation) -> bool:
    """Whether its annotator may still change ``annotation``: a local annotator's live answer
    (or problem report) that no reviewer has decided yet. Answers given inside a provider's
    assignment belong to it (MTurk, Prolific: submitted with it) and are not changed here."""
    return (annotation.assignment_id is None and annotation.source == Annotation.Source.LOCAL
            and annotation.state != Annotation.State.SUPERSEDED
            and annotation.review_status == Annotation.Review.PENDING)


def annotation_revise(
    *,
    project: Project,
    worker: Worker,
    annotation_id: int,
    payload,
    client_token: str | None,
    item_id: int | None = None,
    client_warnings: list[dict] | None = None,
    overridden_warnings: list[dict] | None = None,
    started_at: datetime | None = None,
    duration_ms: int | None = None,
    effort: dict | None = None,
) -> SubmitResult:
    """``worker`` changes their answer ``annotation_id`` in ``project`` to ``payload``: a NEW
    version, never an overwrite. The old row is kept with state SUPERSEDED (it counts nowhere
    and no reader but the audit sees it) and the new row points to it (``supersedes``); both
    changes are recorded (``annotation_superseded`` on the old, ``annotation_revised`` on the
    new). An open problem report of the old version is withdrawn (its flag dismissed, audited).

    Refused (``SubmitRefused``, nothing written): ``no_answer`` -- no such answer of this worker
    in this project outside an assignment (another worker's answer is never revealed), or it
    is not an answer to ``item_id`` (when given: the item the page shows);
    ``changed_meanwhile`` -- a newer version exists (another tab); ``reviewed`` -- a reviewer
    decided it; ``blocked``; ``item_full`` -- a problem report becoming an answer while others
    filled the item's slots; ``PayloadError`` for an invalid payload. A retry with the same
    ``client_token`` returns the version it stored (``created`` False).

    The Item row is locked first (as every submit does), then the old version. A new version
    has no ``served_at`` of its own (the answer page is no lease: the server's measure of the
    change is unknown, and QC's timing flags use the browser's claim for it)."""
    fields = _Submission(worker=worker, source=Annotation.Source.LOCAL,
                         client_token=client_token or None, client_warnings=client_warnings,
                         overridden_warnings=overridden_warnings, started_at=started_at,
                         duration_ms=duration_ms, effort=effort)
    try:
        with transaction.atomic():
            return _revise_locked(fields, project=project, annotation_id=annotation_id,
                                  item_id=item_id, payload=payload)
    except IntegrityError:
        # The same token stored meanwhile (a double click racing itself): return that version.
        existing = _existing_for_token(client_token=fields.client_token, worker=worker)
        if existing is None:
            raise
        return _revise_retried(existing, project=project, payload=payload)


def _revise_retried(retried: Annotation, *, project: Project, payload) -> SubmitResult:
    """A change sent again with the token of a stored version: that version when it holds this
    very answer (a retry); refused when it holds another (the token was reused -- two tabs of
    one answer page share its draft): the answer sent was not stored."""
    clean = validate_payload(project.kind, payload, item_context(retried.item))
    if not _same_answer(retried, item=None, clean=clean):
        raise SubmitRefused("changed_meanwhile",
                            "Another version of this answer was stored meanwhile (from another "
                            "tab or window, or from this page before): reload the page to see "
                            "the stored version. This change was not stored.")
    return SubmitResult(retried, created=False, item=retried.item)


def _revise_locked(fields: _Submission, *, project: Project, annotation_id: int,
                   item_id: int | None, payload) -> SubmitResult:
    worker = fields.worker
    retried = _existing_for_token(client_token=fields.client_token, worker=worker)
    if retried is not None:
        return _revise_retried(retried, project=project, payload=payload)
    own = Annotation.objects.filter(pk=annotation_id, project=project, worker=worker,
                                    assignment__isnull=True)
    if item_id is not None:
        own = own.filter(item_id=item_id)
    item_id = own.values_list("item_id", flat=True).first()
    item = None if item_id is None else item_for_submit(project=project, item_id=item_id,
                                                         lock=True)
    if item is None:
        raise SubmitRefused("no_answer", "You have no such answer in this project.")
    old = Annotation.objects.select_for_update().get(pk=annotation_id)
    if old.state == Annotation.State.SUPERSEDED:
        raise SubmitRefused("changed_meanwhile",
                            "This answer was changed meanwhile (in another tab or window): "
                            "reload the page to see the stored version.")
    if not annotation_editable(old):
        raise SubmitRefused("reviewed",
                            "This answer has been reviewed, so it can no longer be changed.")
    if worker.is_blocked:
        raise SubmitRefused("blocked", "Your account cannot submit work for this project.")
    context = item_context(item)
    clean = validate_payload(project.kind, payload, context)
    new = _new_annotation(fields, item=item, clean=clean, context=context)
    if new.state == Annotation.State.COUNTED and old.state != Annotation.State.COUNTED:
        state = _submit_state(item=item, worker=worker, assignment=None, client_token=None)
        if state.collected_by_others >= slots_required(item):
            raise SubmitRefused("item_full", "Other annotators completed this item meanwhile, "
                                             "so it takes no new answer.")
    # The old row first: one live version per worker and item (a conditional unique index).
    # The item is locked already: its mark follows the counted answers (a report becoming an
    # answer may fill it, an answer becoming a report reopen it).
    with item_filled_marks_kept([item.pk]):
        Annotation.objects.filter(pk=old.pk).update(state=Annotation.State.SUPERSEDED)
        new.supersedes = old
        new.save(force_insert=True)
    record_status_event(kind="annotation_superseded", annotation=old, worker=worker,
                        old=old.state, new=Annotation.State.SUPERSEDED,
                        detail={"superseded_by": new.pk})
    record_status_event(kind="annotation_revised", annotation=new, worker=worker,
                        new=new.state, detail={"supersedes": old.pk})
    # The old version's problem report is withdrawn (its annotator raised it: no reviewer).
    close_open_flags(Flag.objects.filter(annotation=old, raised_by=Flag.RaisedBy.ANNOTATOR),
                     status=Flag.Status.DISMISSED, actor=None, set_reviewer=False,
                     note=f"withdrawn: the annotator changed it (annotation {new.pk})",
                     detail={"withdrawn_by_annotator": True})
    _flag_if_report(new)
    return SubmitResult(new, created=True, item=item)


def assignment_deadline(assignment: Assignment, hit: Hit) -> datetime | None:
    """When the assignment's time is over (None: unknown). MTurk abandons an assignment not
    submitted within the batch's assignment duration, counted from its AcceptTime, which is
    before our first save (``accepted_at`` of a page-created assignment); ``ASSIGNMENT_GRACE``
    covers clock skew. Answers saved after that could never reach MTurk."""
    if assignment.accepted_at is None:
        return None
    return (assignment.accepted_at + timedelta(seconds=hit.batch.assignment_duration_seconds)
            + ASSIGNMENT_GRACE)


def live_assignments_q(hit: Hit, *, now: datetime) -> Q:
    """Assignments that hold one of ``hit``'s slots: confirmed by the provider
    (``Assignment.confirmed_at``), not returned or abandoned, and not an accepted one whose
    time is over (the provider has given its slot back; collection marks it abandoned).

    An unconfirmed session holds none: anyone can invent assignment ids, so counting them
    would let invented ones lock real workers out (the provider itself bounds real workers
    to the HIT's assignments)."""
    stale_before = now - timedelta(seconds=hit.batch.assignment_duration_seconds) \
        - ASSIGNMENT_GRACE
    return (Q(hit=hit, confirmed_at__isnull=False)
            & ~Q(status__in=RELEASED_ASSIGNMENT_STATUSES)
            & ~Q(status=Assignment.Status.ACCEPTED, accepted_at__lt=stale_before))


def assignment_get_or_create_mturk(*, hit: Hit, worker_external_id: str,
                                   provider_assignment_id: str,
                                   confirmed: bool = False) -> Assignment:
    """The Assignment of an MTurk worker on ``hit``; created (with the Worker) on their first
    saved item, never when a page is only opened. See ``_assignment_get_or_create_from_page``;
    ``hit_full`` says "return the HIT"."""
    return _assignment_get_or_create_from_page(
        hit=hit, provider=Worker.Provider.MTURK, worker_external_id=worker_external_id,
        provider_assignment_id=provider_assignment_id, confirmed=confirmed,
        full_message="This HIT has no free assignment left, so your answers cannot be saved. "
                     "Please return the HIT.")


def assignment_get_or_create_prolific(*, hit: Hit, worker_external_id: str,
                                      provider_assignment_id: str,
                                      confirmed: bool = False) -> Assignment:
    """The Assignment of a Prolific session (``SESSION_ID``) of participant
    ``worker_external_id`` (``PROLIFIC_PID``) on study ``hit``, created with the Worker on the
    first saved item. See ``_assignment_get_or_create_from_page``."""
    return _assignment_get_or_create_from_page(
        hit=hit, provider=Worker.Provider.PROLIFIC, worker_external_id=worker_external_id,
        provider_assignment_id=provider_assignment_id, confirmed=confirmed,
        full_message="This study has no free place left, so your answers cannot be saved. "
                     "Please return your submission on Prolific.")


def _assignment_get_or_create_from_page(*, hit: Hit, provider: str, worker_external_id: str,
                                        provider_assignment_id: str, confirmed: bool,
                                        full_message: str) -> Assignment:
    """The Assignment of ``provider``'s worker on ``hit`` (an MTurk assignment, a Prolific
    session); created (with the Worker) on their first saved item, never when a page is only
    opened.

    Refused (``SubmitRefused``):

    * ``not_yours`` -- the assignment id belongs to another worker or HIT;
    * ``blocked`` -- the worker is blocked;
    * ``hit_full`` -- a new assignment while the HIT's ``max_assignments`` slots are all held
      by confirmed assignments (``live_assignments_q``); ``full_message`` says so.

    ``confirmed``: the provider has vouched for this session (``AnnotationProvider.
    assignment_is_live``); a confirmed assignment holds a slot, an unconfirmed one none, so
    invented ids never make a HIT full for real workers. The Hit row is locked while counting,
    so two confirmed first saves cannot both take the last slot.
    The collector get-or-creates by the same assignment id, so whichever runs first wins
    and the other finds the row. Created assignments are provisional until collection sees
    them at the provider (``annotation_submit`` stores answers into an assignment provisional).
    """
    with transaction.atomic():
        locked_hit = Hit.objects.select_for_update().select_related("batch").get(pk=hit.pk)
        existing = (Assignment.objects.select_related("worker")
                    .filter(provider_assignment_id=provider_assignment_id).first())
        if existing is None:
            now = timezone.now()
            live = Assignment.objects.filter(live_assignments_q(locked_hit, now=now)).count()
            if live >= locked_hit.max_assignments:
                raise SubmitRefused("hit_full", full_message)
            worker, _ = Worker.objects.get_or_create(provider=provider,
                                                     external_id=worker_external_id)
            if worker.is_blocked:
                raise SubmitRefused("blocked",
                                    "Your account cannot submit work for this project.")
            try:
                with transaction.atomic():
                    return Assignment.objects.create(
                        hit=locked_hit, worker=worker,
                        provider_assignment_id=provider_assignment_id,
                        status=Assignment.Status.ACCEPTED, accepted_at=now,
                        confirmed_at=now if confirmed else None)
            except IntegrityError:
                # Collection stored the same assignment id meanwhile: judge that row.
                existing = (Assignment.objects.select_related("worker")
                            .get(provider_assignment_id=provider_assignment_id))
        if not page_assignment_is_theirs(existing, hit=locked_hit, provider=provider,
                                         worker_id=worker_external_id):
            raise SubmitRefused("not_yours", "This assignment belongs to another worker or HIT.")
        return existing


def assignment_mark_confirmed(*, assignment: Assignment) -> Assignment:
    """The provider has vouched for this crowd session after its first save (Prolific was
    unreachable then): it holds its slot from now on. Once; a later call changes nothing."""
    with transaction.atomic():
        if Assignment.objects.filter(pk=assignment.pk, confirmed_at__isnull=True).update(
                confirmed_at=timezone.now()):
            assignment.refresh_from_db()
        return assignment


def assignment_mark_submitted(*, assignment: Assignment) -> Assignment:
    """Mark a crowd assignment submitted (once; a later state set by review is kept)."""
    with transaction.atomic():
        updated = Assignment.objects.filter(
            pk=assignment.pk, status=Assignment.Status.ACCEPTED
        ).update(status=Assignment.Status.SUBMITTED, submitted_at=timezone.now())
        if updated:
            assignment.refresh_from_db()
        return assignment
