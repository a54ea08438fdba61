"""Time the project dashboard (``/staff/review/<slug>/dashboard/``) on the bench project.

Usage: ``DATABASE_URL=postgres://…/<a clone of unpack_bench_1m> python3 bench/bench_dashboard.py
[--slug bench-staff] [--repeat 5] [--qc]``. ``--qc`` first runs the project's QC as a stored job
(what "Run QC now" does; the dashboard reads its report), which reads every answer and takes
minutes at 1,000,000 answers. Prints, per load, the wall time, the number of SQL statements and
the time PostgreSQL spent in them, then the median: the SQL time shows what the page costs the
database when the machine's other load inflates the wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slug", default="bench-staff")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--qc", action="store_true", help="run and store a QC job first")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL to a PostgreSQL clone of the bench database")

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    from annotation.models import Job, Project
    from annotation.services import staff_jobs

    setup_test_environment()
    project = Project.objects.get(slug=args.slug)
    user, _ = get_user_model().objects.get_or_create(
        username="bench-staff", defaults={"is_staff": True, "is_superuser": True})
    if args.qc:
        started = time.perf_counter()
        job = staff_jobs.job_start(kind=Job.Kind.QC, project=project, user=user).job
        job.refresh_from_db()
        print(f"QC job {job.pk}: {job.state} in {time.perf_counter() - started:.0f} s",
              flush=True)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    url = f"/staff/review/{project.slug}/dashboard/"
    walls, sql_times = [], []
    print("| load | wall ms | statements | SQL ms | status | KB |\n|---|---|---|---|---|---|")
    for load in range(args.repeat + 1):
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get(url)
            wall = time.perf_counter() - started
        sql = sum(float(query["time"]) for query in queries.captured_queries)
        label = "warm-up" if load == 0 else str(load)
        print(f"| {label} | {wall * 1000:.0f} | {len(queries)} | {sql * 1000:.0f} | "
              f"{response.status_code} | {len(response.content) / 1024:.0f} |", flush=True)
        if load:
            walls.append(wall)
            sql_times.append(sql)
    print(f"median: wall {statistics.median(walls) * 1000:.0f} ms, SQL "
          f"{statistics.median(sql_times) * 1000:.0f} ms ({url})")


if __name__ == "__main__":
    main()
