"""Conversational sluices: the raw MTurk CSV or the processed JSON of the release.

Raw: ``,Input.question_1,Input.answer_1,Input.question_2,Answer.full_question`` (the first
column is the row number). Processed: an object keyed by row number whose values carry the
same four fields. A context (Q1, A1, Q2) of one split is one Dialogue with turns Q1/A1 and
Q2, and one Item on turn 2; both have the external id ``<context id>-<split>``, the context
id being a stable hash of the three texts (also the Item's group key). Every row is an
imported annotation, and keeps the split of the file it came from.

Splits: ``--split`` wins, else the file name (``val`` is dev). The raw train/dev file
(``conv_sluice_train_dev.csv``: its name names two splits) is split as the release split it,
``qc.cleaning.train_dev_splits``: the rows up to the 300th row the paper's cleaning keeps are
dev (the released val), the rest train. Any other file without a split in its name is train.

A context in several splits is an Item per split. The release has 7 contexts in both the
train/dev and the test file and one in both val and train; ``annotation.services.imports``
reports such cross-split contexts after every sluice import as a leakage warning, and
``make_splits --rule sluice`` offers the leakage-free alternative.

The release has no worker ids. Each annotation gets its own pseudonymous worker, a hash of
(split, context, answer, how many identical answers to that context came before in the file):
the same annotation read from the raw and the processed file of one split is then the same
(worker, item) and is stored once, while two identical answers in one file, or in two splits
(train row 3144 and test row 254 of the processed files), stay two annotations.

Skips: the raw files mark them with an empty answer or ``*not enough info*`` (also seen
without the asterisks); such rows are stored with ``skipped=True``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from qc.cleaning import train_dev_splits

from .base import (
    AnnotationRecord,
    Bundle,
    ItemRecord,
    SourceFile,
    Stream,
    Where,
    fail,
    get_field,
    progress,
    read_delimited,
    read_json_items,
    resolve_split,
    split_from_name,
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
    """The stable id of a sluice context in any split: the group key of its Items."""
    return stable_id(question_1, answer_1, question_2, prefix="sluice-")


def add_context(stream: Stream, fields: dict, split: str) -> tuple[str, str]:
    """Dialogue, two turns and the Item of one context in one split (the first time the
    stream meets it); returns the context id and their key."""
    question_1, answer_1 = fields["Input.question_1"], fields["Input.answer_1"]
    question_2 = fields["Input.question_2"]
    context = context_id(question_1, answer_1, question_2)
    key = f"{context}-{split}"
    if key not in stream.keys:
        stream.keys.add(key)
        bundle = stream.bundle
        bundle.dialogues[key] = {"title": "", "section_title": "", "background": "",
                                 "source": "sluice", "source_split": split}
        bundle.turns[(key, 1)] = {"question": question_1, "answer": answer_1}
        bundle.turns[(key, 2)] = {"question": question_2, "answer": ""}
        bundle.items[key] = ItemRecord(split=split, group_key=context, position=2,
                                       source=("turn", (key, 2)))
    return context, key


def is_train_dev_file(name: str) -> bool:
    """The release's raw train/dev file, or any file whose name names train and dev/val."""
    lowered = name.lower()
    return split_from_name(name) is None and "train" in lowered and (
        "dev" in lowered or "val" in lowered)


def _rows(file: SourceFile) -> Iterator[tuple[Where, str, dict]]:
    """(where, row id, row) of a raw CSV or a processed JSON file, read as a stream."""
    if file.name.lower().endswith(".json"):
        return _json_rows(file)
    return ((Where(file.name, line=line), row.get("", ""), row)
            for line, row in read_delimited(FORMAT, file, delimiter=",", required=FIELDS))


def parse(stream: Stream, files: list[SourceFile], *, split: str | None, kind: str,
          quiet: bool) -> Iterator[Bundle]:
    for file in files:
        if split is None and is_train_dev_file(file.name):
            # The release's split needs the rows up to the 300th kept one: a first reading
            # gives each row's split (a short string per row), the second the rows.
            row_splits = iter(train_dev_splits(row for _, _, row in _rows(file)))
            file_split = ""  # several: the ImportRecord names none
        else:
            file_split = resolve_split(FORMAT, file, split, "train")
            row_splits = None
        seen: dict[tuple[str, int], int] = {}
        count = 0
        for where, row_id, row in progress(_rows(file), total=None, desc=file.name,
                                           quiet=quiet):
            row_split = file_split if row_splits is None else next(row_splits)
            if not row["Input.question_2"].strip():
                raise fail(FORMAT, where, 'column "Input.question_2" is empty')
            context, item_key = add_context(stream, row, row_split)
            answer = row["Answer.full_question"]
            # How many identical answers to this item came before (a digest: not the text).
            occurrence = seen.get((item_key, hash(answer)), 0)
            seen[(item_key, hash(answer))] = occurrence + 1
            stream.bundle.annotations.append(AnnotationRecord(
                worker=("import", stable_id(row_split, context, answer, str(occurrence),
                                            prefix="sluice-")),
                item_key=item_key, source="import",
                fields={"payload": {"full_question": answer, "skipped": is_skip(answer)},
                        "text": answer, "skipped": is_skip(answer),
                        "provenance": {**where.provenance(), "row": row_id}},
                where=where,
            ))
            count += 1
            if stream.full():
                yield stream.take()
        stream.file_done(file, rows=count, split=file_split)
    yield stream.take()


def _json_rows(file: SourceFile) -> Iterator[tuple[Where, str, dict]]:
    for key, value in read_json_items(FORMAT, file, top=dict):
        where = Where(file.name, record=key)
        if not isinstance(value, dict):
            raise fail(FORMAT, where, "each row must be an object")
        # null is how the processed train file writes the one empty (skipped) answer it kept.
        if "Answer.full_question" in value and value["Answer.full_question"] is None:
            value = {**value, "Answer.full_question": ""}
        row = {name: get_field(FORMAT, where, value, name, str) for name in FIELDS}
        yield where, key, row
