"""Annotators' throughput while an attacker guesses passwords (issue 11, point 6).

Runs gunicorn (``gunicorn.conf.py``) on 127.0.0.1 over a scratch SQLite file (``--backend
sqlite``, the embedded default) or a scratch PostgreSQL database with Redis as the shared cache
(``--backend postgres``; both: ``--backend both``), with ``--annotators`` simulated annotators
(``bench_load.Annotator``: the task page, then submit after submit) and, in the attack phases,
``--attackers`` clients posting wrong passwords to ``/accounts/login/`` as fast as the server
answers (each fetches the login page for its CSRF cookie first, as a script would; they run in
a process of their own, as an attacker does not share the annotators' event loop, on the same
2 CPUs). Both start once the app answers in every gunicorn process; the attack starts
``--lead`` seconds before the measured window: with the lockout, an
address's first guesses are still checked (10 per process without a shared cache: the embedded
default counts per gunicorn process), and this bench measures the state the server then stays
in for the rest of the 15-minute window. Three phases, interleaved ``--rounds`` times because
the machine's 2 CPUs are shared with others:

* ``quiet``: annotators alone;
* ``attack, no lockout``: the attack with ``UNPACK_LOGIN_FAILURE_LIMIT`` set out of reach (every
  guess is a PBKDF2 password check, as before the lockout existed);
* ``attack, lockout``: the attack with the shipped lockout (10 failures per address, 900 s).

Every other round runs its phases in reverse order; on PostgreSQL each phase's new database is
analyzed and checkpointed before the server starts. Prints one JSON line per phase and round,
then the median submits/s per phase and the ratio to ``quiet``, and, per round, the lockout
phase against that round's quiet phase (and the median of those ratios).
``--phases`` picks phases (e.g. ``quiet,lockout``). Usage::

    python bench/bench_login_abuse.py --annotators 8 --attackers 4 --seconds 10 --lead 20 \
        --rounds 3 --backend both
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import (
    REPO,
    SEED,
    SLUG,
    Annotator,
    base_env,
    free_port,
    wait_until_listening,
)

VICTIM = """
import django
django.setup()
from django.contrib.auth import get_user_model
get_user_model().objects.create_user("victim", password="a-long-secret-passphrase")
"""


class Attacker:
    """Posts wrong passwords for one username to /accounts/login/ until the deadline."""

    def __init__(self, port: int, deadline: float):
        self.port, self.deadline = port, deadline
        self.statuses: dict[int, int] = {}

    async def request(self, method: str, path: str, body: bytes = b"", cookie: str = ""):
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        try:
            head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}",
                    "Connection: close"]
            if cookie:
                head.append(f"Cookie: csrftoken={cookie}")
            if body:
                head += ["Content-Type: application/x-www-form-urlencoded",
                         f"Content-Length: {len(body)}",
                         f"Referer: http://127.0.0.1:{self.port}/accounts/login/"]
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
            status = int((await reader.readline()).split()[1])
            token = ""
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "set-cookie" and value.strip().startswith("csrftoken="):
                    token = value.strip().split(";")[0].split("=", 1)[1]
            await reader.read()
            return status, token
        finally:
            writer.close()

    async def run(self) -> None:
        while time.monotonic() < self.deadline:
            try:
                _, token = await self.request("GET", "/accounts/login/")
                body = (f"csrfmiddlewaretoken={token}&username=victim"
                        f"&password={uuid.uuid4().hex}").encode()
                status, _ = await self.request("POST", "/accounts/login/", body, cookie=token)
                self.statuses[status] = self.statuses.get(status, 0) + 1
            except (OSError, ValueError, IndexError, asyncio.IncompleteReadError):
                self.statuses[0] = self.statuses.get(0, 0) + 1


def attack(port: int, attackers: int, seconds: float, results) -> None:
    """The attackers' process: ``attackers`` guessing loops for ``seconds``; their answers'
    statuses (summed) into ``results``."""
    deadline = time.monotonic() + seconds
    guessers = [Attacker(port, deadline) for _ in range(attackers)]

    async def everyone():
        await asyncio.gather(*(g.run() for g in guessers))

    asyncio.run(everyone())
    statuses: dict[int, int] = {}
    for guesser in guessers:
        for status, count in guesser.statuses.items():
            statuses[status] = statuses.get(status, 0) + count
    # The attackers' own CPU: on one 2-CPU machine it is taken from the server and the
    # annotators, which a remote attacker's would not be.
    results.put((statuses, time.process_time()))


async def run_phase(port: int, keys: list[str], attackers: int, warmup: float,
                    seconds: float) -> tuple[list[Annotator], dict[int, int], float]:
    """Attackers (another process) and annotators start together; annotators are measured
    after ``warmup``. Also the attackers' process's CPU seconds."""
    results = multiprocessing.Queue()
    attacking = multiprocessing.Process(target=attack,
                                        args=(port, attackers, warmup + seconds, results))
    if attackers:
        attacking.start()
    measure_from = time.monotonic() + warmup
    deadline = measure_from + seconds
    annotators = [Annotator(port, key, measure_from, deadline) for key in keys]
    await asyncio.wait_for(asyncio.gather(*(a.run() for a in annotators)),
                           warmup + seconds + 60)
    if not attackers:
        return annotators, {}, 0.0
    statuses, attacker_cpu = results.get(timeout=120)
    attacking.join(30)
    return annotators, statuses, attacker_cpu


def scratch_postgres(args):
    """A context manager: the environment of a scratch PostgreSQL database (dropped after)
    with a scratch Redis database as the shared cache (emptied after)."""
    import contextlib
    from urllib.parse import urlsplit

    import psycopg
    import redis

    @contextlib.contextmanager
    def scratch():
        name = f"unpack_login_bench_{os.getpid()}"
        with psycopg.connect(args.postgres_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
        env = base_env()
        env["DATABASE_URL"] = urlsplit(args.postgres_url)._replace(path=f"/{name}").geturl()
        env["REDIS_URL"] = args.redis_url
        redis.Redis.from_url(args.redis_url).flushdb()
        try:
            yield env
        finally:
            redis.Redis.from_url(args.redis_url).flushdb()
            with psycopg.connect(args.postgres_url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return scratch()


def scratch_sqlite():
    import contextlib

    @contextlib.contextmanager
    def scratch():
        with tempfile.TemporaryDirectory() as folder:
            env = base_env()
            env["UNPACK_SQLITE_PATH"] = str(Path(folder) / "bench.sqlite3")
            yield env

    return scratch()


def settle_postgres(url: str) -> None:
    """A new database just migrated and seeded: statistics for the planner and the WAL written
    out now, not by autovacuum and a checkpoint in the middle of the measured window."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")
        connection.execute("CHECKPOINT")


