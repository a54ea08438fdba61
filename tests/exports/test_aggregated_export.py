"""aggregated.jsonl beside a dataset export: only with worker-quality aggregation on, and the
released files stay byte-identical either way."""

from __future__ import annotations

import json

import pytest

from annotation.exporters import export_project
from annotation.models import Project
from tests.factories import annotate, claire_sample, decontext_sample, workers

pytestmark = pytest.mark.django_db

RATINGS = [[5, 4, 4, 5], [1, 2, 1, 1], [3, 3, 4, 3], [4, 4, 4, 3], [3, 3, 3, 1]]


def rated_claire():
    project, items = claire_sample()
    crowd = workers(4)
    for item, item_ratings in zip(items, RATINGS, strict=True):
        for worker, rating in zip(crowd, item_ratings, strict=True):
            annotate(item, worker, rating=rating, payload={"rating": rating})
    return project, items


def files_of(folder):
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_released_files_are_byte_identical_and_the_aggregate_sits_beside_them(tmp_path):
    project, items = rated_claire()
    # A gold item is never in the released files (tests/gold/test_gold_not_exported.py), so it
    # is gold before both exports.
    items[0].is_gold, items[0].gold_answer = True, 5
    items[0].save()
    export_project(project=project, format_name="claire", out_dir=tmp_path / "off")
    off = files_of(tmp_path / "off")
    assert "aggregated.jsonl" not in off

    Project.objects.filter(pk=project.pk).update(flag_settings={"aggregation": "model"})
    project.refresh_from_db()
    export_project(project=project, format_name="claire", out_dir=tmp_path / "on")
    on = files_of(tmp_path / "on")
    assert {name: data for name, data in on.items() if name != "aggregated.jsonl"} == off
    records = [json.loads(line) for line in on["aggregated.jsonl"].decode().splitlines()]
    assert [record["item"] for record in records] == [item.external_id for item in items[1:]]
    assert {record["method"] for record in records} <= {"bias_noise", "mean"}
    assert all(record["reason"].startswith(record["method"]) for record in records)
    assert {record["split"] for record in records} == {"dev"}


def test_decontext_aggregate_names_the_vote_when_dawid_skene_is_not_checked(tmp_path):
    project, item = decontext_sample()
    items = [item]
    crowd = workers(3)
    for item in items:
        for worker, category in zip(crowd, ["DONE", "DONE", "IMPOSSIBLE"], strict=True):
            annotate(item, worker, category=category, text=item.target_sentence.text)
    Project.objects.filter(pk=project.pk).update(flag_settings={"aggregation": "model"})
    project.refresh_from_db()
    export_project(project=project, format_name="decontext", out_dir=tmp_path)
    records = [json.loads(line) for line in
               (tmp_path / "aggregated.jsonl").read_text().splitlines()]
    assert len(records) == len(items)
    assert {(r["aggregated"], r["method"], r["confidence"]) for r in records} == {
        ("DONE", "majority_vote", None)}
    assert "no gold item has answers" in records[0]["reason"]
