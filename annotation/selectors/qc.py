"""Reads for quality control, review and exports.

Everything here returns ``values_list`` / ``values`` querysets or plain rows (never model
instances in bulk), ordered deterministically, so that ``qc/`` gets the plain rows it works
on and exports can stream with ``iterator(chunk_size=…)`` and stay byte-for-byte
reproducible. Which annotations each reader sees is ``Annotation.state`` (kept by
``annotation.services.annotations.annotation_state``, the one definition):

* progress counts ``counted`` answers, as the work queue and batch planning do;
* dataset exports take ``counted`` and ``imported`` ones (a rejected answer never reaches a
  dataset);
* QC and the generic JSONL export see every answer but the provisional ones, rejected work with
  its status.

Only the latest version of an answer is seen anywhere: an annotator's change stores a new row
and marks the old one ``superseded``, which no reader here takes. A problem report
(``reported``) is not an answer: no export, no QC row; reviewers see it through its flag.

Provisional work -- answers the MTurk task page stored for an assignment MTurk has not reported
(yet) -- is invisible here: no export, no QC row, no progress. Collection confirms it (then it
appears) or flags it for review.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import (
    Case,
    Count,
    FloatField,
    Func,
    Max,
    QuerySet,
    Sum,
    Value,
    When,
)

from qc.timing import TimingArrays

from ..models import (
    Annotation,
    ClozeFiller,
    ComplexSentence,
    Dialogue,
    DialogueTurn,
    Flag,
    Item,
    Project,
    Worker,
)
from ..services.adaptive import slots_by_split

# Rows per database round trip when streaming; big enough to amortise the query, small
# enough to keep memory flat.
CHUNK_SIZE = 2000
# Ids per ``id__in`` statement: far below the 65,535 parameters PostgreSQL allows in one.
IN_CHUNK = 10_000


def batched(iterable: Iterable, size: int) -> Iterator[list]:
    """Successive lists of at most ``size`` elements (itertools.batched is Python 3.12+)."""
    iterator = iter(iterable)
    while batch := list(islice(iterator, size)):
        yield batch


def anonymous_worker_id(provider: str, external_id: str) -> str:
    """``Worker.anonymous_id`` from the two columns, without loading the row."""
    return Worker(provider=provider, external_id=external_id).anonymous_id


class AnonymousIds:
    """Memoised worker pk → anonymous id, filled from rows that carry provider/external id."""

    def __init__(self) -> None:
        self._by_pk: dict[int, str] = {}

    def get(self, worker_pk: int, provider: str, external_id: str) -> str:
        anonymous = self._by_pk.get(worker_pk)
        if anonymous is None:
            anonymous = anonymous_worker_id(provider, external_id)
            self._by_pk[worker_pk] = anonymous
        return anonymous


#: What a dataset export takes: the crowd's counted answers and the released ones imported.
EXPORTED_STATES = (Annotation.State.COUNTED, Annotation.State.IMPORTED)


#: States no QC row and no export takes (module docstring).
NOT_ANSWERS = (Annotation.State.PROVISIONAL, Annotation.State.SUPERSEDED,
               Annotation.State.REPORTED)


def worker_names(*, worker_ids) -> dict[int, dict]:
    """worker id → the name staff see, in one query per ``IN_CHUNK`` ids (issue 24: one name
    everywhere): ``{"pseudonym": Worker.anonymous_id, "username": the local annotator's
    username (None for a crowd worker or an import worker, who have no account), "provider"}``.
    Ids of no worker are left out."""
    username = f"user__{get_user_model().USERNAME_FIELD}"
    names: dict[int, dict] = {}
    for chunk in batched(dict.fromkeys(worker_ids), IN_CHUNK):
        for pk, provider, external_id, name in (
                Worker.objects.filter(pk__in=chunk)
                .values_list("pk", "provider", "external_id", username)):
            names[pk] = {"pseudonym": anonymous_worker_id(provider, external_id),
                         "username": name, "provider": provider}
    return names


def name_workers(rows: list[dict], names: dict[int, dict] | None = None) -> list[dict]:
    """Give each row (``{"worker": id, …}``) its worker's ``pseudonym`` and ``username``
    (``worker_names``, read here in one query unless the caller has ``names``); returns the
    rows."""
    if names is None:
        names = worker_names(worker_ids=[row["worker"] for row in rows])
    for row in rows:
        name = names.get(row["worker"]) or {}
        row["pseudonym"] = name.get("pseudonym", "")
        row["username"] = name.get("username")
    return rows


def qc_annotations(*, project: Project) -> QuerySet[Annotation]:
    """The project's annotations QC sees: the latest version of every answer but the
    provisional ones (module docstring)."""
    return Annotation.objects.filter(project=project).exclude(state__in=NOT_ANSWERS)


def exportable_annotations(*, project: Project) -> QuerySet[Annotation]:
    """Annotations that may enter a dataset export (see the module docstring)."""
    return Annotation.objects.filter(project=project, state__in=EXPORTED_STATES)


def dataset_annotations(*, project: Project) -> QuerySet[Annotation]:
    """Exportable annotations of the project's own items: every dataset format reads these,
    so answers to gold items (checks with known answers, ``services.gold``) are never
    exported as data."""
    return exportable_annotations(project=project).filter(item__is_gold=False)


def gold_item_ids(*, project: Project) -> set[int]:
    """Ids of the project's gold items (few: checks, not the dataset)."""
    return set(Item.objects.filter(project=project, is_gold=True).values_list("id", flat=True))


