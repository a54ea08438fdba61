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

import re

import pytest
from django.core.management import CommandError, call_command

from annotation import models
from annotation.exporters import ExportError, export_project
from tests.exports.builders import annotate, claire_project, workers

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
