"""Inter-annotator agreement over plain rating rows.

Every function takes ratings as rows ``(item_id, worker_id, label)`` (any iterable of
3-tuples) or as a prebuilt :class:`RatingTable`. Ids may be ints or strings; labels are
categories (nominal) or numbers (ordinal / interval). Nothing here loops over rows in
Python: rows are factorised once into integer codes and the statistics are computed with
``numpy.bincount`` and sparse matrix products, so a million ratings take well under a
second per statistic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import sparse

Level = Literal["nominal", "ordinal", "interval"]


def factorize(values) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(codes, uniques)`` with ``uniques[codes] == values``; uniques are sorted.

    Numeric and fixed-width string arrays go through ``np.unique`` (C speed); mixed Python
    objects fall back to a dict pass, which is still linear.
    """
    array = np.asarray(values)
    if array.dtype != object:
        uniques, codes = np.unique(array, return_inverse=True)
        return codes.astype(np.int64, copy=False).ravel(), uniques
    first_code: dict = {}
    codes = np.fromiter(
        (first_code.setdefault(value, len(first_code)) for value in array.tolist()),
        dtype=np.int64,
        count=len(array),
    )
    uniques = np.empty(len(first_code), dtype=object)
    uniques[:] = list(first_code)
    return codes, uniques


@dataclass(frozen=True)
class RatingTable:
    """Ratings factorised into integer codes (one entry per rating).

    ``item_codes[k]``, ``worker_codes[k]`` and ``label_codes[k]`` describe rating ``k``;
    ``items``, ``workers`` and ``labels`` map codes back to the original values.
    ``labels`` is sorted, so label codes respect numeric order for ordinal data.
    """

    item_codes: np.ndarray
    worker_codes: np.ndarray
    label_codes: np.ndarray
    items: np.ndarray
    workers: np.ndarray
    labels: np.ndarray

    @classmethod
    def from_arrays(cls, item_ids, worker_ids, labels) -> RatingTable:
        """Build from three equal-length sequences."""
        item_codes, items = factorize(item_ids)
        worker_codes, workers = factorize(worker_ids)
        label_codes, label_values = factorize(labels)
        if not (len(item_codes) == len(worker_codes) == len(label_codes)):
            raise ValueError("item_ids, worker_ids and labels must have the same length")
        return cls(item_codes, worker_codes, label_codes, items, workers, label_values)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple]) -> RatingTable:
        """Build from ``(item_id, worker_id, label)`` rows."""
        rows = list(rows)
        if not rows:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty, np.array([]), np.array([]), np.array([]))
        item_ids, worker_ids, labels = zip(*rows, strict=True)
        return cls.from_arrays(_as_array(item_ids), _as_array(worker_ids), _as_array(labels))

    @property
    def n_ratings(self) -> int:
        return len(self.item_codes)

    def label_values(self) -> np.ndarray:
        """Numeric value of every rating (requires numeric labels)."""
        return self.labels.astype(np.float64)[self.label_codes]

    def item_label_counts(self) -> sparse.csr_matrix:
        """Sparse ``items x labels`` matrix of how many ratings gave each label."""
        ones = np.ones(self.n_ratings, dtype=np.float64)
        shape = (len(self.items), len(self.labels))
        return sparse.csr_matrix((ones, (self.item_codes, self.label_codes)), shape=shape)


def _as_array(values: tuple) -> np.ndarray:
    """Turn a tuple of ids/labels into the cheapest numpy array that keeps their values."""
    array = np.asarray(values)
    if array.dtype.kind in "iuf":
        return array
    # numpy turns a mix like (1, "a") into strings; only genuine all-str input stays "U".
    if array.dtype.kind == "U" and all(isinstance(value, str) for value in values):
        return array
    result = np.empty(len(values), dtype=object)
    result[:] = values
    return result


def as_table(ratings) -> RatingTable:
    """Accept a :class:`RatingTable` or an iterable of rows and return a table."""
    if isinstance(ratings, RatingTable):
        return ratings
    return RatingTable.from_rows(ratings)


@dataclass(frozen=True)
class FleissResult:
    """Fleiss' kappa and its parts.

    ``observed_agreement`` is the mean over items of the proportion of agreeing rater pairs
    (the paper's "agreement %" when the labels are binary); ``expected_agreement`` is the
    chance agreement from the pooled label distribution.
    """

    kappa: float
    observed_agreement: float
    expected_agreement: float
    n_items: int
    n_ratings: int


