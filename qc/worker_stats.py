"""Per-worker time figures from plain rows (no Django): the dashboard's worker table."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from statistics import median


def median_by_worker(rows: Iterable[tuple[int, int]]) -> dict[int, float]:
    """``(worker id, milliseconds)`` rows -> each worker's median milliseconds per answer."""
    times: dict[int, list[int]] = defaultdict(list)
    for worker, milliseconds in rows:
        times[worker].append(milliseconds)
    return {worker: float(median(values)) for worker, values in times.items()}


def hourly_rate(earned_cents: int, worked_ms: int) -> float | None:
    """Cents per hour of measured work; None without measured work (nothing to divide by)."""
    if worked_ms <= 0:
        return None
    return earned_cents * 3_600_000 / worked_ms
