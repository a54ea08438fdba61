"""The streaming base every export format builds on.

An exporter turns one project into a few files (one or more per split). Each file is produced
by a generator of text chunks that reads the database in chunks (``iterator(chunk_size=…)``
or batches of group ids), so memory stays flat however many rows there are. Files are
written to a temporary name beside the target and renamed into place, so a failed export
never leaves a half-written dataset behind.

Reproducibility: the content depends only on the database rows, never on the time of the
export or on dictionary order. Rows come in a fixed order (primary keys, which follow import
order), JSON objects are written with sorted keys, and nothing records when the export ran.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..models import Project, Split

SPLITS: tuple[str, ...] = tuple(Split.values)  # train, dev, test
# A running export reports its progress every this many records (see ``Exporter.write``).
PROGRESS_EVERY_RECORDS = 10_000
EXPORT_FILE_MODE = 0o644



def files_and_records(files: int, records: int) -> str:
    """"2 files, 1,000 records": an export's size, as its job and its page say it."""
    return (f"{files} file{'' if files == 1 else 's'}, "
            f"{records:,} record{'' if records == 1 else 's'}")

class ExportError(Exception):
    """The project cannot be exported in the requested format."""


@dataclass(frozen=True)
class ExportFile:
    """One output file: its name in the output folder and a generator of its text."""

    name: str
    chunks: Callable[[], Iterator[str]]


@dataclass
class WrittenFile:
    path: Path
    bytes_written: int
    records: int
    notes: list[str] = field(default_factory=list)


class Exporter:
    """Base class: subclasses set ``format_name``/``kinds`` and implement :meth:`files`."""

    format_name: str = ""
    kinds: tuple[str, ...] = ()
    description: str = ""

    def __init__(self, project: Project) -> None:
        if self.kinds and project.kind not in self.kinds:
            raise ExportError(
                f"format {self.format_name!r} exports {'/'.join(self.kinds)} projects; "
                f"{project.slug!r} is a {project.kind} project"
            )
        self.project = project
        self.records = 0
        self.notes: list[str] = []
        self._progress: Callable[[int, int | None, str], None] | None = None
        self._files_done = self._files_total = self._records_before = self._next_report = 0
        self._file_name = ""

    def files(self) -> list[ExportFile]:
        raise NotImplementedError

    def count(self, n: int = 1) -> None:
        self.records += n
        if self._progress is not None and self.records >= self._next_report:
            self._next_report = self.records + PROGRESS_EVERY_RECORDS
            self._progress(self._files_done, self._files_total,
                           f"{self._file_name}: {self.records - self._records_before:,} records")

    def note(self, message: str) -> None:
        """Something the reader of the export should know (e.g. examples left out)."""
        self.notes.append(message)

    def write(self, out_dir: Path, *,
              progress: Callable[[int, int | None, str], None] | None = None
              ) -> list[WrittenFile]:
        """Write every file; ``progress(files done, files, message)`` (optional) hears each
        file start and, within a file, every ``PROGRESS_EVERY_RECORDS`` records."""
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        files = self.files()
        self._progress, self._files_total = progress, len(files)
        for index, export_file in enumerate(files):
            before, notes_before = self.records, len(self.notes)
            self._files_done, self._file_name = index, export_file.name
            self._records_before = before
            self._next_report = before + PROGRESS_EVERY_RECORDS
            if progress is not None:
                progress(index, len(files), f"{export_file.name}: starting")
            path = out_dir / export_file.name
            size = write_atomically(path, export_file.chunks())
            written.append(WrittenFile(path, size, self.records - before,
                                       notes=self.notes[notes_before:]))
        if progress is not None:
            progress(len(files), len(files), files_and_records(len(files), self.records))
        return written


def write_atomically(path: Path, chunks: Iterator[str]) -> int:
    """Write the chunks as UTF-8 to ``path`` via a temporary file; return the byte count."""
    size = 0
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        # mkstemp creates the file 0600; a dataset is for others to read (a scorer run by
        # another account, a colleague, a web server), as an ordinarily created file would be.
        os.fchmod(handle, EXPORT_FILE_MODE)
        # Bytes, so "\n" is written as is on every platform (the formats are byte-exact), each
        # chunk encoded once (its length is the bytes written).
        with os.fdopen(handle, "wb") as out:
            for chunk in chunks:
                data = chunk.encode("utf-8")
                out.write(data)
                size += len(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return size


def json_line(record: dict) -> str:
    """One JSONL line: sorted keys, compact separators, UTF-8 kept readable."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(", ", ": ")) + "\n"


def json_array(records: Iterator[dict], *, indent: int = 4) -> Iterator[str]:
    """Stream ``json.dumps(list(records), indent=indent, sort_keys=True)`` element by element.

    The output is byte-identical to dumping the whole list at once (that is how the released
    CANARD files were written), without holding the list in memory.
    """
    pad = " " * indent
    first = True
    for record in records:
        body = json.dumps(record, indent=indent, sort_keys=True)
        yield ("[\n" if first else ",\n") + pad + body.replace("\n", "\n" + pad)
        first = False
    yield "[]" if first else "\n]"


def tsv_row(values: list[str]) -> str:
    """A TSV line; tabs/newlines inside a field would break the format, so refuse them."""
    for value in values:
        if "\t" in value or "\n" in value or "\r" in value:
            raise ExportError(f"a field contains a tab or newline and cannot go to TSV: {value!r}")
    return "\t".join(values) + "\n"


def format_number(value: float) -> str:
    """A score as the released CLAIRE files print it: shortest form, 15 significant digits.

    4.0 → "4", 1.25 → "1.25", 10/3 → "3.33333333333333".
    """
    return format(float(value), ".15g")
