"""Decontextualization: ``{split}.jsonl`` as the google-research release and its scorer read it.

One example per line: ``example_id`` (int), ``original_sentence``, ``page_title``,
``section_title`` (list), ``paragraph_text``, ``sentence_start_byte_offset``,
``sentence_end_byte_offset``, ``article_url`` and ``annotations``; each annotation carries
``example_id``, ``worker_id`` (anonymised), ``category``, ``original_sentence`` and
``decontextualized_sentence`` — every key ``language/decontext/decontext_util.py`` reads.

``example_id`` is the item's external id when it is an integer (imported examples keep theirs),
otherwise the item's primary key. Items without any exportable annotation are left out (they
are not annotated yet). Items with annotations are all written, whatever their number of
feasible (non-IMPOSSIBLE) annotations: the classification score uses every example, and the
official scorer itself drops examples with too few feasible annotations from the generation
scores (see docs/review-and-export.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

from .. import selectors_qc
from .base import SPLITS, Exporter, ExportFile, json_line

ITEMS_PER_BATCH = 1000


def example_id_of(item_id: int, external_id: str) -> int:
    return int(external_id) if external_id.isdigit() else item_id


def decontextualized_text(category: str, text: str, payload: dict, original: str) -> str:
    """The annotation's output sentence: the edited one (DONE), the original (UNNECESSARY),
    empty for IMPOSSIBLE unless the worker left text (the scorer ignores it then)."""
    sentence = (payload or {}).get("decontextualized_sentence") or text
    if category == "UNNECESSARY" and not sentence:
        return original
    return sentence or ""


class DecontextExporter(Exporter):
    format_name = "decontext"
    kinds = ("decontext",)

    def files(self) -> list[ExportFile]:
        return [ExportFile(f"{split}.jsonl", lambda s=split: self.lines(s)) for split in SPLITS]

    def lines(self, split: str) -> Iterator[str]:
        anonymous = selectors_qc.AnonymousIds()
        items = selectors_qc.decontext_item_rows(project=self.project, split=split)
        for batch in selectors_qc.batched(items.iterator(chunk_size=selectors_qc.CHUNK_SIZE),
                                          ITEMS_PER_BATCH):
            annotations = selectors_qc.item_annotation_rows(
                project=self.project, item_ids=[row[0] for row in batch]
            )
            by_item = {item_id: list(rows) for item_id, rows in
                       groupby(annotations, key=lambda row: row[0])}
            for (item_id, external_id, sentence, paragraph_index, start, end, title, url,
                 paragraphs) in batch:
                rows = by_item.get(item_id)
                if not rows:
                    continue
                example_id = example_id_of(item_id, external_id)
                paragraph = paragraphs[paragraph_index] if paragraph_index < len(paragraphs) else {}
                self.count()
                yield json_line({
                    "example_id": example_id,
                    "original_sentence": sentence,
                    "page_title": title,
                    "section_title": list(paragraph.get("section", [])),
                    "paragraph_text": paragraph.get("text", ""),
                    "sentence_start_byte_offset": start,
                    "sentence_end_byte_offset": end,
                    "article_url": url,
                    "annotations": [
                        {
                            "example_id": example_id,
                            "worker_id": anonymous.get(worker_id, provider, worker_external),
                            "category": category,
                            "original_sentence": sentence,
                            "decontextualized_sentence": decontextualized_text(
                                category, text, payload, sentence),
                        }
                        for (_, worker_id, provider, worker_external, category, text, payload,
                             _skipped) in rows
                    ],
                })
