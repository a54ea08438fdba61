"""bench/bench_crowd.py's equal-cost collection (``collect``): it never collects more
judgements than its budget (gold answers included), a worker the gold rule stopped gets no
more items, items are filled to their target in the work queue's order, and with gold
served first a spammer is stopped before doing much work."""

import numpy as np

from bench import bench_crowd as bench
from qc.flags import FlagSettings
from qc.redundancy import RedundancyPolicy


def crowd(n_items=200, n_workers=30, spammers=(0, 1, 2)):
    """Everyone answers "A" (the truth) but the ``spammers``, who always answer "B"."""
    answer_of = np.full((n_items, n_workers), "A", dtype=object)
    answer_of[:, list(spammers)] = "B"
    gold = {item: "A" for item in range(0, n_items, 20)}
    return answer_of, gold, np.arange(n_items)


def test_the_collection_stays_within_its_budget_and_stopped_workers_get_no_more_items():
    answer_of, gold, groups = crowd()
    collected = bench.collect(answer_of, gold=gold, groups=groups, budget=600,
                              rng=np.random.default_rng(0), numeric=False, concurrent=10,
                              capacity=60, policy=RedundancyPolicy(start=3, maximum=5),
                              gold_rate=0.1, settings=FlagSettings(gold_first=1), stop=True)
    assert collected.judgements == len(collected.rows) <= 600
    assert collected.gold_judgements == sum(item in gold for item, _, _ in collected.rows)
    # Every spammer met a gold item first and was stopped there, after one answer.
    assert set(collected.stopped) == {0, 1, 2}
    for worker, when in collected.stopped.items():
        assert [row for row in collected.rows[when:] if row[1] == worker] == []
        assert sum(row[1] == worker for row in collected.rows) == 1
    # No worker answers an item twice or more than its capacity.
    pairs = [(item, worker) for item, worker, _ in collected.rows]
    assert len(set(pairs)) == len(pairs)
    assert max(np.bincount([worker for _, worker in pairs])) <= 60


def test_without_stopping_spammers_keep_working_and_the_budget_still_holds():
    answer_of, gold, groups = crowd()
    collected = bench.collect(answer_of, gold=gold, groups=groups, budget=500,
                              rng=np.random.default_rng(1), numeric=False, concurrent=30,
                              capacity=100, redundancy=5, gold_rate=0.1, stop=False)
    assert collected.stopped == {}
    assert collected.judgements == 500
    assert sum(row[1] in (0, 1, 2) for row in collected.rows) > 3


def test_items_get_their_target_and_no_more():
    answer_of, _, groups = crowd(n_items=60, n_workers=12, spammers=())
    collected = bench.collect(answer_of, gold={}, groups=groups, budget=10_000,
                              rng=np.random.default_rng(2), numeric=False, concurrent=12,
                              capacity=1000, policy=RedundancyPolicy(start=2, maximum=7))
    counts = np.bincount([item for item, _, _ in collected.rows], minlength=60)
    # Unanimous answers settle an item at start.
    assert counts.tolist() == [2] * 60 and collected.short_items == 0


def test_the_equal_cost_run_never_spends_more_than_fixed_5():
    truth_scores, truth_labels = bench.claire_truth()
    n = 300
    result = bench.equal_cost_run(0, "ratings", "mixed", 0.3, 20, bench.PIPELINES["ratings"],
                                  truth_scores=truth_scores[:n], truth_labels=truth_labels[:n],
                                  groups=bench.claire_groups()[:n])
    assert result["judgements"] <= 1.0
    assert 0 < result["gold_share"] < 0.2
    categorical = bench.equal_cost_run(0, "categorical", "mixed", 0.3, 20,
                                       bench.PIPELINES["categorical"], n_items=300)
    assert categorical["judgements"] <= 1.0 and categorical["spammers_stopped"] > 0