def qc_inputs(*, project: Project) -> dict[str, list[int]]:
    """What QC's agreement reads, in five numbers: the count, id sum and last id of the
    answers QC sees (``qc_annotations``) and the count and id sum of the gold items it leaves
    out. A stored report whose ``qc_inputs`` equal the project's now was computed from the same
    answers: an answer's value never changes in place (a change is a new row, the old one
    ``superseded``; a decision moves it between states QC sees alike), and an answer that
    enters or leaves QC, or an item made gold or not, changes a count and a sum. Two aggregate
    statements (0.2 s at 1,000,000 answers)."""
    answers = qc_annotations(project=project).order_by().aggregate(
        n=Count("id"), id_sum=Sum("id"), last=Max("id"))
    gold = Item.objects.filter(project=project, is_gold=True).order_by().aggregate(
        n=Count("id"), id_sum=Sum("id"))
    # int(): PostgreSQL sums bigints as numeric (a Decimal, which JSON cannot hold).
    return {"answers": [answers["n"], int(answers["id_sum"] or 0), answers["last"] or 0],
            "gold_items": [gold["n"], int(gold["id_sum"] or 0)]}


def split_counts(*, project: Project) -> dict[str, int]:
    rows = Item.objects.filter(project=project).values("split").annotate(n=Count("id"))
    return {row["split"]: row["n"] for row in rows}


# --- QC rows ---------------------------------------------------------------------------------


def rating_rows(*, project: Project) -> list[tuple[int, int, float]]:
    """``(item_id, worker_id, rating)`` of every crowd rating (imported means excluded)."""
    return list(
        qc_annotations(project=project).filter(rating__isnull=False)
        .exclude(source=Annotation.Source.IMPORT)
        .order_by("id")
        .values_list("item_id", "worker_id", "rating")
    )


def category_rows(*, project: Project) -> list[tuple[int, int, str]]:
    """``(item_id, worker_id, category)`` of decontextualization annotations."""
    return list(
        qc_annotations(project=project)
        .exclude(category="")
        .order_by("id")
        .values_list("item_id", "worker_id", "category")
    )


def text_rows(*, project: Project, category: str | None = None
              ) -> list[tuple[int, int, int, str, bool]]:
    """``(annotation_id, item_id, worker_id, text, skipped)`` of free-text annotations (only
    those of ``category`` when given: a decontext project's edited sentences are "DONE")."""
    answers = qc_annotations(project=project)
    if category is not None:
        answers = answers.filter(category=category)
    return list(
        answers
        .order_by("item_id", "id")
        .values_list("id", "item_id", "worker_id", "text", "skipped")
    )


