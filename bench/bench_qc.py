"""Benchmark the qc package at scale: one million synthetic plausibility ratings.

200,000 fillers x 5 ratings (1-5) spread over 2,000 workers, plus one working time per
rating. Prints seconds per step, the total and the peak memory (resident set size).
Target: under 5 s in total on a 2-core machine.

    python3 bench/bench_qc.py [--fillers 200000] [--ratings-per-filler 5] [--workers 2000]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qc.aggregation import aggregate_plausibility
from qc.agreement import RatingTable, fleiss_kappa, krippendorff_alpha
from qc.flags import timing_flags_from_arrays, worker_consensus_flags


def synthetic_ratings(n_fillers: int, per_filler: int, n_workers: int, seed: int = 0):
    """Ratings near a hidden true score, with 1% of workers clicking at random."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=n_fillers)
    items = np.repeat(np.arange(n_fillers), per_filler)
    workers = rng.integers(0, n_workers, size=items.size)
    noise = rng.integers(-1, 2, size=items.size)
    ratings = np.clip(truth[items] + noise, 1, 5)
    random_clickers = workers < n_workers // 100
    ratings[random_clickers] = rng.integers(1, 6, size=int(random_clickers.sum()))
    seconds = np.exp(rng.normal(np.log(20), 0.4, size=items.size))
    seconds[rng.random(size=items.size) < 0.001] = 1.0
    return items, workers, ratings, seconds


def _flag_counts(flags, planted: set) -> tuple[int, int, int]:
    flagged = {flag.target_id for flag in flags}
    return len(flags), len(flagged & planted), len(planted)


def peak_memory_mb() -> float:
    """Peak resident set size of this process in MB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fillers", type=int, default=200_000)
    parser.add_argument("--ratings-per-filler", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2_000)
    args = parser.parse_args()

    items, workers, ratings, seconds = synthetic_ratings(
        args.fillers, args.ratings_per_filler, args.workers
    )
    print(f"{items.size:,} ratings, {args.fillers:,} fillers, {args.workers:,} workers")

    timings: list[tuple[str, float, str]] = []

    def step(name, function):
        started = time.perf_counter()
        value = function()
        timings.append((name, time.perf_counter() - started, value))
        return value

    rows = list(zip(items.tolist(), workers.tolist(), ratings.tolist(), strict=True))
    # What the Django side hands over: a list of (item_id, worker_id, rating) tuples.
    table = step("rows -> RatingTable", lambda: RatingTable.from_rows(rows))
    step("Fleiss kappa", lambda: f"kappa={fleiss_kappa(table).kappa:.3f}")
    step(
        "Krippendorff alpha (ordinal)",
        lambda: f"alpha={krippendorff_alpha(table, 'ordinal'):.3f}",
    )
    step(
        "aggregation (mean + class)",
        lambda: f"{(aggregate_plausibility(table).label == 'PLAUSIBLE').sum():,} plausible",
    )
    planted = set(range(args.workers // 100))
    step(
        "worker flags",
        lambda: "{:,} flags, {:,} of {:,} planted random clickers".format(
            *_flag_counts(worker_consensus_flags(table), planted)
        ),
    )
    step(
        "timing flags",
        lambda: f"{len(timing_flags_from_arrays(np.arange(items.size), seconds)):,} flags",
    )

    for name, elapsed, value in timings:
        detail = "" if isinstance(value, RatingTable) else f"  ({value})"
        print(f"{name:<30} {elapsed:6.3f} s{detail}")
    print(f"{'total':<30} {sum(elapsed for _, elapsed, _ in timings):6.3f} s")
    print(f"{'peak memory':<30} {peak_memory_mb():6.0f} MB")


if __name__ == "__main__":
    main()
