"""The path a user takes, on PostgreSQL with autovacuum off (the worst case of statistics that
lag): a database that already holds work (2,000 annotations on an older project), an import of
100,000 items (20,000 CLAIRE sentences × 5 fillers) through ``manage.py import_data``, then
annotators at once, until the annotation table is ``--until-growth`` (4) times its size at the
start (or ``--seconds``). Submits/s and submit p50/p99 per time window show
whether the planner keeps up.

Two variants, interleaved round by round (``--rounds`` pairs), each on its own scratch database
(``--db-prefix``, created and dropped) with autovacuum switched off per table:

* ``job``: the deployment as documented, celery beat's ``refresh_planner_statistics`` every
  ``--analyze-every`` seconds (a Celery worker with beat on a scratch Redis db);
* ``no-job``: the same worker and beat, with that job never due in the run (only the import's
  own ANALYZE, made while the annotation table held the old work only).

Usage::

    python bench/bench_fresh_import.py --rounds 2 --clients 16 --until-growth 4 \\
        --redis-url redis://127.0.0.1:6379/6 --db-prefix unpack_i15_fresh
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import bench_load as load

REPO = Path(__file__).resolve().parents[1]
SLUG = "bench-fresh"

# The work already there: an older project whose items carry annotations, and the annotators'
# logins (a session each, as bench_load's).
SEED = load.SEED_HELPERS + """
from django.db import connection
from annotation.models import Annotation, Worker
clients, old_items, per_item = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
project = Project.objects.create(slug="older", name="Older work", kind="plausibility",
                                 redundancy={"train": per_item})
items = plausibility_items(project, old_items)
crowd = Worker.objects.bulk_create(Worker(provider="local", external_id=f"old{n}")
                                   for n in range(per_item * 4))
Annotation.objects.bulk_create(
    Annotation(project=project, item=item, worker=crowd[(n + k) % len(crowd)], source="local",
               payload={"rating": 4}, rating=4, provenance={"verified": True})
    for n, item in enumerate(items) for k in range(per_item))
with connection.cursor() as cursor:
    cursor.execute("ANALYZE")
print(json.dumps(bench_logins(clients)))
"""


# After the run, on the database as the run left it: PostgreSQL's own execution time of the
# next-item statement (EXPLAIN ANALYZE, median of 15) for three of the annotators.
NEXT_ITEM_PROBE = """
import json, statistics, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.db import connection
from annotation.models import Project
from annotation.services.work_queue import _choose_sql
from annotation.services.workers import worker_for_user
project = Project.objects.get(slug=sys.argv[1])
found = {}
for user in get_user_model().objects.filter(username__startswith="bench").order_by("pk")[:3]:
    sql, params = _choose_sql(project, worker_for_user(user=user), lock=False)
    runs = []
    with connection.cursor() as cursor:
        for _ in range(15):
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) SELECT " + sql, params)
            plan = cursor.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            runs.append(plan[0]["Execution Time"])
    found[user.username] = round(statistics.median(runs), 2)
