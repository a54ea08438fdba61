"""What every importer shares: the error type, file reading, and the parsed bundle.

An importer is a pure parser: ``parse(stream, files, *, split, kind, quiet)`` reads the files,
checks every row and hands out plain records keyed by natural keys (external ids, turn
orders, filler positions) in bundles. It never touches the database;
``annotation.services.imports`` writes the bundles in one transaction.

Nothing is held whole: files are read as streams (CSV/TSV and JSONL line by line, the
one-JSON-document formats — QuAC, CoQA, CANARD, Sluice JSON — record by record with ijson),
and ``parse`` is a generator of small bundles (:class:`Stream` hands one out every
``size`` rows) that keeps across bundles only keys and digests for the checks that span
records (an id twice, a turn whose question differs from an earlier record's). The service
runs it once, inside the import's transaction, writing each bundle as it comes: a bad row
anywhere raises, and the transaction keeps nothing (the files' bytes must hash to the
checksums taken first).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import ijson
from tqdm import tqdm

from ..services.gold_items import gold_answer_from_text, gold_answer_validate

SPLITS = ("train", "dev", "test")
# Above this many rows a progress bar is worth drawing.
PROGRESS_MIN_ROWS = 2000
# Bytes read at a time when a file is checksummed.
READ_CHUNK = 256 * 1024
# The read buffer of a file being parsed (held while it is read: kept small).
PARSE_BUFFER = 64 * 1024
# How often (in lines) a reader says how far it has read.
REPORT_EVERY_LINES = 2000


class ImportInputError(Exception):
    """Bad input: the message names the format, the file, the line or record and the field."""

    def __init__(self, fmt: str, file: str, message: str, *, line: int | None = None,
                 record: str | None = None, field_name: str | None = None):
        self.fmt, self.file, self.line, self.record = fmt, file, line, record
        self.field_name = field_name
        where = f"{fmt} {file}"
        if line is not None:
            where += f" line {line}"
        elif record is not None:
            where += f" record {record}"
        if field_name is not None and f'"{field_name}"' not in message:
            message = f'field "{field_name}": {message}'
        super().__init__(f"{where}: {message}")


@dataclass
class SourceFile:
    """One input file: its path, checksum and the name used in messages.

    The file is never held whole: the checksum is taken in chunks, and the readers below
    (``lines``, ``read_delimited``, ``read_jsonl``) decode it line by line as they go.
    """

    path: Path
    sha256: str
    size: int
    #: Told the bytes of this file read so far, every ``REPORT_EVERY_LINES`` lines (a job's
    #: or the command's progress; ``annotation.services.imports`` sets it).
    on_read: Callable[[int], None] | None = None
    #: Set for the import's reading: the bytes read must hash to ``sha256`` (taken first, and
    #: recorded on the file's ImportRecord), else ImportInputError ("the file changed while it
    #: was being imported").
    verify: bool = False

    @property
    def name(self) -> str:
        return self.path.name

    @classmethod
    def read(cls, fmt: str, path: str | Path) -> SourceFile:
        path = Path(path)
        if not path.is_file():
            raise ImportInputError(fmt, str(path), "no such file")
        digest = hashlib.sha256()
        size = 0
        with path.open("rb") as handle:
            while chunk := handle.read(READ_CHUNK):
                digest.update(chunk)
                size += len(chunk)
        return cls(path=path, sha256=digest.hexdigest(), size=size)

    @contextmanager
    def open_binary(self, fmt: str) -> Iterator[io.BufferedReader]:
        """The file's bytes as a buffered stream; when ``verify`` is set they are hashed as
        they are read and, once the caller is done, the rest is read too and the whole must
        hash to ``sha256``."""
        with self.path.open("rb", buffering=0) as raw:
            hashing = _HashingReader(raw) if self.verify else None
            with io.BufferedReader(hashing or raw, PARSE_BUFFER) as buffered:
                yield buffered
            if hashing is not None:
                # What the reader left unread (the buffered bytes are hashed already).
                while chunk := raw.read(READ_CHUNK):
                    hashing.digest.update(chunk)
                if hashing.digest.hexdigest() != self.sha256:
                    raise changed_error(fmt, self)

    @contextmanager
    def open_text(self, fmt: str) -> Iterator[io.TextIOWrapper]:
        """The file as strict UTF-8 text (a BOM is dropped, newlines left as they are, for
        the csv module); a bad byte met while reading is reported with its line and column."""
        with self.open_binary(fmt) as raw, io.TextIOWrapper(
                raw, encoding="utf-8-sig", errors="strict", newline="") as text:
            try:
                yield text
            except UnicodeDecodeError:
                raise self._decode_error(fmt) from None

    def _decode_error(self, fmt: str) -> ImportInputError:
        """The first undecodable byte's line and column, found by a second pass line by line
        (only on the error path: the text stream's error does not know its line)."""
        return self.bad_byte(fmt) or ImportInputError(fmt, self.name, "not valid UTF-8")

    def bad_byte(self, fmt: str) -> ImportInputError | None:
        """The error naming the file's first byte that is not UTF-8 (line and column), or
        None when every byte decodes."""
        # A UTF-8 character never contains a newline byte, so each line decodes alone.
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    return ImportInputError(
                        fmt, self.name, f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at "
                                        f"column {error.start + 1})", line=number)
        return None

    def lines(self, fmt: str) -> Iterator[tuple[int, str]]:
        """(line number, line without its end) for every line, read as they are needed."""
        with self.open_text(fmt) as text:
            for number, raw in enumerate(text, start=1):
                if number % REPORT_EVERY_LINES == 0:
                    self.report_read(text)
                yield number, raw.rstrip("\r\n")
            self.report_read(text)

    def report_read(self, text: io.TextIOWrapper) -> None:
        """Tell ``on_read`` how far the reader is (the underlying file's position)."""
        if self.on_read is not None:
            self.on_read(text.buffer.tell())


class _HashingReader(io.RawIOBase):
    """A raw binary file that hashes the bytes read through it."""

    def __init__(self, raw: io.RawIOBase) -> None:
        self.raw = raw
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self.raw.readinto(buffer)
        if count:
            self.digest.update(memoryview(buffer)[:count])
        return count

    def tell(self) -> int:
        return self.raw.tell()


def changed_error(fmt: str, file: SourceFile) -> ImportInputError:
    """The file's bytes as the import read them are not the ones hashed when it began."""
    return ImportInputError(fmt, file.name, "the file changed while it was being imported; "
                                            "import it again")


@dataclass
class Where:
    """Where a record came from, for provenance and error messages."""

    file: str
    line: int | None = None
    record: str | None = None

    def provenance(self) -> dict:
        found: dict[str, Any] = {"file": self.file}
        if self.line is not None:
            found["line"] = self.line
        if self.record is not None:
            found["record"] = self.record
        return found


@dataclass
class ItemRecord:
    """An Item to create; ``source`` is ("target" | "turn" | "filler" | "complex", key)."""

    split: str
    group_key: str
    position: int
    source: tuple[str, Any]
    # The item's known answer when the file marks it gold (``gold_answer_in``); None: not gold.
    gold_answer: Any = None


@dataclass
class AnnotationRecord:
    """An imported annotation of the item ``item_key`` by the worker ``worker``.

    ``fields`` are Annotation columns (payload, category, rating, text, skipped, ...).
    """

    worker: tuple[str, str]  # (provider, external_id)
    item_key: str
    source: str
    fields: dict
    where: Where


@dataclass
class Bundle:
    """Everything one import writes, keyed by natural keys; dicts keep file order."""

    kind: str
    documents: dict[str, dict] = field(default_factory=dict)
    # (document external_id, paragraph_index, start_byte, end_byte) -> {"text": ...}
    targets: dict[tuple, dict] = field(default_factory=dict)
    dialogues: dict[str, dict] = field(default_factory=dict)
    # (dialogue external_id, order) -> {"question": ..., "answer": ...}
    turns: dict[tuple[str, int], dict] = field(default_factory=dict)
    clozes: dict[str, dict] = field(default_factory=dict)
    # (cloze external_id, position) -> {"text": ..., "is_original": ...}
    fillers: dict[tuple[str, int], dict] = field(default_factory=dict)
    complex_sentences: dict[str, dict] = field(default_factory=dict)
    # (subject, property, object) -> None; a dict as an ordered set
    facts: dict[tuple[str, str, str], None] = field(default_factory=dict)
    complex_facts: dict[tuple[str, tuple[str, str, str]], None] = field(default_factory=dict)
    items: dict[str, ItemRecord] = field(default_factory=dict)
    annotations: list[AnnotationRecord] = field(default_factory=list)
    # The import annotates items that must already exist (mturk-csv), instead of making them.
    items_must_exist: bool = False
    # file name -> number of data rows read, stored on its ImportRecord
    rows: dict[str, int] = field(default_factory=dict)
    # file name -> split stored on its ImportRecord
    file_splits: dict[str, str] = field(default_factory=dict)
    # No later bundle of this import names this bundle's complex sentences or items again (the
    # importer refused an id twice), so the writer can forget their keys once it is written.
    names_once: bool = False
    # Group keys that earlier bundles gave their items -> the key those items have now (a
    # later row joined their group to another: WebSplit's triple clusters). The writer moves
    # the items this import made.
    regroup: dict[str, str] = field(default_factory=dict)

    def add_item(self, external_id: str, record: ItemRecord, fmt: str, where: Where) -> None:
        known = self.items.get(external_id)
        if known is not None and known != record:
            raise ImportInputError(
                fmt, where.file, f"item {external_id!r} appears twice with different content",
                line=where.line, record=where.record,
            )
        self.items[external_id] = record


class Stream:
    """A streamed parse's state: the bundle being filled (``bundle``), handed out by
    ``take()`` every ``size`` rows (``full()``), and what outlives the bundles — rows and
    split per file, and what the checks spanning records need, kept as keys and digests
    (Python's ``hash`` of the text: the process compares, nothing stores them), not text:
    items by external id (a digest of the record), dialogues (title, section, digest),
    turns (digests of question and answer), and ``keys`` for a format's own "appears
    twice" checks.

    A message quoting an earlier record's text (a turn whose question differs) needs that
    text: the parse is then run again from the start with ``texts_of`` naming the turn, whose
    text is kept this time (:func:`streamed` does it; only on that error path)."""

    def __init__(self, kind: str, *, size: int, items_must_exist: bool = False,
                 texts_of: frozenset = frozenset()):
        self.kind, self.size, self.items_must_exist = kind, size, items_must_exist
        self.texts_of = texts_of
        self.bundle = Bundle(kind=kind, items_must_exist=items_must_exist)
        self.rows: dict[str, int] = {}
        self.file_splits: dict[str, str] = {}
        self.items: dict[str, int] = {}
        self.dialogues: dict[str, tuple[str, str, int]] = {}
        self.turns: dict[tuple[str, int], tuple[Any, Any]] = {}
        self.keys: set = set()

    def full(self) -> bool:
        return len(self.bundle.items) + len(self.bundle.annotations) >= self.size

    def take(self) -> Bundle:
        """The bundle filled so far (a new one is started)."""
        bundle = self.bundle
        self.bundle = Bundle(kind=self.kind, items_must_exist=self.items_must_exist)
        return bundle

    def add_item(self, external_id: str, record: ItemRecord, fmt: str, where: Where) -> None:
        digest = hash(repr(record))
        known = self.items.setdefault(external_id, digest)
        if known != digest:
            raise ImportInputError(
                fmt, where.file, f"item {external_id!r} appears twice with different content",
                line=where.line, record=where.record,
            )
        if external_id not in self.bundle.items:
            self.bundle.items[external_id] = record

    def file_done(self, file: SourceFile, *, rows: int, split: str | None) -> None:
        """Record what a file gave once it is read: its data rows and the split its
        ImportRecord names (None: the format has none, as mturk-csv's results)."""
        self.rows[file.name] = rows
        if split is not None:
            self.file_splits[file.name] = split

    def text(self, key: tuple[str, int], value: str | None) -> Any:
        """What ``turns`` keeps of a turn's question or answer: the text itself for the
        turns named by ``texts_of``, else its digest."""
        if value is None:
            return None
        return value if key in self.texts_of else hash(value)


class _TextNeeded(Exception):
    """A turn's check failed and its message needs the earlier record's text."""

    def __init__(self, key: tuple[str, int]) -> None:
        super().__init__(key)
        self.key = key


def streamed(importer: ModuleType, files: list[SourceFile], *, split: str | None, kind: str,
             quiet: bool, size: int) -> tuple[Stream, Iterator[Bundle]]:
    """An importer's ``parse(stream, files, *, split, kind, quiet)`` as bundles of about
    ``size`` rows, and the stream (its ``rows`` and ``file_splits`` once they are all read)."""
    state = Stream(kind, size=size, items_must_exist=getattr(importer, "ITEMS_MUST_EXIST", False))

    def parse(stream: Stream) -> Iterator[Bundle]:
        return importer.parse(stream, files, split=split, kind=kind, quiet=quiet)

    return state, _with_texts_on_error(parse, state)


def _with_texts_on_error(parse: Callable[[Stream], Iterator[Bundle]],
                         stream: Stream) -> Iterator[Bundle]:
    """``parse(stream)``'s bundles; when a check needs an earlier record's text, the parse
    is run again from the start keeping that text, and raises the check's error."""
    try:
        yield from parse(stream)
    except _TextNeeded as needed:
        again = Stream(stream.kind, size=2**62, items_must_exist=stream.items_must_exist,
                       texts_of=frozenset({needed.key}))
        for _ in parse(again):
            pass
        raise AssertionError("the second reading met no error") from None


def progress(iterable: Iterable, *, total: int | None, desc: str, quiet: bool) -> Iterator:
    """A tqdm bar on stderr for long runs; silent when asked, when short, or off a terminal."""
    disable = quiet or not sys.stderr.isatty() or (total is not None
                                                   and total < PROGRESS_MIN_ROWS)
    return iter(tqdm(iterable, total=total, desc=desc, file=sys.stderr, disable=disable,
                     unit="row", leave=False))


def split_from_name(name: str) -> str | None:
    """train/dev/test from a file name (``dev_data.tsv``, ``sluice_val_filtered.json``...).

    ``train_dev`` names both, so it gives None and the caller must be told the split.
    """
    lowered = name.lower()
    found = {s for s, words in (("train", ("train",)), ("dev", ("dev", "val")),
                                ("test", ("test",)))
             if any(word in lowered for word in words)}
    return found.pop() if len(found) == 1 else None


def resolve_split(fmt: str, file: SourceFile, split: str | None, default: str | None) -> str:
    """--split wins; else the file name; else ``default``; else a clear error."""
    if split is not None:
        if split not in SPLITS:
            raise ImportInputError(fmt, file.name, f"unknown split {split!r} (train, dev, test)")
        return split
    inferred = split_from_name(file.name)
    if inferred:
        return inferred
    if default:
        return default
    raise ImportInputError(fmt, file.name,
                           "cannot tell the split from the file name; pass --split")


def read_delimited(fmt: str, file: SourceFile, *, delimiter: str, required: Iterable[str],
                   quoting: int = csv.QUOTE_MINIMAL) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row dict) of a CSV/TSV with a header naming ``required`` columns.

    A missing column or a row with the wrong number of cells is an error naming file and line.
    """
    with file.open_text(fmt) as text:
        for count, row in enumerate(_read_delimited_rows(
                fmt, file, text, delimiter=delimiter, required=required, quoting=quoting),
                start=1):
            if count % REPORT_EVERY_LINES == 0:
                file.report_read(text)
            yield row
        file.report_read(text)


def _read_delimited_rows(fmt: str, file: SourceFile, text: io.TextIOWrapper, *,
                         delimiter: str, required: Iterable[str],
                         quoting: int) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.reader(text, delimiter=delimiter, quoting=quoting, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise ImportInputError(fmt, file.name, "the file is empty; a header row is expected",
                               line=1) from None
    except csv.Error as error:
        raise ImportInputError(fmt, file.name, f"malformed header: {error}", line=1) from None
    for column in required:
        if column not in header:
            raise ImportInputError(fmt, file.name, f'column "{column}" is missing', line=1)
    line = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise ImportInputError(fmt, file.name, f"malformed row: {error}",
                                   line=line) from None
        if cells:
            if len(cells) != len(header):
                missing = header[len(cells)] if len(cells) < len(header) else None
                message = (f'column "{missing}" is missing' if missing is not None else
                           f"{len(cells)} cells where the header has {len(header)}")
                raise ImportInputError(fmt, file.name, message, line=line)
            yield line, dict(zip(header, cells, strict=True))
        line = reader.line_num + 1


class _ReportingReader:
    """What ijson reads from: the file's bytes (a leading BOM dropped, as ``utf-8-sig``
    does), telling ``SourceFile.on_read`` how far it has read every ``REPORT_EVERY_BYTES``."""

    def __init__(self, raw: io.BufferedReader, file: SourceFile, *, report: bool = True):
        self.raw, self.file, self.reported, self.report = raw, file, 0, report
        if raw.peek(len(codecs.BOM_UTF8))[:len(codecs.BOM_UTF8)] == codecs.BOM_UTF8:
            raw.read(len(codecs.BOM_UTF8))

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        if not self.report or self.file.on_read is None:
            return data
        position = self.raw.tell()
        if not data or position - self.reported >= REPORT_EVERY_BYTES:
            self.reported = position
            self.file.on_read(position)
        return data


#: How often (in bytes) a JSON document's reader says how far it has read.
REPORT_EVERY_BYTES = 256 * 1024


def _broken_json(fmt: str, file: SourceFile, error: Exception) -> ImportInputError:
    """The error for a document ijson could not parse, worded as before (Python's json
    names the line and column): a bad UTF-8 byte is named by :meth:`SourceFile.bad_byte`
    line by line; a syntax error is located by ``json.loads`` of the text — only on this
    error path, where the import stops anyway, is the file read whole."""
    bad = file.bad_byte(fmt)
    if bad is not None:
        return bad
    try:
        json.loads(file.path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as decode:
        return ImportInputError(fmt, file.name, f"broken JSON: {decode.msg} "
                                                f"(column {decode.colno})", line=decode.lineno)
    return ImportInputError(fmt, file.name, "broken JSON: "
                            + str(error).strip().splitlines()[0])


_JSON_ERRORS = (ijson.JSONError, UnicodeDecodeError)


def _json_events(fmt: str, file: SourceFile, source) -> Iterator[tuple[str, str, Any]]:
    try:
        yield from ijson.parse(source, use_float=True)
    except _JSON_ERRORS as error:
        raise _broken_json(fmt, file, error) from None


_TOP_TYPES = {"start_map": dict, "start_array": list}


def read_json_items(fmt: str, file: SourceFile, *, top: type,
                    data: bool = False) -> Iterator[Any]:
    """The records of a one-JSON-document file, one at a time (ijson: the document is never
    held whole). ``top`` is the document's expected type: for ``list`` the array's entries,
    for ``dict`` the object's ``(key, value)`` pairs, or with ``data=True`` the entries of
    its ``"data"`` list (QuAC's and CoQA's layout). Errors are worded as the whole-document
    reading worded them."""
    where = Where(file.name)
    with file.path.open("rb") as raw:  # the layout check reads only the document's start
        events = _json_events(fmt, file, _ReportingReader(raw, file, report=False))
        first = next(events, None)
        if first is None:
            raise _broken_json(fmt, file, ValueError("no JSON document"))
        if _TOP_TYPES.get(first[1]) is not top:
            if top is list:
                raise fail(fmt, where, "expected a JSON array of records")
            raise fail(fmt, where, 'expected a JSON object with a "data" list' if data else
                       "expected a JSON object keyed by row number")
        if data:
            _find_data_list(fmt, where, events)
    if data:
        prefix, reader = "data.item", ijson.items
    else:
        prefix, reader = ("item", ijson.items) if top is list else ("", ijson.kvitems)
    with file.open_binary(fmt) as raw:
        try:
            yield from reader(_ReportingReader(raw, file), prefix, use_float=True)
        except _JSON_ERRORS as error:
            raise _broken_json(fmt, file, error) from None


_EVENT_TYPES = {"start_map": "dict", "start_array": "list", "string": "str",
                "boolean": "bool"}


def _find_data_list(fmt: str, where: Where, events: Iterator[tuple[str, str, Any]]) -> None:
    """Check that the document has a ``"data"`` list, reading only as far as its start."""
    for prefix, event, value in events:
        if prefix == "data" and event != "map_key":
            if event == "start_array":
                return
            if event == "null":
                break  # null is a missing field, as get_field reads it
            found = _EVENT_TYPES.get(event) or type(value).__name__
            raise fail(fmt, where, f'field "data" must be a list, not {found}')
        if prefix == "" and event == "end_map":
            break
    raise fail(fmt, where, 'field "data" is missing')


def read_jsonl(fmt: str, file: SourceFile) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for every non-blank line; each must be a JSON object."""
    for number, raw in file.lines(fmt):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            raise ImportInputError(fmt, file.name,
                                   f"broken JSON: {error.msg} (column {error.colno})",
                                   line=number) from None
        if not isinstance(value, dict):
            raise ImportInputError(fmt, file.name, "each line must be a JSON object",
                                   line=number)
        yield number, value


