"""CANARD: ``{split}.json``, a JSON array of ``{History, QuAC_dialog_id, Question, Question_no,
Rewrite}`` records written exactly as the released files (4-space indent, sorted keys, ASCII
escapes, no final newline).

``History`` is ``[title, section, Q1, A1, …, Q(n-1), A(n-1)]`` for question ``n``, so
``len(History) == 2 * Question_no``. Answers are the source's own text: QuAC's CANNOTANSWER is
kept as it is in the source (only the annotator's screen shows "I don't know."). One record per
exportable rewrite: a question rewritten by several workers (dev/test redundancy) gives one
record per rewrite, in annotation order. Skipped or empty rewrites are not records.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..selectors import qc as qc_selectors
from .base import SPLITS, Exporter, ExportFile, json_array

# Dialogues per round trip: a QuAC dialogue has about 7 turns, so a batch is a few thousand rows.
DIALOGUES_PER_BATCH = 300


class CanardExporter(Exporter):
    format_name = "canard"
    kinds = ("rewrite",)

    def files(self) -> list[ExportFile]:
        return [ExportFile(f"{split}.json", lambda s=split: json_array(self.records_of(s)))
                for split in SPLITS]

    def records_of(self, split: str) -> Iterator[dict]:
        dialogue_ids = qc_selectors.canard_dialogue_ids(project=self.project, split=split)
        for batch in qc_selectors.batched(
            dialogue_ids.iterator(chunk_size=qc_selectors.CHUNK_SIZE), DIALOGUES_PER_BATCH
        ):
            turns: dict[int, dict[int, tuple]] = {}
            for (dialogue_id, order, question, answer, external_id, title,
                 section) in qc_selectors.dialogue_turn_rows(dialogue_ids=batch):
                turns.setdefault(dialogue_id, {})[order] = (question, answer, external_id,
                                                            title, section)
            annotations = qc_selectors.turn_annotation_rows(
                project=self.project, dialogue_ids=batch, split=split
            )
            for dialogue_id, order, text, skipped, *_ in annotations:
                if skipped or not text.strip():
                    continue
                dialogue_turns = turns[dialogue_id]
                question, _, external_id, title, section = dialogue_turns[order]
                history = [title, section]
                for previous in range(1, order):
                    if previous not in dialogue_turns:
                        raise ValueError(f"dialogue {external_id} has no turn {previous}: "
                                         "CANARD history needs every earlier turn")
                    history += [dialogue_turns[previous][0], dialogue_turns[previous][1]]
                self.count()
                yield {"History": history, "QuAC_dialog_id": external_id,
                       "Question": question, "Question_no": order, "Rewrite": text}
