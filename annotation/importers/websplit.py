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

The file is read once: each line is checked and handed out in bundles of ``Stream.size``
lines, written as they come inside the import's transaction. An item's group is its cluster
as far as the file has been read; a later line may join two clusters, so the last bundle
carries ``Bundle.regroup``: the group keys given out that a later line merged into another
cluster, and the key they became (the writer moves the items it made under them).
"""

from __future__ import annotations

from collections.abc import Iterator

from .base import (
    GOLD_FIELD,
    AnnotationRecord,
    Bundle,
    ItemRecord,
    SourceFile,
    Stream,
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
    """Union-find over sentence ids joined by shared triples; a cluster's root is its least
    id (so the group key does not depend on the order the lines join in)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        parent = self.parent
        root = key
        while (above := parent[root]) != root:
            root = above
        while (above := parent[key]) != root:
            parent[key], key = root, above
        return root

    def join(self, first: str, second: str) -> None:
        a, b = self.find(first), self.find(second)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def group_key(root: str) -> str:
    """The item group of the cluster whose root (least sentence id) is ``root``."""
    return fit_key("facts:" + root)


def parse(stream: Stream, files: list[SourceFile], *, split: str | None, kind: str,
          quiet: bool) -> Iterator[Bundle]:
    """Every line checked (ImportInputError naming file, line, field at the first bad one)
    and handed out as complex sentences, their fact links, their items and their references
    (annotations), ``stream.size`` lines a bundle. What stays across bundles is keys: each
    sentence id's cluster (an id twice is refused), the first sentence of each fact, and the
    cluster roots given out as group keys."""
    clusters = _Clusters()
    parent = clusters.parent
    first_sentence_of_fact: dict[tuple[str, str, str], str] = {}
    given: set[str] = set()  # roots given out as group keys

    def take() -> Bundle:
        bundle = stream.take()
        bundle.names_once = True  # an id twice is refused: no later bundle names its rows
        for sentence_id, record in bundle.items.items():
            root = clusters.find(sentence_id)
            given.add(root)
            record.group_key = group_key(root)
        return bundle

    for file in files:
        file_split = resolve_split(FORMAT, file, split, "train")
        name, rows = file.name, 0
        for number, record in progress(read_jsonl(FORMAT, file), total=None, desc=name,
                                       quiet=quiet):
            sentence_id, text, triples, references, gold = _checked(name, number, record)
            if sentence_id in parent:
                raise fail(FORMAT, Where(name, line=number), f"id {sentence_id!r} appears twice")
            parent[sentence_id] = sentence_id
            bundle = stream.bundle
            bundle.complex_sentences[sentence_id] = {"text": text}
            links = bundle.complex_facts
            for triple in triples:
                links[(sentence_id, triple)] = None
                other = first_sentence_of_fact.setdefault(triple, sentence_id)
                if other is not sentence_id:
                    clusters.join(sentence_id, other)
            bundle.items[sentence_id] = ItemRecord(
                split=file_split, group_key="", position=0, source=("complex", sentence_id),
                gold_answer=gold)
            if references:
                _references(bundle, Where(name, line=number), sentence_id, record["id"],
                            references)
            rows += 1
            if len(bundle.complex_sentences) >= stream.size:
                yield take()
        stream.file_done(file, rows=rows, split=file_split)
    last = take()
    last.regroup = {group_key(root): group_key(clusters.find(root)) for root in given
                    if parent[root] != root}
    yield last


_TRIPLE = 'field "triples" entry {index} must be [subject, property, object] as three ' \
          "non-empty strings"


def _checked(name: str, number: int, record: dict) -> tuple[
        str, str, list[tuple[str, str, str]], list, object]:
    """(sentence id, text, its distinct triples, references, gold answer) of a line, or
    ImportInputError naming the file, line and field. The types JSON gives are tested
    directly; ``get_field`` words a miss."""
    raw_id = record.get("id")
    if type(raw_id) is not str and type(raw_id) is not int:
        raw_id = get_field(FORMAT, Where(name, line=number), record, "id", (str, int))
    sentence_id = str(raw_id)
    if not sentence_id.strip():
        raise fail(FORMAT, Where(name, line=number), 'field "id" is empty')
    if len(sentence_id) > 200:
        raise fail(FORMAT, Where(name, line=number), 'field "id" is longer than 200 characters')
    text = record.get("complex")
    if type(text) is not str:
        text = get_field(FORMAT, Where(name, line=number), record, "complex", str)
    if not text.strip():
        raise fail(FORMAT, Where(name, line=number), 'field "complex" is empty')
    triples_raw = record.get("triples")
    if type(triples_raw) is not list:
        triples_raw = get_field(FORMAT, Where(name, line=number), record, "triples", list)
    if not triples_raw:
        raise fail(FORMAT, Where(name, line=number), 'field "triples" is empty')
    triples: list[tuple[str, str, str]] = []
    for index, triple in enumerate(triples_raw):
        if (type(triple) is not list or len(triple) != 3
                or not (type(triple[0]) is type(triple[1]) is type(triple[2]) is str)
                or not (triple[0].strip() and triple[1].strip() and triple[2].strip())):
            raise fail(FORMAT, Where(name, line=number), _TRIPLE.format(index=index))
        if len(triple[1]) > 200:
            raise fail(FORMAT, Where(name, line=number), f'field "triples" entry {index}: '
                                                         "property is longer than 200 characters")
        fact = (triple[0], triple[1], triple[2])
        if fact not in triples:
            triples.append(fact)
    references = record.get("simple_references")
    if references is not None:
        if type(references) is not list:
            references = get_field(FORMAT, Where(name, line=number), record,
                                   "simple_references", list)
        for index, reference in enumerate(references):
            if (not isinstance(reference, list) or len(reference) < 2
                    or not all(isinstance(s, str) and s.strip() for s in reference)):
                raise fail(FORMAT, Where(name, line=number),
                           f'field "simple_references" entry {index} must be a list of at '
                           "least two non-empty sentences")
    gold = record.get(GOLD_FIELD)
    if gold is not None:
        gold = gold_answer_in(FORMAT, Where(name, line=number), KIND, gold)
    return sentence_id, text, triples, references, gold


def _references(bundle: Bundle, where: Where, sentence_id: str, raw_id: str | int,
                references: list[list[str]]) -> None:
    for index, reference in enumerate(references):
        bundle.annotations.append(AnnotationRecord(
            worker=("import", stable_id(sentence_id, str(index), prefix="websplit-")),
            item_key=sentence_id, source="import",
            fields={"payload": {"simple_sentences": reference}, "text": " ".join(reference),
                    "provenance": {**where.provenance(), "id": raw_id, "reference": index}},
            where=where,
        ))