def server_cpu_seconds(server: subprocess.Popen) -> float:
    """Wait for gunicorn to exit; its CPU seconds, its workers' included (the master reaps
    them, and ``wait4`` reports a child's usage with that of the children it reaped)."""
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        pid, _, usage = os.wait4(server.pid, os.WNOHANG)
        if pid:
            server.returncode = 0
            return usage.ru_utime + usage.ru_stime
        time.sleep(0.1)
    server.kill()
    _, _, usage = os.wait4(server.pid, 0)
    server.returncode = -9
    return usage.ru_utime + usage.ru_stime


def wait_until_answering(port: int, timeout: float = 300) -> None:
    """Until the app answers in every process: 12 new connections in a row (the kernel spreads
    them over the processes' sockets) each answered within 0.5 s. A process listens before it
    has imported the app, which took 17 s at load average 7: without this wait the lead, or
    the measured window itself, went to starting the server (a quiet phase measured 1.5
    submits/s at load 11)."""
    deadline = time.monotonic() + timeout
    quick = 0
    while quick < 12:
        if time.monotonic() > deadline:
            raise SystemExit(f"gunicorn on port {port} did not answer within {timeout} s")
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as probe:
            probe.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Connection: close\r\n\r\n")
            while probe.recv(65536):
                pass
        quick = quick + 1 if time.monotonic() - started < 0.5 else 0


