"""Load bench of the annotator flow: many concurrent simulated annotators, each submitting
ratings (POST /annotate/<slug>/submit/) as the real page does: the task page (GET
/annotate/<slug>/) once, then every submit's answer carries the next item.

Runs against gunicorn on 127.0.0.1, started here with the repository's gunicorn.conf.py (the
options below override its processes and threads), with

* ``postgres``: a scratch PostgreSQL database created for the run and dropped after
  (server from ``--postgres-url``, default postgres://postgres@127.0.0.1:5432/postgres), with
  Redis as broker and shared cache, as deployed (``--redis-url``, a scratch database emptied
  after, default redis://127.0.0.1:6379/14);
* ``sqlite``: the embedded default, a scratch SQLite file.

Loopback only; bounded by ``--clients`` and ``--seconds``. Prints submits/s, p50/p99/max latency
of the submit (which chooses and renders the next item; waiting to be accepted on a new
connection included) and of the page loads, the fewest and most submits of one annotator, and
the server's CPU per submit and per gunicorn process. Usage::

    python bench/bench_load.py --backend both --clients 32 --seconds 15
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
SLUG = "bench-claire"
ITEM_ID = re.compile(rb'"item_id": ?(\d+)')
CSRF_COOKIE = re.compile(r"csrftoken=([^;]+)")

# Seeding scripts run in a process of their own (``python -c``), after django.setup().
# SEED_HELPERS defines what the bench seeds share: plausibility items, annotators' logins.
SEED_HELPERS = """
import json, sys
import django
django.setup()
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from annotation.models import ClozeFiller, ClozeItem, Item, Project


def plausibility_items(project, count):
    clozes = ClozeItem.objects.bulk_create(
        ClozeItem(project=project, external_id=str(index), resolved_pattern="IMPLICIT REFERENCE",
                  article_title="How to Bench", sentence="Put ______ in the box.")
        for index in range(count))
    fillers = ClozeFiller.objects.bulk_create(
        ClozeFiller(cloze=cloze, position=1, text="the cat") for cloze in clozes)
    return Item.objects.bulk_create(
        Item(project=project, external_id=str(index), group_key=str(index), filler=filler)
        for index, filler in enumerate(fillers))


def bench_logins(clients):
    \"\"\"Users bench0… with a logged-in session each; their session keys.\"\"\"
    keys = []
    for number in range(clients):
        user = get_user_model().objects.create_user(f"bench{number}", password=None)
        session = SessionStore()
        session["_auth_user_id"] = str(user.pk)
        session["_auth_user_backend"] = settings.AUTHENTICATION_BACKENDS[0]
        session["_auth_user_hash"] = user.get_session_auth_hash()
        session.create()
        keys.append(session.session_key)
    return keys
"""

SEED = SEED_HELPERS + """
clients, items, slug = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
project = Project.objects.create(slug=slug, name="Bench", kind="plausibility",
                                 redundancy={"train": clients + 1})
