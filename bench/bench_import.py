"""Import throughput: CLAIRE train (19,975 fillers) and a synthetic 100,000-sentence WebSplit
JSONL, on SQLite (a temporary file) and on PostgreSQL (a scratch database created next to the
one DATABASE_URL names, dropped afterwards). Prints rows per second; target ≥ 10,000.

    python bench/bench_import.py                      # SQLite, plus PostgreSQL if DATABASE_URL
    python bench/bench_import.py --rows 20000         # a smaller synthetic file
    python bench/bench_import.py --backend sqlite     # one backend only

Each backend runs in its own process (settings read the environment at import).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLAIRE = REPO.parent / "shared" / "data" / "claire"


def write_synthetic_websplit(path: Path, rows: int, seed: int = 7) -> None:
    """``rows`` complex sentences of 2–3 triples drawn from a pool of 5,000 triples, as WebSplit
    reuses the few thousand WebNLG triples across its many sentences."""
    rng = random.Random(seed)
    properties = ["birthPlace", "occupation", "country", "city", "leader", "genre", "founded"]
    pool = [[f"Entity_{i}", properties[i % len(properties)], f"Value_{i * 7 % 1000}"]
            for i in range(5000)]
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            triples = rng.sample(pool, rng.choice((2, 3)))
            handle.write(json.dumps({
                "id": f"syn-{i}",
                "complex": " and ".join(" ".join(t).replace("_", " ") for t in triples) + ".",
                "triples": triples,
            }) + "\n")


def worker(rows: int, synthetic: Path) -> None:
    """Runs inside the benchmark process: migrate, import, report JSON on stdout."""
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")  # a local benchmark
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.services.imports import import_files

    call_command("migrate", verbosity=0, interactive=False)
    results = []
    runs = [
        ("claire train (fillers)", "claire",
         [CLAIRE / "train_data.tsv", CLAIRE / "train_scores.tsv", CLAIRE / "train_labels.tsv"],
         19975),
        (f"synthetic websplit ({rows:,} sentences)", "websplit", [synthetic], rows),
    ]
    for label, fmt, paths, counted in runs:
        started = time.perf_counter()
        result = import_files(fmt=fmt, paths=paths, project_slug=f"bench-{fmt}", quiet=True)
        seconds = time.perf_counter() - started
        results.append({"run": label, "rows": counted, "seconds": round(seconds, 2),
                        "rows_per_second": round(counted / seconds),
                        "created": result.created})
    print(json.dumps(results))


def run_backend(name: str, env: dict, rows: int, synthetic: Path) -> list[dict]:
    output = subprocess.run([sys.executable, __file__, "--worker", "--rows", str(rows),
                             "--synthetic", str(synthetic)], env=env, cwd=REPO, check=True,
                            capture_output=True, text=True)
    return json.loads(output.stdout.strip().splitlines()[-1])


def postgres_scratch(url: str):
    """Create a scratch database beside ``url``'s; return (its url, a function dropping it)."""
    import psycopg

    base, _, _ = url.rpartition("/")
    # Connect to the maintenance database: the one in the URL need not exist yet.
    maintenance = f"{base}/postgres"
    name = f"unpack_bench_{os.getpid()}"
    with psycopg.connect(maintenance, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(maintenance, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return f"{base}/{name}", drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--synthetic", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.rows, args.synthetic)
        return
    with tempfile.TemporaryDirectory() as scratch:
        synthetic = Path(scratch) / "synthetic_train.jsonl"
        write_synthetic_websplit(synthetic, args.rows)
        base_env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        backends = []
        if args.backend in ("sqlite", "both"):
            backends.append(("sqlite", {**base_env,
                                        "UNPACK_SQLITE_PATH": str(Path(scratch) / "b.sqlite3")},
                             None))
        if args.backend in ("postgres", "both"):
            url = os.environ.get("DATABASE_URL", "")
            if url.startswith("postgres"):
                scratch_url, drop = postgres_scratch(url)
                backends.append(("postgresql", {**base_env, "DATABASE_URL": scratch_url}, drop))
            else:
                print("postgresql: skipped (set DATABASE_URL=postgres://...)")
        for name, env, drop in backends:
            try:
                for row in run_backend(name, env, args.rows, synthetic):
                    print(f"{name:10} {row['run']:38} {row['rows']:>7,} rows "
                          f"{row['seconds']:>6.2f} s {row['rows_per_second']:>8,} rows/s")
            finally:
                if drop:
                    drop()


if __name__ == "__main__":
    main()
