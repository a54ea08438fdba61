"""Decontextualization against the release's README: byte-offset convention, fine-grained
``changes``, IMPOSSIBLE sentences, and files the official scorer cannot score."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.exporters import export_project
from annotation.models import Annotation, TargetSentence
from tests.factories import annotate, decontext_sample, workers

pytestmark = pytest.mark.django_db

PARAGRAPH = "Zoë Ball was born in 1970. She hosted the Big Breakfast. It ran for years."
SENTENCE = "She hosted the Big Breakfast."


def example_line(example_id: int, *, inclusive: bool, annotations: list[dict]) -> dict:
    start = PARAGRAPH.encode().index(SENTENCE.encode())
    end = start + len(SENTENCE.encode())  # exclusive
    return {"example_id": example_id, "original_sentence": SENTENCE, "page_title": "Zoë Ball",
            "section_title": ["Career"], "paragraph_text": PARAGRAPH,
            "sentence_start_byte_offset": start,
            "sentence_end_byte_offset": end - 1 if inclusive else end,
            "article_url": f"https://en.wikipedia.org/wiki/Zoe_Ball_{example_id}",
            "annotations": annotations}


def done(example_id: int, worker: int, sentence: str, changes: list[dict] | None = None):
    annotation = {"example_id": example_id, "worker_id": worker, "category": "DONE",
                  "original_sentence": SENTENCE, "decontextualized_sentence": sentence}
    if changes is not None:
        annotation["changes"] = changes
    return annotation


def write_jsonl(path, lines):
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("inclusive", [False, True])
def test_byte_offsets_keep_the_files_convention(tmp_path, inclusive):
    """The README calls the end offset inclusive; our files use an exclusive end. Either is
    read (stored exclusive) and written back as the file gave it."""
    line = example_line(11, inclusive=inclusive, annotations=[done(11, 1, SENTENCE)])
    source = write_jsonl(tmp_path / "train.jsonl", [line])
    call_command("import_data", "decontext", str(source), "--project", "dx", "--quiet")
    target = TargetSentence.objects.get()
    assert PARAGRAPH.encode()[target.start_byte:target.end_byte].decode() == SENTENCE
    call_command("export_data", "dx", "--format", "decontext", "--out", str(tmp_path / "out"),
                 stdout=StringIO())
    (exported,) = [json.loads(row) for row in (tmp_path / "out" / "train.jsonl").read_text()
                   .splitlines()]
    assert exported["sentence_start_byte_offset"] == line["sentence_start_byte_offset"]
    assert exported["sentence_end_byte_offset"] == line["sentence_end_byte_offset"]


def test_offsets_that_fit_neither_convention_are_refused(tmp_path):
    line = example_line(12, inclusive=False, annotations=[])
    line["sentence_end_byte_offset"] -= 2
    source = write_jsonl(tmp_path / "train.jsonl", [line])
    with pytest.raises(Exception, match="end exclusive or inclusive"):
        call_command("import_data", "decontext", str(source), "--project", "dx", "--quiet")
    assert not TargetSentence.objects.exists()


def test_fine_grained_changes_are_imported_as_edits_and_exported_back(tmp_path):
    changes = [{"new": "Zoë Ball", "old": {"start_ind": 0, "end_ind": 3}},
               {"new": ", a Channel 4 show", "old": {"start_ind": 28, "end_ind": 28}}]
    edited = "Zoë Ball hosted the Big Breakfast, a Channel 4 show."
    line = example_line(13, inclusive=False, annotations=[
        done(13, 1, edited, changes),
        {"example_id": 13, "worker_id": 2, "category": "UNNECESSARY",
         "original_sentence": SENTENCE, "decontextualized_sentence": SENTENCE},
        done(13, 3, "Zoë Ball hosted the Big Breakfast.")])
    source = write_jsonl(tmp_path / "dev.jsonl", [line])
    call_command("import_data", "decontext", str(source), "--project", "dx", "--quiet")
    first = Annotation.objects.order_by("id").first()
    assert [(op["op"], op["start"], op["end"], op["text"]) for op in first.edit_operations] == [
        ("swap", 0, 3, "Zoë Ball"), ("add", 28, 28, ", a Channel 4 show")]
    export_project(project=first.project, format_name="decontext", out_dir=tmp_path / "out")
    (exported,) = [json.loads(row) for row in (tmp_path / "out" / "dev.jsonl").read_text()
                   .splitlines()]
    assert exported["annotations"][0]["changes"] == changes
    # Edits are known only for the first: the others have no "changes" key.
    assert ["changes" in annotation for annotation in exported["annotations"]] == [
        True, False, False]


def test_changes_outside_the_sentence_are_refused(tmp_path):
    line = example_line(14, inclusive=False, annotations=[
        done(14, 1, "x", [{"new": "x", "old": {"start_ind": 5, "end_ind": 99}}])])
    source = write_jsonl(tmp_path / "train.jsonl", [line])
    with pytest.raises(Exception, match=r"annotations\[0\].changes\[0\]: span 5..99"):
        call_command("import_data", "decontext", str(source), "--project", "dx", "--quiet")


def test_impossible_annotations_are_exported_with_an_empty_sentence(tmp_path):
    project, item = decontext_sample(split="train")
    worker = workers(1)[0]
    annotate(item, worker, category="IMPOSSIBLE", text="The worker typed this anyway.",
             payload={"category": "IMPOSSIBLE",
                      "decontextualized_sentence": "The worker typed this anyway."})
    export_project(project=project, format_name="decontext", out_dir=tmp_path)
    (line,) = (tmp_path / "train.jsonl").read_text().splitlines()
    assert json.loads(line)["annotations"][0]["decontextualized_sentence"] == ""


def test_a_file_without_changed_examples_is_named_in_the_export_and_in_evaluate(tmp_path):
    """Every scored example keeps a reference equal to its original: the official eval.py
    stops with IndexError; we say so, and evaluate prints null instead of NaN."""
    project, item = decontext_sample()
    crowd = workers(3)
    original = item.target_sentence.text
    for worker, category, sentence in zip(crowd, ["UNNECESSARY", "UNNECESSARY", "DONE"],
                                          [original, original, "Zinc is brittle at room "
                                                               "temperature."], strict=True):
        annotate(item, worker, category=category, text=sentence,
                 payload={"category": category, "decontextualized_sentence": sentence})
    written = export_project(project=project, format_name="decontext", out_dir=tmp_path)
    notes = [note for file in written if file.path.name == "dev.jsonl" for note in file.notes]
    assert notes == ["dev.jsonl: none of its 1 scored example(s) has all its references "
                     "different from the original sentence, so \"match on changed examples\" "
                     "is undefined: the official eval.py stops on this file with IndexError "
                     "(evaluate reports match_edited as null)"]
    out = StringIO()
    call_command("evaluate", project.slug, "--baseline", "repeat", "--split", "dev", stdout=out)

    def no_nan(constant):
        raise AssertionError(f"{constant} is not JSON")

    result = json.loads(out.getvalue(), parse_constant=no_nan)
    assert result["system"]["match_edited"] is None
    assert result["human"]["match_edited"] is None
    assert result["human"]["n_match_edited"] == 0
    assert result["notes"] == [notes[0]]
