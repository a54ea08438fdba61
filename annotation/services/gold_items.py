"""Marking gold items: the one service the import column, the console's gold form and the
admin call to give an item a known answer (``services.gold`` says what gold items do)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from ..models import Annotation, Item, TaskKind
from .annotations import item_filled_marks_kept
from .audit import record_status_event

RATING_KINDS = (TaskKind.PLAUSIBILITY,)
CATEGORY_KINDS = (TaskKind.DECONTEXT,)


def gold_answer_validate(kind: str, answer) -> object:
    """``answer`` as stored for a gold item of a ``kind`` project, or ValueError saying what a
    gold answer of that task is: a 1–5 rating (plausibility), a category (decontext) or a text
    (the text tasks), or a list of such accepted answers."""
    accepted = answer if isinstance(answer, list) else [answer]
    if not accepted:
        raise ValueError("gold answer: the list of accepted answers is empty")
    if kind in RATING_KINDS:
        if not all(isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5
                   for value in accepted):
            raise ValueError("gold answer: a plausibility gold answer is a whole rating from "
                             "1 to 5, or a list of them")
    elif kind in CATEGORY_KINDS:
        categories = Annotation.Category.values
        if not all(value in categories for value in accepted):
            raise ValueError(f"gold answer: a decontext gold answer is one of "
                             f"{', '.join(categories)}, or a list of them")
    elif not all(isinstance(value, str) and value.strip() for value in accepted):
        raise ValueError("gold answer: a gold answer of this task is a non-empty text, or a "
                         "list of them")
    return answer


def gold_answer_from_text(kind: str, text: str):
    """A gold answer typed as text (a delimited file's cell, a form's field): a rating or
    ratings (``3|4``), a category or categories, or the text itself for the text tasks."""
    text = text.strip()
    if kind in RATING_KINDS:
        try:
            values = [int(part) for part in text.split("|")]
        except ValueError:
            raise ValueError("gold answer: a plausibility gold answer is a whole rating from "
                             "1 to 5, or several separated by |") from None
        return values[0] if len(values) == 1 else values
    if kind in CATEGORY_KINDS:
        values = [part.strip() for part in text.split("|")]
        return values[0] if len(values) == 1 else values
    return text


@transaction.atomic
def item_gold_set(*, item: Item, answer, actor=None) -> Item:
    """Make ``item`` a gold item with ``answer`` (validated, ValidationError naming the field),
    or, with ``answer`` None, an ordinary item again. Answers already given to it stay; a
    gold item is never filled (its mark follows)."""
    if answer is not None:
        try:
            answer = gold_answer_validate(item.project.kind, answer)
        except ValueError as error:
            raise ValidationError({"gold_answer": [str(error)]}) from None
    with item_filled_marks_kept([item.pk]):
        Item.objects.filter(pk=item.pk).update(is_gold=answer is not None, gold_answer=answer)
    record_status_event(kind="item_gold", actor=actor, old="gold" if item.is_gold else "",
                        new="gold" if answer is not None else "",
                        detail={"project": item.project.slug, "item": item.external_id})
    item.refresh_from_db(fields=["is_gold", "gold_answer", "filled"])
    return item