def phase(name: str, args, failure_limit: int, attackers: int, backend: str) -> dict:
    with (scratch_postgres(args) if backend == "postgres" else scratch_sqlite()) as env:
        env["UNPACK_LOGIN_FAILURE_LIMIT"] = str(failure_limit)
        env["UNPACK_LOGIN_USERNAME_FAILURE_LIMIT"] = str(max(failure_limit, 50))
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env,
                       check=True)
        # Redundancy above the number of annotators: nobody runs out of work in a run.
        seeded = subprocess.run([sys.executable, "-c", SEED, str(args.annotators),
                                 str(args.items), SLUG, str(args.annotators + 1)], cwd=REPO,
                                env=env, check=True, capture_output=True, text=True)
        keys = json.loads(seeded.stdout.strip().splitlines()[-1])
        subprocess.run([sys.executable, "-c", VICTIM], cwd=REPO, env=env, check=True)
        if backend == "postgres":
            settle_postgres(env["DATABASE_URL"])
        port = free_port()
        workers = args.workers
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "-b",
             f"127.0.0.1:{port}", "-w", str(workers), "--log-level", "warning"],
            cwd=REPO, env=env)
        try:
            wait_until_listening(port, workers)
            wait_until_answering(port)
            annotators, statuses, attacker_cpu = asyncio.run(run_phase(
                port, keys, attackers, args.lead, args.seconds))
        finally:
            server.terminate()
            server_cpu = server_cpu_seconds(server)
    submits = sum(len(a.submit_ms) for a in annotators)
    return {"phase": name, "backend": backend, "annotators": len(annotators),
            "attackers": attackers,
            "submits_per_s": round(submits / args.seconds, 1),
            "submit_p99_ms": round(sorted(ms for a in annotators for ms in a.submit_ms)[
                int(0.99 * submits)] if submits else 0, 1),
            "annotator_errors": sum(a.errors for a in annotators),
            "annotators_finished": sum(a.finished for a in annotators),
            "stored": sum(a.stored for a in annotators),
            "guesses_per_s": round(sum(statuses.values()) / (args.lead + args.seconds), 1),
            "server_cpu_s": round(server_cpu, 1), "attacker_cpu_s": round(attacker_cpu, 1),
            "guess_statuses": {str(k): v for k, v in sorted(statuses.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=16)
    parser.add_argument("--attackers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--lead", type=float, default=20,
                        help="seconds of attack (and unmeasured annotating) before the window")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="sqlite")
    parser.add_argument("--phases", default="quiet,no-lockout,lockout",
                        help="comma-separated, of quiet, no-lockout, lockout")
    parser.add_argument("--postgres-url",
                        default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14",
                        help="a scratch Redis database for the PostgreSQL runs (emptied)")
    args = parser.parse_args()
    if not 1 <= args.annotators <= 128 or not 1 <= args.seconds <= 120 or args.rounds > 10:
        parser.error("--annotators 1-128, --seconds 1-120, --rounds at most 10")
    known = {"quiet": ("quiet", 10, 0),
             "no-lockout": ("attack, no lockout", 10**9, args.attackers),
             "lockout": ("attack, lockout", 10, args.attackers)}
    phases = [known[key] for key in args.phases.split(",")]
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results = {(backend, name): [] for backend in backends for name, _, _ in phases}
    for round_index in range(args.rounds):
        for backend in backends:
            # Every other round runs its phases in the reverse order, so that a drift of the
            # machine's speed over the run (other work starting or ending) does not favour one.
            ordered = phases if round_index % 2 == 0 else phases[::-1]
            for name, limit, attackers in ordered:
                result = phase(name, args, limit, attackers, backend)
                print(json.dumps(result), flush=True)
                results[backend, name].append(result["submits_per_s"])
    for backend in backends:
        quiet = statistics.median(results.get((backend, "quiet")) or [float("nan")])
        for (where, name), values in results.items():
            if where != backend:
                continue
            median = statistics.median(values)
            print(f"{backend:8s} {name:20s} median {median:7.1f} submits/s  "
                  f"({median / quiet:.0%} of quiet)  runs {values}")
        pairs = zip(results.get((backend, "quiet"), []),
                    results.get((backend, "attack, lockout"), []), strict=False)
        ratios = [attacked / calm for calm, attacked in pairs if calm]
        if ratios:
            print(f"{backend:8s} lockout / quiet per round: "
                  + ", ".join(f"{ratio:.0%}" for ratio in ratios)
                  + f"; median {statistics.median(ratios):.0%}")


if __name__ == "__main__":
    main()
