"""When a worker is served a gold item (qc.gold.gold_due) and which (gold_item_choice): the
rules the local work queue follows and bench/bench_crowd.py's collection reuses."""

from qc.gold import gold_due, gold_item_choice


def served_gold(n_items: int, *, rate: float, first: int = 0) -> list[int]:
    """Positions (1-based) of the gold items among a worker's first ``n_items``."""
    positions, gold = [], 0
    for answered in range(n_items):
        if gold_due(answered=answered, gold_answered=gold, rate=rate, first=first):
            positions.append(answered + 1)
            gold += 1
    return positions


def test_every_tenth_item_is_gold_at_rate_0_1():
    assert served_gold(30, rate=0.1) == [10, 20, 30]


def test_no_gold_at_rate_zero_even_with_gold_first():
    assert served_gold(30, rate=0.0, first=3) == []


def test_gold_first_serves_the_first_items_as_gold_and_they_count_towards_the_rate():
    assert served_gold(45, rate=0.1, first=3) == [1, 2, 3, 40]
    # Past first / rate items the share is the rate's again.
    assert len(served_gold(200, rate=0.1, first=3)) == 20


def test_the_gold_item_chosen_depends_on_the_worker_and_none_when_none_is_left():
    candidates = [11, 12, 13, 14, 15]
    assert gold_item_choice(candidates, 1) == candidates[7919 % 5]
    assert {gold_item_choice(candidates, worker) for worker in range(1, 6)} == set(candidates)
    assert gold_item_choice([], 3) is None
