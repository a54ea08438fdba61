"""Headroom against the framework's own ceiling: the annotator's submit (POST
/annotate/<slug>/submit/, which stores the answer and chooses and renders the next item) against
a trivial authenticated Django view that writes one row (POST /bench/ceiling/), served by the
same gunicorn with the same ``gunicorn.conf.py``, middleware, sessions and database, measured
in alternating windows of one run, on PostgreSQL (+ Redis) and on SQLite.

The ceiling's view lives in ``bench/unpack_ceiling`` (a bench-only settings module that adds it
to the app's settings; production's settings never list it). Both kinds of client are
``bench_load``'s: the same keep-alive HTTP/1.1 client, the same logged-in annotators (its seed),
and the server's CPU per request from /proc (gunicorn and, on PostgreSQL, its backends), the
measure other load on the machine inflates least.

Prints one line per window and, per backend and tree, the median over the rounds of
``ceiling req/s ÷ submit req/s`` and of ``submit CPU ms ÷ ceiling CPU ms`` per request (the
goal: both ≤ 2). ``--tree`` (repeatable) serves other checkouts of the repository too, each
from its own scratch database and gunicorn, every round visiting each tree in turn: an A/B of
two versions of the app in one run.

``--in-process`` measures instead the app's own CPU per request, the figure other load on a
shared machine disturbs least: per round and tree, a process calls the WSGI application
directly (no HTTP, no gunicorn; same settings, database, Redis and session) for ``--requests``
submits and as many ceiling requests, alternating the order, and reports the CPU time of its
thread per request (Django, the middleware, psycopg and the Redis client; not PostgreSQL's or
Redis's own). Usage::

    python bench/bench_ceiling.py --backend both --rounds 3 --seconds 8
    python bench/bench_ceiling.py --tree /path/to/main --tree . --rounds 4
    python bench/bench_ceiling.py --tree /path/to/main --tree . --in-process --rounds 6
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import bench_load as load

BENCH = Path(__file__).resolve().parent
SETTINGS = "unpack_ceiling.settings"


class CeilingClient(load.Annotator):
    """Posts to the ceiling's view as fast as it answers, on one kept-alive connection."""

    async def run(self):
        body = b"{}"
        while time.monotonic() < self.deadline:
            try:
                measured = time.monotonic() >= self.measure_from
                started = time.perf_counter()
                self.sent += 1
                status, _ = await self.request("POST", "/bench/ceiling/", body)
                elapsed = (time.perf_counter() - started) * 1000
                if status != 200:
                    self.error(f"ceiling {status}")
                    continue
                self.stored += 1
                if measured and time.monotonic() <= self.deadline:
                    self.submit_ms.append(elapsed)
            except (OSError, ValueError, IndexError, asyncio.IncompleteReadError) as exc:
                self.error(type(exc).__name__)
                self.close()
        self.close()


CLIENTS = {"ceiling": CeilingClient, "submit": load.Annotator}


