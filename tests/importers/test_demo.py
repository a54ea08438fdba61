"""The demo command: sample data of the five kinds, logins, idempotent, serves the app."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from io import StringIO

import pytest
from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.db.models import Count

from annotation.models import Annotation, Flag, Project, Worker
from annotation.services.demo import FAST_WORKER, RANDOM_CLICKER
from tests.network import free_port

from .conftest import row_counts

pytestmark = pytest.mark.django_db


def test_demo_loads_five_kinds_with_visible_splits_and_is_idempotent():
    out = StringIO()
    call_command("demo", no_serve=True, stdout=out)
    assert "http://127.0.0.1:8000/" in out.getvalue()
    assert "researcher / researcher" in out.getvalue()
    raised = re.findall(r"QC raised (\d+) (flags?) ", out.getvalue())
    assert len(raised) == 5
    assert all((count == "1") == (noun == "flag") for count, noun in raised), raised
    projects = {p.slug: p for p in Project.objects.all()}
    assert {p.kind for p in projects.values()} == {
        "decontext", "plausibility", "rewrite", "split_rephrase", "sluice"}
    splits = {slug: sorted(set(p.items.values_list("split", flat=True)))
              for slug, p in projects.items()}
    assert splits == {"demo-decontext": ["dev", "train"], "demo-claire": ["dev"],
                      "demo-canard": ["test", "train"], "demo-websplit": ["test", "train"],
                      "demo-sluice": ["test"]}
    assert projects["demo-claire"].items.count() == 100
    assert projects["demo-sluice"].annotations.filter(source="import").count() == 30
    assert projects["demo-canard"].items.count() == 22
    # The samples' licences and sources, as ATTRIBUTION.md states them, go to the dataset card.
    assert {slug: p.licence for slug, p in projects.items()} == {
        "demo-claire": "CC BY-NC-SA 3.0", "demo-canard": "CC BY-SA 4.0",
        "demo-sluice": "GPL-3.0", "demo-decontext": "", "demo-websplit": ""}
    assert "github.com/acidAnn/claire" in projects["demo-claire"].attribution
    assert all("Hand-made for the Unpack demo" in projects[slug].attribution
               for slug in ("demo-decontext", "demo-websplit"))
    assert authenticate(username="researcher", password="researcher").is_staff
    assert not authenticate(username="annotator", password="annotator").is_staff
    before = row_counts()
    users = get_user_model().objects.count()
    call_command("demo", no_serve=True, stdout=StringIO())
    assert rows_but_qc_jobs() == rows_but_qc_jobs(before)
    assert get_user_model().objects.count() == users


def test_demo_serves_pages_and_static_files_on_a_fresh_database(tmp_path):
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
           "UNPACK_SQLITE_PATH": str(tmp_path / "demo.sqlite3")}
    server = subprocess.Popen([sys.executable, "manage.py", "demo", "--port", str(port)],
                              cwd=settings.BASE_DIR, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/admin/login/", timeout=5) as response:
                    assert response.status == 200
                    # The production server (gunicorn.conf.py), not Django's runserver.
                    assert response.headers["Server"] == "gunicorn"
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(server.stdout.read()) from None
                time.sleep(0.5)
        with urllib.request.urlopen(f"{base}/static/admin/css/base.css", timeout=5) as response:
            assert response.status == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


# --- the simulated crowd (annotation.services.demo) -------------------------------------------


def crowd_counts() -> dict:
    """What the simulated crowd and QC leave per project: answers, flags by reason, workers."""
    counts = {}
    for project in Project.objects.order_by("slug"):
        local = project.annotations.filter(source=Annotation.Source.LOCAL)
        counts[project.slug] = {
            "local_answers": local.count(),
            "ratings": sorted(local.exclude(rating=None).values_list("rating", flat=True)),
            "texts": sorted(local.values_list("text", flat=True)),
            "durations": sorted(local.values_list("duration_ms", flat=True)),
            "flags": sorted(project.flags.values_list("reason", "fingerprint")),
        }
    return counts


@pytest.fixture
def demo_twice():
    call_command("demo", no_serve=True, stdout=StringIO())
    first = crowd_counts()
    rows = row_counts()
    out = StringIO()
    call_command("demo", no_serve=True, stdout=out)
    return first, rows, out.getvalue()


def rows_but_qc_jobs(counts: dict[str, int] | None = None) -> dict[str, int]:
    """``row_counts`` but the jobs: each run of the demo runs QC again, and records that run
    as a finished QC job (the dashboard shows the latest); nothing else may grow."""
    return {name: count for name, count in (counts or row_counts()).items() if name != "Job"}


def test_demo_crowd_is_deterministic_and_idempotent(demo_twice):
    first, rows, second_output = demo_twice
    assert crowd_counts() == first
    assert rows_but_qc_jobs() == rows_but_qc_jobs(rows)
    assert "submitted 0 answers" in second_output
    assert all(first[slug]["local_answers"] > 0 for slug in first)
    assert all(first[slug]["flags"] for slug in first)
    # Same seed on a fresh database (the flush of the test transaction) = the same answers.
    Flag.objects.all().delete()
    Annotation.objects.filter(source=Annotation.Source.LOCAL).delete()
    call_command("demo", no_serve=True, stdout=StringIO())
    again = crowd_counts()
    assert {slug: {k: v for k, v in c.items() if k != "flags"} for slug, c in again.items()} \
        == {slug: {k: v for k, v in c.items() if k != "flags"} for slug, c in first.items()}
    assert {slug: sorted(reason for reason, _ in c["flags"]) for slug, c in again.items()} \
        == {slug: sorted(reason for reason, _ in c["flags"]) for slug, c in first.items()}


def open_flags(slug: str, reason: str) -> list[Flag]:
    return list(Flag.objects.filter(project__slug=slug, reason=reason, status="open")
                .select_related("worker", "annotation"))


def test_demo_crowd_raises_the_flags_a_reviewer_should_see(demo_twice):
    (far,) = open_flags("demo-claire", "worker_far_from_consensus")
    assert far.worker.external_id == RANDOM_CLICKER
    assert {f.worker.external_id for f in open_flags("demo-claire", "too_fast")} == {
        RANDOM_CLICKER}
    # The absolute time floor flags the same fast workers, and no one else.
    assert {(f.project.slug, f.worker.external_id) for f in Flag.objects.filter(
        reason="under_time_floor")} == {("demo-claire", RANDOM_CLICKER), *(
            (slug, FAST_WORKER) for slug in ("demo-canard", "demo-sluice", "demo-websplit"))}
    pronoun = open_flags("demo-canard", "rewrite_pronoun_left")
    assert "When did they finally disband?" in {f.annotation.text for f in pronoun}
    overridden = open_flags("demo-canard", "warning_overridden")
    assert overridden and all(f.annotation.overridden_warnings for f in overridden)
    # One flag per annotation, naming the codes (not the stored warning objects).
    assert len({f.annotation_id for f in overridden}) == len(overridden)
    for flag in overridden:
        codes = sorted({w["code"] for w in flag.annotation.overridden_warnings})
        assert flag.detail == f"submitted despite warning {', '.join(codes)}"
    copy = {f.annotation.text for f in open_flags("demo-canard", "copy_of_input")
            if f.annotation.source == "local"}
    assert "Why did they break up?" in copy
    assert {f.worker.external_id for f in open_flags("demo-canard", "too_fast")} == {
        FAST_WORKER}
    (low,) = open_flags("demo-decontext", "worker_low_agreement")
    assert low.worker.external_id == "demo-worker-4"
    sluice_codes = {w["code"] for f in open_flags("demo-sluice", "warning_overridden")
                    for w in f.annotation.overridden_warnings}
    assert {"sluice_too_short", "sluice_wrong_start"} <= sluice_codes
    assert open_flags("demo-websplit", "warning_overridden")
    # The crowd's decontext edits are valid operations, stored as the task page stores them.
    edited = Annotation.objects.filter(project__slug="demo-decontext", source="local",
                                       category="DONE")
    assert edited.count() >= 10
    assert all(a.edit_operations and a.edit_operations[0]["op"] == "swap" for a in edited)
    # Server-side live checks ran on every text answer.
    assert Annotation.objects.filter(project__slug="demo-canard", source="local").exclude(
        server_warnings=[]).count() >= 4


def test_demo_crowd_respects_redundancy_and_leaves_work_for_the_annotator(demo_twice, client):
    for project in Project.objects.all():
        per_item = (project.annotations.filter(source=Annotation.Source.LOCAL)
                    .values("item_id", "item__split").annotate(n=Count("id")))
        for row in per_item:
            assert row["n"] <= project.redundancy_for(row["item__split"]), (project.slug, row)
    client.force_login(get_user_model().objects.get(username="annotator"))
    for slug in ("demo-decontext", "demo-claire", "demo-canard", "demo-websplit",
                 "demo-sluice"):
        response = client.get(f"/annotate/{slug}/")
        assert response.status_code == 200
        templates = {template.name for template in response.templates}
        assert "frontend/annotate/page.html" in templates, slug
        assert "frontend/annotate/done.html" not in templates, slug


def test_demo_review_pages_show_the_flags(demo_twice, client):
    client.force_login(get_user_model().objects.get(username="researcher"))
    queue = client.get("/staff/review/demo-claire/?by=worker").content.decode()
    assert "worker_far_from_consensus" in queue and "Run QC now" in queue
    assert "No open flags" not in queue
    dashboard = client.get("/staff/review/demo-claire/dashboard/").content.decode()
    assert "Ratings (1–5)" in dashboard and "no data yet" not in dashboard
    clicker = Worker.objects.get(external_id=RANDOM_CLICKER)
    assert f"worker {clicker.anonymous_id}" in dashboard  # plot labels: anonymous ids only
    assert f"worker {clicker.pk}<" not in dashboard
    # A sluice is shown with the Q1 and A1 it stands for; overridden warnings by their codes.
    sluice = client.get("/staff/review/demo-sluice/").content.decode()
    assert "Q1: Who beat him? · A1: Oliver Cromwell" in sluice
    assert "overrode sluice_too_short" in sluice
    assert "Per-worker" not in client.get("/staff/review/demo-sluice/dashboard/").content.decode()


def test_demo_refuses_a_database_it_did_not_make(django_user_model):
    """The demo adds researcher/researcher (staff, public password): never to a database that
    has someone else's accounts or projects, unless told it is a demo database."""
    from django.core.management.base import CommandError

    from annotation.management.commands.demo import demo_database_check

    django_user_model.objects.create_user(username="alice", password="real-secret-1")
    with pytest.raises(CommandError, match="researcher/researcher"):
        call_command("demo", no_serve=True, stdout=StringIO())
    assert not django_user_model.objects.filter(username="researcher").exists()
    assert not Project.objects.exists()
    demo_database_check(declared_demo=True)  # --demo-database: allowed
    # A database the demo made (its researcher still has the demo password) passes too.
    django_user_model.objects.create_user(username="researcher", password="researcher")
    demo_database_check(declared_demo=False)
    researcher = django_user_model.objects.get(username="researcher")
    researcher.set_password("changed-by-its-owner")
    researcher.save()
    with pytest.raises(CommandError):
        demo_database_check(declared_demo=False)
