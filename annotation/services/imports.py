"""Import source files into a project: read them once, inside one transaction, each row
checked as it is parsed and the rows written with bulk inserts ``STAGED_CHUNK`` rows at a
time (:class:`_ChunkWriter`): memory does not grow with the files' text, only with their keys.

Contract of :func:`import_files`:
- all-or-nothing: any bad input raises :class:`ImportInputError` (naming the file, line and
  field) and leaves the database exactly as it was — the rows written before the bad one are
  rolled back with the transaction (the project is not created either);
- idempotent: a file whose sha256 is already recorded for the project and format is not
  imported again, and every row is matched on its natural key (external ids, turn order,
  filler position, triple, worker + item), so overlapping files never duplicate anything;
- bounded queries: each model costs one read of the existing keys, one bulk insert per
  ``BATCH_SIZE`` rows (a COPY on PostgreSQL), and one read of the new ids per chunk — never
  a query per row. Inserts go through :class:`_RowInserter` rather than ``bulk_create``:
  building and compiling 60,000 model instances cost Django ~4 s for CLAIRE train (SQLite),
  plain tuples through executemany/COPY a fraction of that (docs/importing.md has the
  figures).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import connection, models, transaction
from django.db.models import Max
from django.db.transaction import TransactionManagementError
from django.utils import timezone

from ..importers import FORMATS
from ..importers.base import Bundle, ImportInputError, SourceFile, changed_error, streamed
from ..models import (
    Annotation,
    ClozeFiller,
    ClozeItem,
    ComplexSentence,
    Dialogue,
    DialogueTurn,
    Document,
    Fact,
    ImportRecord,
    Item,
    Project,
    TargetSentence,
    Worker,
)
from .annotations import annotation_state, item_filled_marks_kept
from .projects import project_get_or_create, project_update
from .splits import describe_cross_split_contexts, sluice_cross_split_contexts
from .statistics import planner_statistics_refresh

BATCH_SIZE = 2000
#: Lines a staged import (an importer with ``plan``) writes at a time.
STAGED_CHUNK = 5000
# Chunk for ``__in`` lookups: below SQLite's default limit on bound parameters.
LOOKUP_CHUNK = 900


class UnknownFormatError(ValueError):
    pass


@dataclass
class ImportResult:
    project: Project
    project_created: bool = False
    files_imported: list[str] = field(default_factory=list)
    files_skipped: list[str] = field(default_factory=list)  # already imported (same sha256)
    rows: int = 0
    created: dict[str, int] = field(default_factory=dict)  # model name -> rows inserted
    warnings: list[str] = field(default_factory=list)  # e.g. sluice contexts in two splits
    # A dry run's (``import_files(dry_run=True)``) preview: the project's items per split
    # before, and the items the import would add per split.
    existing_items_per_split: dict[str, int] = field(default_factory=dict)
    new_items_per_split: dict[str, int] = field(default_factory=dict)
    dry_run: bool = False


#: ``progress(done, total, message)``, as the staff jobs' runners pass it (a job's
#: ``DatabaseProgress``, the command's ``ProgressBar``).
ImportProgress = Callable[[int, "int | None", str], None]


def import_files(*, fmt: str, paths: Sequence[str | Path], project_slug: str,
                 split: str | None = None, name: str | None = None,
                 quiet: bool = True, dry_run: bool = False,
                 progress: ImportProgress | None = None, licence: str | None = None,
                 attribution: str | None = None) -> ImportResult:
    """Import ``paths`` of format ``fmt`` into the project ``project_slug``.

    Non-mturk formats create the project (of the format's kind) when it is missing;
    ``mturk-csv`` needs an existing project and annotates its existing items.
    Raises ImportInputError (bad input, named file/line/field) or UnknownFormatError.

    ``dry_run``: everything is parsed, checked and written as for real, the counts taken, and
    the transaction rolled back — the console's preview (nothing is kept, the project is not
    created either); the result also says the items per split before and added.

    ``progress``: told the bytes read of all the files while they are parsed and written
    ("importing NAME"), then "written" once every file is.

    ``licence``, ``attribution`` (None: left as they are): the source data's, stored on the
    project in the import's transaction (the Hugging Face export's dataset card shows them).
    """
    importer = FORMATS.get(fmt)
    if importer is None:
        raise UnknownFormatError(f"unknown format {fmt!r}; expected one of "
                                 f"{', '.join(FORMATS)}")
    if not paths:
        raise ImportInputError(fmt, "-", "no file given")
    files = [SourceFile.read(fmt, path) for path in paths]
    project = Project.objects.filter(slug=project_slug).first()
    kind = importer.KIND
    if kind is None:
        if project is None:
            raise ImportInputError(fmt, files[0].name, f"project {project_slug!r} does not "
                                   "exist; mturk-csv adds annotations to an existing project")
        kind = project.kind
    elif project is not None and project.kind != kind:
        raise ImportInputError(fmt, files[0].name, f"project {project_slug!r} is a "
                               f"{project.kind} project; {fmt} needs a {kind} project")
    done = set()
    if project is not None:
        done = set(ImportRecord.objects.filter(
            project=project, format=fmt, sha256__in=[file.sha256 for file in files],
        ).values_list("sha256", flat=True))
    if all(file.sha256 in done for file in files):
        return ImportResult(project=project, files_skipped=[file.name for file in files])
    with transaction.atomic():
        try:
            project, created = project_get_or_create(slug=project_slug, kind=kind, name=name)
        except ValidationError as error:
            raise ImportInputError(fmt, files[0].name, "; ".join(error.messages)) from None
        # One import per project at a time: the natural-key reads below stay true until commit.
        Project.objects.select_for_update().filter(pk=project.pk).exists()
        carried = {name: value.strip() for name, value in
                   (("licence", licence), ("attribution", attribution)) if value is not None}
        if carried:
            try:
                project_update(project=project, **carried)
            except ValidationError as error:
                named = [message if message.startswith(name) else f"{name}: {message}"
                         for name, messages in error.message_dict.items()
                         for message in messages]
                raise ImportInputError(fmt, files[0].name, "; ".join(named)) from None
        result = ImportResult(project=project, project_created=created, dry_run=dry_run)
        if dry_run:
            result.existing_items_per_split = _items_per_split(project)
        writer = _ChunkWriter(project, fmt, result,
                              file_label=", ".join(file.name for file in files))
        for file in files:
            file.verify = True  # the bytes imported must be the bytes hashed
        if progress is not None:
            _report_reading(files, progress)
        # One reading: each bundle is checked as it is parsed and written as it comes; a bad
        # row anywhere raises, and the transaction keeps nothing.
        parsed, bundles = streamed(importer, files, split=split, kind=kind, quiet=quiet,
                                   size=STAGED_CHUNK)
        try:
            for chunk in bundles:
                writer.write(chunk)
        except ImportInputError:
            changed = _changed_file(fmt, files)
            if changed is not None:  # a file changed since it was hashed: that is the news
                raise changed from None
            raise
        rows, file_splits = parsed.rows, parsed.file_splits
        total = sum(file.size for file in files)
        _report(progress, total, total, "written")
        new_files = [file for file in files if file.sha256 not in done]
        ImportRecord.objects.bulk_create([
            ImportRecord(project=project, format=fmt, path=str(file.path)[:500],
                         sha256=file.sha256, split=file_splits.get(file.name, ""),
                         rows=rows.get(file.name, 0))
            for file in new_files
        ], ignore_conflicts=True)
        result.files_imported = [file.name for file in new_files]
        result.files_skipped = [file.name for file in files if file.sha256 in done]
        result.rows = sum(rows.values())
        leaks = sluice_cross_split_contexts(project)
        if leaks:
            result.warnings.append(describe_cross_split_contexts(leaks))
        if dry_run:
            after = _items_per_split(project)
            result.new_items_per_split = {
                split: n - result.existing_items_per_split.get(split, 0)
                for split, n in after.items() if n != result.existing_items_per_split.get(split, 0)}
            transaction.set_rollback(True)
    if result.files_imported and not dry_run:
        # Right after a COPY of many rows the planner still believes the tables are as small
        # as at their last analyze (measured: 63 ms instead of 3 ms per next item at 20,000
        # items) until autovacuum gets round to it, if it ever does.
        planner_statistics_refresh()
    return result


def _changed_file(fmt: str, files: list[SourceFile]) -> ImportInputError | None:
    """The error for the first of ``files`` whose bytes no longer hash to the checksum taken
    when the import began (read again: only on an error path), or None."""
    for file in files:
        if SourceFile.read(fmt, file.path).sha256 != file.sha256:
            return changed_error(fmt, file)
    return None


def _report(progress: ImportProgress | None, done: int, total: int, message: str) -> None:
    if progress is not None:
        progress(done, total, message)


def _report_reading(files: list[SourceFile], progress: ImportProgress) -> None:
    """Have every file tell ``progress`` the bytes read of all the files so far (importers
    may read them in any order: CLAIRE reads a split's data file before its labels)."""
    total = sum(file.size for file in files)
    read: dict[int, int] = {}
    for index, file in enumerate(files):
        def on_read(position: int, *, index: int = index, file: SourceFile = file) -> None:
            read[index] = min(position, file.size)
            progress(sum(read.values()), total, f"importing {file.name}")

        file.on_read = on_read


def _items_per_split(project: Project) -> dict[str, int]:
    return dict(Item.objects.filter(project=project).order_by().values("split")
                .annotate(n=models.Count("id")).values_list("split", "n"))


def _chunks(values: list, size: int) -> Iterable[list]:
    for start in range(0, len(values), size):
        yield values[start:start + size]


class _RowInserter:
    """Bulk insert of plain dicts (keyed by attname) into one model's table: ``COPY`` on
    PostgreSQL, ``executemany`` of one prepared ``INSERT`` on SQLite (and for workers, whose
    inserts must ignore rows another import added meanwhile).

    Every concrete column is written: a missing key takes the field's default (``auto_now_add``
    takes now), JSON goes through ``json.dumps`` as Django's JSONField does, datetimes through
    the backend's adapter. Precondition: the rows satisfy the model's constraints; the
    database still enforces them, so a violation aborts the whole import.
    """

    def __init__(self, model, *, ignore_conflicts: bool = False):
        self.fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        self.columns = [f.attname for f in self.fields]
        now = timezone.now()
        self.defaults, self.converters = [], []
        for f in self.fields:
            if getattr(f, "auto_now_add", False) or getattr(f, "auto_now", False):
                default = now
            else:
                default = f.get_default()  # "" for text columns without a default
            convert = self._converter(f)
            self.defaults.append(convert(default) if default is not None and convert else default)
            self.converters.append(convert)
        # The columns whose given values are converted (JSON, datetimes): their index, name and
        # converter; the others go as they are.
        self.converted = [(index, column, convert) for index, (column, convert)
                          in enumerate(zip(self.columns, self.converters, strict=True))
                          if convert is not None]
        self.ignore_conflicts = ignore_conflicts
        # Table and column names come from the model's own metadata, quoted; values are bound.
        names = ", ".join(connection.ops.quote_name(f.column) for f in self.fields)
        table = connection.ops.quote_name(model._meta.db_table)
        placeholders = ", ".join(["%s"] * len(self.fields))
        self.insert_sql = (f"INSERT INTO {table} ({names}) VALUES ({placeholders})"  # noqa: S608
                           + (" ON CONFLICT DO NOTHING" if ignore_conflicts else ""))
        self.copy_sql = f"COPY {table} ({names}) FROM STDIN"

    @staticmethod
    def _converter(f):
        """How a Python value becomes a parameter; None when it goes as it is."""
        if isinstance(f, models.JSONField):
            return json.dumps
        if isinstance(f, models.DateTimeField):
            return connection.ops.adapt_datetimefield_value
        return None

    def _values(self, row: dict) -> list:
        """The row's values in column order: a missing key takes its column's default (already
        converted), a given value not None goes through its column's converter."""
        values = list(map(row.get, self.columns, self.defaults))
        for index, column, convert in self.converted:
            value = values[index]
            if value is not None and column in row:
                values[index] = convert(value)
        return values

    def insert(self, rows: Iterable[dict]) -> int:
        """Insert ``rows`` (a generator is best: they are consumed as they are written, so
        the rows to insert are never all in memory as well as the bundle); the count."""
        iterator = iter(rows)
        first = next(iterator, None)
        if first is None:
            return 0
        count = 0
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql" and not self.ignore_conflicts:
                # COPY is PostgreSQL's bulk path: ~10x an INSERT of the same rows.
                with cursor.cursor.copy(self.copy_sql) as copy:
                    for row in chain([first], iterator):
                        copy.write_row(self._values(row))
                        count += 1
            else:
                iterator = chain([first], iterator)
                while batch := [self._values(row) for row in islice(iterator, BATCH_SIZE)]:
                    cursor.executemany(self.insert_sql, batch)
                    count += len(batch)
        return count


#: The row trigger of migration 0023 counting a project's items on SQLite (one upsert of
#: ``annotation_projectcount`` per row inserted: three quarters of an item's insert).
SQLITE_ITEM_COUNT_TRIGGER = "unpack_count_item_insert"


def _sqlite_items_insert(inserter: _RowInserter, rows: Iterable[dict], *,
                         project_id: int) -> int:
    """Insert ``rows`` (items of ``project_id`` only) on SQLite with the item-count row
    trigger set aside: it is dropped, the rows inserted, the project's count raised once by
    their number, and the trigger made again from its own stored SQL — all inside the
    import's transaction, which holds SQLite's one write lock (no other writer can insert an
    item meanwhile) and undoes the lot, trigger included, if anything fails."""
    if not connection.in_atomic_block:
        raise TransactionManagementError("items are bulk inserted inside the import's "
                                         "transaction")
    with connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = %s",
                       [SQLITE_ITEM_COUNT_TRIGGER])
        found = cursor.fetchone()
        if found is None:  # not migrated that far: the rows as they are
            return inserter.insert(rows)
        cursor.execute(f"DROP TRIGGER {SQLITE_ITEM_COUNT_TRIGGER}")
        try:
            count = inserter.insert(rows)
            if count:
                cursor.execute(
                    "INSERT INTO annotation_projectcount (project_id, shard, items, annotations)"
                    " VALUES (%s, 0, %s, 0) ON CONFLICT (project_id, shard)"
                    " DO UPDATE SET items = items + %s", [project_id, count, count])
        finally:
            cursor.execute(found[0])
    return count


