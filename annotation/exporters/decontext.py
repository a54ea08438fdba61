"""Decontextualization: ``{split}.jsonl`` as the google-research release and its scorer read it.

One example per line: ``example_id`` (int), ``original_sentence``, ``page_title``,
``section_title`` (list), ``paragraph_text``, ``sentence_start_byte_offset``,
``sentence_end_byte_offset``, ``article_url`` and ``annotations``; each annotation carries
``example_id``, ``worker_id`` (anonymised), ``category``, ``original_sentence`` and
``decontextualized_sentence`` — every key ``language/decontext/decontext_util.py`` reads —
and, when its edits are known (a DONE annotation with edit operations), the README's
fine-grained ``changes`` (``[{"new", "old": {"start_ind", "end_ind"}}]``). IMPOSSIBLE
annotations have an empty ``decontextualized_sentence``, UNNECESSARY ones the original.

Byte offsets are written end exclusive (``paragraph_text.encode()[start:end]`` is the
sentence), except for sentences imported from a file that gave the end inclusive, which get
it back that way (see ``annotation.importers.decontext``).

``example_id`` is the item's external id when it is an integer (imported examples keep theirs),
otherwise the item's primary key. Items without any exportable annotation are left out (they
are not annotated yet).

``dev.jsonl`` / ``test.jsonl`` are the files the official scorer (google-research/language,
``language/decontext/eval.py``) reads, and it cannot score an example with exactly one feasible
(non-IMPOSSIBLE) annotation unless IMPOSSIBLE is the majority: its ``process_annotation`` keeps
the example, takes that one sentence as the human output, leaves no reference, and
``_compute_raw_sari_score`` raises ``ValueError('Annotation cannot be empty.')`` for the whole
file. Those examples (e.g. a dev item with one DONE so far, or one DONE and one IMPOSSIBLE) are
left out of dev/test and counted in :attr:`Exporter.notes`. Every other annotated example is
written: a majority-IMPOSSIBLE example is skipped by the generation scores but used by the
classification score. ``train.jsonl`` keeps every annotated example, as the release does (its
train examples have a single annotation; the scorer is not meant for it).

A dev/test file in which no scored example has all its references different from the
original sentence makes ``eval.py`` stop with ``IndexError`` ("Sentence Match on Changed
Examples" averages an empty list): the export says so in a note (``evaluate`` reports
``match_edited`` as null with the same message).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

from qc.aggregation import DECONTEXT_IMPOSSIBLE, decontext_human_output
from qc.evaluation import references_all_change

from ..importers.decontext import END_INCLUSIVE, changes_from_operations
from ..selectors import qc as qc_selectors
from .base import SPLITS, Exporter, ExportFile, json_line

ITEMS_PER_BATCH = 1000
SCORED_SPLITS = ("dev", "test")
NO_CHANGED_EXAMPLE = (
    "{file}: none of its {n} scored example(s) has all its references different from the "
    "original sentence, so \"match on changed examples\" is undefined: the official eval.py "
    "stops on this file with IndexError (evaluate reports match_edited as null)")


def example_id_of(item_id: int, external_id: str) -> int:
    return int(external_id) if external_id.isdigit() else item_id


def decontextualized_text(category: str, text: str, payload: dict, original: str) -> str:
    """The annotation's output sentence: the edited one (DONE), the original (UNNECESSARY),
    empty for IMPOSSIBLE (whatever text the worker's page sent along)."""
    if category == DECONTEXT_IMPOSSIBLE:
        return ""
    sentence = (payload or {}).get("decontextualized_sentence") or text
    if category == "UNNECESSARY" and not sentence:
        return original
    return sentence or ""


def annotation_record(example_id: int, worker: str, category: str, text: str, payload: dict,
                      original: str) -> dict:
    """One exported annotation; ``changes`` only when its edits are known."""
    record = {"example_id": example_id, "worker_id": worker, "category": category,
              "original_sentence": original,
              "decontextualized_sentence": decontextualized_text(category, text, payload,
                                                                 original)}
    operations = (payload or {}).get("operations") or []
    if category == "DONE" and operations:
        record["changes"] = changes_from_operations(operations)
    return record


class DecontextExporter(Exporter):
    format_name = "decontext"
    kinds = ("decontext",)

    def files(self) -> list[ExportFile]:
        return [ExportFile(f"{split}.jsonl", lambda s=split: self.lines(s)) for split in SPLITS]

    def lines(self, split: str) -> Iterator[str]:
        anonymous = qc_selectors.AnonymousIds()
        left_out: list[str] = []
        scored = changed = 0
        items = qc_selectors.decontext_item_rows(project=self.project, split=split)
        for batch in qc_selectors.batched(items.iterator(chunk_size=qc_selectors.CHUNK_SIZE),
                                          ITEMS_PER_BATCH):
            annotations = qc_selectors.item_annotation_rows(
                project=self.project, item_ids=[row[0] for row in batch]
            )
            by_item = {item_id: list(rows) for item_id, rows in
                       groupby(annotations, key=lambda row: row[0])}
            for (item_id, external_id, sentence, paragraph_index, start, end, title, url,
                 paragraphs) in batch:
                rows = by_item.get(item_id)
                if not rows:
                    continue
                if split in SCORED_SPLITS:
                    human = decontext_human_output(
                        sentence, [(row[4], decontextualized_text(row[4], row[5] or "", row[6],
                                                                  sentence)) for row in rows])
                    if human is not None and not human.scorable:
                        left_out.append(external_id)
                        continue
                    if human is not None:
                        scored += 1
                        changed += references_all_change(sentence, human.references)
                example_id = example_id_of(item_id, external_id)
                paragraph = paragraphs[paragraph_index] if paragraph_index < len(paragraphs) else {}
                inclusive = bool(paragraph.get(END_INCLUSIVE))
                self.count()
                yield json_line({
                    "example_id": example_id,
                    "original_sentence": sentence,
                    "page_title": title,
                    "section_title": list(paragraph.get("section", [])),
                    "paragraph_text": paragraph.get("text", ""),
                    "sentence_start_byte_offset": start,
                    "sentence_end_byte_offset": end - 1 if inclusive else end,
                    "article_url": url,
                    "annotations": [
                        annotation_record(example_id,
                                          anonymous.get(worker_id, provider, worker_external),
                                          category, text, payload, sentence)
                        for (_, worker_id, provider, worker_external, category, text, payload,
                             _skipped) in rows
                    ],
                })
        if left_out:
            self.note(f"{split}.jsonl: left out {len(left_out)} example(s) with a single feasible "
                      f"annotation, which the official scorer cannot score "
                      f"(e.g. {', '.join(left_out[:5])})")
        if scored and not changed:
            self.note(NO_CHANGED_EXAMPLE.format(file=f"{split}.jsonl", n=scored))