def overridden_warning_rows(*, project: Project) -> list[tuple[int, list]]:
    """``(annotation_id, overridden_warnings)`` where the worker submitted despite a warning.

    The empty lists (nearly every answer) are left out by the database, not read."""
    return list(
        qc_annotations(project=project)
        .exclude(overridden_warnings=[])
        .exclude(overridden_warnings__isnull=True)
        .order_by("id")
        .values_list("id", "overridden_warnings")
    )


class EpochSeconds(Func):
    """A timestamp column as POSIX seconds (float), computed by the database so that reading a
    million timestamps builds no ``datetime`` object (SQLite: millisecond precision)."""

    output_field = FloatField()
    # date_part gives the double directly; EXTRACT computes a numeric (PostgreSQL 14+), which
    # cost a second over a million rows of two timestamps.
    template = "date_part('epoch', %(expressions)s)"

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection,
                           template="(julianday(%(expressions)s) - 2440587.5) * 86400.0",
                           **extra)


#: Rows per fetch from a server-side cursor where each row is small (a few numbers).
STREAM_CHUNK_SIZE = 20_000


def numeric_columns(rows: QuerySet) -> np.ndarray:
    """A ``values_list`` of numeric columns (the model's own columns and annotations) as one
    float64 array (rows x columns, in the ``values_list`` order; NULL → NaN).

    On PostgreSQL the database packs each column into one ``bytea`` of big-endian float8
    values (``string_agg(float8send(…))`` over the query's rows, NULL made NaN first so the
    columns stay aligned) and numpy reads each as it is: one row comes back, with no Python
    object per row or per value. (A cursor's tuples, or a binary COPY, which sends a message
    per row, cost seconds of Python at a million rows.) Elsewhere (SQLite) the rows come from
    a server-side cursor ``STREAM_CHUNK_SIZE`` rows at a time. Either way memory is the
    array's (8 bytes a value) and the packed bytes, however many rows there are."""
    if connection.vendor == "postgresql":
        arrays = _packed_numeric_columns(rows)
        return np.column_stack(arrays) if arrays[0].size else np.zeros((0, len(arrays)))
    return _streamed_numeric_columns(rows)


def numeric_column_arrays(rows: QuerySet) -> list[np.ndarray]:
    """``numeric_columns`` as one float64 array per column, without the rows x columns
    array: on PostgreSQL each packed column becomes its array and its bytes are let go at
    once, so a read of many columns holds the bytes once, not the bytes and a copy."""
    if connection.vendor == "postgresql":
        return _packed_numeric_columns(rows)
    columns = _streamed_numeric_columns(rows)
    return [np.ascontiguousarray(columns[:, k]) for k in range(columns.shape[1])]


def _streamed_numeric_columns(rows: QuerySet) -> np.ndarray:
    """``numeric_columns`` from a server-side cursor (SQLite)."""
    sql, params = rows.query.sql_with_params()
    blocks = []
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        # Django 5.2 names every column after the values_list name (earlier versions put
        # annotations last and named joined columns after the column alone): reorder by
        # name where every name is there.
        names = [column[0] for column in cursor.description]
        order = ([names.index(field) for field in rows._fields]
                 if set(rows._fields) <= set(names) else list(range(len(names))))
        while chunk := cursor.fetchmany(STREAM_CHUNK_SIZE):
            blocks.append(np.array(chunk, dtype=np.float64).reshape(len(chunk), len(names)))
    columns = np.concatenate(blocks) if blocks else np.zeros((0, len(names)))
    return columns[:, order]


