"""Adjudication: a reviewer settles the reference of one item after comparing its answers.

``item_reference_set`` is the one writer of ``ItemReference`` (the adjudication page calls it;
any other entry point must too). The reference is either one of the item's answers, picked
(its text or rating is copied, so a later change of the answer does not change the
reference), or a text / rating the reviewer wrote. Each call records a ``reference_set``
audit row (``StatusEvent``) with the actor, the old and new reference and what it came from;
the row's own ``decided_by`` / ``decided_at`` say who settled it last and when. Exports write
the references to ``adjudicated.jsonl`` (``exporters/adjudicated.py``).
"""

from __future__ import annotations

import math

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ..models import Annotation, Item, ItemReference, TaskKind
from ..selectors.adjudication import answer_words
from .audit import record_status_event

#: Answers a reviewer may pick as the reference: work that counts, or a released dataset's.
PICKABLE_STATES = (Annotation.State.COUNTED, Annotation.State.IMPORTED)
MAX_REFERENCE_CHARS = 5000


def _written_reference(item: Item, text: str, rating: str) -> tuple[str, float | None]:
    if item.project.kind == TaskKind.PLAUSIBILITY:
        try:
            value = float(rating)
        except ValueError:
            raise ValidationError({"rating": "a rating from 1 to 5"}) from None
        if not math.isfinite(value) or not 1 <= value <= 5:
            raise ValidationError({"rating": "a rating from 1 to 5"})
        return "", value
    text = text.strip()
    if not text:
        raise ValidationError({"text": "write the reference, or pick one of the answers"})
    if len(text) > MAX_REFERENCE_CHARS:
        raise ValidationError({"text": f"at most {MAX_REFERENCE_CHARS} characters"})
    return text, None


def item_reference_set(*, item_id: int, actor, answer_id: int | None = None, text: str = "",
                       rating: str = "", note: str = "") -> ItemReference:
    """Settle item ``item_id``'s reference: answer ``answer_id`` of that item (counted or
    imported), or the written ``text`` (text kinds) / ``rating`` (plausibility, 1–5).
    ``ValidationError`` names the field and changes nothing."""
    with transaction.atomic():
        item = (Item.objects.select_for_update(of=("self",)).select_related("project")
                .filter(pk=item_id).first())
        if item is None:
            raise ValidationError({"item": f"no item {item_id}"})
        chosen = None
        if answer_id is not None:
            chosen = Annotation.objects.filter(pk=answer_id, item=item).first()
            if chosen is None:
                raise ValidationError({"answer": f"answer {answer_id} is not an answer to "
                                                 f"item {item.external_id}"})
            if chosen.state not in PICKABLE_STATES:
                raise ValidationError({"answer": f"answer {answer_id} is "
                                                 f"{chosen.get_state_display()}: pick a "
                                                 "counted or imported answer"})
            new_text = "" if chosen.rating is not None else answer_words(chosen)
            new_rating = chosen.rating
        else:
            new_text, new_rating = _written_reference(item, text, rating)
        previous = ItemReference.objects.filter(item=item).first()
        old = "" if previous is None else (previous.text or f"{previous.rating:g}")
        reference, _ = ItemReference.objects.update_or_create(
            item=item, defaults={"chosen": chosen, "text": new_text, "rating": new_rating,
                                 "note": note.strip()[:2000], "decided_by": actor,
                                 "decided_at": timezone.now()})
        new = new_text or f"{new_rating:g}"
        record_status_event(kind="reference_set", annotation=chosen, actor=actor,
                            old=old[:20], new=new[:20],
                            detail={"item": item.pk, "item_external_id": item.external_id,
                                    "answer": chosen.pk if chosen else None,
                                    "written": chosen is None, "old": old, "new": new})
    return reference
