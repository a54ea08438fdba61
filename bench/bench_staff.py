"""The staff side at scale: build one CLAIRE-like plausibility project the way the app stores
it, then time what a researcher meets: the dashboard, the review queue, the data browser and
the home page over HTTP, starting QC and an export
(the request), those jobs' wall time and peak memory, the split preview (page and API: the
request, then its job), and the commands ``qc_report --json``, ``export_data`` (claire,
generic JSONL, Hugging Face) and ``make_splits --force`` with their peak memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/unpack_bench \\
    REDIS_URL=redis://127.0.0.1:6379/2 python3 bench/bench_staff.py [--answers 1000000]

The project: ``answers / 5`` fillers (sentences of five fillers, every filler one item),
five ratings per filler from ``--workers`` workers (default 2,000), 1 % of the answers
submitted over a live-check warning and 0.1 % far too fast (≈ 11,000 open QC flags at
1,000,000 answers, as in issue 21). Rows go in with COPY, every column the app writes filled.
PostgreSQL only. The database is emptied first (``migrate`` then ``flush``).

The app is served by gunicorn with ``gunicorn.conf.py``. On a checkout with staff jobs
(``frontend/staff_jobs.py``) a Celery worker (``--pool=solo``) runs the jobs from ``REDIS_URL``
and is restarted before each job, so its peak resident memory (``VmHWM``) is that job's; on an
older checkout QC and exports ran inside the request, and the peak is the gunicorn workers'.
Commands' peak memory is the child's ``ru_maxrss``. Medians of ``--repeat`` runs for pages.
Run it from the checkout to measure (``python3 bench/bench_staff.py`` in that tree).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")

PATTERNS = ("IMPLICIT REFERENCE", "ADDED COMPOUND", "METONYMIC REFERENCE", "FUSED HEAD")
SLUG = "staff-bench"
PASSWORD = "bench-password-1"  # noqa: S105 — a throwaway account in a throwaway database
HAS_JOBS = (REPO / "frontend" / "staff_jobs.py").exists()


def setup_django() -> None:
    import django

    django.setup()


def wait_until_serving(http, base: str) -> None:
    """Wait (up to a minute) until the server at ``base`` answers its login page."""
    import requests

    for _ in range(300):
        try:
            http.get(f"{base}/accounts/login/", timeout=30)
            return
        except requests.RequestException:
            time.sleep(0.2)


def manage(*args: str, env: dict | None = None) -> tuple[float, float, str]:
    """Run ``manage.py`` → (wall seconds, peak RSS MB, stdout tail)."""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "manage.py", *args], cwd=REPO,
                               env=env or os.environ, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed ({process.returncode})")
    return time.monotonic() - started, usage.ru_maxrss / 1024, out.decode()[-300:]


# --- building the project ----------------------------------------------------------------------


def copy_rows(cursor, model, columns: list[str], rows) -> None:
    table = model._meta.db_table
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def build(answers: int, n_workers: int) -> None:
    from django.db import connection

    from annotation.models import (
        Annotation,
        ClozeFiller,
        ClozeItem,
        Item,
        Project,
        Worker,
    )

    rng = random.Random(21)
    n_items = max(answers // 5, 5)
    n_sentences = n_items // 5
    project = Project.objects.create(slug=SLUG, name="Staff bench (CLAIRE-like)",
                                     kind="plausibility",
                                     redundancy={"train": 5, "dev": 5, "test": 5})
    now = datetime(2026, 11, 1, tzinfo=UTC)
    connection.ensure_connection()
    raw = connection.connection  # psycopg 3
    with raw.cursor() as cursor:
        copy_rows(cursor, ClozeItem, ["project_id", "external_id", "resolved_pattern",
                                      "article_title", "section_header", "previous_context",
                                      "sentence", "followup_context"],
                  ((project.pk, str(k), PATTERNS[k % 4], f"How to Do Thing {k}",
                    f"Part {k % 7}", f"Earlier context of sentence {k}.",
                    f"Put the ______ in place number {k}.", f"Then carry on {k}.")
                   for k in range(n_sentences)))
        cursor.execute("SELECT id FROM annotation_clozeitem WHERE project_id = %s ORDER BY id",
                       [project.pk])
        cloze_ids = [row[0] for row in cursor.fetchall()]
        copy_rows(cursor, ClozeFiller, ["cloze_id", "position", "text", "is_original"],
                  ((cloze, position, f"filler {position}", position == 1)
                   for cloze in cloze_ids for position in range(1, 6)))
        cursor.execute("SELECT f.id, f.cloze_id, f.position FROM annotation_clozefiller f "
                       "JOIN annotation_clozeitem c ON c.id = f.cloze_id "
                       "WHERE c.project_id = %s ORDER BY f.id", [project.pk])
        fillers = cursor.fetchall()
        split_of = {cloze: ("train" if k % 10 < 8 else "dev" if k % 10 == 8 else "test")
                    for k, cloze in enumerate(cloze_ids)}
        copy_rows(cursor, Item, ["project_id", "external_id", "split", "group_key", "position",
                                 "filler_id", "is_gold", "filled", "created_at"],
                  ((project.pk, f"{cloze}_{position}", split_of[cloze], f"article-{cloze}",
                    position, filler_id, False, True, now)
                   for filler_id, cloze, position in fillers))
        copy_rows(cursor, Worker, ["provider", "external_id", "is_blocked", "blocked_reason",
                                   "block_synced", "created_at"],
                  (("mturk", f"A{k:012d}BENCH", False, "", True, now)
                   for k in range(n_workers)))
        cursor.execute("SELECT id FROM annotation_worker WHERE external_id LIKE %s "
                       "ORDER BY id", ["%BENCH"])
        worker_ids = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT id FROM annotation_item WHERE project_id = %s ORDER BY id",
                       [project.pk])
        item_ids = [row[0] for row in cursor.fetchall()]
        warning = json.dumps([{"code": "rating_too_fast", "message": "You answered quickly."}])

        def annotation_rows():
            clock = now
            for k in range(answers):
                item = item_ids[k // 5 % len(item_ids)]
                worker = worker_ids[(k * 7 + k // 5) % len(worker_ids)]
                truth = 1 + (item % 5)
                rating = min(5, max(1, truth + rng.choice((-1, 0, 0, 1))))
                seconds = 1.0 if rng.random() < 0.001 else rng.lognormvariate(3.0, 0.4)
                clock += timedelta(milliseconds=37)
                overridden = warning if rng.random() < 0.01 else "[]"
                yield (project.pk, item, worker, "local",
                       json.dumps({"rating": rating}), "", float(rating), "", False, "", "",
                       "[]", clock - timedelta(seconds=seconds), clock,
                       int(seconds * 1000), clock - timedelta(seconds=seconds + 0.2),
                       "[]", overridden, "[]", "pending", "{}", "counted", clock)

        copy_rows(cursor, Annotation, [
            "project_id", "item_id", "worker_id", "source", "payload", "category", "rating",
            "text", "skipped", "problem", "problem_note", "edit_operations", "started_at",
            "submitted_at", "duration_ms", "served_at", "client_warnings",
            "overridden_warnings", "server_warnings", "review_status", "provenance", "state",
            "created_at"],
            annotation_rows())
    with connection.cursor() as cursor:  # as autovacuum would have, on tables this size
        for model in (ClozeItem, ClozeFiller, Item, Worker, Annotation):
            cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")


def staff_account() -> None:
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_superuser("bench", "bench@example.org", PASSWORD)


# --- serving and measuring ---------------------------------------------------------------------


class Served:
    """gunicorn (and, with staff jobs, a Celery worker) for the measured checkout."""

    def __init__(self, port: int, env: dict) -> None:
        self.port, self.env = port, env
        self.web = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "-b",
             f"127.0.0.1:{port}", "annotation.wsgi"], cwd=REPO, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.worker = None
        self.base = f"http://127.0.0.1:{port}"
        try:
            self._log_in()
        except BaseException:
            self.close()
            raise

    def _log_in(self) -> None:
        import requests

        self.http = requests.Session()
        wait_until_serving(self.http, self.base)
        page = self.http.get(f"{self.base}/accounts/login/")
        assert page.ok, page.status_code
        self.http.post(f"{self.base}/accounts/login/", data={
            "username": "bench", "password": PASSWORD,
            "csrfmiddlewaretoken": self.http.cookies["csrftoken"],
            "next": f"/staff/review/{SLUG}/dashboard/"},
            headers={"Referer": f"{self.base}/accounts/login/"}, allow_redirects=False)
        assert "sessionid" in self.http.cookies, "login failed"

    def start_worker(self) -> None:
        self.stop_worker()
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "annotation", "worker", "--pool=solo",
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-Q", "celery",
             "--loglevel=WARNING"], cwd=REPO, env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(6)  # imports Django and connects to the broker

    def stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.send_signal(signal.SIGTERM)
            self.worker.wait(timeout=60)
            self.worker = None

    def peak_mb(self) -> float:
        """Peak RSS of the process that ran the job: the worker, or the gunicorn workers."""
        pids = [self.worker.pid] if self.worker else children(self.web.pid)
        return max((vm_hwm_mb(pid) for pid in pids), default=0.0)

    def get(self, path: str):
        started = time.monotonic()
        response = self.http.get(self.base + path, allow_redirects=False)
        return time.monotonic() - started, response

    def post(self, path: str, data: dict):
        data = {**data, "csrfmiddlewaretoken": self.http.cookies["csrftoken"]}
        started = time.monotonic()
        response = self.http.post(self.base + path, data=data, allow_redirects=False,
                                  headers={"Referer": self.base + path})
        return time.monotonic() - started, response

    def close(self) -> None:
        self.stop_worker()
        self.web.send_signal(signal.SIGTERM)
        self.web.wait(timeout=60)


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def vm_hwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_job(served: Served, path: str, data: dict) -> dict:
    """Start a job from its page: the request's time; then (staff jobs) its wall time."""
    if HAS_JOBS:
        served.start_worker()
    started = time.monotonic()
    if HAS_JOBS:
        request_s, response = served.post(path, data)
        assert response.status_code == 302, response.status_code
        location = response.headers["Location"]
        job_id = int(location.rstrip("/").split("/")[-1])
        while True:
            progress = served.http.get(f"{served.base}/staff/jobs/{job_id}/progress/").json()
            if progress["finished"]:
                break
            time.sleep(0.2)
        assert progress["state"] == "done", progress
        return {"request_s": request_s, "job_s": time.monotonic() - started,
                "peak_mb": served.peak_mb()}
    if "format" in data:  # before staff jobs: the export was a GET answering the zip
        request_s, response = served.get(f"{path}?format={data['format']}")
    else:
        request_s, response = served.post(path, data)
    assert response.status_code in (200, 302), response.status_code
    return {"request_s": request_s, "job_s": request_s, "peak_mb": served.peak_mb()}


