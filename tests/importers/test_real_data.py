"""Imports of the real released files in ../shared/data."""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict

import pytest

from annotation.models import (
    Annotation,
    ClozeFiller,
    ClozeItem,
    Dialogue,
    DialogueTurn,
    ImportRecord,
    Item,
    Project,
)
from qc.aggregation import plausibility_label

from .conftest import row_counts, run_import

pytestmark = pytest.mark.django_db


def claire_paths(shared_data, split):
    base = shared_data / "claire"
    return [base / f"{split}_data.tsv", base / f"{split}_scores.tsv", base / f"{split}_labels.tsv"]


def released_values(path):
    return dict(line.split("\t") for line in path.read_text().splitlines() if line)


def test_claire_dev_gives_500_instances_2500_fillers_with_scores_and_labels(shared_data):
    run_import("claire", *claire_paths(shared_data, "dev"), project="claire-dev")
    project = Project.objects.get(slug="claire-dev")
    assert project.kind == "plausibility"
    assert ClozeItem.objects.filter(project=project).count() == 500
    assert ClozeFiller.objects.filter(cloze__project=project).count() == 2500
    items = Item.objects.filter(project=project)
    assert items.count() == 2500
    assert set(items.values_list("split", flat=True)) == {"dev"}
    scores = released_values(shared_data / "claire" / "dev_scores.tsv")
    labels = released_values(shared_data / "claire" / "dev_labels.tsv")
    stored = {a.item.external_id: a for a in Annotation.objects.filter(project=project)
              .select_related("item", "worker")}
    assert set(stored) == set(scores) == set(labels)
    for external_id, annotation in stored.items():
        assert annotation.rating == pytest.approx(float(scores[external_id]))
        assert annotation.payload == {"score": float(scores[external_id]),
                                      "score_text": scores[external_id],
                                      "label": labels[external_id]}
        assert plausibility_label(annotation.rating) == annotation.payload["label"]
        assert annotation.source == "import"
        assert annotation.worker.provider == "import"
    first = ClozeItem.objects.get(project=project, external_id="0")
    assert first.resolved_pattern == "IMPLICIT REFERENCE"
    assert [f.text for f in first.fillers.order_by("position")] == [
        "the split", "your chin", "cleft lips", "your baby", "the ear"]
    assert Item.objects.get(project=project, external_id="0_3").filler.text == "cleft lips"
    assert Item.objects.get(project=project, external_id="0_3").group_key == (
        "How to Detect Cleft Lip Early in Pregnancy")


@pytest.mark.parametrize(("split", "instances"), [("train", 3995), ("test", 500)])
def test_claire_train_and_test_counts(shared_data, split, instances):
    run_import("claire", *claire_paths(shared_data, split), project=f"claire-{split}")
    project = Project.objects.get(slug=f"claire-{split}")
    assert ClozeItem.objects.filter(project=project).count() == instances
    assert ClozeFiller.objects.filter(cloze__project=project).count() == 5 * instances
    assert Item.objects.filter(project=project, split=split).count() == 5 * instances
    assert Annotation.objects.filter(project=project, rating__isnull=False).count() == (
        5 * instances)
    assert Counter(Annotation.objects.filter(project=project)
                   .values_list("payload__label", flat=True)) == Counter(
        released_values(shared_data / "claire" / f"{split}_labels.tsv").values())


def test_claire_split_clash_in_one_project_is_refused(shared_data):
    run_import("claire", shared_data / "claire" / "dev_data.tsv", project="claire")
    before = row_counts()
    with pytest.raises(Exception, match="already in project 'claire' with another sentence"):
        run_import("claire", shared_data / "claire" / "test_data.tsv", project="claire")
    assert row_counts() == before


def rebuild_canard(project):
    """What an exporter does: History from the dialogue and its earlier turns."""
    turns = defaultdict(dict)
    for turn in DialogueTurn.objects.filter(dialogue__project=project).select_related(
            "dialogue"):
        turns[turn.dialogue.external_id][turn.order] = turn
    rewrites = dict(Annotation.objects.filter(project=project)
                    .values_list("item__external_id", "text"))
    records = []
    for item in Item.objects.filter(project=project).select_related("turn__dialogue"):
        dialogue, number = item.turn.dialogue, item.turn.order
        history = [dialogue.title, dialogue.section_title]
        for order in range(1, number):
            history += [turns[dialogue.external_id][order].question,
                        turns[dialogue.external_id][order].answer]
        records.append({"History": history, "QuAC_dialog_id": dialogue.external_id,
                        "Question": item.turn.question, "Question_no": number,
                        "Rewrite": rewrites[item.external_id]})
    return records