class _ChunkWriter:
    """Writes an import's bundles one after the other inside its one transaction (a whole
    file's records are never in memory at once: the importers hand them out
    ``STAGED_CHUNK`` rows at a time). Across bundles it keeps keys only: per model the
    natural key → id of what the project holds (read once, at the first bundle that needs
    it, then grown with each bundle's new rows), so "already exists" holds across bundles
    and imports. A bundle's new rows are read back by id (above the last id seen: the
    project row is locked, so only this import adds to the project meanwhile), one query
    per model per bundle; existing answers are looked up for the bundle's items only.
    """

    def __init__(self, project: Project, fmt: str, result: ImportResult, *,
                 file_label: str):
        self.project, self.fmt, self.result = project, fmt, result
        self.file_label = file_label
        self._ids: dict[type, dict] = {}
        self._marks: dict[type, int] = {}
        self._before: dict[type, int] = {}  # per model the last id before this import
        self._workers: dict[tuple[str, str], int] = {}
        self._sluice_groups: dict[str, list[int]] | None = None

    def write(self, b: Bundle) -> None:
        documents = self._by_external_id(Document, b.documents)
        if b.targets:
            self._targets(b, documents)
        dialogues = self._by_external_id(Dialogue, b.dialogues)
        if b.turns:
            self._turns(b, dialogues)
        clozes = self._clozes(b) if b.clozes else {}
        if b.fillers:
            self._fillers(b, clozes)
        before = ([key for key in b.complex_sentences
                   if key in self._external_ids(ComplexSentence)]
                  if b.complex_sentences else [])
        complexes = self._by_external_id(ComplexSentence, b.complex_sentences)
        if b.complex_facts or b.facts:
            self._facts(b, complexes, before)
        items, new_items = self._items(b)
        if b.annotations:
            self._annotations(b, items, new_items)
        if b.names_once:
            self._forget(ComplexSentence, b.complex_sentences)
            self._forget(Item, b.items)
        if b.regroup:
            self._regroup(b.regroup)

    def _forget(self, model, keys: Iterable) -> None:
        """Drop keys no later bundle names (``Bundle.names_once``): what the writer keeps
        across bundles is then the keys they share (WebSplit's facts) and the rows there
        before, not one key per row of the file."""
        known = self._ids.get(model)
        if known is not None:
            for key in keys:
                known.pop(key, None)

    def _regroup(self, moved: dict[str, str]) -> None:
        """The items this import made under a group key of ``moved`` get the key it maps to
        (``Bundle.regroup``): one statement, run once per key."""
        if Item not in self._before:
            return
        table = connection.ops.quote_name(Item._meta.db_table)
        with connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {table} SET group_key = %s WHERE project_id = %s"  # noqa: S608
                " AND group_key = %s AND id > %s",
                [(new, self.project.pk, old, self._before[Item]) for old, new in moved.items()])

    def _source_id(self, kind: str, key) -> int:
        """The id of an item's source (``ItemRecord.source``), written by this bundle or an
        earlier one (a turn an earlier record's history revealed), or there before."""
        ids = self._ids
        if kind == "turn":
            return ids[DialogueTurn][(ids[Dialogue][key[0]], key[1])][0]
        if kind == "target":
            return ids[TargetSentence][(ids[Document][key[0]], *key[1:])]
        if kind == "filler":
            return ids[ClozeFiller][(ids[ClozeItem][key[0]], key[1])]
        return ids[ComplexSentence][key]

    def _insert(self, model, rows: Iterable[dict], *, label: str | None = None,
                ignore_conflicts: bool = False) -> int:
        inserter = _RowInserter(model, ignore_conflicts=ignore_conflicts)
        if model is Item and connection.vendor == "sqlite":
            count = _sqlite_items_insert(inserter, rows, project_id=self.project.pk)
        else:
            count = inserter.insert(rows)
        if count:
            name = label or model.__name__
            self.result.created[name] = self.result.created.get(name, 0) + count
        return count

    def _known(self, model, read: Callable[[models.QuerySet], Iterable[tuple]]) -> dict:
        """The project's ``model`` rows as natural key → id, read at the first need (and the
        last id before anything is inserted)."""
        if model not in self._ids:
            self._marks[model] = model.objects.aggregate(last=Max("id"))["last"] or 0
            self._before[model] = self._marks[model]
            self._ids[model] = dict(read(model.objects.all()))
        return self._ids[model]

    def _insert_new(self, model, rows: Iterable[dict],
                    read: Callable[[models.QuerySet], Iterable[tuple]]) -> dict:
        """Insert ``rows`` of ``model`` (after ``_known``); the key → id of those inserted,
        added to the known ones."""
        if not self._insert(model, rows):
            return {}
        new = dict(read(model.objects.filter(id__gt=self._marks[model])))
        self._marks[model] = max(value if isinstance(value, int) else value[0]
                                 for value in new.values())
        self._ids[model].update(new)
        return new

    def _external_ids(self, model) -> dict[str, int]:
        """The project's ``model`` rows by external id (``_known``)."""
        return self._known(model, self._read_external_ids)

    def _read_external_ids(self, rows: models.QuerySet):
        return rows.filter(project=self.project).values_list("external_id", "id")

    def _by_external_id(self, model, records: dict[str, dict]) -> dict[str, int]:
        if not records:
            return self._ids.get(model, {})
        read = self._read_external_ids
        ids = self._external_ids(model)
        self._insert_new(model, ({"project_id": self.project.pk, "external_id": key, **fields}
                                 for key, fields in records.items() if key not in ids), read)
        return ids

    def _targets(self, b: Bundle, documents: dict[str, int]) -> None:
        def read(rows: models.QuerySet):
            return (((d, p, s, e), pk) for d, p, s, e, pk in rows.filter(
                document__project=self.project).values_list(
                "document_id", "paragraph_index", "start_byte", "end_byte", "id"))

        ids = self._known(TargetSentence, read)
        self._insert_new(TargetSentence, (
            {"document_id": documents[document], "paragraph_index": paragraph,
             "start_byte": start, "end_byte": end, **fields}
            for (document, paragraph, start, end), fields in b.targets.items()
            if (documents[document], paragraph, start, end) not in ids), read)

    def _turns(self, b: Bundle, dialogues: dict[str, int]) -> None:
        def read(rows: models.QuerySet):
            return (((d, o), (pk, bool(answer))) for d, o, pk, answer in rows.filter(
                dialogue__project=self.project).values_list("dialogue_id", "order", "id",
                                                            "answer"))

        known = self._known(DialogueTurn, read)
        new, revealed = [], []
        for (dialogue, order), fields in b.turns.items():
            found = known.get((dialogues[dialogue], order))
            if found is None:
                new.append({"dialogue_id": dialogues[dialogue], "order": order,
                            "question": fields["question"], "answer": fields["answer"]})
            elif not found[1] and fields["answer"]:
                # A later record (or file) revealed the answer an earlier one could not know.
                revealed.append(DialogueTurn(pk=found[0], answer=fields["answer"]))
                known[(dialogues[dialogue], order)] = (found[0], True)
        if revealed:
            DialogueTurn.objects.bulk_update(revealed, ["answer"], batch_size=BATCH_SIZE)
            before = sum(1 for turn in revealed if turn.pk <= self._before[DialogueTurn])
            if before:  # the turns this import made are not "revealed" ones
                name = "DialogueTurn answers revealed"
                self.result.created[name] = self.result.created.get(name, 0) + before
        self._insert_new(DialogueTurn, new, read)

    def _clozes(self, b: Bundle) -> dict[str, int]:
        ids = self._external_ids(ClozeItem)
        old = [ids[key] for key in b.clozes if key in ids]
        stored: dict[str, str] = {}
        for part in _chunks(old, LOOKUP_CHUNK):
            stored.update(ClozeItem.objects.filter(id__in=part)
                          .values_list("external_id", "sentence"))
        for key, fields in b.clozes.items():
            if key in stored and stored[key] != fields["sentence"]:
                # CLAIRE Ids restart at 0 in every split: a clash means another instance.
                raise ImportInputError(
                    self.fmt, self.file_label, f"Id {key!r} is already in project "
                    f"{self.project.slug!r} with another sentence; import each CLAIRE split "
                    "into its own project")
        return self._by_external_id(ClozeItem, b.clozes)

    def _fillers(self, b: Bundle, clozes: dict[str, int]) -> None:
        def read(rows: models.QuerySet):
            return (((c, p), pk) for c, p, pk in rows.filter(
                cloze__project=self.project).values_list("cloze_id", "position", "id"))

        ids = self._known(ClozeFiller, read)
        self._insert_new(ClozeFiller, (
            {"cloze_id": clozes[cloze], "position": position, **fields}
            for (cloze, position), fields in b.fillers.items()
            if (clozes[cloze], position) not in ids), read)

    def _facts(self, b: Bundle, complexes: dict[str, int], before: list[str]) -> None:
        """The bundle's facts (new ones inserted) and its sentences' fact links; links are
        looked up for the sentences stored before this bundle only."""
        def read(rows: models.QuerySet):
            return (((s, p, o), pk) for s, p, o, pk in rows.filter(
                project=self.project).values_list("subject", "property", "object", "id"))

        ids = self._known(Fact, read)
        wanted = dict.fromkeys(chain(b.facts, (fact for _, fact in b.complex_facts)))
        self._insert_new(Fact, ({"project_id": self.project.pk, "subject": s, "property": p,
                                 "object": o} for (s, p, o) in wanted if (s, p, o) not in ids),
                         read)
        link = ComplexSentence.facts.through
        linked: set[tuple[int, int]] = set()
        for part in _chunks([complexes[key] for key in before], LOOKUP_CHUNK):
            linked.update(link.objects.filter(complexsentence_id__in=part)
                          .values_list("complexsentence_id", "fact_id"))

        def rows():
            for sentence, fact in b.complex_facts:
                pair = (complexes[sentence], ids[fact])
                if pair not in linked:
                    linked.add(pair)
                    yield {"complexsentence_id": pair[0], "fact_id": pair[1]}

        self._insert(link, rows(), label="ComplexSentence.facts")

    def _items(self, b: Bundle) -> tuple[dict[str, int], set[int]]:
        """External id → id of the items the bundle names (made when new), and the ids of
        those made now."""
        read = self._read_external_ids
        ids = self._external_ids(Item)
        if b.items_must_exist:
            for record in b.annotations:
                if record.item_key in ids:
                    continue
                if self._sluice_groups is None:
                    self._sluice_groups = (self._sluice_items_by_context()
                                           if self.project.kind == "sluice" else {})
                found = self._sluice_groups.get(record.item_key, [])
                if len(found) != 1:
                    problem = (f"context {record.item_key!r} is in several splits; name the "
                               "item with Input.item_id" if found else
                               f"no item {record.item_key!r} in project {self.project.slug!r}")
                    raise ImportInputError(self.fmt, record.where.file, problem,
                                           line=record.where.line, record=record.where.record)
                ids[record.item_key] = found[0]
            return ids, set()
        column = {"target": "target_sentence_id", "turn": "turn_id", "filler": "filler_id",
                  "complex": "complex_sentence_id"}
        self._gold_of_existing(b, ids)
        new = self._insert_new(Item, (
            {"project_id": self.project.pk, "external_id": external_id,
             "split": record.split, "group_key": record.group_key,
             "position": record.position,
             column[record.source[0]]: self._source_id(*record.source),
             "is_gold": record.gold_answer is not None, "gold_answer": record.gold_answer}
            for external_id, record in b.items.items() if external_id not in ids), read)
        return ids, set(new.values())

    def _gold_of_existing(self, b: Bundle, ids: dict[str, int]) -> None:
        """Items already in the project that the file marks gold get the file's answer (an
        item the file does not mark keeps what it is)."""
        marked = {ids[external_id]: record.gold_answer
                  for external_id, record in b.items.items()
                  if external_id in ids and record.gold_answer is not None}
        if not marked:
            return
        with item_filled_marks_kept(marked):
            for item_id, answer in marked.items():
                Item.objects.filter(pk=item_id).update(is_gold=True, gold_answer=answer)

    def _sluice_items_by_context(self) -> dict[str, list[int]]:
        """Item ids per sluice context id (the group key; an item per split): mturk-csv
        rows without ``Input.item_id`` name their item by its context."""
        items: dict[str, list[int]] = {}
        for group_key, item_id in Item.objects.filter(project=self.project).values_list(
                "group_key", "id"):
            items.setdefault(group_key, []).append(item_id)
        return items

    def _workers_of(self, b: Bundle) -> dict[tuple[str, str], int]:
        """The bundle's workers' ids (made when new; kept across bundles)."""
        ids = self._workers
        wanted: dict[str, dict[str, None]] = {}
        for record in b.annotations:
            if record.worker not in ids:
                wanted.setdefault(record.worker[0], {})[record.worker[1]] = None

        def read(provider: str, external_ids: list[str]) -> None:
            for chunk in _chunks(external_ids, LOOKUP_CHUNK):
                ids.update(((provider, external_id), pk) for external_id, pk in
                           Worker.objects.filter(provider=provider, external_id__in=chunk)
                           .values_list("external_id", "id"))

        for provider, unique in wanted.items():
            read(provider, list(unique))
            missing = [external_id for external_id in unique if (provider, external_id)
                       not in ids]
            # Workers are shared by every project; another import may add one meanwhile.
            if self._insert(Worker, [{"provider": provider, "external_id": external_id}
                                     for external_id in missing], ignore_conflicts=True):
                read(provider, missing)
        return ids

    def _annotations(self, b: Bundle, items: dict[str, int], new_items: set[int]) -> None:
        workers = self._workers_of(b)
        old = {items[record.item_key] for record in b.annotations} - new_items
        taken: set[tuple[int, int]] = set()
        for part in _chunks(sorted(old), LOOKUP_CHUNK):  # items made now have no answers
            taken.update(Annotation.objects.filter(
                project=self.project, assignment__isnull=True, item_id__in=part)
                .values_list("worker_id", "item_id"))
        new = []
        for record in b.annotations:
            pair = (workers[record.worker], items[record.item_key])
            if pair in taken:
                continue
            taken.add(pair)
            new.append({"project_id": self.project.pk, "worker_id": pair[0],
                        "item_id": pair[1], "source": record.source, **record.fields,
                        "state": annotation_state(source=record.source, review_status=(
                            record.fields.get("review_status", Annotation.Review.PENDING)))})
        # Counted answers (an MTurk results CSV's) may fill their items: the marks follow.
        with item_filled_marks_kept(row["item_id"] for row in new
                                    if row["state"] == Annotation.State.COUNTED):
            self._insert(Annotation, new)
