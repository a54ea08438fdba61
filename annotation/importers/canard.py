"""CANARD: a JSON array of ``{History, QuAC_dialog_id, Question, Question_no, Rewrite}``.

History is ``[title, section, Q1, A1, ..., Q(n-1), A(n-1)]`` for ``Question_no == n``, so the
records of a dialogue reveal its turns; the last question keeps an empty answer unless a later
record shows it. Dialogue + turns + one Item per record (``<dialog_id>#<n>``) + the Rewrite as
an imported annotation. CANARD publishes no worker ids; a HIT was one dialogue, so each
dialogue gets one pseudonymous import worker (``canard-<hash of the dialogue id>``).
An exporter rebuilds History from the dialogue's title, section and turns 1..n-1.

``multiple_refs.json`` (a JSON array of ``[rewrite, rewrite]`` pairs: one question rewritten
by two workers, for the paper's human figure) is recognised by its shape. The release gives
neither the question nor its dialogue (the pairs are not dev questions), so each pair is a
one-turn dialogue ``multiple_refs-<index>`` with no title, section or question, whose item
carries the two rewrites as two annotations by two pseudonymous workers, first worker first.
Its split defaults to test; ``evaluate SLUG --human`` scores it.
"""

from __future__ import annotations

from collections.abc import Iterator

from .base import (
    GOLD_FIELD,
    AnnotationRecord,
    Bundle,
    ItemRecord,
    SourceFile,
    Stream,
    Where,
    fail,
    get_field,
    gold_answer_in,
    progress,
    read_json_items,
    resolve_split,
    stable_id,
)
from .dialogues import put_dialogue, put_turn

FORMAT = "canard"
KIND = "rewrite"


def parse(stream: Stream, files: list[SourceFile], *, split: str | None, kind: str,
          quiet: bool) -> Iterator[Bundle]:
    for file in files:
        records = read_json_items(FORMAT, file, top=list)
        first = next(records, None)
        # multiple_refs.json is an array of pairs: told by its first record (a list record
        # in an array of objects fails as record 0, as a whole reading of it did).
        pairs = isinstance(first, list)
        file_split = resolve_split(FORMAT, file, split, "test" if pairs else None)
        count = 0
        for index, record in progress(enumerate(_with_first(first, records)), total=None,
                                      desc=file.name, quiet=quiet):
            where = Where(file.name, record=str(index))
            if pairs and not isinstance(record, list):
                raise fail(FORMAT, Where(file.name, record="0"),
                           "each record must be a JSON object")
            if pairs:
                _parse_rewrite_pair(stream, where, index, record, file_split)
            else:
                _parse_record(stream, where, record, file_split)
            count += 1
            if stream.full():
                yield stream.take()
        stream.file_done(file, rows=count, split=file_split)
    yield stream.take()


def _with_first(first, rest: Iterator) -> Iterator:
    """``first`` (unless the array was empty) then ``rest``."""
    if first is not None:
        yield first
    yield from rest


def _parse_record(stream: Stream, where: Where, record, split: str) -> None:
    if not isinstance(record, dict):
        raise fail(FORMAT, where, "each record must be a JSON object")
    history = get_field(FORMAT, where, record, "History", list)
    dialogue_id = get_field(FORMAT, where, record, "QuAC_dialog_id", str)
    question = get_field(FORMAT, where, record, "Question", str)
    number = get_field(FORMAT, where, record, "Question_no", int)
    rewrite = get_field(FORMAT, where, record, "Rewrite", str)
    if not dialogue_id.strip():
        raise fail(FORMAT, where, 'field "QuAC_dialog_id" is empty')
    if number < 1:
        raise fail(FORMAT, where, f'field "Question_no" must be ≥ 1, not {number}')
    if len(history) != 2 * number:
        raise fail(FORMAT, where, f'field "History" has {len(history)} entries; '
                                  f"Question_no {number} needs {2 * number}")
    for position, entry in enumerate(history):
        if not isinstance(entry, str):
            raise fail(FORMAT, where, f'field "History" entry {position} must be a string')
    put_dialogue(stream, FORMAT, where, dialogue_id,
                 {"title": history[0], "section_title": history[1], "background": "",
                  "source": "canard", "source_split": split})
    for order in range(1, number):
        put_turn(stream, FORMAT, where, dialogue_id, order,
                 history[2 * order], history[2 * order + 1])
    put_turn(stream, FORMAT, where, dialogue_id, number, question, None)
    external_id = f"{dialogue_id}#{number}"
    if external_id in stream.items:
        raise fail(FORMAT, where, f"question {number} of {dialogue_id!r} appears twice")
    stream.add_item(external_id, ItemRecord(split=split, group_key=dialogue_id,
                                            position=number,
                                            source=("turn", (dialogue_id, number)),
                                            gold_answer=gold_answer_in(
                                                FORMAT, where, KIND, record.get(GOLD_FIELD))),
                    FORMAT, where)
    stream.bundle.annotations.append(AnnotationRecord(
        worker=("import", stable_id(dialogue_id, prefix="canard-")),
        item_key=external_id, source="import",
        fields={"payload": {"rewrite": rewrite}, "text": rewrite,
                "provenance": {**where.provenance(), "QuAC_dialog_id": dialogue_id,
                               "Question_no": number}},
        where=where,
    ))


def _parse_rewrite_pair(stream: Stream, where: Where, index: int, pair: list,
                        split: str) -> None:
    """One pair of ``multiple_refs.json``: a question-less item with two rewrites."""
    if len(pair) != 2 or not all(isinstance(rewrite, str) and rewrite.strip()
                                 for rewrite in pair):
        raise fail(FORMAT, where, "a multiple_refs pair must be two non-empty rewrites")
    dialogue_id = f"multiple_refs-{index}"
    put_dialogue(stream, FORMAT, where, dialogue_id,
                 {"title": "", "section_title": "", "background": "", "source": "canard",
                  "source_split": split})
    put_turn(stream, FORMAT, where, dialogue_id, 1, "", None)
    external_id = f"{dialogue_id}#1"
    stream.add_item(external_id, ItemRecord(split=split, group_key=dialogue_id, position=1,
                                            source=("turn", (dialogue_id, 1))), FORMAT, where)
    for worker, rewrite in enumerate(pair, start=1):
        stream.bundle.annotations.append(AnnotationRecord(
            worker=("import", stable_id(dialogue_id, str(worker), prefix="canard-")),
            item_key=external_id, source="import",
            fields={"payload": {"rewrite": rewrite}, "text": rewrite,
                    "provenance": {**where.provenance(), "worker": worker}},
            where=where,
        ))