def _packed_numeric_columns(rows: QuerySet) -> list[np.ndarray]:
    """``numeric_columns`` on PostgreSQL: every column packed by the database (see there).

    The aggregates of one statement see the input rows in the same sequence, so the packed
    columns stay aligned row by row; the input is the query with its ORDER BY, which
    PostgreSQL keeps for a plain aggregate over an ordered subquery. A ``bytea`` holds at most
    1 GB: 134 million rows per read."""
    sql, params = rows.query.sql_with_params()
    # Django 5.2 selects each values_list field under its own name ("col" AS "name"), which
    # the outer SELECT takes by name, in the values_list order.
    packed = ", ".join(
        f"string_agg(float8send(COALESCE(q.{connection.ops.quote_name(name)}::float8, "
        f"'NaN')), '')" for name in rows._fields)
    packed_sql = f"SELECT {packed} FROM ({sql}) AS q"  # noqa: S608

    def execute(sql, params, _many, context):
        # psycopg's own cursor, for a binary result: the bytea as it is, not as hex text
        # twice its size.
        return context["cursor"].cursor.execute(sql, params, binary=True)

    with connection.cursor() as cursor:
        # Through Django's wrappers (statement timers) and its query log, as any query.
        started = time.perf_counter()
        cursor._execute_with_wrappers(packed_sql, params, many=False, executor=execute)
        if connection.queries_logged:
            connection.queries_log.append({"sql": f"{packed_sql} -- {params!r}",
                                           "time": f"{time.perf_counter() - started:.3f}"})
        packed = list(cursor.fetchone())
    if packed[0] is None:  # no row
        return [np.zeros(0) for _ in rows._fields]
    result = []
    for k in range(len(packed)):
        result.append(np.frombuffer(packed[k], dtype=">f8").astype(np.float64))
        packed[k] = None  # its bytes go now, not with the last column's
    return result


@dataclass(frozen=True)
class CrowdRatings:
    """``rating_rows`` as aligned numpy arrays (item ids, worker ids, ratings) and whether a
    dataset export takes each (``EXPORTED_STATES``), read in one statement
    (``crowd_ratings``)."""

    item_ids: np.ndarray
    worker_ids: np.ndarray
    ratings: np.ndarray
    exported: np.ndarray


@dataclass(frozen=True)
class AnswerColumns:
    """Every answer QC sees (``qc_annotations``), in id order, as numpy columns: what the
    timing flags and the dashboard's times, days and per-worker counts read from the answers,
    read by one statement (``qc_answer_columns``) instead of one pass over the answers each.
    NaN where a column is NULL; ``state`` is ``STATE_CODES``' index of the answer's state,
    ``review`` ``REVIEW_CODES``'."""

    ids: np.ndarray
    item_ids: np.ndarray
    worker_ids: np.ndarray
    assignment_ids: np.ndarray
    duration_ms: np.ndarray
    served_s: np.ndarray
    submitted_s: np.ndarray
    revision: np.ndarray
    state: np.ndarray
    review: np.ndarray

    def counted(self) -> np.ndarray:
        return self.state == STATE_CODES.index(Annotation.State.COUNTED)


#: The states of the answers QC sees (``qc_annotations``), coded by their index.
STATE_CODES = tuple(state for state in Annotation.State if state not in NOT_ANSWERS)
#: Review statuses coded by their index (any other: -1).
REVIEW_CODES = (Annotation.Review.APPROVED, Annotation.Review.REJECTED)


def _code(field: str, values: tuple) -> Case:
    return Case(*(When(**{field: value}, then=Value(float(k))) for k, value in enumerate(values)),
                default=Value(-1.0), output_field=FloatField())


def qc_answer_columns(*, project: Project) -> AnswerColumns:
    """The project's ``AnswerColumns``: one bulk read (``numeric_column_arrays``) of every
    answer QC sees, the times converted to seconds by the database (``EpochSeconds``).
    Memory: the columns (about 60 bytes an answer) and, while reading, the packed values."""
    columns = numeric_column_arrays(
        qc_annotations(project=project)
        .order_by("id")
        .annotate(served_s=EpochSeconds("served_at"), submitted_s=EpochSeconds("submitted_at"),
                  revision=Case(When(supersedes_id__isnull=False, then=Value(1.0)),
                                default=Value(0.0), output_field=FloatField()),
                  state_code=_code("state", STATE_CODES),
                  review_code=_code("review_status", REVIEW_CODES))
        .values_list("id", "item_id", "worker_id", "assignment_id", "duration_ms", "served_s",
                     "submitted_s", "revision", "state_code", "review_code"))
    for k in range(3):  # the ids, each array replaced as it is converted
        columns[k] = columns[k].astype(np.int64)
    columns[7] = columns[7] > 0
    for k in (8, 9):
        columns[k] = columns[k].astype(np.int8)
    return AnswerColumns(*columns)