def backend_cpu_s() -> float:
    """CPU seconds (user + system) of this connection's PostgreSQL backend so far (the server
    runs on this machine: ``/proc/<pid>/stat``)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def export_cpu(format_name: str) -> None:
    """``--export-cpu FORMAT`` (run as a child by ``main``): the export in this process, with
    its wall time, the Python process's CPU, its PostgreSQL backend's CPU and peak RSS, as
    JSON on stdout. On a loaded machine the CPU figures are the ones to compare."""
    import resource

    setup_django()
    from annotation.exporters import export_project
    from annotation.models import Project

    project = Project.objects.get(slug=SLUG)
    backend_before = backend_cpu_s()
    with tempfile.TemporaryDirectory() as out:
        wall, cpu = time.monotonic(), time.process_time()
        export_project(project=project, format_name=format_name, out_dir=Path(out))
        wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    print(json.dumps({"wall_s": round(wall, 1), "python_cpu_s": round(cpu, 1),
                      "postgres_cpu_s": round(backend_cpu_s() - backend_before, 1),
                      "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                      "loadavg": Path("/proc/loadavg").read_text().split()[:3]}))


def split_seed() -> int:
    """The frozen manifest's seed + 1 (13 when none): a split that changes the manifest."""
    setup_django()
    from annotation.models import SplitManifest

    frozen = SplitManifest.objects.filter(project__slug=SLUG, frozen=True).order_by(
        "-created_at", "-id").first()
    return 13 if frozen is None else frozen.seed + 1


