"""The default adaptive redundancy policy (tuned on bench/bench_crowd.py, docs/qc.md): two
agreeing answers settle an item, disagreement asks for more, up to seven."""

from __future__ import annotations

from qc.redundancy import RedundancyPolicy, needs_more


def test_the_defaults_settle_two_agreeing_answers_and_ask_more_where_they_disagree():
    policy = RedundancyPolicy()
    assert (policy.start, policy.maximum, policy.min_margin) == (2, 7, 2)
    assert needs_more(["A"], policy, numeric=False)  # below start
    assert not needs_more(["A", "A"], policy, numeric=False)
    assert needs_more(["A", "B"], policy, numeric=False)
    assert needs_more(["A", "B", "A"], policy, numeric=False)  # 2-1: margin 1
    assert not needs_more(["A", "B", "A", "A"], policy, numeric=False)  # 3-1
    assert not needs_more(list("ABCABCA"), policy, numeric=False)  # the maximum
    assert not needs_more([5, 5], policy, numeric=True)  # mean 5: far from 4
    assert needs_more([4, 3], policy, numeric=True)  # mean 3.5: 0.5 < 1.2 × 0.71 / √2
    assert needs_more([4, 4], policy, numeric=True)  # on the boundary 4
    assert not needs_more([1, 1, 2], policy, numeric=True)  # mean 1.33: 1.17 from 2.5
    assert not needs_more([4, 4, 3, 5, 4, 3, 5], policy, numeric=True)  # the maximum


def test_adaptive_target_is_start_then_one_more_while_the_answers_disagree():
    from qc.redundancy import adaptive_target

    policy = RedundancyPolicy(start=3, maximum=5)
    assert adaptive_target([], policy, numeric=False) == 3
    assert adaptive_target(["A", "B"], policy, numeric=False) == 3  # below start
    assert adaptive_target(["A", "A", "B"], policy, numeric=False) == 4  # 2-1: one more
    assert adaptive_target(["A", "A", "A"], policy, numeric=False) == 3  # settled
    assert adaptive_target(list("AABBA"), policy, numeric=False) == 5  # never above maximum
