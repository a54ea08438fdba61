"""Reads for worker-quality aggregation and agreement intervals (``services.qc_models``)."""

from __future__ import annotations

from ..models import Project


def item_splits(*, project: Project) -> dict[int, str]:
    """item id -> split of every item of ``project``."""
    return dict(project.items.values_list("id", "split"))


def gold_answers(*, project: Project) -> dict:
    """item id -> gold answer (a list of accepted answers as a tuple) of the gold items."""
    gold = project.items.filter(is_gold=True, gold_answer__isnull=False).values_list(
        "id", "gold_answer")
    return {item_id: tuple(answer) if isinstance(answer, list) else answer
            for item_id, answer in gold}