def answer_columns_reader(*, project: Project) -> Callable[[], AnswerColumns]:
    """``qc_answer_columns`` started now and taken later: call the result for the columns.

    On PostgreSQL, outside a transaction, the read runs at once on a connection of its own
    (a thread that waits on the database), so that the database packs the columns on one
    CPU while this process computes on the other (a QC run's agreement and worker models):
    about 3 s of a million-answer run overlap instead of adding up. The columns are then
    held beside the models' arrays (about 60 bytes an answer more at the run's peak). Inside
    a transaction (a test's, or a caller's atomic block) another connection would not see
    its writes, and SQLite has one writer and little to gain: the read happens when called,
    as ``qc_answer_columns`` alone."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return lambda: qc_answer_columns(project=project)
    outcome: dict = {}

    def read() -> None:
        try:
            outcome["columns"] = qc_answer_columns(project=project)
        except BaseException as error:  # handed to the caller, raised there
            outcome["error"] = error
        finally:
            connection.close()  # this thread's own connection

    reader = threading.Thread(target=read, name=f"qc-answer-columns-{project.pk}", daemon=True)
    reader.start()

    def columns() -> AnswerColumns:
        reader.join()
        if "error" in outcome:
            raise outcome.pop("error")
        return outcome.pop("columns")

    return columns


def crowd_ratings(*, project: Project) -> CrowdRatings:
    """Every crowd rating QC sees (imported means excluded) in id order, read in bulk
    (``numeric_column_arrays``): the ratings' table and the crowd's means per filler."""
    columns = numeric_column_arrays(
        qc_annotations(project=project).filter(rating__isnull=False)
        .exclude(source=Annotation.Source.IMPORT)
        .order_by("id")
        .annotate(exported=Case(When(state__in=EXPORTED_STATES, then=Value(1.0)),
                                default=Value(0.0), output_field=FloatField()))
        .values_list("item_id", "worker_id", "rating", "exported"))
    return CrowdRatings(columns[0].astype(np.int64), columns[1].astype(np.int64), columns[2],
                        columns[3] > 0)


def rating_arrays(*, project: Project, crowd: CrowdRatings | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``rating_rows`` as three aligned numpy arrays (item ids, worker ids, ratings), from
    ``crowd`` (``crowd_ratings``, read here unless the caller has them)."""
    if crowd is None:
        crowd = crowd_ratings(project=project)
    return crowd.item_ids, crowd.worker_ids, crowd.ratings


def crowd_rating_means(crowd: CrowdRatings) -> tuple[np.ndarray, np.ndarray]:
    """``(item ids, mean rating)`` of the items with exportable crowd ratings, by item id:
    the crowd's mean per filler."""
    item_ids, codes = np.unique(crowd.item_ids[crowd.exported], return_inverse=True)
    sums = np.bincount(codes, crowd.ratings[crowd.exported], minlength=len(item_ids))
    return item_ids, sums / np.bincount(codes, minlength=len(item_ids))


