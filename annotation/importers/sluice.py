"""Conversational sluices: the raw MTurk CSV or the processed JSON of the release.

Raw: ``,Input.question_1,Input.answer_1,Input.question_2,Answer.full_question`` (the first
column is the row number). Processed: an object keyed by row number whose values carry the
same four fields. A context (Q1, A1, Q2) is one Dialogue (external id = a stable hash of the
three) with turns Q1/A1 and Q2, and one Item on turn 2. Every row is an imported annotation.

The release has no worker ids. Each annotation gets its own pseudonymous worker, a hash of
(split, context, answer, how many identical answers to that context came before in the file):
the same annotation read from the raw and the processed file of one split is then the same
(worker, item) and is stored once, while two identical answers in one file, or in two splits
(train row 3144 and test row 254 of the processed files), stay two annotations.

A context seen in several splits (e.g. "Anyone else? / yes / Who") is one Item; its split is
the one of the first file that brought it.

Skips: the raw files mark them with an empty answer or ``*not enough info*`` (also seen
without the asterisks); such rows are stored with ``skipped=True``.
"""

from __future__ import annotations

import re

from .base import (
    AnnotationRecord,
    Bundle,
    ItemRecord,
    SourceFile,
    Where,
    fail,
    get_field,
    progress,
    read_delimited,
    read_json,
    resolve_split,
    stable_id,
)

FORMAT = "sluice"
KIND = "sluice"
FIELDS = ("Input.question_1", "Input.answer_1", "Input.question_2", "Answer.full_question")
SKIP_ANSWERS = frozenset({"", "not enough info", "not enough information", "skip", "skipped"})


def is_skip(answer: str) -> bool:
    """True for the answers the sluice annotators used to skip an item."""
    return re.sub(r"[*\s.]+", " ", answer).strip().lower() in SKIP_ANSWERS


def context_id(question_1: str, answer_1: str, question_2: str) -> str:
    """The stable external id of a sluice context, shared by its Dialogue and Item."""
    return stable_id(question_1, answer_1, question_2, prefix="sluice-")


def add_context(bundle: Bundle, where: Where, fields: dict, split: str) -> str:
    """Dialogue, two turns and the Item of one context; returns the context id."""
    question_1, answer_1 = fields["Input.question_1"], fields["Input.answer_1"]
    question_2 = fields["Input.question_2"]
    context = context_id(question_1, answer_1, question_2)
    if context not in bundle.dialogues:
        bundle.dialogues[context] = {"title": "", "section_title": "", "background": "",
                                     "source": "sluice", "source_split": split}
        bundle.turns[(context, 1)] = {"question": question_1, "answer": answer_1}
        bundle.turns[(context, 2)] = {"question": question_2, "answer": ""}
        bundle.items[context] = ItemRecord(split=split, group_key=context, position=2,
                                           source=("turn", (context, 2)))
    return context


def parse(files: list[SourceFile], *, split: str | None, kind: str, quiet: bool) -> Bundle:
    bundle = Bundle(kind=KIND)
    for file in files:
        file_split = resolve_split(FORMAT, file, split, "train")
        if file.name.lower().endswith(".json"):
            rows = list(_json_rows(file))
        else:
            rows = [(Where(file.name, line=line), row.get("", ""), row)
                    for line, row in read_delimited(FORMAT, file, delimiter=",",
                                                    required=FIELDS)]
        seen: dict[tuple[str, str], int] = {}
        for where, row_id, row in progress(rows, total=len(rows), desc=file.name,
                                           quiet=quiet):
            if not row["Input.question_2"].strip():
                raise fail(FORMAT, where, 'column "Input.question_2" is empty')
            context = add_context(bundle, where, row, file_split)
            answer = row["Answer.full_question"]
            occurrence = seen.get((context, answer), 0)
            seen[(context, answer)] = occurrence + 1
            bundle.annotations.append(AnnotationRecord(
                worker=("import", stable_id(file_split, context, answer, str(occurrence),
                                            prefix="sluice-")),
                item_key=context, source="import",
                fields={"payload": {"full_question": answer, "skipped": is_skip(answer)},
                        "text": answer, "skipped": is_skip(answer),
                        "provenance": {**where.provenance(), "row": row_id}},
                where=where,
            ))
        bundle.rows[file.name] = len(rows)
        bundle.file_splits[file.name] = file_split
    return bundle


def _json_rows(file: SourceFile):
    document = read_json(FORMAT, file)
    if not isinstance(document, dict):
        raise fail(FORMAT, Where(file.name), "expected a JSON object keyed by row number")
    for key, value in document.items():
        where = Where(file.name, record=key)
        if not isinstance(value, dict):
            raise fail(FORMAT, where, "each row must be an object")
        # null is how the processed train file writes the one empty (skipped) answer it kept.
        if "Answer.full_question" in value and value["Answer.full_question"] is None:
            value = {**value, "Answer.full_question": ""}
        row = {name: get_field(FORMAT, where, value, name, str) for name in FIELDS}
        yield where, key, row
