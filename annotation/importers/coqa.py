"""CoQA JSON: ``data[]`` of ``{id, source, story, questions[], answers[]}``.

One dialogue per story (external id = CoQA ``id``; background = the story; title = its
``filename`` when present), turns matched by ``turn_id``, one Item per turn. No annotations.
"""

from __future__ import annotations

from .base import (
    Bundle,
    ItemRecord,
    SourceFile,
    Where,
    fail,
    get_field,
    progress,
    read_json_data_list,
    resolve_split,
)
from .dialogues import put_dialogue, put_turn

FORMAT = "coqa"
KIND = "rewrite"


def parse(files: list[SourceFile], *, split: str | None, kind: str, quiet: bool) -> Bundle:
    bundle = Bundle(kind=KIND)
    for file in files:
        file_split = resolve_split(FORMAT, file, split, None)
        stories = read_json_data_list(FORMAT, file)
        turns = 0
        for index, story in progress(enumerate(stories), total=len(stories), desc=file.name,
                                     quiet=quiet):
            turns += _parse_story(bundle, Where(file.name, record=f"data[{index}]"), story,
                                  file_split)
        bundle.rows[file.name] = turns
        bundle.file_splits[file.name] = file_split
    return bundle


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


def _parse_story(bundle: Bundle, where: Where, story, split: str) -> int:
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
    put_dialogue(bundle, FORMAT, where, dialogue_id,
                 {"title": title or dialogue_id, "section_title": source, "background": text,
                  "source": "coqa", "source_split": split})
    for order in sorted(questions):
        put_turn(bundle, FORMAT, where, dialogue_id, order, questions[order], answers[order])
        bundle.add_item(f"{dialogue_id}#{order}",
                        ItemRecord(split=split, group_key=dialogue_id, position=order,
                                   source=("turn", (dialogue_id, order))),
                        FORMAT, where)
    return len(questions)
