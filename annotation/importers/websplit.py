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

from .base import (
    GOLD_FIELD,
    AnnotationRecord,
    Bundle,
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


def parse(files: list[SourceFile], *, split: str | None, kind: str, quiet: bool) -> Bundle:
    bundle = Bundle(kind=KIND)
    clusters = _Clusters()
    first_sentence_of_fact: dict[tuple[str, str, str], str] = {}
    pending: list[tuple[str, str, Where, object]] = []
    for file in files:
        file_split = resolve_split(FORMAT, file, split, "train")
        rows = 0
        for number, record in progress(read_jsonl(FORMAT, file), total=None, desc=file.name,
                                       quiet=quiet):
            rows += 1
            where = Where(file.name, line=number)
            sentence_id = _parse_sentence(bundle, where, record)
            clusters.find(sentence_id)
            for triple in bundle.complex_sentences[sentence_id]["triples"]:
                other = first_sentence_of_fact.setdefault(triple, sentence_id)
                clusters.join(sentence_id, other)
            pending.append((sentence_id, file_split, where,
                            gold_answer_in(FORMAT, where, KIND, record.get(GOLD_FIELD))))
        bundle.rows[file.name] = rows
        bundle.file_splits[file.name] = file_split
    for sentence_id, file_split, where, gold_answer in pending:
        bundle.add_item(sentence_id,
                        ItemRecord(split=file_split,
                                   group_key=fit_key("facts:" + clusters.find(sentence_id)),
                                   position=0, source=("complex", sentence_id),
                                   gold_answer=gold_answer),
                        FORMAT, where)
    for sentence in bundle.complex_sentences.values():
        del sentence["triples"]
    return bundle


def _parse_sentence(bundle: Bundle, where: Where, record: dict) -> str:
    raw_id = get_field(FORMAT, where, record, "id", (str, int))
    sentence_id = str(raw_id)
    if not sentence_id.strip():
        raise fail(FORMAT, where, 'field "id" is empty')
    if len(sentence_id) > 200:
        raise fail(FORMAT, where, 'field "id" is longer than 200 characters')
    if sentence_id in bundle.complex_sentences:
        raise fail(FORMAT, where, f"id {sentence_id!r} appears twice")
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
        bundle.facts[fact] = None
        bundle.complex_facts[(sentence_id, fact)] = None
    bundle.complex_sentences[sentence_id] = {"text": text, "triples": triples}
    references = get_field(FORMAT, where, record, "simple_references", list, required=False,
                           default=[])
    for index, reference in enumerate(references):
        if (not isinstance(reference, list) or len(reference) < 2
                or not all(isinstance(s, str) and s.strip() for s in reference)):
            raise fail(FORMAT, where, f'field "simple_references" entry {index} must be a '
                                      "list of at least two non-empty sentences")
        bundle.annotations.append(AnnotationRecord(
            worker=("import", stable_id(sentence_id, str(index), prefix="websplit-")),
            item_key=sentence_id, source="import",
            fields={"payload": {"simple_sentences": reference}, "text": " ".join(reference),
                    "provenance": {**where.provenance(), "id": raw_id, "reference": index}},
            where=where,
        ))
    return sentence_id
