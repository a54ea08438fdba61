"""The data browser: every answer of a project, newest first, one page at a time.

Keyset, never OFFSET: a page is the ``PAGE_ANSWERS`` answers with an id below the cursor (the
last id of the page before), so page 1,000 costs what page 1 costs. Filters narrow the same
statement: split (the item's), state (:data:`STATES`), worker (pseudonym or a local
annotator's username), provider (the answer's source) and a text search on the item's text.
The indexes ``annotation_project_id``, ``annotation_project_state_id`` and
``annotation_project_source_id`` (migration 0024_h24browse) serve the unfiltered, state- and
provider-filtered pages from one index range each, the worker filter uses
``annotation_worker_project``; a text search finds the items first (trigram indexes).

No total is counted (counting a filtered 1,000,000-row table is the slow part of every
page); the page says how many rows it shows and whether there are more.

Sorts (:data:`SORTS`) are the few orders an index serves as a range, so each stays a keyset:
newest or oldest (the id), by worker or by item (the column, then the id: the indexes
``annotation_project_worker_id`` and ``annotation_project_item_id`` of 0029_h24rest). The
cursor is the last row's sort value and id (``after=WORKER_ID.ANSWER_ID`` for the two
composite orders).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from django.conf import settings
from django.db.models import F, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan

from ..models import (
    Annotation,
    ClozeFiller,
    ClozeItem,
    ComplexSentence,
    DialogueTurn,
    Flag,
    Item,
    Project,
    Split,
    TargetSentence,
    TaskKind,
    Worker,
)
from ..pseudonyms import is_pseudonym, pseudonym

PAGE_ANSWERS = 50
#: A text search found in at most this many items lists them (their answers are read by item);
#: found in more, the newest answers are checked one by one against their item.
SEARCH_ITEMS_LISTED = 2000
#: The longest item-text search accepted (a search is a substring, not a document).
MAX_SEARCH_CHARS = 200
#: A flag reason as QC writes them (``too_fast``, ``under_time_floor``…).
FLAG_REASON = re.compile(r"[a-z][a-z0-9_]{0,63}")
#: The kinds whose answers are written text (``Annotation.text``), which ``answer=`` searches
#: (on PostgreSQL through the trigram index on it, migration 0033).
TEXT_ANSWER_KINDS = (TaskKind.REWRITE, TaskKind.SLUICE, TaskKind.DECONTEXT, TaskKind.SPLIT_REPHRASE)

#: state filter → (label, condition). The first four are the stored ``Annotation.state``;
#: ``flagged`` is an answer with an open flag, ``pending`` one still waiting for a review
#: decision (counted or not yet confirmed, neither approved nor rejected).
STATES: dict[str, str] = {
    "counted": "counted (fills a redundancy slot)",
    "superseded": "superseded (changed by the annotator)",
    "rejected": "rejected by a reviewer",
    "imported": "imported from a released dataset",
    "flagged": "with an open flag",
    "pending": "waiting for a review decision",
}
PROVIDERS = tuple(Annotation.Source.values)

#: sort → (what the page says, the column sorted on before the id or None, descending).
SORTS: dict[str, tuple[str, str | None, bool]] = {
    "newest": ("newest first", None, True),
    "oldest": ("oldest first", None, False),
    "worker": ("by worker, each worker's oldest first", "worker_id", False),
    "item": ("by item, each item's oldest answer first", "item_id", False),
}

#: The item's own text, by task kind, for the text search (what the worker read): the item's
#: relation and the model and column holding the text. Each is searched in its own table
#: (trigram indexes on PostgreSQL, migration 0024_h24browse), then joined to the items.
ITEM_TEXTS: dict[str, tuple[tuple[str, type, str], ...]] = {
    TaskKind.DECONTEXT: (("target_sentence", TargetSentence, "text"),),
    TaskKind.PLAUSIBILITY: (("filler", ClozeFiller, "text"),
                            ("filler__cloze", ClozeItem, "sentence")),
    TaskKind.REWRITE: (("turn", DialogueTurn, "question"),),
    TaskKind.SLUICE: (("turn", DialogueTurn, "question"),),
    TaskKind.SPLIT_REPHRASE: (("complex_sentence", ComplexSentence, "text"),),
}


class BadFilter(ValueError):
    """A filter value the browser cannot use; the message names the field."""


@dataclass(frozen=True)
class AnswerFilters:
    split: str = ""
    state: str = ""
    worker: str = ""
    provider: str = ""
    text: str = ""
    answer_text: str = ""  # a substring of the answer's own text (text answers)
    flag: str = ""  # the reason of an open flag the answer carries
    sort: str = "newest"
    # The keyset cursor: the last row's id, and its sort column's value for a composite sort.
    after: int | None = None
    after_key: int | None = None

    @classmethod
    def from_query(cls, query) -> AnswerFilters:
        """Read and check ``?split=&state=&worker=&provider=&q=&sort=&after=``;
        :class:`BadFilter` names the first bad field."""
        values = {name: (query.get(param) or "").strip() for name, param in (
            ("split", "split"), ("state", "state"), ("worker", "worker"),
            ("provider", "provider"), ("text", "q"), ("answer_text", "answer"), ("flag", "flag"),
            ("sort", "sort"), ("after", "after"))}
        sort = values["sort"] or "newest"
        if sort not in SORTS:
            raise BadFilter(f"sort: one of {', '.join(SORTS)}")
        if values["split"] and values["split"] not in Split.values:
            raise BadFilter(f"split: one of {', '.join(Split.values)}")
        if values["state"] and values["state"] not in STATES:
            raise BadFilter(f"state: one of {', '.join(STATES)}")
        if values["provider"] and values["provider"] not in PROVIDERS:
            raise BadFilter(f"provider: one of {', '.join(PROVIDERS)}")
        if len(values["text"]) > MAX_SEARCH_CHARS:
            raise BadFilter(f"q: at most {MAX_SEARCH_CHARS} characters")
        if len(values["answer_text"]) > MAX_SEARCH_CHARS:
            raise BadFilter(f"answer: at most {MAX_SEARCH_CHARS} characters")
        if values["flag"] and not FLAG_REASON.fullmatch(values["flag"]):
            raise BadFilter("flag: a flag reason, e.g. too_fast (lower-case letters and _)")
        if len(values["worker"]) > 150:
            raise BadFilter("worker: a pseudonym (w and 12 hex digits) or a username")
        after = after_key = None
        if values["after"]:
            parts = values["after"].split(".")
            if (len(parts) != (2 if SORTS[sort][1] else 1)
                    or not all(part.isdigit() and len(part) <= 18 for part in parts)):
                raise BadFilter("after: the cursor of a Next link (an answer id"
                                + (", after its sort value and a dot" if SORTS[sort][1]
                                   else "") + ")")
            after = int(parts[-1])
            after_key = int(parts[0]) if len(parts) == 2 else None
        return cls(split=values["split"], state=values["state"], worker=values["worker"],
                   provider=values["provider"], text=values["text"],
                   answer_text=values["answer_text"], flag=values["flag"], sort=sort,
                   after=after, after_key=after_key)

    def query_without_cursor(self) -> dict[str, str]:
        """The filters as query parameters (for the Next link and the form)."""
        return {param: value for param, value in (
            ("split", self.split), ("state", self.state), ("worker", self.worker),
            ("provider", self.provider), ("q", self.text), ("answer", self.answer_text),
            ("flag", self.flag), ("sort", "" if self.sort == "newest" else self.sort)) if value}


@dataclass
class AnswerPage:
    answers: list[Annotation]
    next_after: str | None  # the cursor of the next page; None on the last one
    worker_found: bool  # False when ``worker`` names nobody (the page is then empty)


def worker_ids_named(name: str) -> list[int]:
    """The workers a staff member means by ``name``: the one whose pseudonym it is, or the
    local annotator with that username. Pseudonyms are keyed hashes (not stored), so the
    workers' ids are hashed until one matches: a pass over the worker table's three columns."""
    if is_pseudonym(name):
        for worker_id, provider, external_id in Worker.objects.values_list(
                "id", "provider", "external_id").iterator(chunk_size=5000):
            if pseudonym(secret_key=settings.SECRET_KEY, provider=provider,
                         external_id=external_id) == name:
                return [worker_id]
        return []
    return list(Worker.objects.filter(user__username=name).values_list("id", flat=True))


def _state_condition(project: Project, state: str) -> Q:
    if state == "flagged":
        open_flags = Flag.objects.filter(project=project, status=Flag.Status.OPEN,
                                         annotation__isnull=False).values("annotation_id")
        return Q(id__in=open_flags)
    if state == "pending":
        return (Q(state__in=[Annotation.State.COUNTED, Annotation.State.PROVISIONAL])
                & Q(review_status=Annotation.Review.PENDING))
    return Q(state=state)


def filtered_answers(*, project: Project, filters: AnswerFilters,
                     worker_ids: list[int] | None = None) -> QuerySet[Annotation]:
    """The project's answers that pass ``filters`` (cursor aside), unordered."""
    answers = Annotation.objects.filter(project=project)
    if filters.split:
        answers = answers.filter(item__split=filters.split)
    if filters.state:
        answers = answers.filter(_state_condition(project, filters.state))
    if filters.provider:
        answers = answers.filter(source=filters.provider)
    if worker_ids is not None:
        answers = answers.filter(worker_id__in=worker_ids)
    if filters.flag:
        # The answers of the project's open flags of that reason (flags are few: the subquery
        # is bounded by them, not by the answers).
        flagged = Flag.objects.filter(project=project, status=Flag.Status.OPEN,
                                      reason=filters.flag, annotation__isnull=False)
        answers = answers.filter(id__in=flagged.values("annotation_id"))
    if filters.answer_text:
        if project.kind not in TEXT_ANSWER_KINDS:
            return answers.none()  # ratings and categories have no text to search
        answers = answers.filter(text__icontains=filters.answer_text)
    if filters.text:
        texts = ITEM_TEXTS.get(project.kind, ())
        if not texts:
            return answers.none()
        items = Item.objects.filter(project=project)
        if filters.split:
            items = items.filter(split=filters.split)
        # The items first, each text searched in its own table (an index scan there) and
        # joined to the items on its own (an OR of the two kinds of text would read every
        # item), then their answers: a search joined per answer read the text per answer.
        few: set[int] = set()
        for relation, model, column in texts:
            found = model.objects.filter(**{f"{column}__icontains": filters.text})
            few.update(items.filter(**{f"{relation}__in": found.values("id")}).order_by()
                       .values_list("id", flat=True)[:SEARCH_ITEMS_LISTED + 1])
        if len(few) <= SEARCH_ITEMS_LISTED:
            # A rare text: its items' answers, each item one probe of annotation_item_state.
            answers = answers.filter(item_id__in=sorted(few))
        else:
            # A common one: newest answers first, each checked against its own item's text
            # (a page is found after a few hundred answers when one item in 100 matches).
            # A scalar subquery, not EXISTS: the planner would turn EXISTS into a join over
            # every matching item, misjudging how many match, and read all their answers.
            on_item = Q()
            for relation, _, column in texts:
                on_item |= Q(**{f"{relation}__{column}__icontains": filters.text})
            answers = answers.filter(item_id=Subquery(
                items.filter(on_item, pk=OuterRef("item_id")).values("id")[:1]))
    return answers


