"""Shared by the dialogue formats: collect turns by (dialogue, order) and catch conflicts."""

from __future__ import annotations

from .base import Bundle, Where, fail


def put_dialogue(bundle: Bundle, fmt: str, where: Where, external_id: str, fields: dict) -> None:
    known = bundle.dialogues.get(external_id)
    if known is not None and known != fields:
        raise fail(fmt, where, f"dialogue {external_id!r}: title/section differ from an "
                               f"earlier record ({known['title']!r}, "
                               f"{known['section_title']!r})")
    bundle.dialogues[external_id] = fields


def put_turn(bundle: Bundle, fmt: str, where: Where, dialogue_id: str, order: int,
             question: str, answer: str | None) -> None:
    """Record turn ``order``; ``answer=None`` means "not revealed here" and fills nothing."""
    key = (dialogue_id, order)
    known = bundle.turns.get(key)
    if known is None:
        bundle.turns[key] = {"question": question, "answer": answer or ""}
        return
    if known["question"] != question:
        raise fail(fmt, where, f"dialogue {dialogue_id!r} turn {order}: question {question!r} "
                               f"differs from an earlier record ({known['question']!r})")
    if answer is not None:
        if known["answer"] and known["answer"] != answer:
            raise fail(fmt, where, f"dialogue {dialogue_id!r} turn {order}: answer "
                                   f"{answer!r} differs from an earlier record "
                                   f"({known['answer']!r})")
        known["answer"] = answer