class Server:
    """One tree's app under gunicorn (``gunicorn.conf.py`` of that tree, ``--workers`` ×
    ``--threads``) on a scratch database seeded with ``bench_load``'s project and annotators."""

    def __init__(self, tree: Path, env: dict, args):
        self.tree, self.env, self.args = tree, env, args
        # The tree's own code first; bench/ of this checkout only for the ceiling's app.
        env["PYTHONPATH"] = str(BENCH)
        env["DJANGO_SETTINGS_MODULE"] = SETTINGS
        subprocess.run([sys.executable, "manage.py", "migrate", "--run-syncdb", "-v", "0"],
                       cwd=tree, env=env, check=True)
        seeded = subprocess.run(
            [sys.executable, "-c", load.SEED, str(args.clients), str(args.items), load.SLUG,
             str(args.clients + 1)], cwd=tree, env=env, check=True, capture_output=True,
            text=True)
        self.session_keys = json.loads(seeded.stdout.strip().splitlines()[-1])
        self.process = None
        if not args.in_process:
            self.serve()

    def in_process_round(self, round_number: int) -> dict:
        """One ``--in-process`` round: a fresh process of this tree, its CPU ms per request."""
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--wsgi-child",
             self.session_keys[round_number % len(self.session_keys)],
             "--requests", str(self.args.requests), "--rounds", str(round_number)],
            cwd=self.tree, env=self.env, check=True, capture_output=True, text=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    def serve(self) -> None:
        args, tree, env = self.args, self.tree, self.env
        self.port = load.free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py",
             "-b", f"127.0.0.1:{self.port}", "-w", str(args.workers),
             "--threads", str(args.threads), "--log-level", "warning"], cwd=tree, env=env)
        load.wait_until_listening(self.port, args.workers)
        # A fresh server is slow for a while (each process loads templates and URLconfs,
        # connects, and PostgreSQL prepares its statements after their fifth run): one window
        # of each kind, not counted.
        for variant in CLIENTS:
            self.window(variant, seconds=args.warmup)

    def window(self, variant: str, seconds: float | None = None) -> dict:
        """``--warmup`` then ``--seconds`` measured of every annotator sending ``variant``."""
        args = self.args
        seconds = args.seconds if seconds is None else seconds
        measure_from = time.monotonic() + args.warmup
        deadline = measure_from + seconds
        clients = [CLIENTS[variant](self.port, key, measure_from, deadline)
                   for key in self.session_keys]
        for client in clients:
            # A CSRF secret of our own, sent as cookie and header alike (Django accepts the
            # unmasked secret); the task page's Set-Cookie replaces it for the submit's clients.
            client.csrf = uuid.uuid4().hex
        cpu = asyncio.run(load.run_annotators(
            clients, args.warmup + seconds + 60,
            sample=lambda: load.server_cpu_s(self.process.pid, self.env),
            start=measure_from, end=deadline))
        done = [ms for c in clients for ms in c.submit_ms]
        cpu_ms = {name: sum(by_pid.values()) * 1000 / max(1, len(done))
                  for name, by_pid in cpu.items()}
        return {"requests_per_s": round(len(done) / seconds, 1),
                "p50_ms": round(statistics.median(done), 1) if done else None,
                "p99_ms": round(load.percentile(done, 0.99), 1),
                "cpu_ms_per_request": round(sum(cpu_ms.values()), 3),
                **{f"{name}_cpu_ms": round(ms, 3) for name, ms in cpu_ms.items()},
                "errors": sum(c.errors for c in clients),
                **({"error_kinds": {k: sum(c.error_kinds.get(k, 0) for c in clients)
                                    for k in {k for c in clients for k in c.error_kinds}}}
                   if any(c.errors for c in clients) else {})}

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)