def fleiss_kappa(ratings) -> FleissResult:
    """Fleiss' kappa, generalised to an unequal number of raters per item.

    For item i with n_i >= 2 ratings, P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1)); the
    observed agreement is the mean of P_i; label shares p_j pool all ratings on those items;
    kappa = (P_obs - P_exp) / (1 - P_exp) with P_exp = sum_j p_j^2. Items with fewer than two
    ratings carry no agreement information and are ignored. With equal raters per item this
    is exactly the textbook statistic (statsmodels ``fleiss_kappa``). Returns ``nan`` kappa
    when no item has two ratings or when every rating has the same label.
    """
    table = as_table(ratings)
    counts = table.item_label_counts()
    raters_per_item = np.asarray(counts.sum(axis=1)).ravel()
    usable = raters_per_item >= 2
    if not usable.any():
        return FleissResult(float("nan"), float("nan"), float("nan"), 0, 0)
    counts = counts[usable]
    n_i = raters_per_item[usable]
    squared_sums = np.asarray(counts.multiply(counts).sum(axis=1)).ravel()
    per_item = (squared_sums - n_i) / (n_i * (n_i - 1))
    observed = float(per_item.mean())
    label_shares = np.asarray(counts.sum(axis=0)).ravel() / n_i.sum()
    expected = float(np.square(label_shares).sum())
    kappa = float("nan") if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return FleissResult(kappa, observed, expected, int(usable.sum()), int(n_i.sum()))


