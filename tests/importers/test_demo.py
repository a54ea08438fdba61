"""The demo command: sample data of the five kinds, logins, idempotent, serves the app."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from io import StringIO

import pytest
from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command

from annotation.models import Project

from .conftest import row_counts

pytestmark = pytest.mark.django_db


def test_demo_loads_five_kinds_with_visible_splits_and_is_idempotent():
    out = StringIO()
    call_command("demo", no_serve=True, stdout=out)
    assert "http://127.0.0.1:8000/" in out.getvalue()
    assert "researcher / researcher" in out.getvalue()
    projects = {p.slug: p for p in Project.objects.all()}
    assert {p.kind for p in projects.values()} == {
        "decontext", "plausibility", "rewrite", "split_rephrase", "sluice"}
    splits = {slug: sorted(set(p.items.values_list("split", flat=True)))
              for slug, p in projects.items()}
    assert splits == {"demo-decontext": ["dev", "train"], "demo-claire": ["dev"],
                      "demo-canard": ["test", "train"], "demo-websplit": ["test", "train"],
                      "demo-sluice": ["test"]}
    assert projects["demo-claire"].items.count() == 100
    assert projects["demo-sluice"].annotations.count() == 30
    assert projects["demo-canard"].items.count() == 22
    assert authenticate(username="researcher", password="researcher").is_staff
    assert not authenticate(username="annotator", password="annotator").is_staff
    before = row_counts()
    users = get_user_model().objects.count()
    call_command("demo", no_serve=True, stdout=StringIO())
    assert row_counts() == before
    assert get_user_model().objects.count() == users


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