plausibility_items(project, items)
print(json.dumps(bench_logins(clients)))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Annotator:
    """One simulated annotator on a keep-alive HTTP/1.1 connection, until the deadline.

    A bare asyncio client (no http.client, no threads): all 32 annotators share one event loop
    in one process, so the load generator takes as little as possible of the CPUs it measures.
    """

    def __init__(self, port: int, session_key: str, measure_from: float, deadline: float,
                 reload_every_item: bool = False, slug: str = SLUG):
        self.port, self.session_key, self.deadline = port, session_key, deadline
        self.slug = slug
        # True: load the page for every item, ignoring the submit answer's next item (the
        # flow before submits carried it; for comparison).
        self.reload_every_item = reload_every_item
        self.measure_from = measure_from  # samples before it are the warm-up, not recorded
        self.csrf = ""
        self.connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.submit_ms: list[float] = []
        self.submit_done_at: list[float] = []  # monotonic, one per submit_ms (time series)
        self.page_ms: list[float] = []
        self.errors = 0
        self.error_kinds: dict[str, int] = {}

    def error(self, kind: str) -> None:
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1

    async def request(self, method: str, path: str, body: bytes = b""):
        """One request on the kept-alive connection, opening a new one first if the server
        closed the last (so a client's wait to be accepted counts in its latency, as a
        browser's would)."""
        if self.connection is None:
            self.connection = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self.connection
        head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}",
                f"Cookie: sessionid={self.session_key}; csrftoken={self.csrf}"]
        if method == "POST":
            head += ["Content-Type: application/json", f"X-CSRFToken: {self.csrf}",
                     f"Referer: http://127.0.0.1:{self.port}/", f"Content-Length: {len(body)}"]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        status = int((await reader.readline()).split()[1])
        length, chunked, self.closing = 0, False, False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            name = name.lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection":
                self.closing = value.strip().lower() == "close"
            elif name == "transfer-encoding":
                chunked = "chunked" in value.lower()
            elif name == "set-cookie" and (cookie := CSRF_COOKIE.search(value)):
                self.csrf = cookie.group(1)
        if not chunked:
            data = await reader.readexactly(length)
            if self.closing:  # e.g. sync workers: one request per connection
                self.close()
            return status, data
        data = b""
        while size := int((await reader.readline()).strip(), 16):
            data += await reader.readexactly(size + 2)
            data = data[:-2]
        await reader.readline()
        if self.closing:
            self.close()
        return status, data

    def close(self) -> None:
        if self.connection is not None:
            self.connection[1].close()
            self.connection = None

    async def run(self):
        """What the real local page does: load the page once; every submit's answer carries
        the next item (``next``), which the page swaps in; load the page again only when an
        answer carried none (or on an error)."""
        item_id = None
        while time.monotonic() < self.deadline:
            try:
                measured = time.monotonic() >= self.measure_from
                if item_id is None:
                    started = time.perf_counter()
                    status, page = await self.request("GET", f"/annotate/{self.slug}/")
                    if measured:
                        self.page_ms.append((time.perf_counter() - started) * 1000)
                    match = ITEM_ID.search(page)
                    if status != 200 or not match:
                        self.error(f"next {status}")
                        continue
                    item_id = int(match.group(1))
                body = json.dumps({"item_id": item_id, "client_token": uuid.uuid4().hex,
                                   "payload": {"rating": 4}}).encode()
                item_id = None
                started = time.perf_counter()
                status, answer = await self.request("POST", f"/annotate/{self.slug}/submit/",
                                                    body)
                elapsed = (time.perf_counter() - started) * 1000
                if status != 200:
                    self.error(f"submit {status}")
                    continue
                if measured and time.monotonic() <= self.deadline:
                    self.submit_ms.append(elapsed)
                    self.submit_done_at.append(time.monotonic())
                following = json.loads(answer).get("next")
                if following is not None and not self.reload_every_item:
                    item_id = following["item"]["item_id"]
            except (OSError, ValueError, IndexError, KeyError,
                    asyncio.IncompleteReadError) as exc:
                self.error(type(exc).__name__)
                item_id = None
                self.close()
        self.close()


async def run_annotators(annotators: list[Annotator], timeout: float, *, sample, start: float,
                         end: float) -> dict[str, dict[int, float]]:
    """Run the annotators; the server's CPU seconds between ``start`` and ``end`` (monotonic
    times: the measured window), by part and process (see ``server_cpu_s``)."""

    async def cpu_window():
        await asyncio.sleep(max(0.0, start - time.monotonic()))
        first = sample()
        await asyncio.sleep(max(0.0, end - time.monotonic()))
        last = sample()
        return {name: {pid: cpu - first[name].get(pid, 0.0) for pid, cpu in last[name].items()}
                for name in last}

    window = asyncio.ensure_future(cpu_window())
    await asyncio.wait_for(asyncio.gather(*(a.run() for a in annotators)), timeout)
    return await window


