"""WebSplit as JSONL (our format; the released WebSplit files are not in this repository).

One complex sentence per line::

    {"id": "ws-1", "complex": "Alan Bean, born in Wheeler, Texas, was a test pilot.",
     "triples": [["Alan_Bean", "birthPlace", "Wheeler,_Texas"],
                 ["Alan_Bean", "occupation", "Test_pilot"]],
     "simple_references": [["Alan Bean was born in Wheeler, Texas.",
                            "Alan Bean was a test pilot."]]}

``id`` is a string or an integer; ``triples`` a non-empty list of [subject, property, object]
strings; ``simple_references`` (optional) a list of references, each a list of at least two
simple sentences. Facts are deduplicated per project and linked to every sentence that
expresses them. The item's group is its triple cluster within the file (sentences sharing a
triple, transitively); the WebSplit split rule re-derives clusters from the Fact links across
all imports. Each reference becomes an imported annotation by its own pseudonymous worker.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from .base import (
    GOLD_FIELD,
    AnnotationRecord,
    Bundle,
    ImportInputError,
    ItemRecord,
    SourceFile,
    Where,
    fail,
    fit_key,
    get_field,
    gold_answer_in,
    progress,
    read_jsonl,
    resolve_split,
    stable_id,
)

FORMAT = "websplit"
KIND = "split_rephrase"


class _Clusters:
    """Union-find over sentence ids joined by shared triples."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        root = key
        while self.parent.setdefault(root, root) != root:
            root = self.parent[root]
        while self.parent[key] != root:
            self.parent[key], key = root, self.parent[key]
        return root

    def join(self, first: str, second: str) -> None:
        a, b = self.find(first), self.find(second)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


@dataclass
class _Line:
    """One line checked: the sentence, its facts and references, where it was read."""

    sentence_id: str
    raw_id: str | int
    text: str
    triples: list[tuple[str, str, str]]
    references: list[list[str]]
    where: Where
    gold_answer: object
    split: str = ""


def _lines(files: list[SourceFile], split: str | None,
           quiet: bool) -> Iterator[tuple[SourceFile, str, _Line]]:
    """(file, its split, checked line) for every line of every file, read as a stream."""
    for file in files:
        file_split = resolve_split(FORMAT, file, split, "train")
        for number, record in progress(read_jsonl(FORMAT, file), total=None, desc=file.name,
                                       quiet=quiet):
            yield file, file_split, _checked(Where(file.name, line=number), record)


class Plan:
    """The staged (streamed) import of WebSplit files, for ``annotation.services.imports``:
    ``scan()`` reads every line once and checks it, keeping only small keys — each sentence
    id's triple cluster (its item's group), the ids seen (an id twice is refused), the facts
    (deduplicated: WebSplit reuses a few thousand triples), the gold answers, rows and split
    per file — then ``chunks(size)`` reads the files again and yields the records to write,
    ``size`` lines at a time, as small :class:`Bundle` objects. Nothing of a line's text stays
    in memory after its chunk is written, so memory does not grow with the file's text.
    """

    def __init__(self, files: list[SourceFile], *, split: str | None, quiet: bool):
        self.files, self.split, self.quiet = files, split, quiet
        self.clusters = _Clusters()
        self.facts: dict[tuple[str, str, str], None] = {}
        self.gold: dict[str, object] = {}
        self.rows: dict[str, int] = {}
        self.file_splits: dict[str, str] = {}

    def scan(self) -> None:
        """Check every line (ImportInputError naming file, line, field at the first bad one)
        and keep the keys; nothing is written."""
        first_sentence_of_fact: dict[tuple[str, str, str], str] = {}
        parent = self.clusters.parent
        for file in self.files:
            self.rows[file.name] = 0
        for file, file_split, line in _lines(self.files, self.split, self.quiet):
            self.rows[file.name] += 1
            self.file_splits[file.name] = file_split
            sentence_id = line.sentence_id
            if sentence_id in parent:
                raise fail(FORMAT, line.where, f"id {sentence_id!r} appears twice")
            parent[sentence_id] = sentence_id
            for triple in line.triples:
                self.facts[triple] = None
                other = first_sentence_of_fact.setdefault(triple, sentence_id)
                if other is not sentence_id:
                    self.clusters.join(sentence_id, other)
            if line.gold_answer is not None:
                self.gold[sentence_id] = line.gold_answer
        for file in self.files:
            self.file_splits.setdefault(file.name, resolve_split(FORMAT, file, self.split,
                                                                 "train"))

    def chunks(self, size: int) -> Iterator[Bundle]:
        """The files read again, ``size`` lines at a time, as bundles of complex sentences,
        their fact links, their items and their references (annotations)."""
        bundle = Bundle(kind=KIND, names_once=True)  # scan() refused an id twice
        count = 0
        for line in self._lines_again():
            sentence_id, file_split = line.sentence_id, line.split
            bundle.complex_sentences[sentence_id] = {"text": line.text}
            for fact in line.triples:
                bundle.complex_facts[(sentence_id, fact)] = None
            bundle.items[sentence_id] = ItemRecord(
                split=file_split, group_key=fit_key("facts:" + self.clusters.find(sentence_id)),
                position=0, source=("complex", sentence_id),
                gold_answer=line.gold_answer)
            if line.references:
                _references(bundle, line)
            count += 1
            if count == size:
                yield bundle
                bundle, count = Bundle(kind=KIND, names_once=True), 0
        if count:
            yield bundle


    def _lines_again(self) -> Iterator[_Line]:
        """The lines ``scan`` checked, read again without checking them again: the bytes
        are hashed as they are read and must be the ones checked (the file's sha256),
        else ImportInputError — the import's transaction then keeps nothing."""
        for file in self.files:
            file_split = self.file_splits[file.name]
            digest = hashlib.sha256()
            with file.path.open("rb") as handle:
                try:
                    for number, raw in enumerate(handle, start=1):
                        digest.update(raw)
                        if number == 1 and raw.startswith(codecs.BOM_UTF8):
                            raw = raw[len(codecs.BOM_UTF8):]
                        if raw.isspace() or not raw:
                            continue
                        record = json.loads(raw)
                        triples = []
                        for subject, prop, obj in record["triples"]:
                            if (subject, prop, obj) not in triples:
                                triples.append((subject, prop, obj))
                        sentence_id = str(record["id"])
                        yield _Line(sentence_id, record["id"], record["complex"], triples,
                                    record.get("simple_references") or [],
                                    Where(file.name, line=number), self.gold.get(sentence_id),
                                    file_split)
                except (ValueError, KeyError, TypeError):
                    raise _changed(file) from None
            if digest.hexdigest() != file.sha256:
                raise _changed(file)


