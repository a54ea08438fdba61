"""Answers to gold items are never exported as data, in any format: a project whose item is
gold exports exactly what it exports with that item (and its answers) deleted, byte for
byte; the same item as an ordinary one is exported."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.exporters import EXPORTERS, export_project
from annotation.models import Item, TaskKind
from tests.factories import (
    annotate,
    canard_sample,
    claire_sample,
    decontext_sample,
    sluice_sample,
    websplit_sample,
    workers,
)

pytestmark = pytest.mark.django_db


def answered_sample(kind: str) -> tuple[object, Item]:
    """A small answered project of ``kind`` and the item the test makes gold."""
    crowd = workers(2)
    if kind == TaskKind.PLAUSIBILITY:
        project, items = claire_sample()
        for worker in crowd:
            for item in items:
                annotate(item, worker, rating=4, payload={"rating": 4})
        return project, items[2]
    if kind == TaskKind.REWRITE:
        project, items = canard_sample()
        for worker in crowd:
            for item in items:
                annotate(item, worker, text=f"Rewrite of turn {item.position} by {worker.pk}")
        return project, items[2]
    if kind == TaskKind.SLUICE:
        project, items = sluice_sample()
        for worker in crowd:
            annotate(items["c1"], worker, text="Who went to the fair?")
            annotate(items["c2"], worker, text="When were the two matches?")
        return project, items["c1"]
    if kind == TaskKind.DECONTEXT:
        project, item = decontext_sample()
        for worker in crowd:
            annotate(item, worker, category="UNNECESSARY", payload={"category": "UNNECESSARY"})
        return project, item
    project, item = websplit_sample()
    for worker in crowd:
        annotate(item, worker, text="Alan Bean was born in Wheeler. He was a test pilot.",
                 payload={"simple_sentences": ["Alan Bean was born in Wheeler.",
                                               "He was a test pilot."]})
    return project, item


def exported(project, format_name: str, out_dir: Path) -> dict[str, bytes]:
    export_project(project=project, format_name=format_name, out_dir=out_dir)
    return {str(path.relative_to(out_dir)): path.read_bytes()
            for path in sorted(out_dir.rglob("*")) if path.is_file()}


CASES = [(format_name, kind) for format_name, exporter in EXPORTERS.items()
         for kind in (exporter.kinds or TaskKind.values)]


@pytest.mark.parametrize(("format_name", "kind"), CASES)
def test_gold_items_leave_no_trace_in_exports(tmp_path, format_name, kind):
    project, chosen = answered_sample(kind)
    ordinary = exported(project, format_name, tmp_path / "ordinary")
    gold_answer = {TaskKind.PLAUSIBILITY: 4, TaskKind.DECONTEXT: "UNNECESSARY"}.get(kind, "x")
    Item.objects.filter(pk=chosen.pk).update(is_gold=True, gold_answer=gold_answer)
    as_gold = exported(project, format_name, tmp_path / "gold")
    Item.objects.filter(pk=chosen.pk).delete()
    without = exported(project, format_name, tmp_path / "without")
    assert as_gold == without
    assert ordinary != without  # the item's answers are exported when it is not gold