#: Everything a browser row renders, in the page's one statement.
ROW_RELATIONS = (
    "worker__user", "assignment", "item__target_sentence__document", "item__turn__dialogue",
    "item__filler__cloze", "item__complex_sentence",
)


def answer_page(*, project: Project, filters: AnswerFilters,
                size: int = PAGE_ANSWERS) -> AnswerPage:
    """One page of the browser: at most ``size`` answers, newest first (two statements for
    the page, one more to find a named worker, one or two for a text search)."""
    worker_ids = None
    if filters.worker:
        worker_ids = worker_ids_named(filters.worker)
        if not worker_ids:
            return AnswerPage(answers=[], next_after=None, worker_found=False)
    answers = sorted_after(filtered_answers(project=project, filters=filters,
                                            worker_ids=worker_ids), filters)
    _, column, _ = SORTS[filters.sort]
    # The page's ids first, then its rows with everything they render: joined in one
    # statement, the planner joined every answer the filter scanned, not the page's 50.
    keys = list(answers.values_list(column or "id", "id")[:size + 1])
    more = len(keys) > size
    keys = keys[:size]
    ids = [pk for _, pk in keys]
    loaded = Annotation.objects.select_related(*ROW_RELATIONS).in_bulk(ids)
    next_after = None
    if more:
        key, last = keys[-1]
        next_after = f"{key}.{last}" if column else str(last)
    return AnswerPage(answers=[loaded[pk] for pk in ids if pk in loaded],
                      next_after=next_after, worker_found=True)


