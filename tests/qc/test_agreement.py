"""Agreement statistics cross-checked against statsmodels and the krippendorff package."""

import math
from collections import defaultdict

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from qc.agreement import (
    RatingTable,
    fleiss_kappa,
    krippendorff_alpha,
    leave_one_out_deviation,
    per_item_agreement,
    worker_consensus_agreement,
)


def rows_from_matrix(matrix):
    """Rows (item, worker, label) from a raters x items matrix with nan for missing."""
    return [
        (item, worker, matrix[worker][item])
        for worker in range(len(matrix))
        for item in range(len(matrix[0]))
        if not (isinstance(matrix[worker][item], float) and math.isnan(matrix[worker][item]))
    ]


def test_fleiss_textbook_example():
    # Fleiss (1971) style table: 3 items x 4 raters, labels a/b.
    rows = [
        (1, "w1", "a"), (1, "w2", "a"), (1, "w3", "a"), (1, "w4", "a"),
        (2, "w1", "a"), (2, "w2", "b"), (2, "w3", "a"), (2, "w4", "b"),
        (3, "w1", "b"), (3, "w2", "b"), (3, "w3", "b"), (3, "w4", "a"),
    ]
    result = fleiss_kappa(rows)
    # P_i = 1, 1/3, 1/2 -> P_obs = 11/18; p_a = 7/12 -> P_exp = (49 + 25) / 144.
    assert result.observed_agreement == pytest.approx(11 / 18)
    assert result.expected_agreement == pytest.approx(74 / 144)
    assert result.kappa == pytest.approx((11 / 18 - 74 / 144) / (1 - 74 / 144))
    assert result.n_items == 3 and result.n_ratings == 12


def test_fleiss_ignores_items_with_one_rating():
    rows = [(1, "a", 1), (1, "b", 1), (2, "a", 0), (2, "b", 1), (3, "c", 0)]
    with_single = fleiss_kappa(rows)
    without = fleiss_kappa(rows[:-1])
    assert with_single.kappa == pytest.approx(without.kappa)
    assert with_single.n_items == 2


def test_fleiss_nan_without_pairs_or_variation():
    assert math.isnan(fleiss_kappa([(1, "a", 1), (2, "a", 1)]).kappa)
    assert math.isnan(fleiss_kappa([(1, "a", 1), (1, "b", 1)]).kappa)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda raters: st.lists(
            st.lists(st.integers(0, 3), min_size=raters, max_size=raters),
            min_size=2,
            max_size=30,
        )
    )
)
def test_fleiss_matches_statsmodels_for_equal_raters(labels_per_item):
    rows = [
        (item, rater, label)
        for item, labels in enumerate(labels_per_item)
        for rater, label in enumerate(labels)
    ]
    table, _ = aggregate_raters(np.array(labels_per_item))
    expected = statsmodels_fleiss(table)
    ours = fleiss_kappa(rows).kappa
    if math.isnan(expected) or math.isinf(expected):
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(expected, abs=1e-9)


def test_fleiss_binary_agreement_percentage():
    rows = [(i, w, int(i % 4 == 0 and w == 0)) for i in range(8) for w in range(3)]
    # Items 0 and 4 have one disagreeing pair in three -> P_i = 1/3; the rest agree fully.
    assert fleiss_kappa(rows).observed_agreement == pytest.approx((6 + 2 / 3) / 8)


matrices = st.integers(2, 5).flatmap(
    lambda raters: st.integers(2, 25).flatmap(
        lambda units: st.lists(
            st.lists(
                st.one_of(st.just(float("nan")), st.integers(1, 5).map(float)),
                min_size=units,
                max_size=units,
            ),
            min_size=raters,
            max_size=raters,
        )
    )
)


