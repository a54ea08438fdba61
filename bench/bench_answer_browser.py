"""Bench the data browser (``/staff/projects/<slug>/answers/``) and the adjudication page on
the project ``bench/bench_staff_pages.py --build`` makes (1,000,000 answers by default).

Times, through Django's test ``Client`` logged in as a superuser (the whole request: middleware,
view, template), the median of ``--repeat`` GETs of each page, beside the statements it ran
and their summed time as Django saw them (so a loaded machine's figures can be told apart from
slow SQL). Filters that match nothing are the keyset's worst case (every row of the range
read to fill no page) and are in the list on purpose.

    DATABASE_URL=postgres://…/unpack_bench_clone python3 bench/bench_answer_browser.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")

SLUG = "bench-staff"


def pages(project) -> list[tuple[str, str]]:
    from annotation.models import Annotation, Worker

    base = f"/staff/projects/{project.slug}/answers/"
    ids = Annotation.objects.filter(project=project).order_by("id")
    count = ids.count()
    deep = ids.values_list("id", flat=True)[count // 10]  # 90% of the way down, newest first
    worker = Worker.objects.filter(annotations__project=project).order_by("id").first()
    item_id = ids.values_list("item_id", flat=True)[count // 2]
    middle = ids[count // 2]
    return [
        ("first page", base),
        ("deep page (90% down)", f"{base}?after={deep}"),
        ("split=dev", f"{base}?split=dev"),
        ("state=counted", f"{base}?state=counted"),
        ("state=rejected (none)", f"{base}?state=rejected"),
        ("state=flagged", f"{base}?state=flagged"),
        ("state=pending", f"{base}?state=pending"),
        ("provider=mturk", f"{base}?provider=mturk"),
        ("provider=import (none)", f"{base}?provider=import"),
        ("worker=<pseudonym>", f"{base}?worker={worker.anonymous_id}"),
        ("worker=<pseudonym> split=test", f"{base}?worker={worker.anonymous_id}&split=test"),
        ("q=in every item (filler)", f"{base}?q=filler"),
        ("q=in 5 items (c12345_)", f"{base}?q=c12345_"),
        ("q=in no item", f"{base}?q=zzqx-no-such-text"),
        ("split=test q=filler", f"{base}?split=test&q=filler"),
        ("adjudicate one item", f"/staff/projects/{project.slug}/items/{item_id}/adjudicate/"),
        # The sorts (keyset on (column, id)): first pages and a page half way down.
        ("sort=oldest", f"{base}?sort=oldest"),
        ("sort=worker", f"{base}?sort=worker"),
        ("sort=worker deep", f"{base}?sort=worker&after={middle.worker_id}.{middle.pk}"),
        ("sort=item", f"{base}?sort=item"),
        ("sort=item deep", f"{base}?sort=item&after={middle.item_id}.{middle.pk}"),
        ("sort=worker state=counted", f"{base}?sort=worker&state=counted"),
        # An open flag's reason (a common one and a rare one), and the answers' own text (none
        # in a ratings project: the page answers at once).
        ("flag=too_fast", f"{base}?flag=too_fast"),
        ("flag=worker_far_from_consensus", f"{base}?flag=worker_far_from_consensus"),
        ("flag=too_fast sort=item", f"{base}?flag=too_fast&sort=item"),
        ("answer=disband", f"{base}?answer=disband"),
    ]


def measure(client, url: str, repeat: int) -> tuple[float, int, int, int, float]:
    """(median seconds, status, bytes, statements, median SQL seconds) of ``repeat`` GETs."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, sql_times, status, size, statements = [], [], 0, 0, 0
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            body = response.content
            times.append(time.perf_counter() - started)
        sql_times.append(sum(float(q["time"]) for q in captured.captured_queries))
        status, size, statements = response.status_code, len(body), len(captured)
    return statistics.median(times), status, size, statements, statistics.median(sql_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL to the PostgreSQL bench database")

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.test.utils import setup_test_environment

    from annotation.models import Project

    setup_test_environment()
    project = Project.objects.get(slug=SLUG)
    user, _ = get_user_model().objects.get_or_create(
        username="bench-staff", defaults={"is_staff": True, "is_superuser": True})
    client = Client(raise_request_exception=False)
    client.force_login(user)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("| page | median s | SQL s | statements | status | KB |\n|---|---|---|---|---|---|")
    for name, url in pages(project):
        client.get(url)  # warm: the first request of a page compiles its template
        seconds, status, size, statements, sql = measure(client, url, args.repeat)
        print(f"| {name} | {seconds:.3f} | {sql:.3f} | {statements} | {status} | "
              f"{size / 1024:.0f} |", flush=True)


if __name__ == "__main__":
    main()
