"""Next-item choice at scale: ``work_queue_next_item`` on a project of 1,000,000 items
(PostgreSQL; target ≤ 5 ms a call).

A scratch database (``--db-prefix``, created and dropped) gets a plausibility project of
``--items`` items (``--items / 5`` CLAIRE sentences × 5 fillers, written by SQL), ``--done``
annotations already there (the first items filled to their redundancy by 200 other workers,
so a walk from the start passes over full items), statistics refreshed as an import leaves
them. Then, for workers who have done nothing yet (start at their pivot), workers continuing
after 1,000 answers of their own, and the choice after a submit (``after_item_id``), it times
``--calls`` calls each: wall time in this process (Django, psycopg, the statement, loading the
item and its source), this process's CPU time of it (Python: Django, psycopg; robust to other
load on the machine) and PostgreSQL's own execution time of the choosing statement (EXPLAIN
ANALYZE). Workers who have done nothing yet are timed in two groups: those whose pivot falls
among the open items, and those whose pivot falls among the full items (their first choice
passes the full items to the first open one: marked filled, as the data migration marks the
items already filled and the services every item since, the walk skips them; ``--unmarked``
leaves the marks unset, to show the walk they save). ``--adaptive``: the project has an
adaptive redundancy policy (start 2, up to 7) and the full items a stored target of 2
(``Item.target_answers``), so the statement compares the target column. Usage::

    python bench/bench_next_item.py --items 1000000 --db-prefix unpack_i15_next [--unmarked]
        [--adaptive]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]


def worker(items: int, done: int, calls: int, marked: bool, adaptive: bool = False) -> dict:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")
    import django

    django.setup()
    import importlib

    from django.apps import apps
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project, Worker
    from annotation.services.statistics import planner_statistics_refresh
    from annotation.services.work_queue import (
        SPREAD_FACTOR,
        _choose_sql,
        work_queue_next_item,
    )

    call_command("migrate", verbosity=0, interactive=False)
    project = Project.objects.create(
        slug="next", name="Next", kind="plausibility", redundancy={"train": 2},
        flag_settings={"adaptive_redundancy": {"start": 2, "maximum": 7}} if adaptive else {})
    sentences = items // 5
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO annotation_clozeitem (project_id, external_id, resolved_pattern, "
            "article_title, section_header, previous_context, sentence, followup_context) "
            "SELECT %s, n::text, 'IMPLICIT REFERENCE', 'How to Bench', '', '', "
            "'Put ______ in the box.', '' FROM generate_series(1, %s) AS n",
            [project.pk, sentences])
        cursor.execute(
            "INSERT INTO annotation_clozefiller (cloze_id, position, text) "
            "SELECT c.id, p, 'the cat' FROM annotation_clozeitem c, generate_series(1, 5) p "
            "WHERE c.project_id = %s ORDER BY c.id, p", [project.pk])
        # --adaptive: the items about to be filled have a stored target of 2 (their two
        # answers were clear), written with the row, as a submit writes it with the mark.
        cursor.execute(
            "INSERT INTO annotation_item (project_id, external_id, split, group_key, position, "
            "filler_id, is_gold, filled, created_at, target_answers) "
            "SELECT %s, c.external_id || '_' || f.position, 'train', c.external_id, 0, f.id, "
            "false, false, now(), CASE WHEN ROW_NUMBER() OVER (ORDER BY f.id) <= %s THEN 2 END "
            "FROM annotation_clozefiller f JOIN annotation_clozeitem c "
            "ON c.id = f.cloze_id WHERE c.project_id = %s ORDER BY f.id",
            [project.pk, done // 2 if adaptive else 0, project.pk])
        crowd = Worker.objects.bulk_create(Worker(provider="local", external_id=f"crowd{n}")
                                           for n in range(200))
        # The first done/2 items, two answers each (their redundancy): full.
        cursor.execute(
            "INSERT INTO annotation_annotation (project_id, item_id, worker_id, source, "
            "payload, category, rating, text, skipped, edit_operations, client_warnings, "
            "overridden_warnings, server_warnings, review_status, provenance, state, created_at, "
            "problem, problem_note) "
            "SELECT %s, i.id, (%s::bigint[])[1 + (i.id + k) %% 200], 'local', "
            "'{\"rating\": 4}', '', 4, '', false, '[]', '[]', '[]', '[]', 'pending', '{}', "
            "'counted', now(), '', '' FROM (SELECT id FROM annotation_item WHERE project_id = %s "
            "ORDER BY id LIMIT %s) i, generate_series(0, 1) k",
            [project.pk, [w.pk for w in crowd], project.pk, done // 2])
    seeded_s = time.perf_counter() - started
    if marked:  # as the data migration marks the items already filled (0015_item_filled)
        importlib.import_module("annotation.migrations.0015_item_filled").mark_filled_items(
            apps, schema_editor=None)
    planner_statistics_refresh()

    def own_history(worker: Worker, count: int, offset: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO annotation_annotation (project_id, item_id, worker_id, source, "
                "payload, category, rating, text, skipped, edit_operations, client_warnings, "
                "overridden_warnings, server_warnings, review_status, provenance, state, "
                "created_at, problem, problem_note) "
                "SELECT %s, i.id, %s, 'local', '{\"rating\": 4}', '', 4, '', false, '[]', "
                "'[]', '[]', '[]', 'pending', '{}', 'counted', now(), '', '' FROM (SELECT id FROM "
                "annotation_item WHERE project_id = %s ORDER BY id OFFSET %s LIMIT %s) i",
                [project.pk, worker.pk, project.pk, offset, count])

    # Workers who have done nothing yet start at their pivot (work_queue.SPREAD_FACTOR): five
    # whose pivot falls among the full items (their first choice walks over full items to the
    # first open one) and five whose pivot falls among the open ones.
    full_share = (done // 2) / items
    in_full, in_open = [], []
    number = 0
    while len(in_full) < 5 or len(in_open) < 5:
        person = Worker.objects.create(provider="local", external_id=f"fresh{number}")
        number += 1
        pivot = (person.pk * SPREAD_FACTOR) % 1.0
        group = in_full if pivot < full_share else in_open
        if len(group) < 5:
            group.append(person)
    seasoned = [Worker.objects.create(provider="local", external_id=f"old{n}") for n in range(5)]
    stride = (items - done // 2) // 6
    for n, person in enumerate(seasoned):  # each in a region of their own past the full items
        own_history(person, 1000, done // 2 + n * stride)
    planner_statistics_refresh()

    def timed(person: Worker, after: bool) -> tuple[list[float], list[float]]:
        wall, cpu, server = [], [], []
        last = None
        for _ in range(calls):
            started, started_cpu = time.perf_counter(), time.thread_time()
            item = work_queue_next_item(project=project, worker=person,
                                        after_item_id=last if after else None)
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            sql, params = _choose_sql(project, person, lock=True,
                                      after_item_id=last if after else None)
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) SELECT " + sql, params)
                plan = cursor.fetchone()[0]
                plan = json.loads(plan) if isinstance(plan, str) else plan
            server.append(plan[0]["Execution Time"])
            last = item.pk if item else None
        return wall, cpu, server

    def summary(runs: list[tuple[list[float], list[float], list[float]]]) -> dict:
        # The first call of each worker warms the caches: not counted.
        wall = [ms for w, _, _ in runs for ms in w[1:]]
        cpu = [ms for _, c, _ in runs for ms in c[1:]]
        server = [ms for _, _, s in runs for ms in s[1:]]
        return {"wall_p50_ms": round(statistics.median(wall), 2),
                "wall_p99_ms": round(sorted(wall)[int(0.99 * (len(wall) - 1))], 2),
                "python_cpu_p50_ms": round(statistics.median(cpu), 2),
                "server_p50_ms": round(statistics.median(server), 3),
                "server_max_ms": round(max(server), 3)}

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM annotation_item WHERE project_id = %s",
                       [project.pk])
        counted = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM annotation_annotation")
        annotations = cursor.fetchone()[0]
    return {
        "items": counted, "annotations": annotations, "seed_s": round(seeded_s, 1),
        "filled items marked": marked, "adaptive": adaptive,
        "calls_per_case": calls * 5,
        "first visit, pivot among the open items": summary(
            [timed(p, after=False) for p in in_open]),
        "first visit, pivot among the full items": summary(
            [timed(p, after=False) for p in in_full]),
        "after 1,000 own answers": summary([timed(p, after=False) for p in seasoned]),
        "after a submit (after_item_id)": summary([timed(p, after=True) for p in seasoned]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--done", type=int, default=200_000,
                        help="annotations already there (filling the first items)")
    parser.add_argument("--calls", type=int, default=40, help="calls per worker and case")
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db-prefix", default="unpack_bench_next")
    parser.add_argument("--unmarked", action="store_true",
                        help="leave the filled items unmarked (Item.filled False)")
    parser.add_argument("--adaptive", action="store_true",
                        help="an adaptive redundancy policy, the full items' target stored")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.items, args.done, args.calls, not args.unmarked,
                                args.adaptive)))
        return
    import psycopg

    scratch = f"{args.db_prefix}_{os.getpid()}"
    with psycopg.connect(args.postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{scratch}"')
    try:
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        env["DATABASE_URL"] = urlsplit(args.postgres_url)._replace(path=f"/{scratch}").geturl()
        env["UNPACK_LOG_LEVEL"] = "ERROR"
        done = subprocess.run([sys.executable, __file__, "--worker", "--items", str(args.items),
                               "--done", str(args.done), "--calls", str(args.calls)]
                              + (["--unmarked"] if args.unmarked else [])
                              + (["--adaptive"] if args.adaptive else []),
                              cwd=REPO, env=env, check=True, capture_output=True, text=True)
        print(done.stdout.strip().splitlines()[-1])
    finally:
        with psycopg.connect(args.postgres_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


if __name__ == "__main__":
    main()
