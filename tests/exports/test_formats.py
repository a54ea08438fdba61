"""Every export format on small hand-built projects: shape, anonymity, cleaning, reproducibility."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.exporters import export_project
from annotation.exporters.base import json_array
from annotation.models import Annotation
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


def test_claire_scores_are_means_and_labels_follow_thresholds(tmp_path):
    project, items = claire_sample()
    crowd = workers(4)
    ratings = [[5, 4, 4, 5], [1, 2, 1, 1], [3, 3, 4, 3], [4, 4, 4, 3], [3, 3, 3, 1]]
    for item, item_ratings in zip(items, ratings, strict=True):
        for worker, rating in zip(crowd, item_ratings, strict=True):
            annotate(item, worker, rating=rating, payload={"rating": rating})
    # A rejected rating never reaches the dataset.
    annotate(items[0], workers(1)[0], rating=1, review_status="rejected")
    export_project(project=project, format_name="claire", out_dir=tmp_path)
    data = (tmp_path / "dev_data.tsv").read_text().splitlines()
    assert data[0].split("\t")[:2] == ["Id", "Resolved pattern"]
    assert data[1].split("\t")[0] == "7" and data[1].split("\t")[7:] == [
        "the split", "your chin", "cleft lips", "your baby", "the ear"]
    assert (tmp_path / "dev_scores.tsv").read_text() == (
        "7_1\t4.5\n7_2\t1.25\n7_3\t3.25\n7_4\t3.75\n7_5\t2.5\n")
    assert (tmp_path / "dev_labels.tsv").read_text() == (
        "7_1\tPLAUSIBLE\n7_2\tIMPLAUSIBLE\n7_3\tNEUTRAL\n7_4\tNEUTRAL\n7_5\tIMPLAUSIBLE\n")
    assert (tmp_path / "train_data.tsv").read_text().count("\n") == 1  # header only


def test_claire_thirds_print_like_the_release(tmp_path):
    project, items = claire_sample()
    for worker, rating in zip(workers(3), [3, 3, 4], strict=True):
        annotate(items[0], worker, rating=rating)
    export_project(project=project, format_name="claire", out_dir=tmp_path)
    assert (tmp_path / "dev_scores.tsv").read_text() == "7_1\t3.33333333333333\n"


def test_claire_released_score_wins_over_the_crowd_and_means_keep_answer_order(tmp_path):
    """The rules of ``filler_score`` whichever database gathers the ratings (PostgreSQL:
    ``SCORES_SQL``): the first released row's score text, else its rating; else the mean."""
    project, items = claire_sample()
    crowd = workers(3)
    released = workers(1)[0]
    annotate(items[0], crowd[0], rating=1)
    annotate(items[0], released, source="import", rating=4.2,
             payload={"score_text": " 4.20 ", "rating": 4.2})
    annotate(items[0], crowd[1], source="import", rating=2, payload={"score_text": "2"})
    annotate(items[1], released, source="import", rating=3.5, payload={})
    for worker, rating in zip(crowd, [1.1, 1.2, 1.7], strict=True):  # fractions, summed in order
        annotate(items[2], worker, rating=rating)
    export_project(project=project, format_name="claire", out_dir=tmp_path)
    assert (tmp_path / "dev_scores.tsv").read_text() == (
        "7_1\t4.20\n7_2\t3.5\n7_3\t1.33333333333333\n")


def test_canard_history_and_cannotanswer(tmp_path):
    project, items = canard_sample()
    worker = workers(1)[0]
    annotate(items[0], worker, text="What group disbanded?")
    annotate(items[1], worker, text="When did Zappa and the Mothers of Invention disband?")
    annotate(items[2], worker, text="", skipped=True)
    export_project(project=project, format_name="canard", out_dir=tmp_path)
    raw = (tmp_path / "dev.json").read_text()
    records = json.loads(raw)
    assert raw == json.dumps(records, indent=4, sort_keys=True)
    assert [record["Question_no"] for record in records] == [1, 2]
    for record in records:
        assert len(record["History"]) == 2 * record["Question_no"]
    assert records[1]["History"] == ["Frank Zappa", "Disbandment", "What group disbanded?",
                                     "Zappa and the Mothers of Invention"]
    assert (tmp_path / "train.json").read_text() == "[]"


