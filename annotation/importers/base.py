"""What every importer shares: the error type, file reading, and the parsed bundle.

An importer is a pure parser: ``parse(files, *, split, kind) -> Bundle``. It reads the files,
checks every row and returns plain records keyed by natural keys (external ids, turn orders,
filler positions). It never touches the database; ``annotation.services.imports`` writes the
bundle in one transaction. Parsing everything first means a bad row at the end of a file is
reported before a single row is written. Files are read as streams, line by line (only the
one-JSON-document formats are read whole); what stays in memory is the parsed records — except
for an importer that also offers ``plan(files, *, split, kind, quiet)`` (WebSplit): its plan's
``scan()`` checks every line keeping only keys and its ``chunks(size)`` yields small bundles,
written one after the other in the one transaction.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..services.gold_items import gold_answer_from_text, gold_answer_validate

SPLITS = ("train", "dev", "test")
# Above this many rows a progress bar is worth drawing.
PROGRESS_MIN_ROWS = 2000
# Bytes read at a time when a file is checksummed.
READ_CHUNK = 1024 * 1024
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
    def open_text(self, fmt: str) -> Iterator[io.TextIOWrapper]:
        """The file as strict UTF-8 text (a BOM is dropped, newlines left as they are, for
        the csv module); a bad byte met while reading is reported with its line and column."""
        with self.path.open("rb") as raw, io.TextIOWrapper(
                raw, encoding="utf-8-sig", errors="strict", newline="") as text:
            try:
                yield text
            except UnicodeDecodeError:
                raise self._decode_error(fmt) from None

    def _decode_error(self, fmt: str) -> ImportInputError:
        """The first undecodable byte's line and column, found by a second pass line by line
        (only on the error path: the text stream's error does not know its line)."""
        # A UTF-8 character never contains a newline byte, so each line decodes alone.
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    return ImportInputError(
                        fmt, self.name, f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at "
                                        f"column {error.start + 1})", line=number)
        return ImportInputError(fmt, self.name, "not valid UTF-8")

    def text(self, fmt: str) -> str:
        """The file decoded whole, for the formats that are one JSON document (QuAC, CoQA,
        CANARD, Sluice JSON): a JSON document has to be read whole to be parsed."""
        with self.open_text(fmt) as text:
            whole = text.read()
            self.report_read(text)
            return whole

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

    def add_item(self, external_id: str, record: ItemRecord, fmt: str, where: Where) -> None:
        known = self.items.get(external_id)
        if known is not None and known != record:
            raise ImportInputError(
                fmt, where.file, f"item {external_id!r} appears twice with different content",
                line=where.line, record=where.record,
            )
        self.items[external_id] = record


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


def read_json(fmt: str, file: SourceFile) -> Any:
    text = file.text(fmt)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ImportInputError(fmt, file.name, f"broken JSON: {error.msg} (column {error.colno})",
                               line=error.lineno) from None


def read_json_data_list(fmt: str, file: SourceFile) -> list:
    """The ``data`` list of a ``{"data": [...]}`` JSON file (QuAC's and CoQA's layout)."""
    document = read_json(fmt, file)
    top = Where(file.name)
    if not isinstance(document, dict):
        raise fail(fmt, top, 'expected a JSON object with a "data" list')
    return get_field(fmt, top, document, "data", list)


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
