"""Big request bodies against the memory of the server (issue 26, point 3).

    python3 bench/bench_big_bodies.py [--mb 100] [--clients 4] [--limit BYTES] [--chunked]

Serves the app with gunicorn as shipped (2 processes × 2 threads) on a loopback port and sends
``--clients`` concurrent bodies of ``--mb`` MB to ``/api/projects/`` (streamed by the client in
64 KB pieces), after a warm-up; prints each gunicorn process's peak-RSS growth (``VmHWM``).
``--limit`` sets ``UNPACK_MAX_REQUEST_BYTES`` (a limit above the body size shows the server
without the size check). No database is touched: the refusal comes first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.security.body_memory import Server, measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--chunked", action="store_true")
    args = parser.parse_args()
    env = {"UNPACK_MAX_REQUEST_BYTES": str(args.limit)} if args.limit else {}
    with Server(env=env) as server:
        answers, growth = measure(server, "/api/projects/", args.mb * 1024 * 1024, args.clients,
                                  chunked=args.chunked)
    print(f"{args.clients} × {args.mb} MB {'chunked' if args.chunked else 'Content-Length'} "
          f"bodies, limit {args.limit or 'default'}")
    print("answers:", [answer.status for answer in answers])
    for pid, kb in growth.items():
        print(f"process {pid}: peak RSS +{kb / 1024:.1f} MB")
    print(f"largest growth: {max(growth.values()) / 1024:.1f} MB")


if __name__ == "__main__":
    main()
