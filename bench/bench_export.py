"""Bench the streaming exports: wall time and peak Python memory at 10k vs 100k annotations.

Builds a throw-away SQLite database (never the project's own) with a CLAIRE-shaped project:
``N / 4`` fillers (items) with 4 crowd ratings each, then times ``export_data`` in the generic
JSONL format and the CLAIRE format. Peak memory is ``tracemalloc``'s peak during the export
(Python allocations, the part that would grow if an export held its rows); flat memory means
the 100k peak is about the 10k peak.

Run: ``python bench/bench_export.py [--sizes 10000,100000]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def build(size: int, slug: str):
    from annotation.models import (
        Annotation,
        ClozeFiller,
        ClozeItem,
        Item,
        Project,
        Worker,
    )

    project = Project.objects.create(slug=slug, name=slug, kind="plausibility")
    n_fillers = size // 4
    clozes = ClozeItem.objects.bulk_create(
        ClozeItem(project=project, external_id=str(k), resolved_pattern="FUSED HEAD",
                  article_title=f"How to do thing {k}", section_header="Steps",
                  previous_context="Before. " * 10, sentence="Get ______ done today.",
                  followup_context="After. " * 10)
        for k in range((n_fillers + 4) // 5)
    )
    fillers = ClozeFiller.objects.bulk_create(
        ClozeFiller(cloze=clozes[k // 5], position=k % 5 + 1, text=f"filler {k}")
        for k in range(n_fillers)
    )
    items = Item.objects.bulk_create(
        (Item(project=project, external_id=f"{filler.cloze.external_id}_{filler.position}",
              split=("train", "dev", "test")[k % 3], group_key=filler.cloze.external_id,
              filler=filler) for k, filler in enumerate(fillers)),
        batch_size=2000,
    )
    workers = Worker.objects.bulk_create(
        Worker(provider="mturk", external_id=f"{slug}-A{k:05d}") for k in range(200)
    )
    Annotation.objects.bulk_create(
        (Annotation(project=project, item=items[k // 4], worker=workers[(k * 7 + k // 4) % 200],
                    source="mturk", rating=1 + (k * 31) % 5,
                    payload={"rating": 1 + (k * 31) % 5}, duration_ms=5000 + k % 9000,
                    client_warnings=[], overridden_warnings=[], server_warnings=[])
         for k in range(n_fillers * 4)),
        batch_size=5000,
    )
    return project


def measure(project, format_name: str, out: Path) -> tuple[float, float, int]:
    from annotation.exporters import export_project

    # Timed without tracemalloc (it slows allocation-heavy code about twofold), then once more
    # under tracemalloc for the peak.
    start = time.perf_counter()
    written = export_project(project=project, format_name=format_name, out_dir=out)
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    export_project(project=project, format_name=format_name, out_dir=out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak / 2**20, sum(file.bytes_written for file in written)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="unpack-bench-export-") as folder:
        os.environ["UNPACK_SQLITE_PATH"] = str(Path(folder) / "bench.sqlite3")
        os.environ.pop("DATABASE_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
        os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")  # a local benchmark
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        print(f"{'annotations':>12} {'format':>7} {'seconds':>8} {'peak MiB':>9} {'MiB out':>8}")
        for size in (int(part) for part in args.sizes.split(",")):
            project = build(size, f"bench-{size}")
            for format_name in ("jsonl", "claire"):
                seconds, peak, size_out = measure(project, format_name,
                                                  Path(folder) / f"{size}-{format_name}")
                print(f"{size:>12} {format_name:>7} {seconds:>8.2f} {peak:>9.1f} "
                      f"{size_out / 2**20:>8.1f}")


if __name__ == "__main__":
    main()
