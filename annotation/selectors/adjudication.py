"""Reads for adjudication: every answer to one item, to compare side by side, and the words of
an answer a reference copies (``services/adjudication.py``)."""

from __future__ import annotations

from ..models import Annotation, Item, ItemReference

#: Answers shown for one item: enough for any redundancy the app launches (dev/test 5) many
#: times over; an item with more says so and shows the newest.
MAX_ITEM_ANSWERS = 200


def answer_words(annotation: Annotation) -> str:
    """The answer's text as a reference holds it: a split-and-rephrase answer's sentences
    joined by spaces, any other the stored text."""
    sentences = (annotation.payload or {}).get("simple_sentences")
    if isinstance(sentences, list):
        return " ".join(map(str, sentences))
    return annotation.text


def item_answers(item: Item) -> tuple[list[Annotation], int]:
    """(the item's answers, newest last, at most ``MAX_ITEM_ANSWERS``; how many there are):
    every state, superseded versions and problem reports included, so the reviewer sees the
    whole history (one statement each)."""
    answers = Annotation.objects.filter(item=item)
    total = answers.count()
    shown = list(answers.select_related("worker__user", "assignment")
                 .order_by("-id")[:MAX_ITEM_ANSWERS])
    shown.reverse()
    return shown, total


def item_reference(item: Item) -> ItemReference | None:
    return (ItemReference.objects.select_related("decided_by", "chosen__worker")
            .filter(item=item).first())
