"""Conversational sluices: ``sluice_{train,val,test}_filtered.json`` in the processed files' shape.

The released processed files are pandas ``to_json`` output: one JSON object mapping a row key
to ``{"Input.question_1", "Input.answer_1", "Input.question_2", "Answer.full_question"}`` (in
that key order), compact separators, ASCII escapes and ``/`` escaped as ``\\/``. We write the
same bytes for the same rows. The dev split is called ``val`` as in the release.

The paper's cleaning is applied on the way out (``qc.cleaning.clean_split``): every split
drops skipped resolutions and contexts whose Q1 has fewer than 3 words, and the test split
keeps each distinct answer once per context (each is a separate reference). Rows come in
annotation order, i.e. the imported file's row order (the release's order). Row keys are as
in the release: train and val keep the raw CSV's row numbers (the importer keeps them in the
provenance, ``row``) when every row of the file has a distinct one; test, and any split with
collected work, is numbered ``0..n-1``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

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


ROW_KEY = "row_key"  # the raw CSV row number an imported row came with


def cleaned_rows(project, split: str) -> list[dict]:
    """Exportable sluice rows of one split after the paper's cleaning, in annotation order.

    A split of a sluice project is small (the release's largest has 3,780 rows), so it is
    cleaned as one list: test references are deduplicated over the whole split.
    """
    rows = []
    for (_, _, _, q1, a1, q2, text, skipped, status,
         provenance) in qc_selectors.sluice_context_rows(project=project, split=split,
                                                         with_gold=False):
        if status != Annotation.Review.REJECTED:
            rows.append({**sluice_row(q1, a1, q2, text, skipped),
                         ROW_KEY: (provenance or {}).get("row")})
    return cleaning.clean_split(rows, split)


def row_keys(rows: list[dict], split: str) -> list[str]:
    """The release's keys: raw row numbers in train and val when all rows have distinct ones,
    else (and always in test, which the release renumbered) positions."""
    keys = [row[ROW_KEY] for row in rows]
    if split != "test" and all(keys) and len(set(keys)) == len(keys):
        return [str(key) for key in keys]
    return [str(position) for position in range(len(rows))]


class SluiceExporter(Exporter):
    format_name = "sluice"
    kinds = ("sluice",)

    def files(self) -> list[ExportFile]:
        return [ExportFile(f"sluice_{FILE_SPLIT_NAMES[split]}_filtered.json",
                           lambda s=split: self.chunks(s)) for split in SPLITS]

    def chunks(self, split: str) -> Iterator[str]:
        rows = cleaned_rows(self.project, split)
        yield "{"
        for position, (key, row) in enumerate(zip(row_keys(rows, split), rows, strict=True)):
            self.count()
            row = {name: row[name] for name in cleaning.COLUMNS}
            yield ("," if position else "") + pandas_json(key) + ":" + pandas_json(row)
        yield "}"
