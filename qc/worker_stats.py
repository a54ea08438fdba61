"""Per-worker time figures from plain arrays (no Django): the dashboard's worker table."""

from __future__ import annotations

import numpy as np


def median_by_worker_arrays(workers: np.ndarray, milliseconds: np.ndarray) -> dict[int, float]:
    """Each worker's median milliseconds per answer, from two aligned arrays (worker ids,
    milliseconds): one sort of the rows by (worker, time), each worker's median read at the
    middle of their run (the mean of the two middle values for an even count, as
    ``statistics.median``)."""
    if not len(workers):
        return {}
    order = np.lexsort((milliseconds, workers))
    workers, milliseconds = workers[order], milliseconds[order].astype(np.float64)
    uniques, starts, counts = np.unique(workers, return_index=True, return_counts=True)
    low = starts + (counts - 1) // 2
    high = starts + counts // 2
    medians = (milliseconds[low] + milliseconds[high]) / 2.0
    return dict(zip(uniques.astype(np.int64).tolist(), medians.tolist(), strict=True))


def hourly_rate(earned_cents: int, worked_ms: int) -> float | None:
    """Cents per hour of measured work; None without measured work (nothing to divide by)."""
    if worked_ms <= 0:
        return None
    return earned_cents * 3_600_000 / worked_ms
