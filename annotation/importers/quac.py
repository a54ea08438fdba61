"""QuAC v0.2 JSON: ``data[].paragraphs[].qas[]`` → dialogues, turns and one Item per turn.

A paragraph is one dialogue (its ``id``, e.g. ``C_..._0`` — the ``QuAC_dialog_id`` CANARD
uses, so CANARD rewrites imported later attach to the same turns). The answer is
``orig_answer.text``, else the first of ``answers``. No annotations.
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

FORMAT = "quac"
KIND = "rewrite"


def parse(stream: Stream, files: list[SourceFile], *, split: str | None, kind: str,
          quiet: bool) -> Iterator[Bundle]:
    for file in files:
        file_split = resolve_split(FORMAT, file, split, None)
        turns = 0
        for index, entry in progress(enumerate(read_json_items(FORMAT, file, top=dict,
                                                                data=True)),
                                     total=None, desc=file.name, quiet=quiet):
            turns += _parse_article(stream, file.name, index, entry, file_split)
            if stream.full():
                yield stream.take()
        stream.file_done(file, rows=turns, split=file_split)
    yield stream.take()


def _parse_article(stream: Stream, name: str, index: int, article, split: str) -> int:
    where = Where(name, record=f"data[{index}]")
    if not isinstance(article, dict):
        raise fail(FORMAT, where, "each entry of data must be an object")
    title = get_field(FORMAT, where, article, "title", str)
    section = get_field(FORMAT, where, article, "section_title", str, required=False,
                        default="")
    background = get_field(FORMAT, where, article, "background", str, required=False,
                           default="")
    paragraphs = get_field(FORMAT, where, article, "paragraphs", list)
    turns = 0
    for p_index, paragraph in enumerate(paragraphs):
        p_where = Where(name, record=f"data[{index}].paragraphs[{p_index}]")
        if not isinstance(paragraph, dict):
            raise fail(FORMAT, p_where, "each paragraph must be an object")
        dialogue_id = get_field(FORMAT, p_where, paragraph, "id", str)
        qas = get_field(FORMAT, p_where, paragraph, "qas", list)
        put_dialogue(stream, FORMAT, p_where, dialogue_id,
                     {"title": title, "section_title": section, "background": background,
                      "source": "quac", "source_split": split})
        for order, qa in enumerate(qas, start=1):
            q_where = Where(name, record=f"data[{index}].paragraphs[{p_index}].qas[{order - 1}]")
            if not isinstance(qa, dict):
                raise fail(FORMAT, q_where, "each qa must be an object")
            question = get_field(FORMAT, q_where, qa, "question", str)
            get_field(FORMAT, q_where, qa, "id", str)
            put_turn(stream, FORMAT, q_where, dialogue_id, order, question,
                     _answer(q_where, qa))
            stream.add_item(f"{dialogue_id}#{order}",
                            ItemRecord(split=split, group_key=dialogue_id, position=order,
                                       source=("turn", (dialogue_id, order))),
                            FORMAT, q_where)
            turns += 1
    return turns


def _answer(where: Where, qa: dict) -> str:
    original = qa.get("orig_answer")
    if original is not None:
        if not isinstance(original, dict):
            raise fail(FORMAT, where, 'field "orig_answer" must be an object')
        return get_field(FORMAT, where, original, "text", str)
    answers = get_field(FORMAT, where, qa, "answers", list)
    if not answers:
        raise fail(FORMAT, where, 'field "orig_answer" is missing and "answers" is empty')
    if not isinstance(answers[0], dict):
        raise fail(FORMAT, where, 'field "answers" must hold objects')
    return get_field(FORMAT, where, answers[0], "text", str)