@contextmanager
def postgres_server(tree: Path, number: int, args):
    import psycopg
    import redis

    scratch = f"{args.db_prefix}_{os.getpid()}_{number}"
    with psycopg.connect(args.postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{scratch}"')
    server = None
    try:
        env = load.base_env()
        env["DATABASE_URL"] = urlsplit(args.postgres_url)._replace(path=f"/{scratch}").geturl()
        env["REDIS_URL"] = args.redis_url
        server = Server(tree, env, args)
        yield server
    finally:
        if server is not None:
            server.stop()
        redis.Redis.from_url(args.redis_url).flushdb()
        with psycopg.connect(args.postgres_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


@contextmanager
def sqlite_server(tree: Path, number: int, args):
    with tempfile.TemporaryDirectory() as folder:
        env = load.base_env()
        env["UNPACK_SQLITE_PATH"] = str(Path(folder) / f"ceiling{number}.sqlite3")
        server = Server(tree, env, args)
        try:
            yield server
        finally:
            server.stop()


def run_backend(backend: str, trees: list[Path], args) -> None:
    start = {"postgres": postgres_server, "sqlite": sqlite_server}[backend]
    ratios: dict[str, dict[str, list[float]]] = {str(t): {"throughput": [], "cpu": []}
                                                 for t in trees}
    with ExitStack() as stack:
        servers = [stack.enter_context(start(tree, n, args)) for n, tree in enumerate(trees)]
        for round_number in range(args.rounds if not args.in_process else 0):
            # ABBA: the order of the two windows alternates between rounds, so a drift of the
            # machine's load over the run weighs on both alike.
            order = ("ceiling", "submit") if round_number % 2 == 0 else ("submit", "ceiling")
            for server in servers:
                windows = {}
                for variant in order:
                    windows[variant] = server.window(variant)
                    print(json.dumps({"backend": backend, "tree": str(server.tree),
                                      "round": round_number + 1, "variant": variant,
                                      **windows[variant]}), flush=True)
                ceiling, submit = windows["ceiling"], windows["submit"]
                if submit["requests_per_s"] and ceiling["cpu_ms_per_request"]:
                    ratios[str(server.tree)]["throughput"].append(
                        ceiling["requests_per_s"] / submit["requests_per_s"])
                    ratios[str(server.tree)]["cpu"].append(
                        submit["cpu_ms_per_request"] / ceiling["cpu_ms_per_request"])
        for round_number in range(args.rounds if args.in_process else 0):
            for server in servers:
                found = server.in_process_round(round_number)
                print(json.dumps({"backend": backend, "tree": str(server.tree),
                                  "round": round_number + 1, **found}), flush=True)
                ratios[str(server.tree)]["cpu"].append(found["submit_over_ceiling"])
    for tree, found in ratios.items():
        if args.in_process:
            print(json.dumps({
                "backend": backend, "tree": tree, "rounds": len(found["cpu"]),
                "in_process_submit_over_ceiling_cpu": [round(r, 2) for r in found["cpu"]],
                "median": round(statistics.median(found["cpu"]), 2)}), flush=True)
            continue
        print(json.dumps({
            "backend": backend, "tree": tree, "rounds": len(found["throughput"]),
            "ceiling_over_submit_req_per_s": [round(r, 2) for r in found["throughput"]],
            "median_ceiling_over_submit": round(statistics.median(found["throughput"]), 2)
            if found["throughput"] else None,
            "submit_over_ceiling_cpu_per_request": [round(r, 2) for r in found["cpu"]],
            "median_cpu_ratio": round(statistics.median(found["cpu"]), 2)
            if found["cpu"] else None}), flush=True)


def wsgi_child(session_key: str, requests: int, order: int) -> dict:
    """``--in-process``: in this tree's code (cwd), call the WSGI application directly with the
    annotator's session: ``requests`` submits and as many ceiling requests after a warm-up,
    in the order ``order`` picks; the CPU time of this thread per request."""
    import io

    sys.path[:0] = [os.getcwd(), str(BENCH)]
    import django

    django.setup()
    from django.core.handlers.wsgi import WSGIHandler

    app, csrf = WSGIHandler(), uuid.uuid4().hex
    cookie = f"sessionid={session_key}; csrftoken={csrf}"

    def call(method: str, path: str, body: bytes = b"") -> bytes:
        status = []
        environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "SERVER_NAME": "127.0.0.1",
                   "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1", "wsgi.url_scheme": "http",
                   "wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body)),
                   "CONTENT_TYPE": "application/json", "HTTP_COOKIE": cookie,
                   "HTTP_X_CSRFTOKEN": csrf, "wsgi.errors": sys.stderr}
        data = b"".join(app(environ, lambda code, headers, exc=None: status.append(code)))
        if not status[0].startswith("200"):
            raise SystemExit(f"{method} {path}: {status[0]} {data[:300]!r}")
        return data

    item_id = int(load.ITEM_ID.search(call("GET", f"/annotate/{load.SLUG}/")).group(1))

    def submit() -> None:
        nonlocal item_id
        answer = json.loads(call("POST", f"/annotate/{load.SLUG}/submit/", json.dumps(
            {"item_id": item_id, "client_token": uuid.uuid4().hex,
             "payload": {"rating": 4}}).encode()))
        item_id = answer["next"]["item"]["item_id"]

    kinds = {"submit": submit, "ceiling": lambda: call("POST", "/bench/ceiling/", b"{}")}
    for _ in range(30):  # warm-up: connections, templates, prepared statements
        for run in kinds.values():
            run()
    cpu_ms = {}
    for name in (("submit", "ceiling") if order % 2 == 0 else ("ceiling", "submit")):
        started = time.thread_time()
        for _ in range(requests):
            kinds[name]()
        cpu_ms[name] = (time.thread_time() - started) * 1000 / requests
    return {"submit_cpu_ms": round(cpu_ms["submit"], 3),
            "ceiling_cpu_ms": round(cpu_ms["ceiling"], 3),
            "submit_over_ceiling": round(cpu_ms["submit"] / cpu_ms["ceiling"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite", "both"], default="both")
    parser.add_argument("--tree", action="append", type=Path,
                        help="a checkout of the repository to serve (repeatable; default: "
                             "this one)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--items", type=int, default=6000,
                        help="items of the bench project (enough that no annotator runs out)")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14",
                        help="a scratch Redis database (emptied after)")
    parser.add_argument("--db-prefix", default="unpack_bench_ceiling")
    parser.add_argument("--in-process", action="store_true",
                        help="measure the app's CPU per request without HTTP (see above)")
    parser.add_argument("--requests", type=int, default=300,
                        help="--in-process: requests of each kind per round and tree")
    parser.add_argument("--wsgi-child", metavar="SESSION_KEY", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.wsgi_child:
        print(json.dumps(wsgi_child(args.wsgi_child, args.requests, args.rounds)))
        return
    if not 1 <= args.clients <= 256 or not 1 <= args.seconds <= 300 or args.rounds < 1:
        parser.error("--clients must be 1-256, --seconds 1-300, --rounds ≥ 1")
    trees = [tree.resolve() for tree in (args.tree or [BENCH.parent])]
    for backend in ("postgres", "sqlite"):
        if args.backend in (backend, "both"):
            run_backend(backend, trees, args)


if __name__ == "__main__":
    main()