_TYPE_NAMES = {str: "a string", int: "an integer", list: "a list", dict: "an object",
               bool: "true or false", float: "a number"}


def get_field(fmt: str, where: Where, record: dict, name: str,
              expected: type | tuple[type, ...], *,
              required: bool = True, default: Any = None) -> Any:
    """``record[name]`` checked against ``expected``; a clear error when missing or mistyped."""
    if name not in record or record[name] is None:
        if required:
            raise ImportInputError(fmt, where.file, f'field "{name}" is missing',
                                   line=where.line, record=where.record)
        return default
    value = record[name]
    if isinstance(expected, tuple):
        if not isinstance(value, expected) or isinstance(value, bool):
            names = " or ".join(_TYPE_NAMES.get(kind, kind.__name__) for kind in expected)
            raise ImportInputError(fmt, where.file, f'field "{name}" must be {names}, '
                                   f"not {type(value).__name__}",
                                   line=where.line, record=where.record)
        return value
    # bool is an int in Python, but true is not a valid offset or turn number.
    wrong = not isinstance(value, expected) or (expected is int and isinstance(value, bool))
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        wrong = False
    if wrong:
        raise ImportInputError(
            fmt, where.file,
            f'field "{name}" must be {_TYPE_NAMES.get(expected, expected.__name__)}, '
            f"not {type(value).__name__}",
            line=where.line, record=where.record,
        )
    return value


