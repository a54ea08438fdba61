"""QC reads answers as arrays (issue 21, point 3): the timing facts and the ratings come from
the database as numbers, in bulk, and say what the rows say; the rating table is read once per
QC run and shared by agreement, worker quality, intervals and the worker flags."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation, Assignment, Flag
from annotation.selectors import qc as qc_selectors
from annotation.services.qc import project_qc_run
from tests.factories import annotate, claire_sample, publish_hit, workers

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 1, 12, 0, 0, 250_000, tzinfo=UTC)


def test_timing_arrays_carry_pages_seconds_and_revisions():
    project, items = claire_sample()
    first, second = workers(2)
    hit = publish_hit(project, items=items)
    assignment = Assignment.objects.create(hit=hit, worker=first, provider_assignment_id="A1")
    # One page of two answers (same assignment, same served_at), an answer of the same
    # assignment served later (a page of its own), a local answer and its revision.
    a = annotate(items[0], first, rating=3, assignment=assignment, served_at=T0,
                 submitted_at=T0 + timedelta(seconds=20), duration_ms=9_500)
    b = annotate(items[1], first, rating=4, assignment=assignment, served_at=T0,
                 submitted_at=T0 + timedelta(seconds=21.5), duration_ms=None)
    c = annotate(items[2], first, rating=2, assignment=assignment,
                 served_at=T0 + timedelta(minutes=5), submitted_at=T0 + timedelta(minutes=6),
                 duration_ms=4_000)
    d = annotate(items[3], second, rating=5, served_at=None, submitted_at=T0,
                 duration_ms=7_000)
    Annotation.objects.filter(pk=d.pk).update(state=Annotation.State.SUPERSEDED)
    e = annotate(items[3], second, rating=4, served_at=None, submitted_at=T0,
                 duration_ms=1_000, supersedes=d)
    annotate(items[4], second, rating=1)  # no duration, no serving time: not a timing row

    timings = qc_selectors.timing_arrays(project=project)

    assert timings.target_ids.tolist() == [a.pk, b.pk, c.pk, e.pk]
    pages = timings.page_codes.tolist()
    assert pages[0] == pages[1] and len({pages[0], pages[2], pages[3]}) == 3
    assert timings.claimed_seconds[[0, 2, 3]].tolist() == [9.5, 4.0, 1.0]
    assert np.isnan(timings.claimed_seconds[1])
    # The database's seconds are the datetimes' POSIX timestamps (SQLite: to the millisecond).
    assert timings.served_at[0] == pytest.approx(T0.timestamp(), abs=1e-3)
    assert timings.submitted_at[1] == pytest.approx(T0.timestamp() + 21.5, abs=1e-3)
    assert np.isnan(timings.served_at[3])
    assert timings.revision.tolist() == [False, False, False, True]


def test_the_answers_are_read_twice_per_qc_run():
    """One read of the crowd ratings feeds the rating table and the crowd's means; one bulk
    read of the answers the timing facts and the dashboard's times, days and per-worker
    counts: no other statement reads the ratings, the serving times or the durations, none
    averages the ratings or groups the answers by worker or day."""
    project, items = claire_sample()
    for worker in workers(3):
        for k, item in enumerate(items):
            annotate(item, worker, rating=1 + (k + worker.pk) % 5, served_at=T0,
                     submitted_at=T0 + timedelta(seconds=20), duration_ms=9_000)
    with CaptureQueriesContext(connection) as queries:
        report = project_qc_run(project=project)
    answer_reads = [query["sql"] for query in queries.captured_queries
                    if "annotation_annotation" in query["sql"]]
    # (The released means of imported rows are read as they are, with their sentence; the
    # approved work's time, through the approved assignments.)
    answer_reads = [sql for sql in answer_reads if "annotation_clozefiller" not in sql
                    and "annotation_assignment" not in sql]
    bulk = [sql for sql in answer_reads if '"served_at"' in sql or '"rating"' in sql]
    assert len(bulk) == 2 and '"served_at"' not in bulk[0] and '"rating"' not in bulk[1], bulk
    others = [sql for sql in answer_reads if sql not in bulk]
    assert not [sql for sql in others if any(part in sql for part in (
        '"duration_ms"', "::date", "django_datetime_cast_date",
        'GROUP BY "annotation_annotation"."worker_id"'))], others
    assert report["agreement"]["n_ratings"] == 15
    assert report["worker_quality"]["n_items"] == 5
    assert set(report["agreement"]["intervals_by_split"]) == {"dev"}
    assert report["dashboard"]["answers_by_day"] == [{"day": "2026-11-01", "answers": 15}]


def test_the_dashboard_parts_from_the_bulk_read_say_what_their_statements_say():
    """Per-worker counts, answers per day and the durations from ``qc_answer_columns``, and
    the crowd's means per filler from ``crowd_ratings``, equal the grouped statements they
    replace (rejected, imported, superseded and provisional answers among them; days cut at
    UTC midnight)."""
    from django.db.models import Avg

    from annotation.selectors import dashboard as dashboard_selectors

    project, items = claire_sample()
    first, second, third = workers(3)
    annotate(items[0], first, rating=2, submitted_at=T0.replace(hour=23, minute=59),
             duration_ms=4_000)
    annotate(items[0], second, rating=5, submitted_at=T0 + timedelta(days=1, hours=-11),
             duration_ms=None)
    annotate(items[1], first, rating=3, submitted_at=T0 + timedelta(days=3))
    rejected = annotate(items[1], second, rating=1, submitted_at=T0, duration_ms=2_000)
    Annotation.objects.filter(pk=rejected.pk).update(
        state=Annotation.State.REJECTED, review_status=Annotation.Review.REJECTED)
    approved = annotate(items[2], third, rating=4, submitted_at=T0, duration_ms=7_000)
    Annotation.objects.filter(pk=approved.pk).update(review_status=Annotation.Review.APPROVED)
    hidden = annotate(items[3], third, rating=1, submitted_at=T0, duration_ms=1)
    Annotation.objects.filter(pk=hidden.pk).update(state=Annotation.State.PROVISIONAL)
    annotate(items[4], third, rating=3.5, source=Annotation.Source.IMPORT,
             submitted_at=T0)
    answers = qc_selectors.qc_answer_columns(project=project)

    assert dashboard_selectors.answers_by_day(project=project, answers=answers) == \
        dashboard_selectors.answers_by_day(project=project) == [
            {"day": "2026-11-01", "answers": 2}, {"day": "2026-11-02", "answers": 1},
            {"day": "2026-11-04", "answers": 1}]
    with_columns = dashboard_selectors.worker_figures(
        project=project, agreement={}, reliability={}, answers=answers)
    alone = dashboard_selectors.worker_figures(project=project, agreement={}, reliability={})
    assert with_columns == alone
    assert [(row["answers"], row["approved"], row["rejected"]) for row in alone] == [
        (2, 0, 0), (2, 0, 1), (2, 1, 0)]
    figures = dashboard_selectors.dashboard_figures(project=project, report={},
                                                    answers=answers)
    assert figures == dashboard_selectors.dashboard_figures(project=project, report={})
    item_ids, means = qc_selectors.crowd_rating_means(
        qc_selectors.crowd_ratings(project=project))
    expected = (qc_selectors.exportable_annotations(project=project)
                .filter(rating__isnull=False).exclude(source=Annotation.Source.IMPORT)
                .values("item_id").annotate(mean=Avg("rating")).order_by("item_id")
                .values_list("item_id", "mean"))
    assert list(zip(item_ids.tolist(), means.tolist(), strict=True)) == list(expected)
    assert [item_id for item_id, _ in expected] == [items[0].pk, items[1].pk, items[2].pk]


def test_numeric_columns_keep_the_order_values_list_names():
    project, items = claire_sample()
    worker = workers(1)[0]
    answer = annotate(items[0], worker, rating=2, served_at=T0, submitted_at=T0)
    columns = qc_selectors.numeric_columns(
        Annotation.objects.filter(project=project)
        .annotate(served_s=qc_selectors.EpochSeconds("served_at"))
        .values_list("served_s", "rating", "id"))
    assert columns.shape == (1, 3)
    assert columns[0, 1:].tolist() == [2.0, float(answer.pk)]
    assert columns[0, 0] == pytest.approx(T0.timestamp(), abs=1e-3)


def test_a_score_equal_but_for_its_last_bits_is_not_rewritten():
    """A score recomputed in another summation order (bincount against a Python sum) may
    differ in its last bits: the same finding, no UPDATE; a real change is written."""
    project, items = claire_sample()
    worker = workers(1)[0]
    annotate(items[0], worker, rating=3,
             overridden_warnings=[{"code": "too_quick", "message": "fast"}])
    project_qc_run(project=project)
    flag = Flag.objects.get(reason="warning_overridden")
    Flag.objects.filter(pk=flag.pk).update(score=flag.score * (1 + 1e-12))
    with CaptureQueriesContext(connection) as queries:
        project_qc_run(project=project)
    assert not [query for query in queries.captured_queries
                if query["sql"].lstrip().upper().startswith("UPDATE")
                and "annotation_flag" in query["sql"]]
    assert Flag.objects.get(pk=flag.pk).score == 1.0 * (1 + 1e-12)
    Flag.objects.filter(pk=flag.pk).update(score=1.5)
    project_qc_run(project=project)
    assert Flag.objects.get(pk=flag.pk).score == 1.0  # the rule's score, written again


def test_pair_codes_are_the_distinct_pairs_in_sorted_order():
    rng = np.random.default_rng(5)
    first = rng.integers(0, 30, 500).astype(np.float64)
    second = rng.choice([-np.inf, 1.5, 2.5, 1e9], 500)
    _, expected = np.unique(np.stack([first, second], axis=1), axis=0, return_inverse=True)
    assert qc_selectors._pair_codes(first, second).tolist() == expected.ravel().tolist()


def test_dashboard_time_bins_and_rating_counts_from_the_arrays_qc_read():
    """The time plot's bins (from the durations read once for it and the workers' medians)
    and the ratings per value (counted from the QC run's rating table) say what the rows
    say."""
    from annotation.selectors.dashboard import duration_histogram, rating_counts, ratings_by_value
    from annotation.services.qc import rating_table

    project, items = claire_sample()
    first, second = workers(2)
    for item, milliseconds, rating in zip(items, (500, 1_000, 1_500, 2_000, 100_000),
                                          (1, 2, 2, 4.4, 5), strict=True):
        annotate(item, first, rating=rating, duration_ms=milliseconds)
    annotate(items[0], second, rating=3, duration_ms=None)
    histogram = duration_histogram(project=project)
    # 99th percentile of five: the largest (100 s); 20 bins of 5 s, the last one open.
    assert histogram["n"] == 5 and histogram["width_ms"] == 5_000.0
    assert histogram["counts"] == [4] + [0] * 18 + [1]
    assert ratings_by_value(rating_table(project, with_gold=True)) == \
        rating_counts(project=project) == {1: 1, 2: 2, 3: 1, 4: 1, 5: 1}


def test_timing_arrays_carry_the_words_each_item_shows_and_qc_flags_under_the_floor():
    """The floor's words per item (sluice: Q1, A1 and the sluice: 5 + 3 + 1 words; the claire
    sample's fillers: none counted), and "Run QC" stores ``under_time_floor`` on the answer
    worked under it -- not on the one above it."""
    from tests.factories import sluice_project

    project = sluice_project(items=2)
    items = list(project.items.order_by("id"))
    assert qc_selectors.item_read_words(project=project) == {item.pk: 9 for item in items}
    quick, slow = workers(2)
    fast = annotate(items[0], quick, text="Why did he leave?", served_at=T0,
                    submitted_at=T0 + timedelta(seconds=1.5), duration_ms=1_200)
    annotate(items[1], slow, text="Why did he leave the band?", served_at=T0,
             submitted_at=T0 + timedelta(seconds=30), duration_ms=29_000)
    timings = qc_selectors.timing_arrays(project=project)
    assert timings.read_words.tolist() == [9.0, 9.0]
    project_qc_run(project=project)
    floored = Flag.objects.filter(project=project, reason="under_time_floor")
    assert [flag.annotation_id for flag in floored] == [fast.pk]
    assert "under its floor of 3.8s: 2s plus 9 words at 300 words a minute" in floored[0].detail

    claire, _ = claire_sample(slug="claire-floor")
    assert qc_selectors.item_read_words(project=claire) == {}


@pytest.mark.django_db(transaction=True)
def test_answer_columns_read_alongside_equal_the_plain_read_and_run_on_their_own_connection():
    """On PostgreSQL outside a transaction the QC run's answer columns are read by a thread
    of their own while the statistics are computed (``answer_columns_reader``): the same
    columns as the plain read, and a QC run gives the same report either way. Inside a
    transaction (another connection would not see its writes) the read waits for the call."""
    project, items = claire_sample()
    for k, worker in enumerate(workers(3)):
        for n, item in enumerate(items):
            annotate(item, worker, rating=1 + (k + n) % 5, served_at=T0,
                     submitted_at=T0 + timedelta(seconds=10 + n), duration_ms=3_000 + 10 * n)
    threads = []
    original = qc_selectors.threading.Thread

    def counted_thread(*args, **kwargs):
        threads.append(kwargs.get("name"))
        return original(*args, **kwargs)

    plain = qc_selectors.qc_answer_columns(project=project)
    qc_selectors.threading.Thread = counted_thread
    try:
        alongside = qc_selectors.answer_columns_reader(project=project)()
        report = project_qc_run(project=project, store_flags=False)
    finally:
        qc_selectors.threading.Thread = original
    expected_threads = 2 if connection.vendor == "postgresql" else 0
    assert len(threads) == expected_threads
    for name in ("ids", "item_ids", "worker_ids", "duration_ms", "served_s", "submitted_s",
                 "state", "review"):
        assert np.array_equal(getattr(alongside, name), getattr(plain, name), equal_nan=True)
    from django.db import transaction
    with transaction.atomic():
        reader = qc_selectors.answer_columns_reader(project=project)
        assert len(threads) == expected_threads  # no thread inside a transaction
        assert np.array_equal(reader().ids, plain.ids)
    assert report["flags_raised"] == project_qc_run(project=project,
                                                    store_flags=False)["flags_raised"]