def run_backend(name: str, env: dict, args) -> dict:
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env,
                   check=True)
    seeded = subprocess.run([sys.executable, "-c", SEED, str(args.clients), str(args.items), SLUG],
                            cwd=REPO, env=env, check=True, capture_output=True, text=True)
    session_keys = json.loads(seeded.stdout.strip().splitlines()[-1])
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "-b", f"127.0.0.1:{port}",
         "-w", str(args.workers), "--threads", str(args.threads),
         *(["-k", args.worker_class] if args.worker_class else []),
         "--log-level", "warning"], cwd=REPO, env=env)
    try:
        wait_until_listening(port, args.workers)
        # Warm-up first (each gunicorn process loads templates, URLconf and connections on its
        # first requests); only the following ``--seconds`` are measured.
        measure_from = time.monotonic() + args.warmup
        deadline = measure_from + args.seconds
        annotators = [Annotator(port, key, measure_from, deadline, args.reload_every_item)
                      for key in session_keys]
        client_cpu = time.process_time()
        cpu_window = asyncio.run(run_annotators(
            annotators, args.warmup + args.seconds + 60,
            sample=lambda: server_cpu_s(server.pid, env), start=measure_from, end=deadline))
        wall = args.seconds
        client_cpu = time.process_time() - client_cpu
    finally:
        server.terminate()
        server.wait(10)
    submits = [ms for a in annotators for ms in a.submit_ms]
    pages = [ms for a in annotators for ms in a.page_ms]
    return {
        "backend": name, "clients": args.clients, "seconds": round(wall, 1),
        "gunicorn": f"{args.workers} {args.worker_class or 'gunicorn.conf.py'} workers"
                    + (f" x {args.threads} threads" if args.worker_class != "sync" else ""),
        "flow": "page per item" if args.reload_every_item else "next item in submit answer",
        "submits": len(submits), "submits_per_s": round(len(submits) / wall, 1),
        "submit_p50_ms": round(statistics.median(submits), 1) if submits else None,
        "submit_p99_ms": round(percentile(submits, 0.99), 1),
        "submit_max_ms": round(max(submits), 1) if submits else None,
        # Fairness: the fewest and most submits any one annotator got through (a server that
        # leaves some connections waiting to be accepted shows it here, not in the percentiles
        # of the submits that did finish).
        "submits_per_annotator_min_max": [min(len(a.submit_ms) for a in annotators),
                                          max(len(a.submit_ms) for a in annotators)],
        "page_loads": len(pages),
        "page_p50_ms": round(statistics.median(pages), 1) if pages else None,
        "page_p99_ms": round(percentile(pages, 0.99), 1),
        "errors": sum(a.errors for a in annotators),
        "error_kinds": {kind: sum(a.error_kinds.get(kind, 0) for a in annotators)
                        for kind in sorted({k for a in annotators for k in a.error_kinds})},
        "client_cpu_s": round(client_cpu, 1),
        # Server CPU per submit in the measured window: robust to other load on the machine;
        # the ceiling on a quiet N-CPU machine is about N × 1000 / (their sum) submits/s
        # (less the load generator's share).
        **{f"{name}_cpu_ms_per_submit": (None if not submits
                                          else round(sum(by_pid.values()) * 1000 / len(submits), 2))
           for name, by_pid in cpu_window.items()},
        # How evenly gunicorn's processes shared the work: each worker's CPU seconds in the
        # window. One process doing nearly all of it is bound by its one GIL.
        "gunicorn_worker_cpu_s": sorted((round(cpu, 2) for pid, cpu in
                                         cpu_window["gunicorn"].items() if pid != server.pid),
                                        reverse=True),
    }


def wait_until_listening(port: int, workers: int, timeout: float = 30) -> None:
    """Until every gunicorn process listens on its own socket (gunicorn.conf.py's reuse_port), as
    on a server started before its clients arrive. Connecting earlier, all clients would queue
    on the first process to listen and stay there on their kept-alive connections."""
    deadline = time.monotonic() + timeout
    while _listening_sockets(port) < workers:
        if time.monotonic() > deadline:
            raise SystemExit(f"gunicorn: fewer than {workers} processes listen on port {port}")
        time.sleep(0.1)


