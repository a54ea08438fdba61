import numpy as np

from qc.worker_stats import hourly_rate, median_by_worker, median_by_worker_arrays


def test_median_per_worker_and_hourly_rate():
    assert median_by_worker([(1, 10), (1, 30), (1, 20), (2, 5), (2, 7)]) == {1: 20.0, 2: 6.0}
    assert hourly_rate(50, 1_800_000) == 100.0  # 50 cents in half an hour
    assert hourly_rate(50, 0) is None


def test_median_by_worker_of_arrays_equals_the_rows_median():
    rng = np.random.default_rng(3)
    workers = rng.integers(1, 40, 2_000)
    times = rng.integers(100, 90_000, 2_000)
    expected = median_by_worker(zip(workers.tolist(), times.tolist(), strict=True))
    assert median_by_worker_arrays(workers.astype(np.float64), times.astype(np.float64)) == \
        expected
    assert median_by_worker_arrays(np.array([2.0, 1, 1, 1]), np.array([9.0, 30, 10, 20])) == \
        {1: 20.0, 2: 9.0}
    assert median_by_worker_arrays(np.array([]), np.array([])) == {}
