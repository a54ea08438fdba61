"""gunicorn settings for serving Unpack. ``gunicorn`` run from the repository root reads this
file (``gunicorn -c /path/to/gunicorn.conf.py`` from elsewhere); command-line options and
``GUNICORN_CMD_ARGS`` override it. The load bench (``bench/bench_load.py``) serves the app with
it too.

Environment: ``WEB_CONCURRENCY`` (processes; one per CPU) and ``UNPACK_GUNICORN_THREADS`` (threads
per process; 2).
"""

import os


def _whole_number(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise SystemExit(f"{name}={raw!r}: expected a whole number ≥ 1")
    return int(raw)


wsgi_app = "annotation.wsgi"

# One process per CPU, each with threads: a request spends part of its time waiting for
# PostgreSQL and Redis, which another thread of the same process uses meanwhile. More processes
# than CPUs only added switching in the load bench (2 CPUs: 2 × 2 threads gave p99 98–122 ms,
# 4 × 2 gave 110–201 ms at the same throughput; docs/annotating.md, "Serving").
# gunicorn's gthread with one change (annotation/gunicorn_worker.py): a connection the client
# does not keep alive is closed from the loop's poller, not by blocking the loop until the
# client has closed its end (which stalled every kept-alive annotator of the process while a
# password-guessing script, one connection per request, got around to closing).
worker_class = "annotation.gunicorn_worker.ThreadWorker"
# The CPUs this process may run on (a container's cpuset), not all of the host's.
workers = _whole_number("WEB_CONCURRENCY", len(os.sched_getaffinity(0)))
threads = _whole_number("UNPACK_GUNICORN_THREADS", 2)

# Each process listens on a socket of its own (SO_REUSEPORT) and the kernel spreads new
# connections over them. On one shared socket, whichever process wakes first accepts, and a
# kept-alive connection stays where it was accepted: in the load bench (4 processes), one got 15
# of 32 busy annotators and another 3 (the fewest and most submits per annotator 30 and 448; p99
# 370 ms against 170–190 ms with a socket each). The cost: when a process stops (a restart, a
# crash), the connections still waiting in its own queue are reset rather than taken by another.
reuse_port = True
