"""Conversational sluices: ``sluice_{train,val,test}_filtered.json`` in the processed files' shape.

The released processed files are pandas ``to_json`` output: one JSON object mapping a row key
to ``{"Input.question_1", "Input.answer_1", "Input.question_2", "Answer.full_question"}`` (in
that key order), compact separators, ASCII escapes and ``/`` escaped as ``\\/``. We write the
same bytes for the same rows. The dev split is called ``val`` as in the release.

The paper's cleaning is applied on the way out with the named operations of ``qc.cleaning``:
every split drops skipped resolutions and contexts whose Q1 has fewer than 3 words, and the
test split keeps each distinct answer once per context (each is a separate reference).
Row keys are positions ``0..n-1`` in the written file (the released files keep the raw CSV's
row numbers instead; the content of every row is the same).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import groupby

from qc import cleaning

from ..models import Annotation
from ..selectors import qc as qc_selectors
from .base import SPLITS, Exporter, ExportFile

FILE_SPLIT_NAMES = {"train": "train", "dev": "val", "test": "test"}


def pandas_json(value) -> str:
    """``json.dumps`` as pandas ``to_json`` writes it (compact, ASCII, escaped slashes)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).replace("/", "\\/")


def sluice_row(q1: str, a1: str, q2: str, text: str, skipped: bool) -> dict:
    return {cleaning.Q1: q1, cleaning.A1: a1, cleaning.Q2: q2,
            cleaning.ANSWER: "" if skipped else text}


def cleaned_rows(project, split: str) -> Iterator[dict]:
    """Exportable sluice rows of one split after the paper's cleaning, context by context."""
    rows = (
        row for row in qc_selectors.sluice_context_rows(project=project, split=split)
        if row[8] != Annotation.Review.REJECTED
    )
    for _, context_rows in groupby(rows, key=lambda row: (row[3], row[4], row[5])):
        context = [sluice_row(q1, a1, q2, text, skipped)
                   for _, _, _, q1, a1, q2, text, skipped, _, _ in context_rows]
        context = cleaning.clean(context)
        if split == "test":
            context = cleaning.dedupe_references(context)
        yield from context


class SluiceExporter(Exporter):
    format_name = "sluice"
    kinds = ("sluice",)

    def files(self) -> list[ExportFile]:
        return [ExportFile(f"sluice_{FILE_SPLIT_NAMES[split]}_filtered.json",
                           lambda s=split: self.chunks(s)) for split in SPLITS]

    def chunks(self, split: str) -> Iterator[str]:
        yield "{"
        for position, row in enumerate(cleaned_rows(self.project, split)):
            self.count()
            yield ("," if position else "") + pandas_json(str(position)) + ":" + pandas_json(row)
        yield "}"
