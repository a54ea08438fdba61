"""Where a QC run's time goes: ``project_qc_run`` (the QC job's and ``qc_report``'s service)
in this process over an existing project, with wall and CPU time per step, the SQL statements'
time, and optionally a cProfile of the whole run.

    DATABASE_URL=postgres://…/unpack_bench_… python3 bench/bench_qc_run.py [SLUG]
        [--repeat 3] [--no-flags] [--profile 40]

``SLUG`` defaults to ``bench/bench_staff.py``'s project. Each run prints one line: wall, this
process's CPU (``time.process_time``: what the code costs, whatever else the machine runs),
the statements' count and time (an ``execute_wrapper``; the database's work plus the transfer),
the growth of this process's peak resident memory over the run and the steps (``QC_STEPS``)
as wall/CPU with the peak at each step's end. The load average is printed beside them (the
machine is shared). ``--profile N`` prints the N functions with the most cumulative time of
the last run.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import os
import pstats
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slug", nargs="?", default="staff-bench")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-flags", action="store_true", help="do not store the flags")
    parser.add_argument("--statements", action="store_true",
                        help="print each statement's time and its start (the last run)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="cProfile the last run and print its N costliest functions")
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection

    from annotation.models import Project
    from annotation.services.qc import project_qc_run

    project = Project.objects.get(slug=args.slug)
    statements = {"n": 0, "seconds": 0.0, "each": []}

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            statements["n"] += 1
            statements["seconds"] += time.perf_counter() - started
            statements["each"].append((time.perf_counter() - started, " ".join(sql.split())))

    for run in range(1, args.repeat + 1):
        steps: list[tuple[str, float, float]] = []

        def progress(_done, _total, message, steps=steps):
            steps.append((message, time.perf_counter(), time.process_time(), peak_mb()))

        statements.update(n=0, seconds=0.0, each=[])
        profiler = cProfile.Profile() if args.profile and run == args.repeat else None
        load_before = os.getloadavg()[0]
        peak_before = peak_mb()
        wall, cpu = time.perf_counter(), time.process_time()
        with connection.execute_wrapper(timed):
            if profiler:
                profiler.enable()
            report = project_qc_run(project=project, store_flags=not args.no_flags,
                                    progress=progress)
            if profiler:
                profiler.disable()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        per_step = ", ".join(
            f"{name} {end_wall - start_wall:.2f}/{end_cpu - start_cpu:.2f} (peak {peak:.0f} MB)"
            for (name, start_wall, start_cpu, _), (_, end_wall, end_cpu, peak)
            in itertools.pairwise(steps))
        print(f"run {run}: wall {wall:.2f} s, CPU {cpu:.2f} s, SQL {statements['seconds']:.2f} s "
              f"in {statements['n']} statements, peak RSS {peak_before:.0f} → {peak_mb():.0f} MB, "
              f"load {load_before:.1f} → {os.getloadavg()[0]:.1f}; steps (wall/CPU s): "
              f"{per_step}; flags {report.get('flags_stored') or report['flags_raised']}",
              flush=True)
    if args.statements:
        for seconds, sql in statements["each"]:
            print(f"{seconds:7.3f} s  {sql[:300]}")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
