"""``bench/bench_crowd_pages.py`` on a small crowd, as a test: workers driven through the real
MTurk task page and submit endpoints, then "Run QC": honest answers keep clear of timing and
effort flags, every random clicker and every pasting worker is flagged (the README's figures
come from the same code on 20 seeds). With 30% random clickers and 30% pasting workers the
batch-relative ``too_fast`` misses the clickers; the absolute per-item floor
(``under_time_floor``) does not."""

import argparse

import pytest
from django.utils import timezone

from bench import bench_crowd_pages as bench

pytestmark = pytest.mark.django_db


def test_a_small_simulated_crowd_is_flagged_where_it_should_be(settings, monkeypatch):
    settings.UNPACK_CROWD_SAVES_PER_ADDRESS = 10**9
    settings.UNPACK_CROWD_SESSIONS_PER_ADDRESS = 10**9
    settings.UNPACK_CROWD_SESSIONS_PER_HIT = 10**9
    clock = bench.Clock()
    monkeypatch.setattr(timezone, "now", clock.now)
    args = argparse.Namespace(workers=20, hits=8, per_hit=4, assignments=3, random=0.15,
                              pasting=0.15)
    result = bench.run_seed(1, args, bench.load_dialogues(), clock)
    assert sum(result["answers"].values()) == 8 * 4 * 3
    assert result["workers"]["honest"] >= 6
    assert result["honest_timing_pct"] <= 2.0
    assert result["honest_effort_pct"] <= 2.0
    assert result["random_workers_any_pct"] == 100.0
    assert result["pasting_workers_effort_pct"] == 100.0
    assert result["pasting_effort_pct"] >= 70.0


def test_random_clickers_are_flagged_for_timing_when_many_workers_are_fast(settings,
                                                                          monkeypatch):
    settings.UNPACK_CROWD_SAVES_PER_ADDRESS = 10**9
    settings.UNPACK_CROWD_SESSIONS_PER_ADDRESS = 10**9
    settings.UNPACK_CROWD_SESSIONS_PER_HIT = 10**9
    clock = bench.Clock()
    monkeypatch.setattr(timezone, "now", clock.now)
    args = argparse.Namespace(workers=20, hits=8, per_hit=4, assignments=3, random=0.3,
                              pasting=0.3)
    result = bench.run_seed(2, args, bench.load_dialogues(), clock)
    assert result["workers"]["random"] >= 4
    assert result["honest_timing_pct"] <= 2.0
    assert result["random_timing_pct"] >= 90.0
