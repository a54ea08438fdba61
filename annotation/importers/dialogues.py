"""Shared by the dialogue formats: collect turns by (dialogue, order) and catch conflicts
across the whole stream (``Stream`` keeps digests of what earlier records said)."""

from __future__ import annotations

from .base import Stream, Where, _TextNeeded, fail


def put_dialogue(stream: Stream, fmt: str, where: Where, external_id: str,
                 fields: dict) -> None:
    digest = hash(tuple(fields.items()))
    known = stream.dialogues.get(external_id)
    if known is None:
        stream.dialogues[external_id] = (fields["title"], fields["section_title"], digest)
        stream.bundle.dialogues[external_id] = fields
    elif known[2] != digest:
        raise fail(fmt, where, f"dialogue {external_id!r}: title/section differ from an "
                               f"earlier record ({known[0]!r}, {known[1]!r})")


def put_turn(stream: Stream, fmt: str, where: Where, dialogue_id: str, order: int,
             question: str, answer: str | None) -> None:
    """Record turn ``order``; ``answer=None`` means "not revealed here" and fills nothing.

    A turn handed out in an earlier bundle whose answer a later record reveals is handed
    out again with it (the writer fills the stored turn's empty answer)."""
    key = (dialogue_id, order)
    known = stream.turns.get(key)
    if known is None:
        stream.turns[key] = (stream.text(key, question), stream.text(key, answer or None))
        stream.bundle.turns[key] = {"question": question, "answer": answer or ""}
        return
    known_question, known_answer = known
    if known_question != stream.text(key, question):
        if key not in stream.texts_of:
            raise _TextNeeded(key)
        raise fail(fmt, where, f"dialogue {dialogue_id!r} turn {order}: question {question!r} "
                               f"differs from an earlier record ({known_question!r})")
    if answer is not None:
        if known_answer is not None and known_answer != stream.text(key, answer):
            if key not in stream.texts_of:
                raise _TextNeeded(key)
            raise fail(fmt, where, f"dialogue {dialogue_id!r} turn {order}: answer "
                                   f"{answer!r} differs from an earlier record "
                                   f"({known_answer!r})")
        if answer:
            stream.turns[key] = (known_question, stream.text(key, answer))
            stream.bundle.turns.setdefault(key, {"question": question})["answer"] = answer
