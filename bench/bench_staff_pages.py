"""Bench the staff pages at scale: home, review list, review queue, admin, API lists, splits.

Builds (``--build``) one CLAIRE-like plausibility project in the PostgreSQL database of
``DATABASE_URL`` (a database for the bench alone: a build removes every project in it) the way
the app stores it: ``N / 5`` fillers (items) in clozes of five, each rated by 5 workers of 2,000
through MTurk (one batch, HITs of 10 items, 5 submitted assignments per HIT), and open QC flags
on about 1.1% of the answers (a second flag on every 1,000th answer, and worker-level flags on
20 workers): ~12,400 open flags at 1,000,000 answers. The rows go in with
``INSERT … SELECT generate_series`` (minutes for 1,000,000, not hours), then ``VACUUM
ANALYZE``.

Then it times, through Django's test ``Client`` (the whole request: middleware, views,
templates) logged in as a superuser, the median of ``--repeat`` requests of each page, and
once ``make_splits --force`` (``project_split``; it moves items, so it runs last). Every
statement is cut at ``--timeout`` seconds (``statement_timeout``): a page that needs more is
reported as such, not waited for.

    DATABASE_URL=postgres://…/unpack_bench python3 bench/bench_staff_pages.py \
        --answers 100000 --build

``--slug`` times an existing project instead (``staff-bench`` of ``bench/bench_staff.py``; no
build), and ``--port N`` serves the checkout with gunicorn (``gunicorn.conf.py``) and times every
staff page and API list a user can reach over HTTP (``every_page``: the pages above plus the
dashboard, data browser sorts and searches, worker, batch, job, gold, splits and console pages,
every admin changelist with and without ``?q=``, the API lists), as the user meets them:

    DATABASE_URL=postgres://…/unpack_bench_copy python3 bench/bench_staff_pages.py \
        --slug staff-bench --port 8343 --no-splits

The same script runs on an older checkout (copy it into its bench/): the pages it cannot
find there (e.g. a queue grouping or an API cursor it lacks) are reported as such.
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
WORKERS = 2000
ITEMS_PER_HIT = 10
RATINGS_PER_ITEM = 5


def build(answers: int) -> None:
    """The project, from nothing: the schema brought up to date (a new database gets every
    table), then every project of the database removed."""
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)

    items = answers // RATINGS_PER_ITEM
    hits = (items + ITEMS_PER_HIT - 1) // ITEMS_PER_HIT
    steps = [
        # A bench database of its own: every project in it goes (TRUNCATE: fast, cascading)
        ("TRUNCATE annotation_project CASCADE", "old projects"),
        ("DO $$ BEGIN IF to_regclass('annotation_projectcount') IS NOT NULL THEN "
         "TRUNCATE annotation_projectcount; END IF; END $$", "old project counts"),
        ("INSERT INTO annotation_project (slug, name, kind, instructions, redundancy, "
         "reward_cents, live_check_settings, flag_settings, created_at, status, "
         "workers_everyone, licence, attribution) VALUES (%(slug)s, "
         "'CLAIRE bench', 'plausibility', '', '{\"train\": 5, \"dev\": 5, \"test\": 5}', 5, "
         "'{}', '{}', now(), 'open', true, '', '')", "project"),
        ("INSERT INTO annotation_worker (provider, external_id, is_blocked, blocked_reason, "
         "block_synced, created_at) SELECT 'mturk', 'BENCHW' || lpad(k::text, 5, '0'), false, "
         "'', true, now() FROM generate_series(0, %(workers)s - 1) k "
         "ON CONFLICT DO NOTHING", "workers"),
        ("INSERT INTO annotation_clozeitem (project_id, external_id, resolved_pattern, "
         "article_title, section_header, previous_context, sentence, followup_context) "
         "SELECT p.id, k::text, 'FUSED HEAD', 'How to do thing ' || k, 'Steps', "
         "repeat('Before. ', 10), 'Get ______ done today.', repeat('After. ', 10) "
         "FROM annotation_project p, generate_series(0, (%(items)s + 4) / 5 - 1) k "
         "WHERE p.slug = %(slug)s", "clozes"),
        ("INSERT INTO annotation_clozefiller (cloze_id, position, text) "
         "SELECT c.id, pos, 'filler ' || c.external_id || '_' || pos "
         "FROM annotation_clozeitem c JOIN annotation_project p ON p.id = c.project_id, "
         "generate_series(1, 5) pos WHERE p.slug = %(slug)s", "fillers"),
        ("INSERT INTO annotation_item (project_id, external_id, split, group_key, position, "
         "is_gold, created_at, filled, filler_id) "
         "SELECT p.id, c.external_id || '_' || f.position, "
         "(ARRAY['train', 'dev', 'test'])[1 + (c.id %% 3)], c.external_id, f.position, false, "
         "now(), true, f.id FROM annotation_clozefiller f "
         "JOIN annotation_clozeitem c ON c.id = f.cloze_id "
         "JOIN annotation_project p ON p.id = c.project_id WHERE p.slug = %(slug)s "
         "ORDER BY f.id LIMIT %(items)s", "items"),
        ("INSERT INTO annotation_batch (project_id, provider, live, status, title, description, "
         "keywords, reward_cents, items_per_hit, lifetime_seconds, "
         "assignment_duration_seconds, auto_approval_delay_seconds, "
         "qualification_requirements, selection, provider_hit_type_id, error, created_at, "
         "updated_at, completion_code, failed_check_code, participant_filters, "
         "device_compatibility) SELECT id, 'mturk', false, 'published', 'bench', '', '', 5, "
         "%(per_hit)s, 604800, 3600, 259200, '[]', '{}', 'BENCHTYPE', '', now(), now(), '', "
         "'', '[]', '[]' FROM annotation_project WHERE slug = %(slug)s", "batch"),
        ("INSERT INTO annotation_hit (batch_id, provider_hit_id, unique_request_token, "
         "max_assignments, status, error, created_at, updated_at) "
         "SELECT b.id, 'BENCHHIT' || h, 'bench-hit-' || h, 5, 'reviewable', '', now(), now() "
         "FROM annotation_batch b JOIN annotation_project p ON p.id = b.project_id, "
         "generate_series(0, %(hits)s - 1) h WHERE p.slug = %(slug)s ORDER BY h", "hits"),
        # hit number h = its rank in the batch; item number n = its rank in the project
        ("CREATE TEMP TABLE bench_hit AS SELECT h.id, row_number() OVER (ORDER BY h.id) - 1 "
         "AS n FROM annotation_hit h JOIN annotation_batch b ON b.id = h.batch_id "
         "JOIN annotation_project p ON p.id = b.project_id WHERE p.slug = %(slug)s", "hit map"),
        ("CREATE TEMP TABLE bench_item AS SELECT i.id, row_number() OVER (ORDER BY i.id) - 1 "
         "AS n FROM annotation_item i JOIN annotation_project p ON p.id = i.project_id "
         "WHERE p.slug = %(slug)s", "item map"),
        ("CREATE TEMP TABLE bench_worker AS SELECT w.id, row_number() OVER (ORDER BY w.id) - 1 "
         "AS n FROM annotation_worker w WHERE w.external_id LIKE 'BENCHW%%'", "worker map"),
        ("INSERT INTO annotation_hititem (hit_id, item_id, \"order\") "
         "SELECT h.id, i.id, i.n %% %(per_hit)s FROM bench_item i "
         "JOIN bench_hit h ON h.n = i.n / %(per_hit)s", "hit items"),
        # 5 assignments per HIT, by five different workers
        ("INSERT INTO annotation_assignment (hit_id, worker_id, provider_assignment_id, status, "
         "accepted_at, submitted_at, raw_answer, review_message, decision_synced, created_at, "
         "rejection_category) SELECT h.id, w.id, 'BENCHA' || h.n || '_' || s, 'submitted', "
         "now(), now(), '', '', true, now(), '' FROM bench_hit h, generate_series(0, 4) s, "
         "bench_worker w WHERE w.n = (h.n * 7 + s * 401) %% %(workers)s", "assignments"),
        ("CREATE TEMP TABLE bench_assignment AS SELECT a.id, a.worker_id, a.hit_id, "
         "row_number() OVER (ORDER BY a.id) - 1 AS n FROM annotation_assignment a "
         "JOIN bench_hit h ON h.id = a.hit_id", "assignment map"),
        ("INSERT INTO annotation_annotation (project_id, item_id, worker_id, assignment_id, "
         "source, payload, category, rating, text, skipped, problem, problem_note, "
         "edit_operations, started_at, submitted_at, duration_ms, served_at, client_warnings, "
         "overridden_warnings, server_warnings, review_status, state, provenance, created_at) "
         "SELECT p.id, i.id, a.worker_id, a.id, 'mturk', "
         "jsonb_build_object('rating', 1 + (i.n * 7 + a.n) %% 5), '', 1 + (i.n * 7 + a.n) %% 5, "
         "'', false, '', '', '[]', now() - interval '1 hour', now(), "
         "4000 + (i.n * 31 + a.n) %% 30000, now() - interval '1 hour', '[]', '[]', '[]', "
         "'pending', 'counted', '{}', now() "
         "FROM bench_item i JOIN annotation_hititem hi ON hi.item_id = i.id "
         "JOIN bench_assignment a ON a.hit_id = hi.hit_id, annotation_project p "
         "WHERE p.slug = %(slug)s ORDER BY a.id, i.id", "annotations"),
        # open QC flags: 1 answer in 89, a second flag on every 1,000th, 20 workers; a flag
        # on an answer names its worker and assignment, as QC stores it
        ("INSERT INTO annotation_flag (project_id, annotation_id, worker_id, assignment_id, "
         "reason, raised_by, score, detail, fingerprint, status, decision_note, created_at) "
         "SELECT project_id, id, worker_id, assignment_id, 'rating_outlier', 'qc', "
         "((id * 37) %% 1000) / 1000.0, 'rating far from the others', "
         "'rating_outlier:annotation:' || id, 'open', '', now() FROM annotation_annotation "
         "WHERE project_id = (SELECT id FROM annotation_project WHERE slug = %(slug)s) "
         "AND id %% 89 = 0", "flags"),
        ("INSERT INTO annotation_flag (project_id, annotation_id, worker_id, assignment_id, "
         "reason, raised_by, score, detail, fingerprint, status, decision_note, created_at) "
         "SELECT project_id, id, worker_id, assignment_id, 'too_fast', 'qc', 0.5, 'under 5 s', "
         "'too_fast:annotation:' || id, 'open', '', now() FROM annotation_annotation "
         "WHERE project_id = (SELECT id FROM annotation_project WHERE slug = %(slug)s) "
         "AND id %% 1000 = 0", "second flags"),
        ("INSERT INTO annotation_flag (project_id, annotation_id, worker_id, assignment_id, "
         "reason, raised_by, score, detail, fingerprint, status, decision_note, created_at) "
         "SELECT p.id, NULL, w.id, NULL, 'worker_agreement', 'qc', 0.9, 'low agreement', "
         "'worker_agreement:worker:' || w.id, 'open', '', now() FROM bench_worker w, "
         "annotation_project p WHERE p.slug = %(slug)s AND w.n < 20", "worker flags"),
        ("DROP TABLE bench_hit, bench_item, bench_worker, bench_assignment", "maps"),
    ]
    params = {"slug": SLUG, "workers": WORKERS, "items": items, "hits": hits,
              "per_hit": ITEMS_PER_HIT}
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('statement_timeout', '0', false)")  # --timeout: pages
        for sql, what in steps:
            started = time.perf_counter()
            cursor.execute(sql, params)
            print(f"  built {what}: {cursor.rowcount} rows in "
                  f"{time.perf_counter() - started:.1f} s", flush=True)
        started = time.perf_counter()
        cursor.execute("VACUUM ANALYZE")
        print(f"  VACUUM ANALYZE in {time.perf_counter() - started:.1f} s", flush=True)


def _deep_values(project) -> dict:
    """Values for the deep pages: ids 90% of the way into the project's lists."""
    from annotation.models import Annotation, Flag, Item

    def at(queryset, fraction: float) -> int:
        count = queryset.count()
        return queryset.order_by("pk").values_list("pk", flat=True)[int(count * fraction)]

    annotations = Annotation.objects.filter(project=project)
    return {"annotation": at(annotations, 0.9),
            "item": at(Item.objects.filter(project=project), 0.9),
            "annotation_count": annotations.count(),
            "open_flags": Flag.objects.filter(project=project, status="open").count()}


