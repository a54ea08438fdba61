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
from tests.factories import (
    DocumentFactory,
    ItemFactory,
    ProjectFactory,
    TargetSentenceFactory,
    annotate,
    claire_sample,
    workers,
)

pytestmark = pytest.mark.django_db

CLAIRE_HEADER = ("Id\tResolved pattern\tArticle title\tSection header\tPrevious context\t"
                 "Sentence\tFollow-up context\tFiller1\tFiller2\tFiller3\tFiller4\tFiller5")
FILLER_ID = re.compile(r"^[0-9]+_[1-5]$")


# --- CLAIRE ---------------------------------------------------------------------------------


def test_claire_files_have_the_shape_the_starter_kit_checks(tmp_path):
    project, items = claire_sample()
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
    project, items = claire_sample()
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


@pytest.fixture
def scored_project():
    """Three dev examples whose official scores were printed by eval.py --word_tokenizer=
    whitespace on the same file (docs/review-and-export.md)."""
    project = ProjectFactory(slug="decontext-official", kind=models.TaskKind.DECONTEXT)
    crowd = workers(3)
    founded = "He founded the company in 1998."
    add_annotations(decontext_item(project, 101, founded), crowd, [
        ("DONE", "Bill Gates founded the company Microsoft in 1998."),
        ("DONE", "Bill Gates founded the company in 1998."),
        ("UNNECESSARY", ""),
    ])
    # By characters "Zoë Ødegaard sang it." (21) is shorter than "Zoe Odegaard sang it!!"
    # (22) and is the human output; by UTF-8 bytes (23 vs 22) it would be the other one.
    add_annotations(decontext_item(project, 102, "Zoë sang it."), crowd, [
        ("DONE", "Zoë Ødegaard sang it."), ("DONE", "Zoe Odegaard sang it!!"),
        ("IMPOSSIBLE", ""),
    ])
    add_annotations(decontext_item(project, 103, "It was there."), crowd, [
        ("IMPOSSIBLE", ""), ("IMPOSSIBLE", ""), ("DONE", "The ship was there."),
    ])
    predictions = [
        {"example_id": 101, "category": "DONE", "original_sentence": founded,
         "decontextualized_sentence": "Bill Gates founded the company Microsoft in 1998."},
        {"example_id": 102, "category": "UNNECESSARY", "original_sentence": "Zoë sang it.",
         "decontextualized_sentence": "Zoë sang it."},
        {"example_id": 103, "category": "IMPOSSIBLE", "original_sentence": "It was there.",
         "decontextualized_sentence": ""},
    ]
    return project, predictions


def run_evaluate(capsys, *args) -> dict:
    call_command("evaluate", *args)
    return json.loads(capsys.readouterr().out)


def test_decontext_evaluate_gives_the_official_scorers_numbers(scored_project, tmp_path, capsys):
    project, predictions = scored_project
    system_file = tmp_path / "predictions.jsonl"
    system_file.write_text("".join(json.dumps(row) + "\n" for row in predictions))
    result = run_evaluate(capsys, project.slug, "--system", str(system_file), "--split", "dev")
    system, human = result["system"], result["human"]
    # 103 has an IMPOSSIBLE majority: N=2 for the generation scores, 3 for classification.
    assert result["n_examples"] == 3 and system["n_examples"] == human["n_examples"] == 2
    # eval.py printed for the predictions: ratio 1.29, changed 50.0, match 50.0, on changed
    # 0.0 over 1, ADD tp .75 fn 1.00 fp .75 (p .50 r .43 f1 .46), DEL tp .25 fn .50 fp .25.
    assert system["length_increase"] == pytest.approx((49 / 31 + 1) / 2)  # characters
    assert system["percent_edited"] == 0.5
    assert system["match_all"] == 0.5
    assert system["match_edited"] == 0.0 and system["n_match_edited"] == 1
    assert system["sari_add"] == pytest.approx({"tp": 0.75, "fp": 0.75, "fn": 1.0,
                                                "precision": 0.5, "recall": 0.75 / 1.75,
                                                "f1": 0.4615384615384615})
    assert system["sari_delete"] == pytest.approx({"tp": 0.25, "fp": 0.25, "fn": 0.5,
                                                   "precision": 0.5, "recall": 1 / 3, "f1": 0.4})
    # Human (median-length) output: ratio 1.50, changed 100.0, match 0.0, ADD p .33 r .29.
    assert human["length_increase"] == pytest.approx((39 / 31 + 21 / 12) / 2)
    assert human["percent_edited"] == 1.0 and human["match_all"] == 0.0
    assert human["sari_add"]["precision"] == pytest.approx(1 / 3)
    assert human["sari_add"]["recall"] == pytest.approx(2 / 7)
    assert human["sari_delete"]["f1"] == pytest.approx(0.4)
    # Impossible Category Ratio 0.33, Annotation Match Score 0.78 (7 of 9 annotations).
    assert result["classification"] == pytest.approx({"impossible_ratio": 1 / 3,
                                                      "binary_agreement": 7 / 9})


def test_decontext_repeat_never_matches_on_changed_examples(scored_project, capsys):
    project, _ = scored_project
    result = run_evaluate(capsys, project.slug, "--baseline", "repeat", "--split", "dev")
    # 101 has the original among its references (matched), 102 has not (the "changed" one).
    assert result["system"]["match_all"] == 0.5
    assert result["system"]["match_edited"] == 0.0
    assert result["system"]["percent_edited"] == 0.0
    assert result["classification"]["impossible_ratio"] == 0.0


def test_decontext_predictions_need_every_key_and_every_example(scored_project, tmp_path,
                                                               capsys):
    project, predictions = scored_project
    written = tmp_path / "repeat.jsonl"
    baseline = run_evaluate(capsys, project.slug, "--baseline", "repeat", "--split", "dev",
                            "--write-predictions", str(written))
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    assert [row["example_id"] for row in rows] == [101, 102, 103]  # every example, ints
    assert all(set(row) == {"example_id", "category", "original_sentence",
                            "decontextualized_sentence"} for row in rows)
    assert {row["category"] for row in rows} == {"UNNECESSARY"}
    again = run_evaluate(capsys, project.slug, "--system", str(written), "--split", "dev")
    assert again["system"] == baseline["system"]

    no_original = tmp_path / "no_original.jsonl"
    no_original.write_text("".join(
        json.dumps({k: v for k, v in row.items() if k != "original_sentence"}) + "\n"
        for row in predictions))
    with pytest.raises(CommandError, match="missing original_sentence"):
        call_command("evaluate", project.slug, "--system", str(no_original), "--split", "dev")
    partial = tmp_path / "partial.jsonl"
    partial.write_text(json.dumps(predictions[0]) + "\n")
    with pytest.raises(CommandError, match="no prediction for 2 example"):
        call_command("evaluate", project.slug, "--system", str(partial), "--split", "dev")
    with pytest.raises(CommandError, match="decontext projects"):
        claire, _ = claire_sample()
        call_command("evaluate", claire.slug, "--system", str(partial),
                     "--write-predictions", str(tmp_path / "x.jsonl"))
