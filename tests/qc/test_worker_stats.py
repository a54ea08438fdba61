from qc.worker_stats import hourly_rate, median_by_worker


def test_median_per_worker_and_hourly_rate():
    assert median_by_worker([(1, 10), (1, 30), (1, 20), (2, 5), (2, 7)]) == {1: 20.0, 2: 6.0}
    assert hourly_rate(50, 1_800_000) == 100.0  # 50 cents in half an hour
    assert hourly_rate(50, 0) is None