def timing_arrays(*, project: Project, answers: AnswerColumns | None = None) -> TimingArrays:
    """``timing_rows`` as ``qc.timing.TimingArrays`` from ``answers`` (``qc_answer_columns``,
    read here unless the caller has them): the answers with a duration or a serving time; a
    page is an assignment's answers served at the same ``served_at``; an answer without an
    assignment is a page of its own."""
    if answers is None:
        answers = qc_answer_columns(project=project)
    timed = ~np.isnan(answers.duration_ms) | ~np.isnan(answers.served_s)
    assignments, served = answers.assignment_ids[timed], answers.served_s[timed]
    page_codes = -1 - np.arange(len(served), dtype=np.int64)  # a page of its own …
    on_assignment = ~np.isnan(assignments)
    if on_assignment.any():  # … unless it shares (assignment, served_at) with others
        page_codes[on_assignment] = _pair_codes(
            assignments[on_assignment],
            np.where(np.isnan(served), -np.inf, served)[on_assignment])
    read_words = _words_per_row(answers.item_ids[timed], item_read_words(project=project))
    return TimingArrays(answers.ids[timed], page_codes, answers.duration_ms[timed] / 1000.0,
                        served, answers.submitted_s[timed], answers.revision[timed],
                        read_words.reshape(len(served)))


def item_read_words(*, project: Project) -> dict[int, int]:
    """item id → the words its page shows to read (the timing floor, ``qc.timing``): the
    sluice with the dialogue's first question and answer; the question to rewrite; the target
    sentence; the complex sentence. Plausibility fillers count none (a filler's sentence is
    shared with its other fillers, read once for all)."""
    words = {item_id: len(text.split())
             for item_id, text in source_text_rows(project=project).items()}
    if project.kind == "sluice":
        first = DialogueTurn.objects.filter(order=1, dialogue__project=project)
        context = {dialogue: len(f"{question} {answer}".split())
                   for dialogue, question, answer in first.values_list(
                       "dialogue_id", "question", "answer")}
        for item_id, dialogue in Item.objects.filter(project=project).values_list(
                "id", "turn__dialogue_id"):
            words[item_id] = words.get(item_id, 0) + context.get(dialogue, 0)
    return words


def _words_per_row(item_ids: np.ndarray, words_of: dict[int, int]) -> np.ndarray:
    """Each row's item's words (``item_read_words``; NaN for an item it does not know), by one
    sorted lookup rather than a dictionary read per answer."""
    if not words_of:
        return np.full(len(item_ids), np.nan)
    keys = np.fromiter(words_of.keys(), dtype=np.int64, count=len(words_of))
    values = np.fromiter(words_of.values(), dtype=np.float64, count=len(words_of))
    order = np.argsort(keys)
    keys, values = keys[order], values[order]
    at = np.searchsorted(keys, item_ids).clip(max=len(keys) - 1)
    return np.where(keys[at] == item_ids, values[at], np.nan)


