"""Imports of the hand-made fixtures: decontext, WebSplit, QuAC, CoQA, MTurk batch CSVs."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.core.management.base import CommandError

from annotation.models import (
    Annotation,
    ComplexSentence,
    Dialogue,
    DialogueTurn,
    Document,
    Fact,
    Item,
    Project,
    TargetSentence,
    Worker,
)
from annotation.services.projects import project_update

from .conftest import FIXTURES, row_counts, run_import

pytestmark = pytest.mark.django_db


def test_decontext_with_annotations_keeps_byte_offsets_of_non_ascii_text():
    run_import("decontext", FIXTURES / "decontext_dev.jsonl", project="decontext")
    project = Project.objects.get(slug="decontext")
    assert project.kind == "decontext"
    assert Document.objects.filter(project=project).count() == 3  # one per page + paragraph
    item = Item.objects.select_related("target_sentence__document").get(
        project=project, external_id="101")
    target = item.target_sentence
    paragraph = target.document.paragraphs[target.paragraph_index]["text"]
    assert paragraph.encode()[target.start_byte:target.end_byte].decode() == target.text
    # "Antonín Dvořák" has 2 two-byte characters: byte offsets are not character offsets.
    assert target.start_byte == paragraph.index(target.text) + 3
    assert target.document.paragraphs[0]["section"] == ["Antonín Dvořák", "Style"]
    assert item.split == "dev"
    # Both Dvořák examples share the page group, so a split never cuts the page.
    assert Item.objects.get(project=project, external_id="102").group_key == item.group_key
    annotations = Annotation.objects.filter(item=item).select_related("worker")
    assert sorted((a.worker.external_id, a.category) for a in annotations) == [
        ("w1", "DONE"), ("w2", "DONE"), ("w3", "IMPOSSIBLE")]
    done = annotations.get(worker__external_id="w1")
    assert done.text == "Antonín Dvořák frequently employed rhythms of Moravian folk music."
    assert done.payload["decontextualized_sentence"] == done.text
    assert done.provenance == {"file": "decontext_dev.jsonl", "line": 1, "example_id": 101,
                               "annotation": 0}
    # worker w3 annotated two examples: one import worker
    assert Worker.objects.filter(provider="import", external_id="w3").count() == 1


def test_decontext_without_annotations():
    run_import("decontext", FIXTURES / "decontext_train_unannotated.jsonl",
               project="decontext", split="train")
    project = Project.objects.get(slug="decontext")
    assert Item.objects.filter(project=project, split="train").count() == 3
    assert TargetSentence.objects.filter(document__project=project).count() == 3
    assert not Annotation.objects.filter(project=project).exists()


def test_websplit_facts_are_shared_and_references_imported():
    run_import("websplit", FIXTURES / "websplit_train.jsonl", project="websplit")
    project = Project.objects.get(slug="websplit")
    assert project.kind == "split_rephrase"
    assert ComplexSentence.objects.filter(project=project).count() == 4
    # 8 triples, one ("Alan_Bean", "occupation", "Test_pilot") in two sentences.
    assert Fact.objects.filter(project=project).count() == 7
    shared = Fact.objects.get(project=project, subject="Alan_Bean", property="occupation")
    assert sorted(shared.sentences.values_list("external_id", flat=True)) == ["ws-1", "ws-2"]
    groups = dict(Item.objects.filter(project=project).values_list("external_id", "group_key"))
    # ws-1 and ws-2 share a triple, ws-2 and ws-3 share none: clusters by shared facts.
    assert groups["ws-1"] == groups["ws-2"] != groups["ws-3"] != groups["4"]
    references = Annotation.objects.filter(item__external_id="ws-1").order_by("id")
    assert [a.payload["simple_sentences"] for a in references] == [
        ["Alan Bean was born in Wheeler, Texas.", "Alan Bean served as a test pilot."],
        ["Alan Bean's birthplace is Wheeler, Texas.", "He was a test pilot."]]
    assert references[0].text == ("Alan Bean was born in Wheeler, Texas. "
                                  "Alan Bean served as a test pilot.")
    assert references[0].worker_id != references[1].worker_id
    assert Annotation.objects.filter(project=project).count() == 4


def test_websplit_overlapping_file_adds_only_new_sentences_and_facts(tmp_path):
    run_import("websplit", FIXTURES / "websplit_train.jsonl", project="websplit")
    more = tmp_path / "more_train.jsonl"
    lines = (FIXTURES / "websplit_train.jsonl").read_text().splitlines()[:2]
    lines.append(json.dumps({"id": "ws-9", "complex": "NASA operated Apollo 12.",
                             "triples": [["Apollo_12", "operator", "NASA"]]}))
    more.write_text("\n".join(lines) + "\n")
    run_import("websplit", more, project="websplit")
    project = Project.objects.get(slug="websplit")
    assert ComplexSentence.objects.filter(project=project).count() == 5
    assert Fact.objects.filter(project=project).count() == 7
    assert Annotation.objects.filter(project=project).count() == 4
    assert ComplexSentence.objects.get(external_id="ws-9").facts.count() == 1


def test_quac_dialogues_turns_and_items():
    run_import("quac", FIXTURES / "quac_dev.json", project="quac")
    project = Project.objects.get(slug="quac")
    assert project.kind == "rewrite"
    assert Dialogue.objects.filter(project=project).count() == 2
    dialogue = Dialogue.objects.get(project=project,
                                    external_id="C_2d211835213b45588ad5ca868ce7fabd_0")
    assert (dialogue.title, dialogue.section_title, dialogue.source) == (
        "Frank Zappa", "Disbandment", "quac")
    turns = list(dialogue.turns.values_list("order", "question", "answer"))
    assert turns == [(1, "What group disbanded?", "Zappa and the Mothers of Invention"),
                     (2, "When did they disband?", "In late 1969, Zappa broke up the band."),
                     (3, "Did they ever reunite?", "CANNOTANSWER")]
    assert dialogue.turns.get(order=3).shown_answer == "I don't know."
    assert Item.objects.filter(project=project).count() == 5
    assert not Annotation.objects.filter(project=project).exists()


def test_canard_rewrites_attach_to_quac_turns(tmp_path, shared_data):
    run_import("quac", FIXTURES / "quac_dev.json", project="quac")
    records = json.loads((shared_data / "canard" / "dev.json").read_text())[:3]
    canard = tmp_path / "dev.json"
    canard.write_text(json.dumps(records))
    run_import("canard", canard, project="quac")
    project = Project.objects.get(slug="quac")
    assert Dialogue.objects.filter(project=project).count() == 2
    assert Item.objects.filter(project=project).count() == 5
    assert Annotation.objects.get(
        item__external_id="C_2d211835213b45588ad5ca868ce7fabd_0#2").text == (
        "When did Zappa and the Mothers of Invention disband?")


def test_canard_later_record_reveals_the_answer_of_an_earlier_last_turn(tmp_path,
                                                                      shared_data):
    records = json.loads((shared_data / "canard" / "dev.json").read_text())[:3]
    first, second = tmp_path / "a_dev.json", tmp_path / "b_dev.json"
    first.write_text(json.dumps(records[:1]))
    second.write_text(json.dumps(records[1:3]))
    run_import("canard", first, project="canard")
    assert DialogueTurn.objects.get(order=1).answer == ""
    run_import("canard", second, project="canard")
    assert DialogueTurn.objects.get(order=1).answer == "Zappa and the Mothers of Invention"


def test_coqa_turns_matched_by_turn_id():
    run_import("coqa", FIXTURES / "coqa_train.json", project="coqa")
    project = Project.objects.get(slug="coqa")
    dialogue = Dialogue.objects.get(project=project, external_id="3zotghdk5ibi9cex97fepx7jetpso7")
    assert dialogue.source == "coqa"
    assert dialogue.title == "Vatican_Library.txt"
    assert dialogue.background.startswith("The Vatican Apostolic Library")
    assert list(dialogue.turns.values_list("question", "answer")) == [
        ("What is the Vatican Library?", "the library of the Holy See"),
        ("When was it established?", "in 1475"), ("Where is it?", "in Vatican City")]
    assert Item.objects.filter(project=project, split="train").count() == 5


def test_mturk_csv_adds_annotations_to_existing_items(shared_data):
    run_import("claire", shared_data / "claire" / "dev_data.tsv", project="claire")
    run_import("mturk-csv", FIXTURES / "mturk_claire_batch.csv", project="claire")
    annotations = Annotation.objects.filter(source="mturk").select_related("worker", "item")
    assert annotations.count() == 3
    first = annotations.get(provenance__AssignmentId="3FK0YFF9PZFAYUBL4F6NRXWV8AWVV6")
    assert (first.worker.provider, first.worker.external_id) == ("mturk", "A1RDX2BMI9ZJYS")
    assert first.item.external_id == "0_1"
    assert (first.payload, first.rating, first.review_status) == ({"rating": 4}, 4, "approved")
    assert first.started_at == datetime(2019, 6, 18, 16, 39, 5, tzinfo=UTC)
    assert first.submitted_at == datetime(2019, 6, 18, 16, 41, 12, tzinfo=UTC)
    assert first.duration_ms == 127000
    assert first.provenance["HITId"] == "3XH7ZI15UQ6JVQ4D6JTO6S1Y0UOSRQ"
    assert first.provenance["AssignmentStatus"] == "Approved"
    rejected = annotations.get(item__external_id="0_2")
    assert rejected.review_status == "rejected"
    assert annotations.get(worker__external_id="A2VZQ0Y2GMM4K6").review_status == "pending"
    before = row_counts()
    run_import("mturk-csv", FIXTURES / "mturk_claire_batch.csv", project="claire")
    assert row_counts() == before


def test_mturk_csv_answers_that_fill_their_items_mark_them_filled(shared_data):
    """``Item.filled`` (docs/annotating.md, "Filled items"): the work queue skips the items an
    imported results CSV filled; a rejected answer fills nothing."""
    run_import("claire", shared_data / "claire" / "dev_data.tsv", project="claire")
    project_update(project=Project.objects.get(slug="claire"),
                   redundancy={"train": 1, "dev": 1, "test": 1})
    run_import("mturk-csv", FIXTURES / "mturk_claire_batch.csv", project="claire")
    answers = Annotation.objects.filter(source="mturk")
    counted = set(answers.filter(state="counted").values_list("item_id", flat=True))
    assert counted and answers.filter(state="rejected").exists()
    assert set(Item.objects.filter(filled=True).values_list("pk", flat=True)) == counted


def test_mturk_csv_finds_sluice_items_by_context(shared_data):
    run_import("sluice", shared_data / "sluice" / "raw" / "conv_sluice_test.csv",
               project="sluice")
    run_import("mturk-csv", FIXTURES / "mturk_sluice_batch.csv", project="sluice")
    annotations = Annotation.objects.filter(source="mturk").order_by("id")
    assert [(a.text, a.skipped) for a in annotations] == [
        ("Who went to the fair with her?", False), ("not enough info", True)]
    item = annotations[0].item
    assert item.annotations.count() == 5
    assert item.turn.question == "who"


def test_mturk_csv_refuses_a_sluice_context_found_in_several_splits(shared_data, tmp_path):
    """ "Anyone else? / yes / Who" is a train and a test context of the release: a row naming
    it by its text cannot tell which item it answers."""
    raw = shared_data / "sluice" / "raw"
    run_import("sluice", raw / "conv_sluice_train_dev.csv", raw / "conv_sluice_test.csv",
               project="sluice")
    header, row = (FIXTURES / "mturk_sluice_batch.csv").read_text().splitlines()[:2]
    row = row.replace("How many people went to the fair?,Two,who", "Anyone else?,yes,Who")
    batch = tmp_path / "batch.csv"
    batch.write_text(f"{header}\n{row}\n")
    before = row_counts()
    with pytest.raises(CommandError, match=r"context 'sluice-[0-9a-f]+' is in several "
                                           r"splits; name the item with Input.item_id"):
        run_import("mturk-csv", batch, project="sluice")
    assert row_counts() == before


def test_mturk_csv_needs_an_existing_project():
    before = row_counts()
    with pytest.raises(CommandError, match="project 'nope' does not exist"):
        run_import("mturk-csv", FIXTURES / "mturk_claire_batch.csv", project="nope")
    assert row_counts() == before


def test_import_into_a_project_of_another_kind_is_refused(shared_data):
    run_import("websplit", FIXTURES / "websplit_train.jsonl", project="mixed")
    before = row_counts()
    with pytest.raises(CommandError, match="is a split_rephrase project; quac needs a rewrite"):
        run_import("quac", FIXTURES / "quac_dev.json", project="mixed")
    assert row_counts() == before


@pytest.mark.parametrize(("fmt", "name"), [
    ("decontext", "decontext_dev.jsonl"), ("websplit", "websplit_train.jsonl"),
    ("quac", "quac_dev.json"), ("coqa", "coqa_train.json")])
def test_reimport_is_a_no_op(fmt, name):
    run_import(fmt, FIXTURES / name, project="again")
    before = row_counts()
    assert "nothing to do" in run_import(fmt, FIXTURES / name, project="again")
    assert row_counts() == before


def test_same_content_under_another_name_adds_nothing(tmp_path):
    copy = tmp_path / "copy_dev.jsonl"
    copy.write_bytes((FIXTURES / "decontext_dev.jsonl").read_bytes() + b"\n")
    run_import("decontext", FIXTURES / "decontext_dev.jsonl", project="again")
    before = row_counts()
    run_import("decontext", copy, project="again")  # new sha256, same natural keys
    after = row_counts()
    assert after.pop("ImportRecord") == before.pop("ImportRecord") + 1
    assert after == before