def pages(project, deep: dict) -> list[tuple[str, str]]:
    slug = project.slug
    offset = int(deep["annotation_count"] * 0.9) // 1000 * 1000
    return [
        ("home /", "/"),
        ("/staff/review/", "/staff/review/"),
        ("queue (first page, by HIT)", f"/staff/review/{slug}/"),
        ("queue by worker", f"/staff/review/{slug}/?by=worker"),
        ("queue by answer", f"/staff/review/{slug}/?by=answer"),
        ("queue deep page (by answer)", f"/staff/review/{slug}/?by=answer&after=0.1:0"),
        ("queue deep page (by HIT)", f"/staff/review/{slug}/?after=0.1:0"),
        ("admin annotations", "/admin/annotation/annotation/"),
        ("admin annotations ?q=", "/admin/annotation/annotation/?q=BENCHW00042"),
        ("admin flags", "/admin/annotation/flag/"),
        ("admin flags ?q=", "/admin/annotation/flag/?q=too_fast"),
        ("API annotations limit=1000 offset 90%",
         f"/api/annotations/?project={slug}&limit=1000&offset={offset}"),
        ("API annotations limit=1000 cursor 90%",
         f"/api/annotations/?project={slug}&limit=1000&after={deep['annotation']}"),
        ("API items limit=1000 cursor 90%",
         f"/api/items/?project={slug}&limit=1000&after={deep['item']}"),
    ]