def _listening_sockets(port: int) -> int:
    """IPv4 TCP sockets in LISTEN state on ``port`` (from /proc/net/tcp)."""
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for line in lines
               if line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A")


def _process_cpu_s(pid: int) -> float | None:
    """User + system CPU of a live process, from /proc (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_cpu_s(master: int, env: dict) -> dict[str, dict[int, float]]:
    """CPU so far of gunicorn (master and workers) and, on PostgreSQL, of the backends serving
    the scratch database (all of them gunicorn's; the probe's own excluded), by process."""
    workers = [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()
               and _parent_pid(int(entry.name)) == master]
    sample = {"gunicorn": {pid: _process_cpu_s(pid) for pid in [master, *workers]}}
    if "DATABASE_URL" in env:
        import psycopg

        with psycopg.connect(env["DATABASE_URL"], autocommit=True) as probe:
            backends = [row[0] for row in probe.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()")]
        sample["postgres"] = {pid: _process_cpu_s(pid) for pid in backends}
    return {name: {pid: cpu for pid, cpu in by_pid.items() if cpu is not None}
            for name, by_pid in sample.items()}


def _parent_pid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def base_env() -> dict:
    env = dict(os.environ)
    # The public development key is fine for a loopback-only server on scratch databases.
    env.setdefault("UNPACK_ALLOW_DEV_KEY", "true")
    env.update({"DJANGO_DEBUG": "0", "UNPACK_LOG_LEVEL": "ERROR",
                "DJANGO_SETTINGS_MODULE": "annotation.settings",
                "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost"})
    env.pop("DATABASE_URL", None)
    return env


def bench_postgres(args) -> dict:
    import psycopg

    server_url = args.postgres_url
    scratch = f"unpack_bench_{os.getpid()}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{scratch}"')
    try:
        parts = urlsplit(server_url)
        env = base_env()
        env["DATABASE_URL"] = parts._replace(path=f"/{scratch}").geturl()
        # A deployment on PostgreSQL has Redis too (Celery's broker), which is then also the
        # shared cache that sessions are read from (annotation/settings.py).
        env["REDIS_URL"] = args.redis_url
        return run_backend("gunicorn + PostgreSQL + Redis", env, args)
    finally:
        import redis

        redis.Redis.from_url(args.redis_url).flushdb()
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


def bench_sqlite(args) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        env = base_env()
        env["UNPACK_SQLITE_PATH"] = str(Path(folder) / "bench.sqlite3")
        return run_backend("gunicorn + SQLite (embedded default)", env, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["postgres", "sqlite", "both"], default="both")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=15)
    # Enough that no simulated annotator runs out of work in a run (each can do every item):
    # one that has done them all is served the "nothing left" page, counted as an error.
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--warmup", type=float, default=3,
                        help="seconds of load before the measured window")
    # gunicorn.conf.py's defaults: one process per CPU, 2 threads each.
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--worker-class", default=None,
                        help="gunicorn's -k (e.g. sync, gthread); default: gunicorn.conf.py's")
    parser.add_argument("--reload-every-item", action="store_true",
                        help="load the task page for every item (ignore the next item that "
                             "each submit answer carries)")
    parser.add_argument("--postgres-url",
                        default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14",
                        help="a scratch Redis database for the PostgreSQL run (emptied after)")
    args = parser.parse_args()
    if not 1 <= args.clients <= 256 or not 1 <= args.seconds <= 300:
        parser.error("--clients must be 1-256 and --seconds 1-300")
    results = []
    if args.backend in ("postgres", "both"):
        results.append(bench_postgres(args))
    if args.backend in ("sqlite", "both"):
        results.append(bench_sqlite(args))
    for result in results:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