def test_canard_history_keeps_cannotanswer_from_the_source(tmp_path):
    project, items = canard_sample()
    annotate(items[2], workers(1)[0], text="Why did Zappa and the Mothers disband?")
    export_project(project=project, format_name="canard", out_dir=tmp_path)
    (record,) = json.loads((tmp_path / "dev.json").read_text())
    assert record["History"][-1] == "CANNOTANSWER"


def test_json_array_streams_the_same_bytes_as_dumping_the_list():
    records = [{"b": [1, {"x": "é"}], "a": "/"}, {"a": 2}]
    assert "".join(json_array(iter(records))) == json.dumps(records, indent=4, sort_keys=True)
    assert "".join(json_array(iter([]))) == json.dumps([], indent=4)


def test_decontext_has_every_key_the_official_loader_reads(tmp_path):
    project, item = decontext_sample()
    crowd = workers(3)
    annotate(item, crowd[0], category="DONE", text="Zinc is brittle at room temperature.",
             payload={"category": "DONE",
                      "decontextualized_sentence": "Zinc is brittle at room temperature."})
    annotate(item, crowd[1], category="UNNECESSARY", payload={"category": "UNNECESSARY"})
    annotate(item, crowd[2], category="IMPOSSIBLE", payload={"category": "IMPOSSIBLE"})
    export_project(project=project, format_name="decontext", out_dir=tmp_path)
    (line,) = (tmp_path / "dev.jsonl").read_text().splitlines()
    example = json.loads(line)
    # language/decontext/decontext_util.py load_example_from_jsonl and load_decontext_label.
    for key in ("example_id", "paragraph_text", "sentence_start_byte_offset",
                "sentence_end_byte_offset", "article_url", "page_title", "section_title",
                "annotations"):
        assert key in example
    assert example["example_id"] == 3245252
    paragraph = example["paragraph_text"].encode()
    start, end = example["sentence_start_byte_offset"], example["sentence_end_byte_offset"]
    assert paragraph[start:end].decode() == example["original_sentence"]
    categories = [annotation["category"] for annotation in example["annotations"]]
    assert categories == ["DONE", "UNNECESSARY", "IMPOSSIBLE"]
    for annotation in example["annotations"]:
        assert set(annotation) == {"example_id", "worker_id", "category", "original_sentence",
                                   "decontextualized_sentence"}
        assert annotation["example_id"] == 3245252
        assert annotation["worker_id"].startswith("w")
        assert not annotation["worker_id"].startswith("A")  # never the MTurk WorkerId
    assert example["annotations"][1]["decontextualized_sentence"] == example["original_sentence"]


def test_websplit_references_and_triples(tmp_path):
    project, item = websplit_sample()
    crowd = workers(2)
    annotate(item, crowd[0], text="Alan Bean was born in Wheeler, Texas. He was a test pilot.",
             payload={"simple_sentences": ["Alan Bean was born in Wheeler, Texas.",
                                           "He was a test pilot."]})
    annotate(item, crowd[1], text="x", payload={"simple_sentences": ["A.", "B."]},
             review_status="rejected")
    export_project(project=project, format_name="websplit", out_dir=tmp_path)
    (line,) = (tmp_path / "test.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["triples"] == [["Alan_Bean", "birthPlace", "Wheeler,_Texas"],
                                 ["Alan_Bean", "occupation", "Test_pilot"]]
    assert [ref["simple_sentences"] for ref in record["references"]] == [
        ["Alan Bean was born in Wheeler, Texas.", "He was a test pilot."]]