print(json.dumps(found))
"""


def write_claire(path: Path, sentences: int, seed: int = 11) -> None:
    """A CLAIRE ``*_data.tsv`` of ``sentences`` rows (5 fillers each: 5 items per row)."""
    rng = random.Random(seed)
    header = ["Id", "Resolved pattern", "Article title", "Section header", "Previous context",
              "Sentence", "Follow-up context", "Filler1", "Filler2", "Filler3", "Filler4",
              "Filler5"]
    words = ["box", "cat", "paint", "water", "glue", "paper", "rope", "salt", "sand", "wood"]
    with path.open("w", encoding="utf-8") as handle:
        handle.write("\t".join(header) + "\n")
        for n in range(sentences):
            fillers = rng.sample(words, 5)
            handle.write("\t".join([str(n + 1), "IMPLICIT REFERENCE", f"How to Bench {n}",
                                    "Steps", "Take a box.", "Put ______ in the box.",
                                    "Close it.", *fillers]) + "\n")


def table_state(url: str) -> dict:
    import psycopg

    with psycopg.connect(url, autocommit=True) as probe:
        rows, analyzes, autos = probe.execute(
            "SELECT n_live_tup, analyze_count, autoanalyze_count + autovacuum_count "
            "FROM pg_stat_user_tables WHERE relname = 'annotation_annotation'").fetchone()
        counted = probe.execute("SELECT count(*) FROM annotation_annotation").fetchone()[0]
    return {"rows": counted, "live_tup": rows, "analyzes": analyzes, "autovacuum_runs": autos}


def one_round(variant: str, args, claire: Path, number: int) -> dict:
    import psycopg
    import redis

    scratch = f"{args.db_prefix}_{os.getpid()}_{number}"
    server_url = args.postgres_url
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{scratch}"')
    url = urlsplit(server_url)._replace(path=f"/{scratch}").geturl()
    redis.Redis.from_url(args.redis_url).flushdb()
    env = load.base_env()
    env.update({"DATABASE_URL": url, "REDIS_URL": args.redis_url,
                "UNPACK_ANALYZE_EVERY_SECONDS":
                    str(args.analyze_every if variant == "job" else 10 ** 6)})
    processes: list[subprocess.Popen] = []
    schedule = Path(tempfile.mkdtemp(prefix="beat-")) / "schedule"
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env,
                       check=True)
        # Autovacuum off on every table of this scratch database (a per-table setting: the
        # server is shared, so no ALTER SYSTEM).
        with psycopg.connect(url, autocommit=True) as admin:
            tables = [row[0] for row in admin.execute(
                "SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = "
                "'public'::regnamespace")]
            for table in tables:
                admin.execute(f'ALTER TABLE "{table}" SET (autovacuum_enabled = off, '
                              "toast.autovacuum_enabled = off)")
        seeded = subprocess.run(
            [sys.executable, "-c", SEED, str(args.clients), str(args.old_items),
             str(args.old_per_item)], cwd=REPO, env=env, check=True, capture_output=True,
            text=True)
        session_keys = json.loads(seeded.stdout.strip().splitlines()[-1])
        started = time.perf_counter()
        subprocess.run([sys.executable, "manage.py", "import_data", "claire", str(claire),
                        "--project", SLUG, "--split", "train"], cwd=REPO, env=env, check=True,
                       capture_output=True)
        import_seconds = time.perf_counter() - started
        before = table_state(url)
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "annotation", "worker", "-B", "--pool=solo",
             "-s", str(schedule), "--loglevel=WARNING", "--without-gossip", "--without-mingle",
             "-n", f"bench-{os.getpid()}@%h"], cwd=REPO, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        port = load.free_port()
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "-b",
             f"127.0.0.1:{port}", "--log-level", "warning"], cwd=REPO, env=env))
        workers = len(os.sched_getaffinity(0))
        load.wait_until_listening(port, workers)
        measure_from = time.monotonic() + 5
        deadline = measure_from + args.seconds
        annotators = [load.Annotator(port, key, measure_from, deadline, slug=SLUG)
                      for key in session_keys]

        async def stop_at_growth():
            """End the run once the annotation table is ``--until-growth`` times its size
            before the run (or at ``--seconds``)."""
            import psycopg

            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as probe:
                while time.monotonic() < deadline:
                    await asyncio.sleep(2)
                    rows = (await (await probe.execute(
                        "SELECT count(*) FROM annotation_annotation")).fetchone())[0]
                    if rows >= args.until_growth * before["rows"]:
                        for annotator in annotators:
                            annotator.deadline = time.monotonic()
                        return time.monotonic()
            return deadline

        async def run():
            stopped = asyncio.ensure_future(stop_at_growth())
            await asyncio.wait_for(asyncio.gather(*(a.run() for a in annotators)),
                                   args.seconds + 120)
            return await stopped

        ended = asyncio.run(run())
        after = table_state(url)
        probe = subprocess.run([sys.executable, "-c", NEXT_ITEM_PROBE, SLUG], cwd=REPO,
                               env=env, check=True, capture_output=True, text=True)
        next_item_ms = json.loads(probe.stdout.strip().splitlines()[-1])
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(schedule.parent, ignore_errors=True)
        redis.Redis.from_url(args.redis_url).flushdb()
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    seconds = ended - measure_from
    windows = []
    for start in range(0, int(seconds), args.window):
        low, high = measure_from + start, measure_from + min(start + args.window, seconds)
        done = [ms for a in annotators for ms, at in zip(a.submit_ms, a.submit_done_at,
                                                         strict=True) if low <= at < high]
        windows.append({"from_s": start, "submits_per_s": round(len(done) / (high - low), 1),
                        "p50_ms": round(statistics.median(done), 1) if done else None,
                        "p99_ms": round(load.percentile(done, 0.99), 1) if done else None})
    submits = [ms for a in annotators for ms in a.submit_ms]
    return {
        "variant": variant, "round": number, "clients": args.clients,
        "imported_items": args.sentences * 5, "import_s": round(import_seconds, 1),
        "annotation_rows_before_after": [before["rows"], after["rows"]],
        "growth": round(after["rows"] / max(before["rows"], 1), 2),
        "analyzes_of_annotation_table_during_run": after["analyzes"] - before["analyzes"],
        "autovacuum_runs": after["autovacuum_runs"],
        "seconds": round(seconds, 1),
        "submits_per_s": round(len(submits) / seconds, 1),
        "submit_p50_ms": round(statistics.median(submits), 1) if submits else None,
        "submit_p99_ms": round(load.percentile(submits, 0.99), 1),
        "errors": sum(a.errors for a in annotators),
        "next_item_server_ms_after": next_item_ms,
        "windows": windows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="pairs of (no-job, job) runs")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=150, help="at most")
    parser.add_argument("--until-growth", type=float, default=4.0,
                        help="end once the annotation table is this many times its size at "
                             "the start of annotating")
    parser.add_argument("--window", type=int, default=15, help="seconds per reported window")
    parser.add_argument("--sentences", type=int, default=20_000,
                        help="CLAIRE sentences imported (5 items each)")
    parser.add_argument("--old-items", type=int, default=1_000)
    parser.add_argument("--old-per-item", type=int, default=2,
                        help="annotations per item of the older project")
    parser.add_argument("--analyze-every", type=int, default=10,
                        help="UNPACK_ANALYZE_EVERY_SECONDS of the job variant")
    parser.add_argument("--postgres-url",
                        default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db-prefix", default="unpack_bench_fresh")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14",
                        help="a scratch Redis database (emptied before and after each round)")
    parser.add_argument("--only", choices=["job", "no-job"], default=None)
    args = parser.parse_args()
    variants = [args.only] if args.only else ["no-job", "job"]
    with tempfile.TemporaryDirectory() as folder:
        claire = Path(folder) / "train_data.tsv"
        write_claire(claire, args.sentences)
        number = 0
        for _ in range(args.rounds):
            for variant in variants:
                number += 1
                print(json.dumps(one_round(variant, args, claire, number)), flush=True)


if __name__ == "__main__":
    main()
