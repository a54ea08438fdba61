"""The binomial advice on gold items per worker (qc.gold), checked against the gold rule."""

import random

import pytest

from qc.flags import FlagSettings, gold_flags
from qc.gold import gold_guidance, gold_items_needed, gold_reliability, min_failures_flagged


def test_twenty_gold_items_give_one_percent_false_flags_and_87_percent_recall():
    found = gold_reliability(20)
    assert found.min_failures == 6  # 6 of 20 = 30 % > 25 %
    assert found.false_flag_rate == pytest.approx(0.0113, abs=0.0005)
    assert found.recall == pytest.approx(0.874, abs=0.001)


def test_fewer_gold_items_flag_more_honest_workers_and_catch_fewer_spammers():
    table = {row.gold_items: row for row in gold_guidance()}
    assert table[5].false_flag_rate > 0.05 and table[5].recall < 0.7
    assert table[50].false_flag_rate < 0.002 and table[50].recall > 0.98
    assert gold_items_needed() == 20
    assert gold_items_needed(max_false_flags=0.001, min_recall=0.99) > 50
    # A threshold above the spammers' error rate never reaches the recall asked for.
    assert gold_items_needed(max_failure_rate=0.5, most=60) is None


def test_threshold_is_the_one_gold_flags_applies():
    settings = FlagSettings(max_gold_failure_rate=0.25)
    for n in (4, 8, 20):
        k = min_failures_flagged(n, 0.25)
        gold = {item: "a" for item in range(n)}
        rows = [("w", item, "b" if item < k else "a") for item in range(n)]
        below = [("w", item, "b" if item < k - 1 else "a") for item in range(n)]
        assert [flag.target_id for flag in gold_flags(rows, gold, settings)] == ["w"]
        assert gold_flags(below, gold, settings) == []


def test_rates_match_a_simulation_of_the_rule():
    rng = random.Random(7)
    settings = FlagSettings(max_gold_failure_rate=0.25)
    gold = {item: "a" for item in range(20)}

    def flagged_share(error: float) -> float:
        rows = [(worker, item, "b" if rng.random() < error else "a")
                for worker in range(4000) for item in gold]
        return len(gold_flags(rows, gold, settings)) / 4000

    expected = gold_reliability(20)
    assert flagged_share(0.10) == pytest.approx(expected.false_flag_rate, abs=0.006)
    assert flagged_share(0.40) == pytest.approx(expected.recall, abs=0.02)


@pytest.mark.parametrize("kwargs", [{"gold_items": 0}, {"gold_items": 5, "honest_error": 1.5},
                                    {"gold_items": 5, "max_failure_rate": 1.0}])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError):
        gold_reliability(**kwargs)