def _pair_codes(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """A code per row naming its distinct ``(first, second)`` pair, numbered in sorted order
    (what ``np.unique`` of the stacked rows gives as its inverse, by one sort of the rows
    rather than a sort of row records)."""
    order = np.lexsort((second, first))
    first_sorted, second_sorted = first[order], second[order]
    new_pair = np.ones(len(order), dtype=bool)
    new_pair[1:] = (first_sorted[1:] != first_sorted[:-1]) | \
        (second_sorted[1:] != second_sorted[:-1])
    codes = np.empty(len(order), dtype=np.int64)
    codes[order] = np.cumsum(new_pair) - 1
    return codes


def annotation_targets(*, annotation_ids: Iterable[int]) -> dict[int, tuple[int, int | None]]:
    """annotation id → (worker id, assignment id), to attach flags to the work they concern
    (``IN_CHUNK`` ids per statement, however many there are)."""
    targets: dict[int, tuple[int, int | None]] = {}
    for chunk in batched(sorted(set(annotation_ids)), IN_CHUNK):
        targets.update(
            (row[0], (row[1], row[2]))
            for row in Annotation.objects.filter(id__in=chunk).values_list(
                "id", "worker_id", "assignment_id")
        )
    return targets


def source_text_rows(*, project: Project) -> dict[int, str]:
    """item id → the text a worker starts from (for copy detection): question, sentence."""
    kind = project.kind
    items = Item.objects.filter(project=project)
    if kind in ("rewrite", "sluice"):
        rows = items.values_list("id", "turn__question")
    elif kind == "decontext":
        rows = items.values_list("id", "target_sentence__text")
    elif kind == "split_rephrase":
        rows = items.values_list("id", "complex_sentence__text")
    else:
        return {}
    return {item_id: text or "" for item_id, text in rows}


def sluice_context_rows(*, project: Project, split: str | None = None,
                        with_gold: bool = True) -> Iterator[tuple]:
    """Per sluice annotation: ``(annotation_id, item_id, split, q1, a1, q2, text, skipped,
    review_status, provenance)``, Q1/A1 being turn 1 and Q2 turn 2 of the item's dialogue;
    by split, then in annotation order (an imported file's row order). ``with_gold`` False:
    not the answers to gold items (an export)."""
    first_turns = DialogueTurn.objects.filter(order=1)
    q1_by_dialogue = dict(
        first_turns.filter(dialogue__project=project).values_list("dialogue_id", "question")
    )
    a1_by_dialogue = dict(
        first_turns.filter(dialogue__project=project).values_list("dialogue_id", "answer")
    )
    annotations = qc_annotations(project=project)
    if not with_gold:
        annotations = annotations.filter(item__is_gold=False)
    if split is not None:
        annotations = annotations.filter(item__split=split)
    rows = (
        annotations
        .order_by("item__split", "id")
        .values_list("id", "item_id", "item__split", "item__turn__dialogue_id",
                     "item__turn__question", "text", "skipped", "review_status", "provenance")
    )
    for (annotation_id, item_id, split, dialogue_id, q2, text, skipped, status,
         provenance) in rows.iterator(chunk_size=CHUNK_SIZE):
        yield (annotation_id, item_id, split, q1_by_dialogue.get(dialogue_id, ""),
               a1_by_dialogue.get(dialogue_id, ""), q2, text, skipped, status, provenance)


# --- export streams --------------------------------------------------------------------------


def claire_filler_rows(*, project: Project, split: str) -> QuerySet:
    """One row per filler of the split's cloze items, by cloze (import order) and position."""
    return (
        ClozeFiller.objects.filter(cloze__project=project, items__project=project,
                                   items__split=split, items__is_gold=False)
        .order_by("cloze_id", "position")
        .values_list("cloze_id", "cloze__external_id", "cloze__resolved_pattern",
                     "cloze__article_title", "cloze__section_header",
                     "cloze__previous_context", "cloze__sentence",
                     "cloze__followup_context", "position", "text", "items__id")
    )


def claire_rating_rows(*, project: Project, split: str) -> QuerySet:
    """``(item_id, source, rating, payload)`` per exportable rating, grouped by item."""
    return (
        dataset_annotations(project=project)
        .filter(item__split=split, rating__isnull=False)
        .order_by("item_id", "id")
        .values_list("item_id", "source", "rating", "payload")
    )


def canard_dialogue_ids(*, project: Project, split: str) -> QuerySet:
    return (
        Dialogue.objects.filter(project=project, turns__items__split=split,
                                turns__items__is_gold=False)
        .order_by("id")
        .values_list("id", flat=True)
        .distinct()
    )


def dialogue_turn_rows(*, dialogue_ids: list[int]) -> QuerySet:
    return (
        DialogueTurn.objects.filter(dialogue_id__in=dialogue_ids)
        .order_by("dialogue_id", "order")
        .values_list("dialogue_id", "order", "question", "answer",
                     "dialogue__external_id", "dialogue__title", "dialogue__section_title")
    )


def turn_annotation_rows(*, project: Project, dialogue_ids: list[int], split: str) -> QuerySet:
    """Exportable annotations on turns of these dialogues, by dialogue, turn order, id."""
    return (
        dataset_annotations(project=project)
        .filter(item__turn__dialogue_id__in=dialogue_ids, item__split=split)
        .order_by("item__turn__dialogue_id", "item__turn__order", "id")
        .values_list("item__turn__dialogue_id", "item__turn__order", "text", "skipped",
                     "worker_id", "worker__provider", "worker__external_id")
    )


def decontext_item_rows(*, project: Project, split: str) -> QuerySet:
    return (
        Item.objects.filter(project=project, split=split, target_sentence__isnull=False,
                            is_gold=False)
        .order_by("id")
        .values_list("id", "external_id", "target_sentence__text",
                     "target_sentence__paragraph_index", "target_sentence__start_byte",
                     "target_sentence__end_byte", "target_sentence__document__title",
                     "target_sentence__document__url",
                     "target_sentence__document__paragraphs")
    )


def item_annotation_rows(*, project: Project, item_ids: list[int]) -> QuerySet:
    """Exportable annotations of these items with what every dataset format needs."""
    return (
        dataset_annotations(project=project)
        .filter(item_id__in=item_ids)
        .order_by("item_id", "id")
        .values_list("item_id", "worker_id", "worker__provider", "worker__external_id",
                     "category", "text", "payload", "skipped")
    )


def complex_sentence_rows(*, project: Project, split: str) -> QuerySet:
    return (
        Item.objects.filter(project=project, split=split, complex_sentence__isnull=False,
                            is_gold=False)
        .order_by("id")
        .values_list("id", "complex_sentence_id", "complex_sentence__external_id",
                     "complex_sentence__text")
    )


def fact_rows(*, complex_sentence_ids: list[int]) -> QuerySet:
    return (
        ComplexSentence.facts.through.objects.filter(complexsentence_id__in=complex_sentence_ids)
        .order_by("complexsentence_id", "fact__subject", "fact__property", "fact__object")
        .values_list("complexsentence_id", "fact__subject", "fact__property", "fact__object")
    )


def generic_annotation_rows(*, project: Project) -> QuerySet:
    """Every annotation of the project (rejected ones too) with its item, worker and work;
    not the answers to gold items."""
    return (
        qc_annotations(project=project).filter(item__is_gold=False)
        .order_by("id")
        .values_list(
            "id", "item_id", "item__external_id", "item__split", "item__group_key",
            "worker_id", "worker__provider", "worker__external_id", "source",
            "assignment__provider_assignment_id", "assignment__hit__provider_hit_id",
            "payload", "category", "rating", "text", "skipped", "edit_operations",
            "started_at", "submitted_at", "duration_ms", "client_warnings",
            "overridden_warnings", "server_warnings", "review_status", "provenance",
        )
    )


# --- review queue and dashboard --------------------------------------------------------------


def flag_counts(*, project: Project) -> dict[str, int]:
    rows = Flag.objects.filter(project=project).values("status").annotate(n=Count("id"))
    return {row["status"]: row["n"] for row in rows}


PROGRESS_SQL = """
SELECT i.split, COALESCE(c.n, 0), i.target_answers, COUNT(*)
FROM {item} AS i
LEFT JOIN (SELECT item_id, COUNT(*) AS n FROM {annotation}
           WHERE project_id = %s AND state = %s GROUP BY item_id) AS c ON c.item_id = i.id
WHERE i.project_id = %s AND NOT i.is_gold
GROUP BY i.split, COALESCE(c.n, 0), i.target_answers
"""


def progress_by_split(*, project: Project) -> list[dict]:
    """Per split: items, items with enough counted answers (the split's redundancy or, with
    adaptive redundancy, the item's target: ``services.annotations.slots_required``'s rule),
    and counted answers. One grouped statement: items per (split, number of counted answers,
    stored target). Gold items are checks, not the dataset: never counted here."""
    sql = PROGRESS_SQL.format(item=Item._meta.db_table, annotation=Annotation._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(sql, [project.pk, Annotation.State.COUNTED, project.pk])
        per_count = cursor.fetchall()
    summary: dict[str, dict] = {}
    defaults = slots_by_split(project)
    for split, n_counted, target, items in per_count:
        row = summary.setdefault(split, {"split": split, "items": 0, "complete": 0,
                                         "annotations": 0})
        row["items"] += items
        row["annotations"] += n_counted * items
        if n_counted >= (target if target is not None else defaults.get(split, 1)):
            row["complete"] += items
    order = {"train": 0, "dev": 1, "test": 2}
    return sorted(summary.values(), key=lambda row: order.get(row["split"], 9))
