"""Large bodies cost the server no memory (issue 26, point 3): gunicorn as shipped over loopback,
four concurrent bodies far above the limit, each process's peak RSS measured before and after.
Before the size check, a 100 MB JSON body to ``/api/projects/`` raised a process's RSS by
298 MB. ``bench/bench_big_bodies.py`` sends the issue's four 100 MB bodies."""

from __future__ import annotations

import pytest

from tests.security.body_memory import Server, measure

SIZE = 24 * 1024 * 1024  # bounded for the suite: the bench sends 100 MB
LIMIT_KB = 10 * 1024


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_four_concurrent_big_bodies_raise_no_process_rss_by_10_mb(chunked):
    with Server() as server:
        answers, growth = measure(server, "/api/projects/", SIZE, 4, chunked=chunked)
    assert max(growth.values()) < LIMIT_KB, growth
    # Every answer that arrived is the refusal (a client may see a reset instead: the server
    # answered and closed without reading the rest of the body).
    assert {answer.status for answer in answers} <= {413, None}
    assert any(answer.status == 413 for answer in answers), answers
