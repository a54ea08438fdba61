"""An import of N rows runs a number of queries independent of N (no query per row)."""

from __future__ import annotations

import csv
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation, ComplexSentence

from .conftest import run_import

pytestmark = pytest.mark.django_db


def write_websplit(path, n):
    with path.open("w") as handle:
        for i in range(n):
            handle.write(json.dumps({
                "id": f"s{i}", "complex": f"Sentence {i} about thing {i}.",
                "triples": [[f"Thing_{i}", "type", "Example"], [f"Thing_{i}", "id", str(i)]],
                "simple_references": [[f"Thing {i} is an example.", f"Its id is {i}."]],
            }) + "\n")


def write_sluice(path, n):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", "Input.question_1", "Input.answer_1", "Input.question_2",
                         "Answer.full_question"])
        for i in range(n):
            writer.writerow([i, f"Who won game {i // 3}?", "The Bears", "when",
                             f"When did the Bears win game {i // 3}?" if i % 5 else ""])


@pytest.mark.parametrize(("fmt", "writer", "name"), [
    ("websplit", write_websplit, "train.jsonl"), ("sluice", write_sluice, "test.csv")])
def test_query_count_does_not_grow_with_rows(tmp_path, fmt, writer, name):
    counts = []
    for n in (10, 300):
        path = tmp_path / f"{n}_{name}"
        writer(path, n)
        with CaptureQueriesContext(connection) as captured:
            run_import(fmt, path, project=f"{fmt}-{n}")
        counts.append(len(captured))
    assert counts[0] == counts[1], counts
    assert counts[0] < 40
    assert Annotation.objects.filter(project__slug=f"{fmt}-300").count() == 300


def test_websplit_query_count_with_existing_rows(tmp_path):
    """A second, overlapping import still reads each model once."""
    small, large = tmp_path / "a_train.jsonl", tmp_path / "b_train.jsonl"
    write_websplit(small, 50)
    write_websplit(large, 400)
    run_import("websplit", small, project="grow")
    with CaptureQueriesContext(connection) as captured:
        run_import("websplit", large, project="grow")
    assert len(captured) < 40
    assert ComplexSentence.objects.filter(project__slug="grow").count() == 400
