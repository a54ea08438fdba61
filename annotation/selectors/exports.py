"""Reads for the exporters at scale: rows as the database sends them.

``stream_rows`` runs a ``values_list`` queryset (one definition of what an export reads, in
``selectors.qc``) without Django's per-value conversion: JSON columns arrive as their text
(PostgreSQL's ``jsonb`` text, SQLite's stored text), so an exporter that only re-writes them
never builds the Python objects, and PostgreSQL reads through a server-side cursor
(``connection.chunked_cursor``), so memory stays flat in the number of rows. On PostgreSQL a
thread fetches the next batch while the exporter writes the one before (``read_ahead``): the
database's work and Python's run on two CPUs at once instead of taking turns.

``CanonicalJson`` turns such a text into the bytes ``json.dumps(…, sort_keys=True,
ensure_ascii=False, separators=(", ", ": "))`` writes for the decoded value (the exports'
JSON style, ``exporters.base.json_line``), decoding each distinct text once: a project's JSON
columns repeat (``[]``, ``{}``, ``{"rating": 4}``), so most rows cost a dictionary look-up.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from django.db import connections
from django.db.models import QuerySet

from ..models import Flag, Project

#: Rows per round trip of a server-side cursor.
FETCH_ROWS = 5000
#: Distinct JSON texts remembered by ``CanonicalJson`` before it starts afresh (bounded memory).
CANONICAL_MEMO = 50_000


#: Fetched batches a read-ahead thread may hold before the exporter takes them.
READ_AHEAD_BATCHES = 1


def stream_rows(queryset: QuerySet, *, fetch_rows: int | None = None,
                ahead: bool = True) -> Iterator[tuple]:
    """The rows of a ``values_list`` queryset as raw tuples, in its order.

    Values are the database driver's: JSON columns are text (decode or canonicalise them with
    :class:`CanonicalJson`), a datetime may come naive on SQLite (see :func:`aware`).
    """
    sql, params = queryset.query.get_compiler(queryset.db).as_sql()
    for batch in stream_batches(queryset.db, sql, params, fetch_rows=fetch_rows, ahead=ahead):
        yield from batch


def stream_batches(alias: str, sql: str, params, *, fetch_rows: int | None = None,
                   ahead: bool = True) -> Iterator[list[tuple]]:
    """The rows of one statement on database ``alias``, in lists of at most ``fetch_rows``
    (default ``FETCH_ROWS``, read when called),
    through a server-side cursor on PostgreSQL, read ahead (:func:`read_ahead`) unless
    ``ahead`` is false (a reader whose Python, not the database, takes the time: the batches
    read ahead cost memory and gain nothing)."""
    connection = connections[alias]
    fetch_rows = fetch_rows or FETCH_ROWS
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        fetch = lambda: cursor.fetchmany(fetch_rows)  # noqa: E731
        if ahead and connection.vendor == "postgresql":
            yield from read_ahead(fetch)
        else:
            while batch := fetch():
                yield batch


def read_ahead(fetch: Callable[[], list], *, depth: int = READ_AHEAD_BATCHES
               ) -> Iterator[list]:
    """``fetch()``'s batches until an empty one, fetched by a thread up to ``depth`` batches
    ahead of the caller. The driver lets go of the interpreter while it waits for the server,
    so PostgreSQL makes the next batch while the caller's Python writes this one. The thread
    alone uses the cursor until it ends; an error there is raised here; a caller that stops
    early (an export refused halfway) waits for the thread's fetch in progress, then returns,
    so the cursor can be closed."""
    batches: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def work() -> None:
        try:
            while not stop.is_set():
                batch = fetch()
                batches.put(batch)
                if not batch:
                    return
        except BaseException as error:  # handed to the caller, raised there
            batches.put(error)

    thread = threading.Thread(target=work, name="export-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            batch = batches.get()
            if isinstance(batch, BaseException):
                raise batch
            if not batch:
                return
            yield batch
    finally:
        stop.set()
        while thread.is_alive():  # take what it may be blocked putting, until it ends
            with contextlib.suppress(queue.Empty):
                batches.get(timeout=0.05)
        thread.join()


def aware(moment: datetime | None) -> datetime | None:
    """A stored datetime as the ORM returns it: aware, in UTC (the connection's zone)."""
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment


def dumps(value) -> str:
    """The exports' JSON style for one value (``exporters.base.json_line`` without the newline)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


class CanonicalJson:
    """Stored JSON text → the exports' JSON text of the same value, memoised."""

    def __init__(self, limit: int = CANONICAL_MEMO) -> None:
        self._memo: dict[str, str] = {}
        self._limit = limit

    def __call__(self, text) -> str:
        if text is None:
            return "null"
        if not isinstance(text, str):  # a driver that decodes JSON itself
            return dumps(text)
        found = self._memo.get(text)
        if found is None:
            found = dumps(json.loads(text))
            if len(self._memo) >= self._limit:
                self._memo.clear()
            self._memo[text] = found
        return found


def annotation_flag_rows(*, project: Project) -> QuerySet:
    """``(annotation_id, reason, score, status, detail)`` of every flag on one of the
    project's annotations, by annotation, reason and id (the order each answer's flags are
    exported in)."""
    return (
        Flag.objects.filter(annotation__project=project)
        .order_by("annotation_id", "reason", "id")
        .values_list("annotation_id", "reason", "score", "status", "detail")
    )


#: The columns an item's source material is read from (``item_source``), as ``values_list``
#: lookups from ``Item``: one statement for any number of items, no model instance.
ITEM_SOURCE_COLUMNS = (
    "target_sentence_id", "target_sentence__document__title", "target_sentence__text",
    "target_sentence__paragraph_index", "target_sentence__start_byte",
    "target_sentence__end_byte",
    "turn_id", "turn__dialogue__external_id", "turn__order", "turn__question", "turn__answer",
    "filler_id", "filler__cloze__external_id", "filler__cloze__sentence", "filler__position",
    "filler__text",
    "complex_sentence__text",
)


def item_source(values) -> dict:
    """The source material an item points at, flattened (the API's ``source`` and the Hugging
    Face export's): ``values`` maps each of ``ITEM_SOURCE_COLUMNS`` to its value (a row, or
    ``ItemSourceValues`` of an instance)."""
    if values["target_sentence_id"]:
        return {"type": "target_sentence", "page_title": values["target_sentence__document__title"],
                "sentence": values["target_sentence__text"],
                "paragraph_index": values["target_sentence__paragraph_index"],
                "start_byte": values["target_sentence__start_byte"],
                "end_byte": values["target_sentence__end_byte"]}
    if values["turn_id"]:
        return {"type": "turn", "dialogue": values["turn__dialogue__external_id"],
                "order": values["turn__order"], "question": values["turn__question"],
                "answer": values["turn__answer"]}
    if values["filler_id"]:
        return {"type": "filler", "cloze": values["filler__cloze__external_id"],
                "sentence": values["filler__cloze__sentence"],
                "position": values["filler__position"], "filler": values["filler__text"]}
    return {"type": "complex_sentence", "text": values["complex_sentence__text"]}


class ItemSourceValues:
    """``ITEM_SOURCE_COLUMNS`` read from an ``Item`` instance (its related objects)."""

    def __init__(self, item) -> None:
        self.item = item

    def __getitem__(self, column: str):
        value = self.item
        for name in column.split("__"):
            value = getattr(value, name)
            if value is None:
                return None
        return value