def _first(model, **filters):
    row = model.objects.filter(**filters).order_by("pk").values_list("pk", flat=True).first()
    return row


def every_page(project, deep: dict) -> list[tuple[str, str]]:
    """``pages`` and every other staff page and API list, with ids found in the database (a
    page whose id the database lacks, e.g. a batch in a project of local answers, is left
    out and said so)."""
    from annotation.models import (
        Annotation,
        Assignment,
        Batch,
        Flag,
        Item,
        Job,
        SplitManifest,
        Worker,
    )

    slug = project.slug
    found = {
        "batch": _first(Batch, project=project),
        "assignment": _first(Assignment, hit__batch__project=project),
        "job": _first(Job),
        "manifest": _first(SplitManifest, project=project),
        "flagged_item": Flag.objects.filter(project=project, annotation__isnull=False)
        .values_list("annotation__item_id", flat=True).first(),
        "item": _first(Item, project=project),
    }
    busiest = (Annotation.objects.filter(project=project, item_id=found["item"])
               .values_list("worker_id", flat=True).first())
    worker = Worker.objects.filter(pk=busiest).first() if busiest else None
    early = (Annotation.objects.filter(project=project).order_by("pk")
             .values_list("pk", flat=True)[deep["annotation_count"] // 10])
    listed = [
        *pages(project, deep),
        ("dashboard", f"/staff/review/{slug}/dashboard/"),
        ("queue by worker, one worker", f"/staff/review/{slug}/?by=worker&worker={busiest}"),
        ("queue deep page (by worker)", f"/staff/review/{slug}/?by=worker&after=0.1:0"),
        ("review export page", f"/staff/review/{slug}/export/"),
        ("data browser (newest)", f"/staff/projects/{slug}/answers/"),
        ("data browser by worker", f"/staff/projects/{slug}/answers/?sort=worker"),
        ("data browser by item", f"/staff/projects/{slug}/answers/?sort=item"),
        ("data browser oldest", f"/staff/projects/{slug}/answers/?sort=oldest"),
        ("data browser deep (newest, 90%)", f"/staff/projects/{slug}/answers/?after={early}"),
        ("data browser one worker",
         f"/staff/projects/{slug}/answers/?worker={worker.external_id if worker else ''}"),
        ("data browser flagged", f"/staff/projects/{slug}/answers/?flag=too_fast"),
        ("data browser item text", f"/staff/projects/{slug}/answers/?text=thing"),
        ("data browser state", f"/staff/projects/{slug}/answers/?state=counted&split=dev"),
        ("adjudicate (a flagged item)",
         f"/staff/projects/{slug}/items/{found['flagged_item']}/adjudicate/"),
        ("held-back work", f"/staff/projects/{slug}/held/"),
        ("gold", f"/staff/projects/{slug}/gold/"),
        ("splits", f"/staff/projects/{slug}/splits/"),
        ("console export", f"/staff/projects/{slug}/export/"),
        ("settings", f"/staff/projects/{slug}/settings/"),
        ("team (project)", f"/staff/projects/{slug}/team/"),
        ("team", "/staff/team/"),
        ("invites", "/staff/team/invites/"),
        ("import", f"/staff/projects/{slug}/import/"),
        ("new project", "/staff/projects/new/"),
        ("batches", "/staff/batches/"),
        ("new batch", f"/staff/batches/new/?project={slug}"),
        ("worker page", f"/staff/workers/{busiest}/"),
        ("worker block (confirm)", f"/staff/workers/{busiest}/block/?project={slug}"),
        ("API projects", "/api/projects/"),
        ("API project", f"/api/projects/{slug}/"),
        ("API counts", f"/api/projects/{slug}/counts/"),
        ("API items limit=1000", f"/api/items/?project={slug}&limit=1000"),
        ("API annotations limit=1000", f"/api/annotations/?project={slug}&limit=1000"),
        ("API annotations limit=1000 offset 10000 (deepest offset)",
         f"/api/annotations/?project={slug}&limit=1000&offset=10000"),
        ("API items limit=1000 offset 10000", f"/api/items/?project={slug}&limit=1000"
         "&offset=10000"),
        ("API batches", "/api/batches/"),
        ("API adjudication (a flagged item)",
         f"/api/projects/{slug}/items/{found['flagged_item']}/adjudication/"),
    ]
    if found["batch"]:
        listed += [("batch page", f"/staff/batches/{found['batch']}/"),
                   ("batch manage", f"/staff/batches/{found['batch']}/manage/"),
                   ("API batch", f"/api/batches/{found['batch']}/")]
    if found["job"]:
        listed += [("job page", f"/staff/jobs/{found['job']}/"),
                   ("API job", f"/api/jobs/{found['job']}/")]
    if found["manifest"]:
        listed.append(("split manifest", f"/staff/projects/{slug}/splits/{found['manifest']}/"))
    missing = [name for name in ("batch", "job", "manifest") if not found[name]]
    if missing:
        print(f"no {', '.join(missing)} in the database: their pages are not timed", flush=True)
    from django.contrib import admin

    for model in admin.site._registry:
        meta = model._meta
        url = f"/admin/{meta.app_label}/{meta.model_name}/"
        listed.append((f"admin {meta.verbose_name_plural}", url))
        if admin.site._registry[model].search_fields:
            term = {"annotation": "BENCH", "worker": "BENCH"}.get(meta.model_name, "bench")
            listed.append((f"admin {meta.verbose_name_plural} ?q=", f"{url}?q={term}"))
    return listed


class Http:
    """gunicorn serving this checkout, and a session of ``user`` (its cookie from a test
    client's login: the session is in the database or the shared cache, as the server's)."""

    def __init__(self, port: int, user) -> None:
        import subprocess

        import requests
        from bench_staff import wait_until_serving  # the same wait as bench_staff's server
        from django.conf import settings
        from django.test import Client

        self.base = f"http://127.0.0.1:{port}"
        self.web = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "-b",
             f"127.0.0.1:{port}", "annotation.wsgi"], cwd=Path(__file__).resolve().parents[1],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = Client()
        client.force_login(user)
        self.http = requests.Session()
        self.http.cookies.set(settings.SESSION_COOKIE_NAME,
                              client.cookies[settings.SESSION_COOKIE_NAME].value)
        wait_until_serving(self.http, self.base)

    def get(self, url: str):
        response = self.http.get(self.base + url, allow_redirects=False)
        return response.status_code, response.content

    def close(self) -> None:
        self.web.terminate()
        self.web.wait(timeout=60)


def measure(client, url: str, repeat: int) -> tuple[float, int, int]:
    """(median seconds, status, bytes) of ``repeat`` GETs."""
    times, status, size = [], 0, 0
    for _ in range(repeat):
        started = time.perf_counter()
        if isinstance(client, Http):
            status, body = client.get(url)
        else:
            response = client.get(url)
            status = response.status_code
            body = (b"".join(response.streaming_content) if response.streaming
                    else response.content)
        times.append(time.perf_counter() - started)
        size = len(body)
    return statistics.median(times), status, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--build", action="store_true", help="(re)build the bench project")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="statement_timeout in seconds")
    parser.add_argument("--no-splits", action="store_true", help="skip make_splits")
    parser.add_argument("--slug", default=SLUG,
                        help="time this existing project (no build unless it is the default)")
    parser.add_argument("--port", type=int,
                        help="serve with gunicorn on this port and time every page over HTTP")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL to a PostgreSQL database for the bench (it is rebuilt)")

    import django

    django.setup()
    from django.db import connection

    # Every connection of the run (a request may open a new one) cuts statements at --timeout.
    options = connection.settings_dict.setdefault("OPTIONS", {})
    options["options"] = (f"{options.get('options', '')} "
                          f"-c statement_timeout={int(args.timeout * 1000)}").strip()
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.test.utils import setup_test_environment

    from annotation.models import Project

    setup_test_environment()  # the test Client's ALLOWED_HOSTS, no debug toolbar
    if args.slug == SLUG and (args.build or not Project.objects.filter(slug=SLUG).exists()):
        started = time.perf_counter()
        build(args.answers)
        print(f"built in {time.perf_counter() - started:.0f} s", flush=True)
    project = Project.objects.get(slug=args.slug)
    deep = _deep_values(project)
    print(f"project {args.slug}: {deep['annotation_count']} answers, {deep['open_flags']} open "
          f"flags", flush=True)
    user, _ = get_user_model().objects.get_or_create(
        username="bench-staff", defaults={"is_staff": True, "is_superuser": True})
    if args.port:
        client, listed = Http(args.port, user), every_page(project, deep)
    else:
        client, listed = Client(raise_request_exception=False), pages(project, deep)
        client.force_login(user)
    print("| page | median s | status | KB |\n|---|---|---|---|")
    try:
        for name, url in listed:
            measure(client, url, 1)  # warm: the process's imports, connections and caches
            seconds, status, size = measure(client, url, args.repeat)
            print(f"| {name} | {seconds:.3f} | {status} | {size / 1024:.0f} |", flush=True)
    finally:
        if args.port:
            client.close()
    if not args.no_splits:
        from annotation.services.splits import project_split

        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('statement_timeout', '0', false)")
        started = time.perf_counter()
        try:
            result = project_split(project=project, rule="group", seed=7, force=True)
            outcome = f"moved {result.moved_items} items"
        except Exception as error:
            outcome = f"failed: {type(error).__name__}: {str(error)[:100]}"
        print(f"| make_splits --force (group) | {time.perf_counter() - started:.1f} | "
              f"{outcome} | |", flush=True)


if __name__ == "__main__":
    main()
