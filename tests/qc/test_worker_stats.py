from collections import defaultdict
from statistics import median

import numpy as np

from qc.worker_stats import hourly_rate, median_by_worker_arrays


def test_median_per_worker_and_hourly_rate():
    assert median_by_worker_arrays(np.array([1, 1, 1, 2, 2]), np.array([10, 30, 20, 5, 7])) \
        == {1: 20.0, 2: 6.0}
    assert hourly_rate(50, 1_800_000) == 100.0  # 50 cents in half an hour
    assert hourly_rate(50, 0) is None


def test_median_by_worker_of_arrays_equals_the_rows_median():
    rng = np.random.default_rng(3)
    workers = rng.integers(1, 40, 2_000)
    times = rng.integers(100, 90_000, 2_000)
    per_worker = defaultdict(list)
    for worker, milliseconds in zip(workers.tolist(), times.tolist(), strict=True):
        per_worker[worker].append(milliseconds)
    expected = {worker: float(median(values)) for worker, values in per_worker.items()}
    assert median_by_worker_arrays(workers.astype(np.float64), times.astype(np.float64)) == \
        expected
    assert median_by_worker_arrays(np.array([2.0, 1, 1, 1]), np.array([9.0, 30, 10, 20])) == \
        {1: 20.0, 2: 9.0}
    assert median_by_worker_arrays(np.array([]), np.array([])) == {}
    # fractional times (not sorted as one integer per row): the same medians
    fractional = {worker: float(median([value + 0.25 for value in values]))
                  for worker, values in per_worker.items()}
    assert median_by_worker_arrays(workers.astype(np.float64), times + 0.25) == fractional
