"""What ``manage.py demo`` serves: one annotator submitting ratings as fast as the server answers,
against the demo's server (gunicorn with ``gunicorn.conf.py``) and against Django's
``runserver`` (what the demo served with before), interleaved, on the same SQLite file.

The demo is set up once in a scratch folder (``manage.py demo --no-serve``) plus a bench project
of ``--items`` items and a logged-in annotator (bench_load's seed), then each round starts one
server, lets the annotator work for ``--seconds`` and stops it. Usage::

    python bench/bench_demo.py --rounds 2 --seconds 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_load as load

REPO = Path(__file__).resolve().parents[1]
SERVERS = {
    "demo (gunicorn)": lambda port: [sys.executable, "manage.py", "demo", "--port", str(port)],
    "runserver": lambda port: [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}",
                               "--noreload", "--insecure"],
}


def one_round(name: str, env: dict, key: str, args) -> dict:
    port = load.free_port()
    server = subprocess.Popen(SERVERS[name](port), cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not load._listening_sockets(port):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{name} did not start")
            time.sleep(0.2)
        time.sleep(1)  # every gunicorn process up (reuse_port: one socket each)
        measure_from = time.monotonic() + 1
        annotator = load.Annotator(port, key, measure_from, measure_from + args.seconds)
        asyncio.run(annotator.run())
    finally:
        server.terminate()
        server.wait(30)
    done = annotator.submit_ms
    return {"server": name, "submits_per_s": round(len(done) / args.seconds, 1),
            "submit_p50_ms": round(statistics.median(done), 1) if done else None,
            "errors": annotator.errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--items", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env = load.base_env()
        env["UNPACK_SQLITE_PATH"] = str(Path(folder) / "demo.sqlite3")
        subprocess.run([sys.executable, "manage.py", "demo", "--no-serve"], cwd=REPO, env=env,
                       check=True, capture_output=True)
        seeded = subprocess.run([sys.executable, "-c", load.SEED, "1", str(args.items),
                                 load.SLUG], cwd=REPO, env=env, check=True,
                                capture_output=True, text=True)
        [key] = json.loads(seeded.stdout.strip().splitlines()[-1])
        for _ in range(args.rounds):
            for name in SERVERS:
                print(json.dumps(one_round(name, env, key, args)), flush=True)


if __name__ == "__main__":
    main()
