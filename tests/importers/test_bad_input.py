"""Bad input of every kind: one clear message naming file, line/record and field; nothing
written (row counts of every model unchanged)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management.base import CommandError

from annotation.services import imports

from .conftest import BAD, FIXTURES, row_counts, run_import

pytestmark = pytest.mark.django_db

CASES = [
    ("claire", ["claire_short_row/dev_data.tsv"],
     'claire dev_data.tsv line 7: column "Filler3" is missing'),
    ("claire", ["claire_missing_column/dev_data.tsv"],
     'claire dev_data.tsv line 1: column "Filler3" is missing'),
    ("claire", ["claire_label/dev_data.tsv", "claire_label/dev_scores.tsv",
                "claire_label/dev_labels.tsv"],
     "claire dev_labels.tsv line 2: label PLAUSIBLE of 0_2 contradicts its mean score 1.25"),
    ("claire", ["claire_scores_only/dev_data.tsv", "claire_scores_only/dev_scores.tsv"],
     "claire dev_scores.tsv line 4: score 'six' is not a number"),
    ("canard", ["canard_broken_dev.json"],
     "canard canard_broken_dev.json line 52: broken JSON: Unterminated string"),
    ("canard", ["canard_history_dev.json"],
     'canard canard_history_dev.json record 1: field "History" has 3 entries; '
     "Question_no 2 needs 4"),
    ("canard", ["canard_type_dev.json"],
     'canard canard_type_dev.json record 2: field "Question_no" must be an integer, not str'),
    ("canard", ["canard_missing_dev.json"],
     'canard canard_missing_dev.json record 3: field "Rewrite" is missing'),
    ("canard", ["canard_multiple_refs_pair.json"],
     "canard canard_multiple_refs_pair.json record 1: a multiple_refs pair must be two "
     "non-empty rewrites"),
    ("canard", ["canard_conflict_dev.json"],
     "canard canard_conflict_dev.json record 2: dialogue 'C_2d211835213b45588ad5ca868ce7fabd_0'"
     " turn 1: question 'Who disbanded?' differs"),
    ("decontext", ["decontext_offsets_dev.jsonl"],
     "decontext decontext_offsets_dev.jsonl line 2: byte offsets 47..500 lie outside the "
     "paragraph (89 UTF-8 bytes)"),
    ("decontext", ["decontext_char_offsets_dev.jsonl"],
     "decontext decontext_char_offsets_dev.jsonl line 1: bytes 37..91 of the paragraph are 'r. He"),
    ("decontext", ["decontext_missing_dev.jsonl"],
     'decontext decontext_missing_dev.jsonl line 3: field "paragraph_text" is missing'),
    ("decontext", ["decontext_category_dev.jsonl"],
     "decontext decontext_category_dev.jsonl line 1: annotations[0] field \"category\" is "
     "'MAYBE'"),
    ("websplit", ["websplit_triple_train.jsonl"],
     'websplit websplit_triple_train.jsonl line 3: field "triples" entry 0 must be'),
    ("websplit", ["websplit_reference_train.jsonl"],
     'websplit websplit_reference_train.jsonl line 1: field "simple_references" entry 0'),
    ("quac", ["quac_missing_dev.json"],
     'quac quac_missing_dev.json record data[1].paragraphs[0].qas[1]: field "question" is '
     "missing"),
    ("coqa", ["coqa_unmatched_train.json"],
     "coqa coqa_unmatched_train.json record data[0]: questions and answers differ in "
     "turn_id [3]"),
    ("sluice", ["sluice_not_utf8_test.csv"],
     "sluice sluice_not_utf8_test.csv line 5: not valid UTF-8 (byte 0xf8 at column 16)"),
    ("sluice", ["sluice_missing_column_test.csv"],
     'sluice sluice_missing_column_test.csv line 1: column "Answer.full_question" is missing'),
    ("sluice", ["sluice_processed_list_test.json"],
     "sluice sluice_processed_list_test.json: expected a JSON object keyed by row number"),
    ("mturk-csv", ["mturk_unknown_item.csv"],
     "mturk-csv mturk_unknown_item.csv line 3: no item '9999_1' in project 'target'"),
    ("mturk-csv", ["mturk_bad_rating.csv"],
     "mturk-csv mturk_bad_rating.csv line 2: column \"Answer.rating\": '6' is not 1–5"),
    ("mturk-csv", ["mturk_missing_column.csv"],
     'mturk-csv mturk_missing_column.csv line 1: column "WorkTimeInSeconds" is missing'),
    ("nosuchformat", ["canard_broken_dev.json"], "unknown format 'nosuchformat'; expected one"),
    ("canard", ["no_such_file_dev.json"], "no such file"),
]


@pytest.fixture
def target_project(shared_data):
    """A project with real items, so a failed import must leave existing rows alone."""
    run_import("claire", shared_data / "claire" / "dev_data.tsv", project="target")


@pytest.mark.parametrize(("fmt", "names", "message"), CASES,
                         ids=[f"{c[0]}-{c[1][0]}" for c in CASES])
def test_bad_file_fails_cleanly_with_nothing_written(target_project, fmt, names, message):
    project = "target" if fmt == "mturk-csv" else "fresh"
    before = row_counts()
    with pytest.raises(CommandError) as caught:
        run_import(fmt, *(BAD / name for name in names), project=project)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert row_counts() == before


def test_failure_while_writing_rolls_everything_back(monkeypatch):
    """Documents, targets and items are written before the annotations fail: all undone."""

    def broken(self, bundle, items, new_items):
        raise imports.ImportInputError("decontext", "decontext_dev.jsonl", "simulated failure")

    monkeypatch.setattr(imports._ChunkWriter, "_annotations", broken)
    before = row_counts()
    with pytest.raises(CommandError, match="simulated failure"):
        run_import("decontext", FIXTURES / "decontext_dev.jsonl", project="fresh")
    assert row_counts() == before


def test_cli_exits_non_zero_with_one_line(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
           "UNPACK_SQLITE_PATH": str(tmp_path / "cli.sqlite3")}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=settings.BASE_DIR,
                   env=env, check=True, timeout=300)
    result = subprocess.run(
        [sys.executable, "manage.py", "import_data", "claire",
         str(BAD / "claire_short_row" / "dev_data.tsv"), "--project", "cli"],
        cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=120, env=env,
    )
    assert result.returncode != 0
    assert result.stderr.strip() == (
        'CommandError: claire dev_data.tsv line 7: column "Filler3" is missing')