def split_preview_figures(served: Served) -> dict:
    """The splits page's and the API's preview (group rule, a seed no manifest has): the
    request, then the job's wall time and its worker's peak (``run_job``'s way)."""
    seed = split_seed() + 1000
    form = {"rule": "group", "seed": str(seed), "train": "0.8", "dev": "0.1",
            "test": "0.1", "preview": "yes"}
    figures = run_job(served, f"/staff/projects/{SLUG}/splits/", form)
    served.start_worker()
    api = f"/api/projects/{SLUG}/splits/"
    started = time.monotonic()
    response = served.http.post(served.base + api, json={"rule": "group", "seed": seed + 1,
                                                         "preview": True},
                                headers={"X-CSRFToken": served.http.cookies["csrftoken"],
                                         "Referer": served.base + api})
    api_request_s = time.monotonic() - started
    assert response.status_code == 202, response.status_code
    while not (job := served.http.get(response.json()["url"]).json())["finished"]:
        time.sleep(0.2)
    assert job["state"] == "done" and job["result"]["preview"], job
    return {**{key: round(value, 2) for key, value in figures.items()},
            "api_request_s": round(api_request_s, 3),
            "api_job_s": round(time.monotonic() - started, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--port", type=int, default=8321)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--jobs", default="qc,export_claire,export_jsonl,export_hf,"
                        "split_preview",
                        help="which jobs to start from the pages (comma-separated)")
    parser.add_argument("--skip-commands", action="store_true")
    parser.add_argument("--commands", default="qc_report,export_claire,export_jsonl,export_hf,"
                        "make_splits", help="which commands to time (comma-separated)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--export-cpu", metavar="FORMAT",
                        help="only time this export in-process: wall, Python and PostgreSQL "
                             "CPU, peak RSS (JSON on stdout)")
    args = parser.parse_args()
    if args.export_cpu:
        export_cpu(args.export_cpu)
        return
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("bench_staff needs DATABASE_URL=postgres://…")
    if HAS_JOBS and not os.environ.get("REDIS_URL"):
        raise SystemExit("bench_staff needs REDIS_URL for the Celery worker running the jobs")
    results: dict = {"answers": args.answers, "checkout": str(REPO), "staff_jobs": HAS_JOBS}
    if not args.skip_build:
        manage("migrate", "--no-input")
        manage("flush", "--no-input")
        setup_django()
        started = time.monotonic()
        build(args.answers, args.workers)
        staff_account()
        results["build_s"] = round(time.monotonic() - started, 1)
        print(f"built {args.answers:,} answers in {results['build_s']} s", flush=True)
        # The open flags QC raises (≈ 11,000 at 1,000,000 answers), as a project has them.
        seconds, peak, _ = manage("qc_report", SLUG, "--json")
        results["first_qc_report_s"] = round(seconds, 1)
    env = dict(os.environ)
    env.setdefault("DATABASE_CONN_MAX_AGE", "0")
    served = Served(args.port, env)
    try:
        dashboard = f"/staff/review/{SLUG}/dashboard/"
        served.get(dashboard)  # warm: imports, connections
        times = []
        for _ in range(args.repeat):
            seconds, response = served.get(dashboard)
            assert response.status_code == 200, response.status_code
            times.append(seconds)
        results["dashboard_s"] = round(statistics.median(times), 3)
        print(f"dashboard: {results['dashboard_s']} s", flush=True)
        # The other pages a reviewer loads, over HTTP as well (as the user meets them).
        for name, path in (("queue_by_hit", f"/staff/review/{SLUG}/"),
                           ("queue_by_worker", f"/staff/review/{SLUG}/?by=worker"),
                           ("queue_by_answer", f"/staff/review/{SLUG}/?by=answer"),
                           ("answers", f"/staff/projects/{SLUG}/answers/"),
                           ("answers_by_worker", f"/staff/projects/{SLUG}/answers/?sort=worker"),
                           ("home", "/")):
            served.get(path)
            times = []
            for _ in range(args.repeat):
                seconds, response = served.get(path)
                assert response.status_code == 200, (path, response.status_code)
                times.append(seconds)
            results[f"{name}_s"] = round(statistics.median(times), 3)
            print(f"{name}: {results[f'{name}_s']} s", flush=True)
        for name, path, data in (("qc", f"/staff/review/{SLUG}/qc/", {}),
                                 ("export_claire", f"/staff/review/{SLUG}/export/",
                                  {"format": "claire"}),
                                 ("export_jsonl", f"/staff/review/{SLUG}/export/",
                                  {"format": "jsonl"}),
                                 # after "qc": the card takes the stored report's figures
                                 ("export_hf", f"/staff/review/{SLUG}/export/",
                                  {"format": "hf"})):
            if name not in args.jobs.split(","):
                continue
            figures = run_job(served, path, data)
            results[name] = {key: round(value, 2) for key, value in figures.items()}
            print(f"{name}: {results[name]}", flush=True)
        if "split_preview" in args.jobs.split(","):
            results["split_preview"] = split_preview_figures(served)
            print(f"split_preview: {results['split_preview']}", flush=True)
    finally:
        served.close()
    with tempfile.TemporaryDirectory() as out:
        commands = (("cli_qc_report", ("qc_report", SLUG, "--json")),
                    ("cli_export_claire", ("export_data", SLUG, "--format", "claire",
                                           "--out", f"{out}/claire")),
                    ("cli_export_jsonl", ("export_data", SLUG, "--format", "jsonl",
                                          "--out", f"{out}/jsonl")),
                    ("cli_export_hf", ("export_data", SLUG, "--format", "hf",
                                       "--out", f"{out}/hf")),
                    # A seed the frozen manifest is not: every run moves ~34 % of the items.
                    ("cli_make_splits", ("make_splits", SLUG, "--rule", "group", "--seed",
                                         str(split_seed()), "--force")))
        chosen = {f"cli_{name}" for name in args.commands.split(",")}
        for name, command in () if args.skip_commands else commands:
            if name not in chosen:
                continue
            seconds, peak, _ = manage(*command)
            results[name] = {"wall_s": round(seconds, 1), "peak_mb": round(peak)}
            print(f"{name}: {results[name]}", flush=True)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
