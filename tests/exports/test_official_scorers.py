"""Format facts and numbers of the official scorers, pinned without their code.

Checked by running the scorers themselves on our exports (docs/review-and-export.md,
"Checked against the official scorers"):

- CLAIRE / SemEval-2022 Task 7, acidAnn/semeval2022_task7_starter_kit ``src/scorer.py``: reads
  predictions and references with ``pd.read_csv(sep="\\t", header=None, names=["Id",
  "Label"])`` and runs ``format_checker_for_submission`` on both: ``Id`` splits on ``_``
  into an integer sentence id and a filler number 1-5; labels are IMPLAUSIBLE / NEUTRAL /
  PLAUSIBLE; scores go through ``float``; both files have the same ids, each once.
  ``format_checker_for_dataset`` wants the data file's header exactly, integer ids, one of
  four resolved patterns and the gap ``______`` in every sentence.
- Decontextualization, google-research/language ``language/decontext/eval.py`` (``eval_util``):
  fails on an example with a single feasible annotation (unless IMPOSSIBLE is the majority),
  normalises text before match / change / SARI, length ratio in characters, median by
  character length, SARI on whitespace tokens of the normalised text with reference weights,
  a prediction with every one of its four keys for every example.
"""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import CommandError, call_command

from annotation import models
from annotation.exporters import ExportError, export_project
from tests.exports.builders import annotate, claire_project, workers
from tests.factories import DocumentFactory, ItemFactory, ProjectFactory, TargetSentenceFactory

pytestmark = pytest.mark.django_db

CLAIRE_HEADER = ("Id\tResolved pattern\tArticle title\tSection header\tPrevious context\t"
                 "Sentence\tFollow-up context\tFiller1\tFiller2\tFiller3\tFiller4\tFiller5")
FILLER_ID = re.compile(r"^[0-9]+_[1-5]$")


# --- CLAIRE ---------------------------------------------------------------------------------


def test_claire_files_have_the_shape_the_starter_kit_checks(tmp_path):
    project, items = claire_project()
    crowd = workers(2)
    for item, ratings in zip(items[:4], [(5, 4), (1, 1), (3, 4), (2, 3)], strict=True):
        for worker, rating in zip(crowd, ratings, strict=True):
            annotate(item, worker, rating=rating)
    export_project(project=project, format_name="claire", out_dir=tmp_path)

    data = (tmp_path / "dev_data.tsv").read_text().splitlines()
    assert data[0] == CLAIRE_HEADER  # a header, exactly these columns in this order
    row = data[1].split("\t")
    assert len(row) == 12 and row[0].isdigit() and row[1] == "IMPLICIT REFERENCE"
    assert "______" in row[5]

    labels = [line.split("\t") for line in (tmp_path / "dev_labels.tsv").read_text().splitlines()]
    scores = [line.split("\t") for line in (tmp_path / "dev_scores.tsv").read_text().splitlines()]
    # No header; two columns; the same ids in the same order, each once; 7_5 has no rating.
    assert [key for key, _ in labels] == [key for key, _ in scores] == ["7_1", "7_2", "7_3", "7_4"]
    assert all(FILLER_ID.match(key) for key, _ in labels)
    assert [label for _, label in labels] == ["PLAUSIBLE", "IMPLAUSIBLE", "NEUTRAL",
                                             "IMPLAUSIBLE"]  # 2.5 is IMPLAUSIBLE
    assert [value for _, value in scores] == ["4.5", "1", "3.5", "2.5"]
    assert all(isinstance(float(value), float) for _, value in scores)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("external_id", "7a", "integer sentence id"),
    ("external_id", "7_1", "integer sentence id"),
    ("resolved_pattern", "ELLIPSIS", "resolved pattern"),
    ("sentence", "2. Get surgery at 3 to 6 months old.", "no gap"),
])
def test_claire_export_refuses_what_the_starter_kit_rejects(tmp_path, field, value, message):
    project, items = claire_project()
    annotate(items[0], workers(1)[0], rating=4)
    models.ClozeItem.objects.filter(project=project).update(**{field: value})
    with pytest.raises(ExportError, match=message):
        export_project(project=project, format_name="claire", out_dir=tmp_path)
    with pytest.raises(CommandError, match=message):
        call_command("export_data", project.slug, "--format", "claire", "--out", str(tmp_path))


# --- decontextualization --------------------------------------------------------------------


def decontext_item(project, example_id, original, split="dev"):
    paragraph = "Intro. " + original
    document = DocumentFactory(project=project, title="P",
                               paragraphs=[{"section": ["S"], "text": paragraph}])
    target = TargetSentenceFactory(document=document, start_byte=7,
                                   end_byte=len(paragraph.encode()), text=original)
    return ItemFactory(project=project, target_sentence=target, filler=None, split=split,
                       external_id=str(example_id), group_key=document.external_id)


def add_annotations(item, crowd, annotations):
    for worker, (category, text) in zip(crowd, annotations, strict=False):
        annotate(item, worker, category=category, text=text,
                 payload={"category": category, "decontextualized_sentence": text})


def test_decontext_dev_and_test_leave_out_what_the_official_scorer_cannot_score(tmp_path,
                                                                                capsys):
    project = ProjectFactory(slug="decontext-scorable", kind=models.TaskKind.DECONTEXT)
    crowd = workers(3)
    cases = {
        1: [("DONE", "Zinc is brittle.")],                           # 1 feasible: out
        2: [("DONE", "Zinc is brittle."), ("IMPOSSIBLE", "")],       # 1 feasible, tie: out
        3: [("DONE", "Zinc is brittle."), ("UNNECESSARY", "")],      # human + 1 reference
        4: [("IMPOSSIBLE", ""), ("IMPOSSIBLE", ""), ("DONE", "x")],  # skipped by generation
        5: [("IMPOSSIBLE", "")],                                     # skipped by generation
    }
    for split in ("dev", "train"):
        for number, rows in cases.items():
            item = decontext_item(project, number + (100 if split == "train" else 0),
                                  "It is brittle.", split=split)
            add_annotations(item, crowd, rows)
    call_command("export_data", project.slug, "--format", "decontext", "--out", str(tmp_path))
    out = capsys.readouterr().out
    assert "dev.jsonl: left out 2 example(s) with a single feasible annotation" in out
    assert "(e.g. 1, 2)" in out
    ids = {split: [json.loads(line)["example_id"]
                   for line in (tmp_path / f"{split}.jsonl").read_text().splitlines()]
           for split in ("dev", "train")}
    assert ids["dev"] == [3, 4, 5]
    assert ids["train"] == [101, 102, 103, 104, 105]  # train is written whole, as released