#: The field (JSON formats) or column (delimited formats: ``Gold1``…) that marks an item gold.
GOLD_FIELD = "gold_answer"


def gold_answer_in(fmt: str, where: Where, kind: str, value: Any, *,
                   field_name: str = GOLD_FIELD) -> Any:
    """The gold answer ``value`` read from ``field_name`` of a record, checked for the task
    ``kind`` as the console checks it (``services.gold_items.gold_answer_validate``); None
    when the field is absent or empty (not a gold item). A delimited file's cell is text:
    several accepted ratings or categories are separated by ``|`` (``3|4``)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        if isinstance(value, str):
            value = gold_answer_from_text(kind, value)
        return gold_answer_validate(kind, value)
    except ValueError as error:
        raise ImportInputError(fmt, where.file,
                               f'field "{field_name}": {str(error).removeprefix("gold answer: ")}',
                               line=where.line, record=where.record) from None


def fail(fmt: str, where: Where, message: str) -> ImportInputError:
    """The error to raise for a problem at ``where``."""
    return ImportInputError(fmt, where.file, message, line=where.line, record=where.record)


def stable_id(*parts: str, prefix: str = "", length: int = 16) -> str:
    """A short stable hash of ``parts`` (unambiguous: parts are length-prefixed)."""
    digest = hashlib.sha256()
    for part in parts:
        encoded = part.encode("utf-8")
        digest.update(f"{len(encoded)}:".encode())
        digest.update(encoded)
    return prefix + digest.hexdigest()[:length]


KEY_MAX = 200  # Item.group_key / external_id column width


def fit_key(value: str) -> str:
    """``value`` if it fits a 200-character key column, else a prefix plus a stable hash."""
    if len(value) <= KEY_MAX:
        return value
    return value[: KEY_MAX - 18] + "#" + stable_id(value, length=17)
