"""The exporters read raw rows (``selectors.exports``) and write them field by field: the bytes
must be those the record-by-record writers wrote (``json_line`` of a dictionary per row from
the ORM), for every kind of value a row can hold."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from annotation.exporters import export_project
from annotation.exporters.base import json_line
from annotation.models import Annotation, Flag
from annotation.selectors import exports as export_selectors
from annotation.selectors import qc as qc_selectors
from tests.factories import ItemFactory, annotate, canard_sample, workers

pytestmark = pytest.mark.django_db

AWKWARD = {
    "zeta": 'quote " backslash \\ tab \t newline \n bell \x07 del \x7f',
    "a": "Zürich — 東京 \u2028 😀",
    "mid": [0.1, 1e20, -0.0, 12345678901234567890, True, None, {"bb": 1, "a": 2}],
    "ccc": {"z": [], "yy": {}, "x": 3.5},
}


def reference_lines(project) -> str:
    """The generic JSONL as it was written before: one dictionary per ORM row, json_line."""
    anonymous = qc_selectors.AnonymousIds()
    out = []
    for row in qc_selectors.generic_annotation_rows(project=project):
        (annotation_id, _item_pk, item_external_id, split, group_key, worker_pk, provider,
         worker_external_id, source, assignment_id, hit_id, payload, category, rating, text,
         skipped, edit_operations, started_at, submitted_at, duration_ms, client_warnings,
         overridden_warnings, server_warnings, review_status, provenance) = row
        flags = {annotation_id: [
            {"reason": reason, "score": score, "status": status, "detail": detail}
            for reason, score, status, detail in Flag.objects.filter(
                annotation_id=annotation_id).order_by("reason", "id").values_list(
                "reason", "score", "status", "detail")]}
        out.append(json_line({
            "project": project.slug, "task": project.kind, "annotation_id": annotation_id,
            "item_id": item_external_id, "split": split, "group_key": group_key,
            "worker_id": anonymous.get(worker_pk, provider, worker_external_id),
            "source": source, "assignment_id": assignment_id, "hit_id": hit_id,
            "payload": payload, "category": category or None, "rating": rating, "text": text,
            "skipped": skipped, "edit_operations": edit_operations,
            "started_at": started_at.isoformat() if started_at else None,
            "submitted_at": submitted_at.isoformat() if submitted_at else None,
            "duration_ms": duration_ms,
            "warnings": {"shown": client_warnings, "overridden": overridden_warnings,
                         "server": server_warnings},
            "flags": flags[annotation_id], "review_status": review_status,
            "provenance": provenance,
        }))
    return "".join(out)


def test_generic_jsonl_bytes_are_json_line_of_each_record(tmp_path):
    project, items = canard_sample()
    first, second = workers(2)
    plain = annotate(items[0], first, text="When did they disband?", duration_ms=4200,
                     started_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                     submitted_at=datetime(2026, 1, 2, 3, 4, 9, 123456, tzinfo=UTC))
    awkward = annotate(items[1], second, text='Tab\tand "quotes" \\ ünïcode \x01',
                       payload=AWKWARD, rating=3.5, category="",
                       edit_operations=[{"op": "add", "start": 0, "end": 2, "text": "x"}],
                       client_warnings=["rewrite_pronoun_left"],
                       overridden_warnings=[{"message": "é", "code": "c"}],
                       provenance={"line": 2, "file": "dev.json", "ids": {"b": 1, "a": 0}},
                       skipped=True)
    annotate(items[2], first, text="rejected", review_status="rejected", rating=5.0,
             # fractions with trailing zeros (PostgreSQL's to_json drops them; isoformat not)
             started_at=datetime(999, 12, 31, 23, 59, 59, 37000, tzinfo=UTC),
             submitted_at=datetime(2026, 1, 2, 3, 4, 9, 500000, tzinfo=UTC))
    gold = ItemFactory(project=project, external_id="gold-1", is_gold=True)
    annotate(gold, first, text="a gold answer is never exported")
    for annotation, reason, score, detail in (
            (awkward, "too_fast", 0.25, '1.5 s "ß"\t'),
            (awkward, "copy_of_input", 1.0, ""),
            (plain, "copy_of_input", 1e-7, "why: x")):
        project.flags.create(annotation=annotation, worker=annotation.worker, reason=reason,
                             score=score, detail=detail,
                             fingerprint=f"{reason}:{annotation.pk}")
    export_project(project=project, format_name="jsonl", out_dir=tmp_path)
    written = (tmp_path / "annotations.jsonl").read_bytes()
    assert written == reference_lines(project).encode("utf-8")
    assert written.count(b"\n") == 3  # the gold answer is left out
    assert "東京".encode() in written


def test_canonical_json_stays_right_once_its_memo_is_full():
    canonical = export_selectors.CanonicalJson(limit=2)
    texts = ['{"b": 1, "a": [1, 2]}', "[]", '{"zz": "é", "y": null}', '{"b": 1, "a": [1, 2]}']
    assert [canonical(text) for text in texts] == [
        '{"a": [1, 2], "b": 1}', "[]", '{"y": null, "zz": "é"}', '{"a": [1, 2], "b": 1}']
    assert len(canonical._memo) <= 2


def test_stream_rows_gives_json_columns_as_text():
    project, items = canard_sample()
    annotate(items[0], workers(1)[0], text="x", payload={"b": 2, "a": 1})
    rows = list(export_selectors.stream_rows(
        Annotation.objects.filter(project=project).values_list("id", "payload")))
    assert len(rows) == 1 and isinstance(rows[0][1], str)


def test_hf_answers_are_the_payload_as_json_dumps_writes_it(tmp_path):
    import json

    import pyarrow.parquet as pq

    project, items = canard_sample()
    first, second = workers(2)
    annotate(items[0], first, text="x", payload=AWKWARD)
    annotate(items[0], second, text="y", payload={"full_question": "Why ß?", "skipped": False})
    export_project(project=project, format_name="hf", out_dir=tmp_path)
    (row,) = pq.read_table(tmp_path / "dev.parquet").to_pylist()
    # The payloads as the ORM reads them back (PostgreSQL's jsonb keeps 1e20 as an integer).
    stored = Annotation.objects.filter(project=project).order_by("id").values_list(
        "payload", flat=True)
    assert [answer["answer"] for answer in row["annotations"]] == [
        json.dumps(payload, sort_keys=True, ensure_ascii=False) for payload in stored]


def test_read_ahead_gives_every_batch_in_order_and_raises_the_threads_error():
    batches = iter([[1, 2], [3], []])
    assert list(export_selectors.read_ahead(lambda: next(batches))) == [[1, 2], [3]]

    def broken():
        raise RuntimeError("connection lost")

    with pytest.raises(RuntimeError, match="connection lost"):
        list(export_selectors.read_ahead(broken))


def test_read_ahead_stopped_early_ends_its_thread():
    fetched = []

    def endless():
        fetched.append(1)
        return [len(fetched)]

    reader = export_selectors.read_ahead(endless, depth=1)
    assert next(reader) == [1]
    reader.close()  # the caller stops (an export refused halfway)
    assert len(fetched) <= 3  # the thread stopped instead of fetching on
    assert not [thread for thread in threading.enumerate()
                if thread.name == "export-read-ahead"]