def per_item_agreement(ratings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: ``(item_ids, pairwise_agreement, n_ratings)``.

    ``pairwise_agreement`` is the share of rater pairs on the item that chose the same label
    (the P_i of Fleiss' kappa); it is ``nan`` for items with a single rating.
    """
    table = as_table(ratings)
    counts = table.item_label_counts()
    n_i = np.asarray(counts.sum(axis=1)).ravel()
    squared_sums = np.asarray(counts.multiply(counts).sum(axis=1)).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = np.where(n_i >= 2, (squared_sums - n_i) / (n_i * (n_i - 1)), np.nan)
    return table.items, agreement, n_i.astype(np.int64)


def krippendorff_alpha(ratings, level: Level = "nominal") -> float:
    """Krippendorff's alpha for ``nominal``, ``ordinal`` or ``interval`` labels.

    Coincidence-matrix formulation (Krippendorff 2011): a unit (item) with m_u >= 2 values
    contributes 1 / (m_u - 1) for every ordered pair of its values; units with one value are
    not pairable and are dropped, so missing ratings and unequal raters need no special
    handling. alpha = 1 - (n - 1) * sum(o_ck d_ck) / sum(n_c n_k d_ck). Ordinal distances use
    the ranks of the observed values (the sorted distinct labels), as the ``krippendorff``
    package does; interval distances are squared differences, computed from per-unit sums so
    that any number of distinct float values is cheap. Returns ``nan`` when there is no
    pairable unit or no variation.
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"unknown level of measurement: {level!r}")
    table = as_table(ratings)
    counts = table.item_label_counts()
    m_u = np.asarray(counts.sum(axis=1)).ravel()
    pairable = m_u >= 2
    if not pairable.any():
        return float("nan")
    counts = counts[pairable]
    m_u = m_u[pairable]
    if level == "interval":
        return _interval_alpha(counts, m_u, table.labels.astype(np.float64))
    inverse_weight = sparse.diags(1.0 / (m_u - 1.0))
    coincidences = (counts.T @ inverse_weight @ counts).toarray()
    coincidences -= np.diag(np.asarray((inverse_weight @ counts).sum(axis=0)).ravel())
    n_c = coincidences.sum(axis=1)
    n_total = n_c.sum()
    if level == "nominal":
        distance = 1.0 - np.eye(len(n_c))
    else:
        cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
        low = np.minimum.outer(np.arange(len(n_c)), np.arange(len(n_c)))
        high = np.maximum.outer(np.arange(len(n_c)), np.arange(len(n_c)))
        between = cumulative[high + 1] - cumulative[low]
        distance = np.square(between - (n_c[low] + n_c[high]) / 2.0)
    observed = float((coincidences * distance).sum())
    expected = float((np.outer(n_c, n_c) * distance).sum())
    if expected == 0.0:
        return float("nan")
    return 1.0 - (n_total - 1.0) * observed / expected


def _interval_alpha(counts: sparse.csr_matrix, m_u: np.ndarray, values: np.ndarray) -> float:
    """Interval alpha via sums: sum_{i != j in u} (v_i - v_j)^2 = 2 m S2 - 2 S1^2."""
    unit_sum = counts @ values
    unit_sum_squares = counts @ np.square(values)
    observed = float(((2 * m_u * unit_sum_squares - 2 * np.square(unit_sum)) / (m_u - 1)).sum())
    n_total = float(m_u.sum())
    total_sum = float(unit_sum.sum())
    expected = 2 * n_total * float(unit_sum_squares.sum()) - 2 * total_sum**2
    if expected == 0.0:
        return float("nan")
    return 1.0 - (n_total - 1.0) * observed / expected


@dataclass(frozen=True)
class WorkerAgreement:
    """Per-worker leave-one-out agreement with the consensus of the other raters.

    Arrays are aligned: ``workers[k]`` rated ``n_compared[k]`` items that had at least one
    other rating. ``agreement[k]`` is, for categorical labels, the mean share of the other
    raters of an item who gave the worker's label; ``mean_abs_deviation[k]`` is, for numeric
    labels, the mean absolute distance between the worker's rating and the mean of the
    other ratings of the item (``nan`` when the labels are not numeric). Workers whose items
    were all rated only by them get ``n_compared == 0`` and ``nan`` scores.
    """

    workers: np.ndarray
    n_compared: np.ndarray
    agreement: np.ndarray
    mean_abs_deviation: np.ndarray


def worker_consensus_agreement(ratings) -> WorkerAgreement:
    """Leave-one-out agreement of every worker with the other raters of the same items."""
    table = as_table(ratings)
    n_workers = len(table.workers)
    n_i = np.bincount(table.item_codes, minlength=len(table.items))[table.item_codes]
    # How many ratings of the same item share this rating's label (itself included).
    pair_codes = table.item_codes * max(len(table.labels), 1) + table.label_codes
    if len(table.items) * max(len(table.labels), 1) <= 4 * max(len(pair_codes), 1):
        # Few enough (item, label) cells to count them all: a count, not a sort.
        same_label = np.bincount(pair_codes)[pair_codes]
    else:  # free text: nearly every label its own, the cells far outnumber the ratings
        _, pair_inverse, pair_counts = np.unique(pair_codes, return_inverse=True,
                                                 return_counts=True)
        same_label = pair_counts[pair_inverse.ravel()]
    comparable = n_i >= 2
    others = np.maximum(n_i - 1, 1)
    rating_agreement = (same_label - 1) / others
    worker_codes = table.worker_codes[comparable]
    n_compared = np.bincount(worker_codes, minlength=n_workers)
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = (
            np.bincount(worker_codes, rating_agreement[comparable], minlength=n_workers)
            / n_compared
        )
    deviation = np.full(n_workers, np.nan)
    if table.labels.dtype.kind in "iuf":
        deviation_per_rating = np.abs(leave_one_out_deviation(table))
        with np.errstate(divide="ignore", invalid="ignore"):
            deviation = (
                np.bincount(worker_codes, deviation_per_rating[comparable], minlength=n_workers)
                / n_compared
            )
    return WorkerAgreement(table.workers, n_compared, agreement, deviation)


def leave_one_out_deviation(ratings) -> np.ndarray:
    """Per rating: its value minus the mean of the other ratings of the same item.

    ``nan`` for ratings that are alone on their item. Requires numeric labels.
    """
    table = as_table(ratings)
    values = table.label_values()
    n_items = len(table.items)
    item_sum = np.bincount(table.item_codes, values, minlength=n_items)[table.item_codes]
    item_n = np.bincount(table.item_codes, minlength=n_items)[table.item_codes]
    with np.errstate(divide="ignore", invalid="ignore"):
        others_mean = (item_sum - values) / (item_n - 1)
    return np.where(item_n >= 2, values - others_mean, np.nan)
