"""Bootstrap confidence intervals of agreement, resampling items.

Agreement statistics are computed over items (units); their uncertainty comes from which items
happened to be annotated, so the resampling unit is the item: each resample draws as many
items as there are, with replacement, and keeps every rating of each drawn item (an item drawn
twice counts as two units). The interval is the percentile interval of the statistic over the
resamples (Efron & Tibshirani 1993, ch. 13); resamples where the statistic is undefined (NaN:
no pairable unit, no variation) are left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from qc.agreement import RatingTable, as_table, fleiss_kappa, krippendorff_alpha


@dataclass(frozen=True)
class Interval:
    """``estimate`` on the data as given, the ``low``-``high`` percentile interval at
    ``confidence``, over ``n_resamples`` resamples (``n_undefined`` of them gave NaN)."""

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    n_undefined: int

    def to_dict(self) -> dict:
        def finite(value: float) -> float | None:
            return float(value) if np.isfinite(value) else None

        return {"estimate": finite(self.estimate), "low": finite(self.low),
                "high": finite(self.high), "confidence": self.confidence,
                "n_resamples": self.n_resamples, "n_undefined": self.n_undefined}


def resample_items(table: RatingTable, rng: np.random.Generator) -> RatingTable:
    """One bootstrap resample of ``table``'s items (see the module docstring)."""
    n_items = len(table.items)
    order = np.argsort(table.item_codes, kind="stable")
    per_item = np.bincount(table.item_codes, minlength=n_items)
    starts = np.concatenate([[0], np.cumsum(per_item)[:-1]])
    drawn = rng.integers(0, n_items, n_items)
    sizes = per_item[drawn]
    new_items = np.repeat(np.arange(n_items), sizes)
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    rows = order[np.repeat(starts[drawn], sizes) + offsets]
    return RatingTable(new_items, table.worker_codes[rows], table.label_codes[rows],
                       np.arange(n_items), table.workers, table.labels)


def bootstrap_interval(ratings, statistic: Callable[[RatingTable], float], *,
                       n_resamples: int = 1000, confidence: float = 0.95,
                       seed: int = 0) -> Interval:
    """Percentile bootstrap interval of ``statistic`` over item resamples of ``ratings``
    (rows ``(item_id, worker_id, label)`` or a RatingTable). Deterministic for a ``seed``."""
    if n_resamples < 1 or not 0 < confidence < 1:
        raise ValueError("n_resamples must be positive and confidence within (0, 1)")
    table = as_table(ratings)
    estimate = float(statistic(table))
    if len(table.items) == 0:
        return Interval(estimate, float("nan"), float("nan"), confidence, n_resamples,
                        n_resamples)
    rng = np.random.default_rng(seed)
    values = np.array([statistic(resample_items(table, rng)) for _ in range(n_resamples)],
                      dtype=np.float64)
    defined = values[np.isfinite(values)]
    if defined.size == 0:
        low = high = float("nan")
    else:
        tail = (1 - confidence) / 2 * 100
        low, high = (float(v) for v in np.percentile(defined, [tail, 100 - tail]))
    return Interval(estimate, low, high, confidence, n_resamples,
                    int(n_resamples - defined.size))


def fleiss_kappa_interval(ratings, **options) -> Interval:
    """:func:`bootstrap_interval` of Fleiss' kappa."""
    return bootstrap_interval(ratings, lambda table: fleiss_kappa(table).kappa, **options)


def krippendorff_alpha_interval(ratings, level: str = "ordinal", **options) -> Interval:
    """:func:`bootstrap_interval` of Krippendorff's alpha at ``level``."""
    return bootstrap_interval(ratings, lambda table: krippendorff_alpha(table, level),
                              **options)
