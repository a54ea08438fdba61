"""Named cleaning operations of the conversational sluice paper (seed 004).

Rows are dicts with the MTurk batch columns (:data:`Q1`, :data:`A1`, :data:`Q2`,
:data:`ANSWER`), as in the released raw CSVs; every function returns a new list and keeps
the input order.

How the released files relate (checked in tests/qc/test_cleaning.py):

- ``conv_sluice_train_dev.csv`` (3,780 rows, raw row ids 0-3880) -> drop skipped, drop Q1 < 3
  words -> the first 300 remaining rows in file order are *val* (raw row ids 0-341), the rest
  *train* (:func:`train_dev_splits`). This gives val 300, exactly the released file, and train
  3,081; the released train file has 3,082 because it kept one skipped row (raw id 3780,
  empty answer). The release only dropped Q1 < 3 words: every other skip of the file has a
  shorter Q1 (so the released val is the same under either rule); the paper's rule, which we
  apply, also drops skipped rows, hence the one row.
- ``conv_sluice_test.csv`` (1,200 rows, 3 per context) -> drop skipped, drop Q1 < 3 words,
  keep each distinct answer once per context (Q1, A1, Q2) -> 793 rows, exactly the
  released test file (each unique answer is a separate reference).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path

Q1 = "Input.question_1"
A1 = "Input.answer_1"
Q2 = "Input.question_2"
ANSWER = "Answer.full_question"
ROW_ID = "row_id"
COLUMNS = (Q1, A1, Q2, ANSWER)  # a processed file's row, in the release's key order

MIN_Q1_WORDS = 3
VAL_SIZE = 300
# Answers an annotator gave instead of pressing skip; the released test CSV has five.
SKIP_MARKERS = frozenset({"", "*not enough info*"})

SluiceRow = dict


def read_sluice_csv(path: str | Path) -> list[SluiceRow]:
    """Rows of a raw MTurk results CSV; the unnamed first column becomes :data:`ROW_ID`."""
    with Path(path).open(newline="", encoding="utf-8") as handle:
        rows = []
        for line_number, record in enumerate(csv.DictReader(handle), start=2):
            missing = [column for column in (Q1, A1, Q2, ANSWER) if record.get(column) is None]
            if missing:
                raise ValueError(f"{path}, line {line_number}: missing column(s) {missing}")
            row = {column: record[column] for column in (Q1, A1, Q2, ANSWER)}
            row[ROW_ID] = record.get("", str(line_number - 2))
            rows.append(row)
    return rows


def is_skipped(answer: str | None) -> bool:
    """Whether the annotator skipped: empty answer or the "*not enough info*" marker."""
    return answer is None or answer.strip().lower() in SKIP_MARKERS


def drop_skipped(rows: Iterable[SluiceRow]) -> list[SluiceRow]:
    """Drop rows whose answer is a skip (see :func:`is_skipped`)."""
    return [row for row in rows if not is_skipped(row[ANSWER])]


def drop_short_q1(rows: Iterable[SluiceRow], min_words: int = MIN_Q1_WORDS) -> list[SluiceRow]:
    """Drop rows whose Q1 has fewer than ``min_words`` whitespace-separated words."""
    return [row for row in rows if len(row[Q1].split()) >= min_words]


def context_key(row: SluiceRow) -> tuple[str, str, str]:
    """The QA context a sluice belongs to: (Q1, A1, Q2) exactly as given."""
    return (row[Q1], row[A1], row[Q2])


def dedupe_references(rows: Iterable[SluiceRow]) -> list[SluiceRow]:
    """Keep the first row of every (context, answer) pair: identical answers are one reference."""
    seen: set = set()
    kept = []
    for row in rows:
        key = (context_key(row), row[ANSWER])
        if key not in seen:
            seen.add(key)
            kept.append(row)
    return kept


def clean(rows: Iterable[SluiceRow]) -> list[SluiceRow]:
    """The paper's filters: drop skipped sluices and sluices whose Q1 has < 3 words."""
    return drop_short_q1(drop_skipped(rows))


def train_dev_splits(rows: Sequence[SluiceRow], val_size: int = VAL_SIZE) -> list[str]:
    """The release's split of the raw train/dev file, one of "dev"/"train" per row.

    Rows up to and including the ``val_size``-th row that :func:`clean` keeps are "dev" (the
    release's val, raw row ids 0-341), every later row "train". Rows cleaning drops take
    the split of where they stand; they never reach an export.
    """
    splits, kept = [], 0
    for row in rows:
        splits.append("dev" if kept < val_size else "train")
        if clean([row]):
            kept += 1
    return splits


def clean_split(rows: Iterable[SluiceRow], split: str) -> list[SluiceRow]:
    """What the export keeps of one split: :func:`clean`, and in test each distinct answer
    once per context (:func:`dedupe_references`; each is a separate reference)."""
    cleaned = clean(rows)
    return dedupe_references(cleaned) if split == "test" else cleaned


def cross_split_contexts(
    rows: Iterable[tuple[str, str]],
) -> dict[str, tuple[str, ...]]:
    """Contexts found in more than one split: ``{context: sorted splits}``.

    ``rows`` are ``(context, split)``; a context is anything hashable naming (Q1, A1, Q2),
    e.g. its id. Such a context leaks: a system can see its test reference in training.
    """
    splits: dict[str, set[str]] = {}
    for context, split in rows:
        splits.setdefault(context, set()).add(split)
    return {context: tuple(sorted(found)) for context, found in splits.items()
            if len(found) > 1}


def references_by_context(rows: Iterable[SluiceRow]) -> dict[tuple[str, str, str], list[str]]:
    """Answers grouped per context, in input order (the multi-reference test set)."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for row in rows:
        grouped.setdefault(context_key(row), []).append(row[ANSWER])
    return grouped