def _changed(file: SourceFile) -> ImportInputError:
    return ImportInputError(FORMAT, file.name, "the file changed while it was being "
                                               "imported; import it again")


def plan(files: list[SourceFile], *, split: str | None, kind: str, quiet: bool) -> Plan:
    return Plan(files, split=split, quiet=quiet)


def parse(files: list[SourceFile], *, split: str | None, kind: str, quiet: bool) -> Bundle:
    """The whole files as one bundle (the same checks as :class:`Plan`, held in memory)."""
    staged = Plan(files, split=split, quiet=quiet)
    staged.scan()
    bundle = Bundle(kind=KIND)
    for chunk in staged.chunks(size=2**62):
        bundle = chunk
    bundle.facts = staged.facts
    bundle.rows, bundle.file_splits = staged.rows, staged.file_splits
    return bundle


def _checked(where: Where, record: dict) -> _Line:
    raw_id = get_field(FORMAT, where, record, "id", (str, int))
    sentence_id = str(raw_id)
    if not sentence_id.strip():
        raise fail(FORMAT, where, 'field "id" is empty')
    if len(sentence_id) > 200:
        raise fail(FORMAT, where, 'field "id" is longer than 200 characters')
    text = get_field(FORMAT, where, record, "complex", str)
    if not text.strip():
        raise fail(FORMAT, where, 'field "complex" is empty')
    triples_raw = get_field(FORMAT, where, record, "triples", list)
    if not triples_raw:
        raise fail(FORMAT, where, 'field "triples" is empty')
    triples: list[tuple[str, str, str]] = []
    for index, triple in enumerate(triples_raw):
        if (type(triple) is not list or len(triple) != 3
                or not (type(triple[0]) is type(triple[1]) is type(triple[2]) is str)
                or not (triple[0].strip() and triple[1].strip() and triple[2].strip())):
            raise fail(FORMAT, where, f'field "triples" entry {index} must be [subject, '
                                      "property, object] as three non-empty strings")
        if len(triple[1]) > 200:
            raise fail(FORMAT, where, f'field "triples" entry {index}: property is longer '
                                      "than 200 characters")
        fact = (triple[0], triple[1], triple[2])
        if fact not in triples:
            triples.append(fact)
    references = get_field(FORMAT, where, record, "simple_references", list, required=False,
                           default=[])
    for index, reference in enumerate(references):
        if (not isinstance(reference, list) or len(reference) < 2
                or not all(isinstance(s, str) and s.strip() for s in reference)):
            raise fail(FORMAT, where, f'field "simple_references" entry {index} must be a '
                                      "list of at least two non-empty sentences")
    gold_answer = gold_answer_in(FORMAT, where, KIND, record.get(GOLD_FIELD))
    return _Line(sentence_id, raw_id, text, triples, references, where, gold_answer)


def _references(bundle: Bundle, line: _Line) -> None:
    for index, reference in enumerate(line.references):
        bundle.annotations.append(AnnotationRecord(
            worker=("import", stable_id(line.sentence_id, str(index), prefix="websplit-")),
            item_key=line.sentence_id, source="import",
            fields={"payload": {"simple_sentences": reference}, "text": " ".join(reference),
                    "provenance": {**line.where.provenance(), "id": line.raw_id,
                                   "reference": index}},
            where=line.where,
        ))
