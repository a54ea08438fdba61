"""Per-worker time figures from plain arrays (no Django): the dashboard's worker table."""

from __future__ import annotations

import numpy as np


def median_by_worker_arrays(workers: np.ndarray, milliseconds: np.ndarray) -> dict[int, float]:
    """Each worker's median milliseconds per answer, from two aligned arrays (worker ids,
    milliseconds): one sort of the rows by (worker, time), each worker's median read at the
    middle of their run (the mean of the two middle values for an even count, as
    ``statistics.median``). Whole non-negative times (the browser's ``duration_ms``) sort as
    one integer per row, worker code and time together, a plain sort of integers rather than
    a two-key sort of a million rows."""
    if not len(workers):
        return {}
    uniques, codes = np.unique(workers, return_inverse=True)
    codes = codes.ravel()
    milliseconds = np.asarray(milliseconds)
    span = float(milliseconds.max()) + 1.0 if len(milliseconds) else 1.0
    whole = (bool(np.all(milliseconds >= 0)) and bool(np.all(milliseconds == np.rint(milliseconds)))
             and span * len(uniques) < 2.0 ** 62)
    if whole:
        keys = np.sort(codes.astype(np.int64) * int(span) + milliseconds.astype(np.int64))
        sorted_ms = (keys % int(span)).astype(np.float64)
    else:
        order = np.lexsort((milliseconds, codes))
        sorted_ms = milliseconds[order].astype(np.float64)
    counts = np.bincount(codes, minlength=len(uniques))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    low = starts + (counts - 1) // 2
    high = starts + counts // 2
    medians = (sorted_ms[low] + sorted_ms[high]) / 2.0
    return dict(zip(uniques.astype(np.int64).tolist(), medians.tolist(), strict=True))


def hourly_rate(earned_cents: int, worked_ms: int) -> float | None:
    """Cents per hour of measured work; None without measured work (nothing to divide by)."""
    if worked_ms <= 0:
        return None
    return earned_cents * 3_600_000 / worked_ms
