"""CoQA JSON: ``data[]`` of ``{id, source, story, questions[], answers[]}``.

One dialogue per story (external id = CoQA ``id``; background = the story; title = its
``filename`` when present), turns matched by ``turn_id``, one Item per turn. No annotations.
"""

from __future__ import annotations

from collections.abc import Iterator

from .base import (
    Bundle,
    ItemRecord,
    SourceFile,
    Stream,
    Where,
    fail,
    get_field,
    progress,
    read_json_items,
    resolve_split,
)
from .dialogues import put_dialogue, put_turn

FORMAT = "coqa"
KIND = "rewrite"


def parse(stream: Stream, files: list[SourceFile], *, split: str | None, kind: str,
          quiet: bool) -> Iterator[Bundle]:
    for file in files:
        file_split = resolve_split(FORMAT, file, split, None)
        turns = 0
        for index, entry in progress(enumerate(read_json_items(FORMAT, file, top=dict,
                                                                data=True)),
                                     total=None, desc=file.name, quiet=quiet):
            turns += _parse_story(stream, Where(file.name, record=f"data[{index}]"), entry,
                                  file_split)
            if stream.full():
                yield stream.take()
        stream.file_done(file, rows=turns, split=file_split)
    yield stream.take()


def _turns_by_id(where: Where, story: dict, name: str) -> dict[int, str]:
    found: dict[int, str] = {}
    for index, entry in enumerate(get_field(FORMAT, where, story, name, list)):
        entry_where = Where(where.file, record=f"{where.record}.{name}[{index}]")
        if not isinstance(entry, dict):
            raise fail(FORMAT, entry_where, f"each entry of {name} must be an object")
        turn_id = get_field(FORMAT, entry_where, entry, "turn_id", int)
        if turn_id < 1 or turn_id in found:
            raise fail(FORMAT, entry_where, f'field "turn_id" {turn_id} is not a new '
                                            f"positive turn number")
        found[turn_id] = get_field(FORMAT, entry_where, entry, "input_text", str)
    return found


def _parse_story(stream: Stream, where: Where, story, split: str) -> int:
    if not isinstance(story, dict):
        raise fail(FORMAT, where, "each entry of data must be an object")
    dialogue_id = get_field(FORMAT, where, story, "id", str)
    text = get_field(FORMAT, where, story, "story", str)
    source = get_field(FORMAT, where, story, "source", str)
    title = get_field(FORMAT, where, story, "filename", str, required=False, default="")
    questions = _turns_by_id(where, story, "questions")
    answers = _turns_by_id(where, story, "answers")
    if set(questions) != set(answers):
        unmatched = sorted(set(questions) ^ set(answers))
        raise fail(FORMAT, where, f"questions and answers differ in turn_id {unmatched}")
    put_dialogue(stream, FORMAT, where, dialogue_id,
                 {"title": title or dialogue_id, "section_title": source, "background": text,
                  "source": "coqa", "source_split": split})
    for order in sorted(questions):
        put_turn(stream, FORMAT, where, dialogue_id, order, questions[order], answers[order])
        stream.add_item(f"{dialogue_id}#{order}",
                        ItemRecord(split=split, group_key=dialogue_id, position=order,
                                   source=("turn", (dialogue_id, order))),
                        FORMAT, where)
    return len(questions)