def test_sluice_cleaning_and_processed_shape(tmp_path):
    project, items = sluice_sample()
    crowd = workers(3)
    annotate(items["c1"], crowd[0], text="Who went to the fair?")
    annotate(items["c1"], crowd[1], text="Who went to the fair?")  # duplicate reference
    annotate(items["c1"], crowd[2], text="", skipped=True)
    annotate(items["c2"], crowd[0], text="When were the two matches/games?")
    annotate(items["c3"], crowd[0], text="When did Oliver come?")  # Q1 too short
    export_project(project=project, format_name="sluice", out_dir=tmp_path)
    raw = (tmp_path / "sluice_test_filtered.json").read_text()
    assert "matches\\/games" in raw
    test = json.loads(raw)
    assert list(test) == ["0", "1"]
    assert list(test["0"]) == ["Input.question_1", "Input.answer_1", "Input.question_2",
                               "Answer.full_question"]
    assert [row["Answer.full_question"] for row in test.values()] == [
        "Who went to the fair?", "When were the two matches/games?"]
    assert json.loads((tmp_path / "sluice_train_filtered.json").read_text()) == {}
    assert (tmp_path / "sluice_val_filtered.json").read_text() == "{}"


def test_generic_jsonl_has_everything_and_no_worker_identity(tmp_path):
    project, items = canard_sample()
    worker = workers(1)[0]
    annotation = annotate(items[1], worker, text="When did they disband?", duration_ms=4200,
                          client_warnings=["rewrite_pronoun_left"],
                          overridden_warnings=["rewrite_pronoun_left"],
                          server_warnings=["rewrite_pronoun_left"],
                          provenance={"file": "dev.json", "record": 2})
    project.flags.create(annotation=annotation, worker=worker, reason="copy_of_input",
                         score=1.0, fingerprint=f"copy_of_input:{annotation.pk}")
    export_project(project=project, format_name="jsonl", out_dir=tmp_path)
    raw = (tmp_path / "annotations.jsonl").read_text()
    assert worker.external_id not in raw
    (record,) = [json.loads(line) for line in raw.splitlines()]
    assert record["worker_id"] == worker.anonymous_id
    assert record["warnings"] == {"shown": ["rewrite_pronoun_left"],
                                  "overridden": ["rewrite_pronoun_left"],
                                  "server": ["rewrite_pronoun_left"]}
    assert record["flags"][0]["reason"] == "copy_of_input"
    assert record["review_status"] == "pending" and record["duration_ms"] == 4200
    assert record["provenance"] == {"file": "dev.json", "record": 2}
    assert list(record) == sorted(record)


@pytest.mark.parametrize("format_name", ["claire", "jsonl"])
def test_exports_are_byte_for_byte_reproducible(tmp_path, format_name):
    project, items = claire_sample()
    for worker in workers(3):
        for item in items:
            annotate(item, worker, rating=3)
    first, second = tmp_path / "a", tmp_path / "b"
    export_project(project=project, format_name=format_name, out_dir=first)
    export_project(project=project, format_name=format_name, out_dir=second)
    names = sorted(path.name for path in first.iterdir())
    assert names == sorted(path.name for path in second.iterdir())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_export_command_refuses_a_format_of_another_task(tmp_path):
    project, _ = claire_sample()
    with pytest.raises(CommandError, match="plausibility project"):
        call_command("export_data", project.slug, "--format", "canard", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="no project"):
        call_command("export_data", "missing", "--format", "jsonl", "--out", str(tmp_path))


def test_export_command_reports_files(tmp_path, capsys):
    project, items = claire_sample()
    annotate(items[0], workers(1)[0], rating=5)
    call_command("export_data", project.slug, "--format", "claire", "--out", str(tmp_path))
    output = capsys.readouterr().out
    assert "dev_scores.tsv  1 records" in output
    assert Annotation.objects.count() == 1


def test_export_files_are_readable_by_others(tmp_path):
    project, items = claire_sample()
    annotate(items[0], workers(1)[0], rating=4)
    export_project(project=project, format_name="claire", out_dir=tmp_path)
    modes = {path.name: path.stat().st_mode & 0o777 for path in tmp_path.iterdir()}
    assert set(modes.values()) == {0o644}, modes
