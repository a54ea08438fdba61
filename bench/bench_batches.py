"""Benchmark MTurk publishing and collection against the local MTurk stand-in (tasks inline).

    python3 bench/bench_batches.py [--hits 300] [--assignments 3] [--items-per-hit 1]

Uses a throw-away SQLite database (or DATABASE_URL if set, which must be disposable) and the
stand-in on a free loopback port. Reports HITs published per second, assignments collected per
second, and MTurk API calls per HIT (from the stand-in's /_sim/stats).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=300)
    parser.add_argument("--assignments", type=int, default=3, help="per HIT (at most 9)")
    parser.add_argument("--items-per-hit", type=int, default=1)
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="unpack-bench-batches-")
    if not os.environ.get("DATABASE_URL"):
        os.environ["UNPACK_SQLITE_PATH"] = str(Path(workdir) / "bench.sqlite3")
    os.environ.pop("REDIS_URL", None)  # tasks inline
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")  # a local benchmark
    os.environ["AWS_ACCESS_KEY_ID"] = "AKIDFAKEFAKEFAKE"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "fake-secret"  # noqa: S105 - the stand-in ignores it

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from annotation.fake_mturk import FakeMTurk, FakeMTurkSimulator
    from annotation.models import Assignment, Batch, Item, Project, TaskKind
    from annotation.services.batches.collect import ANSWER_FIELD_PAYLOADS, batch_collect
    from annotation.services.batches.plan import LaunchOptions, batch_launch, batch_plan

    call_command("migrate", verbosity=0)
    with FakeMTurk() as fake:
        settings.MTURK_ENDPOINT_URL = fake.base_url
        simulator = FakeMTurkSimulator(fake.base_url)
        project = _make_project(Project, Item, TaskKind, args.hits * args.items_per_hit)
        options = LaunchOptions(title="Bench: rate fillers", reward_cents=10,
                                items_per_hit=args.items_per_hit, splits=("dev",),
                                assignments=args.assignments)
        plan = batch_plan(project=project, options=options)

        started = time.perf_counter()
        batch = batch_launch(project=project, options=options,
                             confirmed_total_cents=plan.estimate.total_cents)
        publish_seconds = time.perf_counter() - started
        batch.refresh_from_db()
        assert batch.status == Batch.Status.PUBLISHED, batch.error
        publish_calls = simulator.stats()["total"]

        world = fake.world
        for hit in batch.hits.all():
            item_ids = list(hit.items.values_list("pk", flat=True))
            answer = json.dumps({str(item_id): {"rating": 3} for item_id in item_ids})
            for worker in range(hit.max_assignments):
                worker_id = f"ABENCH{worker}"
                world.register_worker({"worker_id": worker_id})
                accepted = world.accept(worker_id, hit.provider_hit_id, fake.base_url)
                world.submit(accepted["assignment_id"], [(ANSWER_FIELD_PAYLOADS, answer)])

        started = time.perf_counter()
        result = batch_collect(batch_id=batch.pk)
        collect_seconds = time.perf_counter() - started
        collect_calls = simulator.stats()["total"] - publish_calls
        started = time.perf_counter()
        again = batch_collect(batch_id=batch.pk)
        recollect_seconds = time.perf_counter() - started
        assert again.assignments_created == 0
        hits = plan.estimate.hits
        assignments = Assignment.objects.filter(hit__batch=batch).count()
        report = {
            "database": settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
            "hits": hits,
            "assignments": assignments,
            "annotations": result.annotations_created,
            "publish_seconds": round(publish_seconds, 2),
            "hits_published_per_second": round(hits / publish_seconds, 1),
            "collect_seconds": round(collect_seconds, 2),
            "assignments_collected_per_second": round(assignments / collect_seconds, 1),
            "recollect_seconds_nothing_new": round(recollect_seconds, 2),
            "api_calls_per_hit_publish": round(publish_calls / hits, 3),
            "api_calls_per_hit_collect": round(collect_calls / hits, 3),
            "api_calls": simulator.stats()["calls"],
        }
        print(json.dumps(report, indent=2))


def _make_project(Project, Item, TaskKind, count: int):
    from annotation.models import ClozeFiller, ClozeItem

    project = Project.objects.create(slug="bench-claire", name="Bench",
                                     kind=TaskKind.PLAUSIBILITY,
                                     redundancy={"train": 2, "dev": 4, "test": 4})
    clozes = ClozeItem.objects.bulk_create(
        ClozeItem(project=project, external_id=str(n), resolved_pattern="IMPLICIT REFERENCE",
                  article_title="How to bench", sentence="Use ______ daily.")
        for n in range((count + 4) // 5))
    fillers = ClozeFiller.objects.bulk_create(
        ClozeFiller(cloze=cloze, position=position, text=f"filler {position}")
        for cloze in clozes for position in range(1, 6))
    Item.objects.bulk_create(
        Item(project=project, external_id=f"f{filler.cloze_id}_{filler.position}", split="dev",
             group_key=f"c{filler.cloze_id}", position=filler.position, filler=filler)
        for filler in fillers[:count])
    return project


if __name__ == "__main__":
    main()