@settings(max_examples=80, deadline=None)
@given(matrices, st.sampled_from(["nominal", "ordinal", "interval"]))
def test_krippendorff_matches_reference_package(matrix, level):
    data = np.array(matrix, dtype=float)
    rows = rows_from_matrix(matrix)
    pairable_units = (~np.isnan(data)).sum(axis=0) >= 2
    values_in_pairable = np.unique(data[:, pairable_units][~np.isnan(data[:, pairable_units])])
    if pairable_units.sum() == 0 or len(values_in_pairable) < 2:
        assert math.isnan(krippendorff_alpha(rows, level))
        return
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(rows, level) == pytest.approx(expected, abs=1e-9)


def test_krippendorff_interval_with_float_values():
    rng = np.random.default_rng(7)
    data = rng.normal(size=(4, 50))
    data[rng.random(size=data.shape) < 0.2] = np.nan
    rows = rows_from_matrix(data.tolist())
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert krippendorff_alpha(rows, "interval") == pytest.approx(expected, abs=1e-9)


def test_krippendorff_rejects_unknown_level():
    with pytest.raises(ValueError):
        krippendorff_alpha([(1, "a", 1), (1, "b", 2)], "ratio")


def test_per_item_agreement():
    rows = [(1, "a", "x"), (1, "b", "x"), (1, "c", "y"), (2, "a", "x")]
    items, agreement, n = per_item_agreement(rows)
    assert list(items) == [1, 2]
    assert agreement[0] == pytest.approx(1 / 3)
    assert math.isnan(agreement[1])
    assert list(n) == [3, 1]


def test_worker_consensus_spots_the_contrarian():
    rows = []
    for item in range(20):
        rows += [(item, "good1", 4), (item, "good2", 4), (item, "good3", 5), (item, "bad", 1)]
    result = worker_consensus_agreement(rows)
    by_worker = dict(zip(result.workers.tolist(), range(len(result.workers)), strict=True))
    bad, good = by_worker["bad"], by_worker["good1"]
    assert result.agreement[bad] == 0.0
    assert result.agreement[good] == pytest.approx(1 / 3)
    assert result.mean_abs_deviation[bad] == pytest.approx(abs(1 - 13 / 3))
    assert result.mean_abs_deviation[good] == pytest.approx(abs(4 - 10 / 3))
    assert all(result.n_compared == 20)


@pytest.mark.parametrize("distinct_labels", [3, 400])
def test_worker_consensus_agreement_equals_the_pairs_counted_by_hand(distinct_labels):
    """Few labels (their (item, label) cells counted) and many (free text: found by a sort)
    give each worker's share of agreeing co-raters, counted pair by pair."""
    rng = np.random.default_rng(5)
    rows = [(item, worker, f"label {rng.integers(0, distinct_labels)}")
            for item in range(100) for worker in rng.choice(12, int(rng.integers(1, 6)),
                                                            replace=False).tolist()]
    result = worker_consensus_agreement(rows)
    shares = defaultdict(list)
    for item, worker, label in rows:
        others = [other for i, w, other in rows if i == item and w != worker]
        if others:
            shares[worker].append(sum(other == label for other in others) / len(others))
    for k, worker in enumerate(result.workers.tolist()):
        assert result.n_compared[k] == len(shares[worker])
        if shares[worker]:
            assert result.agreement[k] == pytest.approx(np.mean(shares[worker]))


def test_leave_one_out_deviation_nan_for_lonely_ratings():
    table = RatingTable.from_rows([(1, "a", 2), (1, "b", 4), (2, "a", 5)])
    assert leave_one_out_deviation(table).tolist()[:2] == [-2.0, 2.0]
    assert math.isnan(leave_one_out_deviation(table)[2])


def test_string_ids_and_labels_factorise():
    table = RatingTable.from_rows([("i1", "w1", "DONE"), ("i1", "w2", "IMPOSSIBLE")])
    assert table.items.tolist() == ["i1"]
    assert sorted(table.labels.tolist()) == ["DONE", "IMPOSSIBLE"]
    assert fleiss_kappa(table).observed_agreement == 0.0


def test_mixed_id_types_are_kept_distinct():
    table = RatingTable.from_rows([(1, "w", "x"), ("1", "w", "y"), (1, "v", "x")])
    assert len(table.items) == 2
    assert fleiss_kappa(table).n_items == 1
