"""WebSplit references: ``{split}.jsonl``, one line per complex sentence (defined by Unpack).

Each line: ``complex_id`` (the source's id), ``complex_sentence``, ``triples`` (the RDF facts
as ``[subject, property, object]``, sorted) and ``references``: every exportable simple-sentence
sequence written for it, in annotation order, as ``{"worker_id": <anonymised>,
"simple_sentences": [...]}``. Evaluation takes all references of a complex sentence as its
multi-reference set (the paper's averaged multi-reference BLEU). Complex sentences without a
reference are still written (their triples matter for leakage checks) with ``references: []``.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

from ..selectors import qc as qc_selectors
from .base import SPLITS, Exporter, ExportFile, json_line

ITEMS_PER_BATCH = 1000


def simple_sentences_of(text: str, payload: dict) -> list[str]:
    sentences = (payload or {}).get("simple_sentences")
    if isinstance(sentences, list):
        return [str(sentence) for sentence in sentences]
    return [text] if text else []


class WebSplitExporter(Exporter):
    format_name = "websplit"
    kinds = ("split_rephrase",)

    def files(self) -> list[ExportFile]:
        return [ExportFile(f"{split}.jsonl", lambda s=split: self.lines(s)) for split in SPLITS]

    def lines(self, split: str) -> Iterator[str]:
        anonymous = qc_selectors.AnonymousIds()
        items = qc_selectors.complex_sentence_rows(project=self.project, split=split)
        for batch in qc_selectors.batched(items.iterator(chunk_size=qc_selectors.CHUNK_SIZE),
                                          ITEMS_PER_BATCH):
            annotations = qc_selectors.item_annotation_rows(
                project=self.project, item_ids=[row[0] for row in batch]
            )
            by_item = {item_id: list(rows) for item_id, rows in
                       groupby(annotations, key=lambda row: row[0])}
            facts = qc_selectors.fact_rows(complex_sentence_ids=[row[1] for row in batch])
            triples = {sentence_id: [[s, p, o] for _, s, p, o in rows] for sentence_id, rows in
                       groupby(facts, key=lambda row: row[0])}
            for item_id, sentence_id, external_id, text in batch:
                references = [
                    {"worker_id": anonymous.get(worker_id, provider, worker_external),
                     "simple_sentences": simple_sentences_of(answer, payload)}
                    for (_, worker_id, provider, worker_external, _category, answer, payload,
                         skipped) in by_item.get(item_id, [])
                    if not skipped
                ]
                self.count()
                yield json_line({"complex_id": external_id, "complex_sentence": text,
                                 "triples": triples.get(sentence_id, []),
                                 "references": references})
