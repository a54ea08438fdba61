"""QC and exports read in bulk (issue 21, point 3): more flagged answers than PostgreSQL takes
parameters in one statement, unchanged flags not rewritten, and exports whose memory does not
grow with the number of answers (the timing and rating arrays: ``test_qc_arrays.py``)."""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.exporters import export_project
from annotation.models import Annotation, ClozeFiller, ClozeItem, Flag, Item, Worker
from annotation.selectors import exports as export_selectors
from annotation.selectors import qc as qc_selectors
from annotation.services.qc import project_qc_run
from tests.factories import ProjectFactory, annotate, claire_sample, workers

pytestmark = pytest.mark.django_db

WARNED = [{"code": "too_quick", "message": "You answered quickly."}]
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def bulk_plausibility(n_fillers: int, n_workers: int, *, warned: bool, slug: str = "bulk"):
    """``n_fillers`` items rated by each of ``n_workers`` workers, built with bulk_create."""
    project = ProjectFactory(slug=slug, kind="plausibility")
    clozes = ClozeItem.objects.bulk_create(
        ClozeItem(project=project, external_id=str(k), resolved_pattern="FUSED HEAD",
                  article_title="t", sentence="a ______ b") for k in range(n_fillers // 5))
    fillers = ClozeFiller.objects.bulk_create(
        ClozeFiller(cloze=cloze, position=p, text=f"f{p}") for cloze in clozes
        for p in range(1, 6))
    items = Item.objects.bulk_create(
        Item(project=project, external_id=f"{f.cloze_id}_{f.position}", filler=f,
             group_key=str(f.cloze_id), split="dev") for f in fillers)
    crowd = Worker.objects.bulk_create(
        Worker(provider="mturk", external_id=f"A{slug}{k:08d}") for k in range(n_workers))
    Annotation.objects.bulk_create(
        (Annotation(project=project, item=item, worker=worker, source="local",
                    payload={"rating": 3}, rating=1 + (item.pk + worker.pk) % 5,
                    overridden_warnings=WARNED if warned else [],
                    served_at=T0, submitted_at=T0 + timedelta(seconds=20 + item.pk % 7),
                    duration_ms=19_000, state="counted")
         for item in items for worker in crowd), batch_size=5000)
    return project


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_qc_stores_more_flags_than_a_statement_takes_parameters():
    project = bulk_plausibility(14_000, 5, warned=True)  # 70,000 answers, each warned
    assert Annotation.objects.count() == 70_000 > 65_535
    report = project_qc_run(project=project)
    assert report["flags_raised"]["warning_overridden"] == 70_000
    assert report["flags_stored"]["created"] >= 70_000
    assert Flag.objects.filter(reason="warning_overridden").count() == 70_000
    # Again: every flag kept, none rewritten, and then all of them cleared at once.
    again = project_qc_run(project=project)
    assert again["flags_stored"] == {"created": 0, "still_raised": report["flags_stored"]
                                     ["created"], "removed_stale_open": 0}
    Annotation.objects.update(overridden_warnings=[])
    cleared = project_qc_run(project=project)
    assert cleared["flags_stored"]["removed_stale_open"] == 70_000
    assert not Flag.objects.filter(reason="warning_overridden").exists()


def test_an_unchanged_flag_is_not_written_again():
    project, items = claire_sample()
    worker = workers(1)[0]
    annotate(items[0], worker, rating=3, overridden_warnings=WARNED)
    project_qc_run(project=project)
    flag = Flag.objects.get(reason="warning_overridden")
    with CaptureQueriesContext(connection) as queries:
        report = project_qc_run(project=project)
    assert report["flags_stored"] == {"created": 0, "still_raised": 1, "removed_stale_open": 0}
    writes = [q["sql"] for q in queries.captured_queries
              if q["sql"].lstrip().upper().startswith(("UPDATE", "INSERT", "DELETE"))]
    assert writes == []
    flag.refresh_from_db()
    assert flag.status == "open"


def test_warnings_are_filtered_by_the_database():
    project, items = claire_sample()
    crowd = workers(2)
    warned = annotate(items[0], crowd[0], rating=3, overridden_warnings=WARNED)
    for item in items:
        annotate(item, crowd[1], rating=4)
    assert qc_selectors.overridden_warning_rows(project=project) == [(warned.pk, WARNED)]


def export_peak(project, tmp_path, name) -> int:
    tracemalloc.start()
    try:
        export_project(project=project, format_name="jsonl", out_dir=tmp_path / name)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_generic_export_streams_its_memory_flat(tmp_path, monkeypatch):
    # Batches of 500 rows: both sizes span several of them, and of the read-ahead's window (the
    # batch written, the one fetched ahead and the one being fetched on PostgreSQL), so the
    # difference measures what grows with the rows, not the window (5,000 rows a batch).
    monkeypatch.setattr(export_selectors, "FETCH_ROWS", 500)
    small = bulk_plausibility(500, 2, warned=False, slug="small")  # 1,000 answers
    large = bulk_plausibility(4_000, 2, warned=False, slug="large")  # 8,000 answers
    export_peak(small, tmp_path, "warm")  # imports, caches
    small_peak = export_peak(small, tmp_path, "small")
    large_peak = export_peak(large, tmp_path, "large")
    lines = (tmp_path / "large" / "annotations.jsonl").read_text().count("\n")
    assert lines == 8_000
    # Eight times the answers, not eight times the memory: one chunk of rows is held at a
    # time. (Measured: +0.3 KB per extra answer on SQLite, +0.7 KB on PostgreSQL, against a
    # generic row of ~2-3 KB as Python objects were they all held.)
    assert (large_peak - small_peak) / 7_000 < 1_500, (small_peak, large_peak)