def sorted_after(answers: QuerySet[Annotation], filters: AnswerFilters) -> QuerySet[Annotation]:
    """``answers`` in the order ``filters.sort`` names, from the cursor on (keyset: the rows
    after the cursor's (value, id) in that order)."""
    _, column, descending = SORTS[filters.sort]
    if column is None:
        if filters.after is not None:
            answers = answers.filter(**{"id__lt" if descending else "id__gt": filters.after})
        return answers.order_by("-id" if descending else "id")
    if filters.after is not None:
        # A row comparison (Django's own tuple lookup, that of composite keys), not
        # ``column > k OR (column = k AND id > i)``: PostgreSQL makes the row one bound of the
        # index range (0.1 ms half way down a million answers), the OR only a filter over
        # every row before the cursor (0.5 s).
        answers = answers.filter(TupleGreaterThan(Tuple(F(column), F("id")),
                                                  (filters.after_key, filters.after)))
    return answers.order_by(column, "id")


def open_flag_reason_choices(*, project: Project, chosen: str = "") -> list[str]:
    """The reasons of the project's open answer flags (the flag filter's choices; the chosen
    one kept when no flag has it any more), one statement over the flags."""
    reasons = set(Flag.objects.filter(project=project, status=Flag.Status.OPEN,
                                      annotation__isnull=False)
                  .order_by().values_list("reason", flat=True).distinct())
    if chosen:
        reasons.add(chosen)
    return sorted(reasons)


