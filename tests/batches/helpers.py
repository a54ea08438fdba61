"""Builders shared by the batch tests and the integration suite."""

from __future__ import annotations

import json
import uuid
from urllib.parse import parse_qsl, urlsplit

from annotation.models import Project, TaskKind
from annotation.services.batches.collect import ANSWER_FIELD_PAYLOADS
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


def page_work(client, task_url: str, rating: int = 4) -> dict[str, str]:
    """What our ExternalQuestion page does for a plausibility HIT, through Django's test client:
    open the task URL MTurk hands the worker, save every item, finish. Returns the fields the
    page then posts to MTurk's externalSubmit (besides assignmentId)."""
    parts = urlsplit(task_url)
    page = client.get(parts.path, dict(parse_qsl(parts.query)))
    assert page.status_code == 200, page.content.decode()[:500]
    config = page.context["config"]
    for item in config["items"]:
        body = {"item_id": item["item_id"], "client_token": uuid.uuid4().hex,
                "task_token": config["task_token"], "payload": {"rating": rating}}
        saved = client.post(config["submit_url"], json.dumps(body),
                            content_type="application/json")
        assert saved.status_code == 200, saved.content
    done = client.post(config["finish_url"], json.dumps({"task_token": config["task_token"]}),
                       content_type="application/json")
    assert done.status_code == 200, done.content
    return {"summary": done.json()["summary"], **done.json()["answer_fields"]}