def test_canard_dev_3430_questions_490_dialogues_and_history_round_trip(shared_data):
    path = shared_data / "canard" / "dev.json"
    run_import("canard", path, project="canard")
    project = Project.objects.get(slug="canard")
    assert Dialogue.objects.filter(project=project).count() == 490
    assert Item.objects.filter(project=project).count() == 3430
    assert Annotation.objects.filter(project=project).count() == 3430
    original = json.loads(path.read_text(encoding="utf-8"))
    rebuilt = rebuild_canard(project)
    key = lambda record: (record["QuAC_dialog_id"], record["Question_no"])  # noqa: E731
    assert sorted(rebuilt, key=key) == sorted(original, key=key)
    assert all(len(r["History"]) == 2 * r["Question_no"] for r in rebuilt)
    # The last question of a dialogue has no answer anywhere in the file.
    last = Item.objects.filter(project=project, turn__dialogue__external_id=(
        "C_2d211835213b45588ad5ca868ce7fabd_0")).order_by("-position").first()
    assert last.turn.answer == ""


def test_sluice_raw_test_csv_1200_annotations_over_400_contexts(shared_data):
    path = shared_data / "sluice" / "raw" / "conv_sluice_test.csv"
    run_import("sluice", path, project="sluice")
    project = Project.objects.get(slug="sluice")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    # 400 HITs of 3 consecutive rows each; one context ("Anything else?" / "Yes" / "What")
    # was posted twice (rows 326-328 and 601-603), so 399 distinct contexts hold them.
    triples = [(r["Input.question_1"], r["Input.answer_1"], r["Input.question_2"])
               for r in rows]
    assert len(rows) == 1200
    assert len([i for i in range(0, 1200, 3) if len(set(triples[i:i + 3])) == 1]) == 400
    assert Annotation.objects.filter(project=project).count() == 1200
    items = Item.objects.filter(project=project)
    assert items.count() == Dialogue.objects.filter(project=project).count() == 399
    counts = Counter(Annotation.objects.filter(project=project)
                     .values_list("item_id", flat=True))
    assert Counter(counts.values()) == {3: 398, 6: 1}
    assert set(items.values_list("split", flat=True)) == {"test"}
    # Every annotation of an item has its own pseudonymous import worker.
    assert Annotation.objects.filter(project=project).values("worker").distinct().count() == 1200
    skipped = Annotation.objects.filter(project=project, skipped=True)
    assert sorted(skipped.values_list("text", flat=True)) == ["", ""] + ["*not enough info*"] * 5
    item = Item.objects.select_related("turn__dialogue").get(
        project=project, turn__question="who", turn__dialogue__turns__question=(
            "How many people went to the fair?"))
    assert item.turn.order == 2
    assert item.turn.dialogue.turns.get(order=1).answer == "Two"
    assert sorted(item.annotations.values_list("text", flat=True)) == [
        "Who all went to the fair?", "Who went to the fair?", "Who went to the fair?"]


def test_sluice_processed_files_and_overlap_with_raw(shared_data):
    processed = shared_data / "sluice" / "processed"
    run_import("sluice", processed / "sluice_train_filtered.json",
               processed / "sluice_val_filtered.json", processed / "sluice_test_filtered.json",
               project="sluice")
    project = Project.objects.get(slug="sluice")
    # 3,082 + 300 + 793 cleaned rows, as in the paper: each one annotation.
    assert Annotation.objects.filter(project=project).count() == 4175
    records = ImportRecord.objects.filter(project=project)
    assert {(r.path.rsplit("/", 1)[-1], r.split, r.rows) for r in records} == {
        ("sluice_train_filtered.json", "train", 3082), ("sluice_val_filtered.json", "dev", 300),
        ("sluice_test_filtered.json", "test", 793)}
    # The processed test rows are a subset of the raw test rows: importing the raw file
    # adds only the 1,200 - 793 rows the cleaning dropped.
    run_import("sluice", shared_data / "sluice" / "raw" / "conv_sluice_test.csv",
               project="sluice")
    test_annotations = Annotation.objects.filter(project=project,
                                                 provenance__file="conv_sluice_test.csv")
    assert test_annotations.count() == 1200 - 793


def test_canard_multiple_refs_pairs_are_items_with_two_rewrites(shared_data):
    path = shared_data / "canard" / "multiple_refs.json"
    run_import("canard", path, project="canard-refs")
    project = Project.objects.get(slug="canard-refs")
    pairs = json.loads(path.read_text(encoding="utf-8"))
    items = Item.objects.filter(project=project)
    assert items.count() == 100 and set(items.values_list("split", flat=True)) == {"test"}
    item = items.get(external_id="multiple_refs-1#1")
    # The first worker's rewrite first: the human figure scores it against the second.
    assert list(item.annotations.order_by("id").values_list("text", flat=True)) == pairs[1]
    assert Annotation.objects.filter(project=project).values("worker").distinct().count() == 200


def test_reimporting_real_files_is_a_no_op(shared_data):
    path = shared_data / "canard" / "dev.json"
    run_import("canard", path, project="canard")
    before = row_counts()
    out = run_import("canard", path, project="canard")
    assert "nothing to do" in out
    assert row_counts() == before
