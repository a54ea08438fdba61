"""Builders shared by the batch tests and the integration suite."""

from __future__ import annotations

import json

from annotation.models import Project, TaskKind
from annotation.services.batches import ANSWER_FIELD_PAYLOADS
from tests.factories import DialogueFactory, DialogueTurnFactory, ItemFactory, ProjectFactory


def plausibility_project(*, items: int, split: str = "dev", redundancy: dict | None = None,
                         slug: str = "claire") -> Project:
    project = ProjectFactory(slug=slug, kind=TaskKind.PLAUSIBILITY,
                             redundancy=redundancy or {"train": 2, "dev": 4, "test": 4},
                             reward_cents=20)
    for _ in range(items):
        ItemFactory(project=project, split=split)
    return project


def rewrite_project(*, dialogues: int, turns: int, split: str = "train") -> Project:
    project = ProjectFactory(slug="canard", kind=TaskKind.REWRITE,
                             redundancy={"train": 1, "dev": 1, "test": 1})
    for _ in range(dialogues):
        dialogue = DialogueFactory(project=project)
        for order in range(1, turns + 1):
            turn = DialogueTurnFactory(dialogue=dialogue, order=order,
                                       question=f"What happened in part {order}?")
            ItemFactory(project=project, split=split, group_key=dialogue.external_id,
                        position=order, filler=None, turn=turn)
    return project


def page_answer_fields(item_ids, rating: int = 4) -> dict[str, str]:
    """The fields our ExternalQuestion page posts to /mturk/externalSubmit for a plausibility
    HIT (besides assignmentId)."""
    return {ANSWER_FIELD_PAYLOADS: json.dumps({str(item_id): {"rating": rating}
                                               for item_id in item_ids})}