def open_flag_reasons(answer_ids: list[int]) -> dict[int, list[str]]:
    """answer id → the reasons of its open flags (one statement for a page)."""
    reasons: dict[int, list[str]] = {}
    for answer_id, reason in (Flag.objects.filter(annotation_id__in=answer_ids,
                                                  status=Flag.Status.OPEN)
                              .order_by("annotation_id", "reason")
                              .values_list("annotation_id", "reason")):
        reasons.setdefault(answer_id, []).append(reason)
    return reasons


#: Answers read per statement while a download streams.
DOWNLOAD_CHUNK = 1000
#: The columns of a download, in order (CSV header; JSONL keys).
DOWNLOAD_COLUMNS = ("answer", "item", "split", "worker", "source", "state", "review_status",
                    "submitted_at", "duration_ms", "category", "rating", "skipped", "text",
                    "open_flags")


def download_rows(*, project: Project, filters: AnswerFilters) -> Iterator[dict]:
    """Every answer that passes ``filters`` from its cursor on, in its sort, as plain dicts
    (:data:`DOWNLOAD_COLUMNS`): keyset pages of ``DOWNLOAD_CHUNK`` (a few statements each),
    so a download of 1,000,000 answers holds one chunk at a time. The worker is their
    pseudonym."""
    worker_ids = None
    if filters.worker:
        worker_ids = worker_ids_named(filters.worker)
        if not worker_ids:
            return
    base = filtered_answers(project=project, filters=filters, worker_ids=worker_ids)
    _, column, _ = SORTS[filters.sort]
    cursor = filters
    while True:
        keys = list(sorted_after(base, cursor).values_list(column or "id", "id")
                    [:DOWNLOAD_CHUNK])
        if not keys:
            return
        ids = [pk for _, pk in keys]
        loaded = (Annotation.objects.select_related("worker", "item").in_bulk(ids))
        reasons = open_flag_reasons(ids)
        for pk in ids:
            answer = loaded[pk]
            yield {"answer": answer.pk, "item": answer.item.external_id,
                   "split": answer.item.split, "worker": answer.worker.anonymous_id,
                   "source": answer.source, "state": answer.state,
                   "review_status": answer.review_status,
                   "submitted_at": (answer.submitted_at.isoformat()
                                    if answer.submitted_at else None),
                   "duration_ms": answer.duration_ms, "category": answer.category,
                   "rating": answer.rating, "skipped": answer.skipped, "text": answer.text,
                   "open_flags": ", ".join(reasons.get(pk, []))}
        key, last = keys[-1]
        cursor = replace(cursor, after=last, after_key=key if column else None)
