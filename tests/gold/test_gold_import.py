"""The import column that marks gold items (docs/importing.md, "Gold items"): per format, the
item gets the file's answer; a bad answer is one clear error naming file, line or record and
field, and nothing is written."""

from __future__ import annotations

import json

import pytest
from django.core.management.base import CommandError

from annotation.models import Item
from tests.importers.conftest import BAD, FIXTURES, row_counts, run_import

pytestmark = pytest.mark.django_db


def gold_of(slug: str) -> dict[str, object]:
    return dict(Item.objects.filter(project__slug=slug, is_gold=True)
                .values_list("external_id", "gold_answer"))


def decontext_file(tmp_path, answers: list) -> object:
    lines = (FIXTURES / "decontext_dev.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for record, answer in zip(records, answers, strict=False):
        if answer is not None:
            record["gold_answer"] = answer
    path = tmp_path / "gold_dev.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path, [str(record["example_id"]) for record in records]


def test_decontext_field_marks_gold_items(tmp_path):
    path, ids = decontext_file(tmp_path, ["DONE", ["UNNECESSARY", "DONE"]])
    run_import("decontext", path, project="gold-decontext")
    assert gold_of("gold-decontext") == {ids[0]: "DONE", ids[1]: ["UNNECESSARY", "DONE"]}
    assert Item.objects.filter(project__slug="gold-decontext", is_gold=False).count() == (
        len(ids) - 2)


def test_a_later_file_marks_existing_items_gold(tmp_path):
    plain, ids = decontext_file(tmp_path, [])
    run_import("decontext", plain, project="gold-later")
    assert gold_of("gold-later") == {}
    marked, _ = decontext_file(tmp_path, [None, "IMPOSSIBLE"])  # a new file, same items
    run_import("decontext", marked, project="gold-later")
    assert gold_of("gold-later") == {ids[1]: "IMPOSSIBLE"}


def claire_file(tmp_path, cells: list[str]) -> object:
    header, *rows = (BAD / "claire_label" / "dev_data.tsv").read_text().splitlines()
    lines = [header + "\tGold2"] + [f"{row}\t{cell}" for row, cell in
                                     zip(rows, cells, strict=True)]
    folder = tmp_path / "claire"
    folder.mkdir()
    (folder / "dev_data.tsv").write_text("\n".join(lines) + "\n")
    return folder / "dev_data.tsv"


def test_claire_gold_columns_take_ratings(tmp_path):
    run_import("claire", claire_file(tmp_path, ["4", "3|4"]), project="gold-claire")
    assert gold_of("gold-claire") == {"0_2": 4, "1_2": [3, 4]}


def test_canard_and_websplit_fields(tmp_path):
    canard = tmp_path / "gold_dev.json"
    canard.write_text(json.dumps([
        {"History": ["Frank Zappa", "Disbandment"], "QuAC_dialog_id": "C_1",
         "Question": "What group disbanded?", "Question_no": 1,
         "Rewrite": "What group disbanded?", "gold_answer": "What group disbanded?"}]))
    run_import("canard", canard, project="gold-canard")
    assert gold_of("gold-canard") == {"C_1#1": "What group disbanded?"}
    lines = (FIXTURES / "websplit_train.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["gold_answer"] = "Alan Bean was born in Wheeler, Texas. He was a test pilot."
    websplit = tmp_path / "gold_train.jsonl"
    websplit.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    run_import("websplit", websplit, project="gold-websplit")
    assert gold_of("gold-websplit") == {"ws-1": first["gold_answer"]}


@pytest.mark.parametrize(("fmt", "make", "message"), [
    ("decontext", lambda tmp: decontext_file(tmp, [None, "MAYBE"])[0],
     'decontext gold_dev.jsonl line 2: field "gold_answer": a decontext gold answer is one '
     "of DONE, IMPOSSIBLE, UNNECESSARY, or a list of them"),
    ("decontext", lambda tmp: decontext_file(tmp, [[]])[0],
     'decontext gold_dev.jsonl line 1: field "gold_answer": the list of accepted answers is '
     "empty"),
    ("claire", lambda tmp: claire_file(tmp, ["4", "seven"]),
     'claire dev_data.tsv line 3: field "Gold2": a plausibility gold answer is a whole rating '
     "from 1 to 5, or several separated by |"),
    ("claire", lambda tmp: claire_file(tmp, ["9", ""]),
     'claire dev_data.tsv line 2: field "Gold2": a plausibility gold answer is a whole rating '
     "from 1 to 5, or a list of them"),
])
def test_a_bad_gold_answer_names_file_line_and_field_and_writes_nothing(
        tmp_path, fmt, make, message):
    path = make(tmp_path)
    before = row_counts()
    with pytest.raises(CommandError) as raised:
        run_import(fmt, path, project="gold-bad")
    assert str(raised.value) == message
    assert row_counts() == before
