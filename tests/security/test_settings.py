"""Deployment settings: no public secret key by accident, https-only cookies and HSTS when
asked, no framing except the MTurk task page, ``check --deploy`` clean when configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STRONG_KEY = "k3y-" + "x9Qz" * 16  # 68 characters, many distinct: passes security.W009
CLEARED = ("DJANGO_SECRET_KEY", "DJANGO_DEBUG", "UNPACK_ALLOW_DEV_KEY", "UNPACK_HTTPS",
           "DJANGO_SECURE_HSTS_SECONDS", "DJANGO_SECURE_SSL_REDIRECT",
           "DJANGO_SECURE_PROXY_SSL_HEADER", "DJANGO_X_FRAME_OPTIONS", "DATABASE_URL")


def run(code_or_args, **env) -> subprocess.CompletedProcess:
    """Python in a fresh process with the project's real settings and only ``env`` set."""
    clean = {k: v for k, v in os.environ.items() if k not in CLEARED}
    clean.update(DJANGO_SETTINGS_MODULE="annotation.settings", **env)
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    return subprocess.run([sys.executable, *args], cwd=REPO, env=clean, capture_output=True,
                          text=True, timeout=120)


SHOW = ("import json, django; django.setup(); from django.conf import settings as s; "
        "print(json.dumps({k: getattr(s, k, None) for k in ('SECRET_KEY', 'DEBUG', "
        "'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'SECURE_SSL_REDIRECT', "
        "'SECURE_HSTS_SECONDS', 'SECURE_PROXY_SSL_HEADER', 'X_FRAME_OPTIONS')}))")


def settings_with(**env) -> dict:
    result = run(SHOW, **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_without_a_secret_key_the_app_refuses_to_start():
    result = run(SHOW)
    assert result.returncode != 0
    assert "ImproperlyConfigured: DJANGO_SECRET_KEY is not set" in result.stderr
    assert "UNPACK_ALLOW_DEV_KEY" in result.stderr  # the message says how to proceed


def test_the_development_key_only_when_explicitly_allowed():
    assert settings_with(UNPACK_ALLOW_DEV_KEY="true")["SECRET_KEY"] == (
        "unpack-insecure-development-key")
    # Debugging is no excuse: DJANGO_DEBUG=true without a key is refused, saying why.
    debugging = run(SHOW, DJANGO_DEBUG="true")
    assert debugging.returncode != 0
    assert "DJANGO_DEBUG=true does not replace it" in debugging.stderr
    assert settings_with(DJANGO_DEBUG="true", UNPACK_ALLOW_DEV_KEY="true")["DEBUG"] is True
    assert run(SHOW, UNPACK_ALLOW_DEV_KEY="false").returncode != 0
    assert settings_with(DJANGO_SECRET_KEY=STRONG_KEY,
                         UNPACK_ALLOW_DEV_KEY="true")["SECRET_KEY"] == STRONG_KEY


def test_debug_is_off_unless_asked():
    assert settings_with(DJANGO_SECRET_KEY=STRONG_KEY)["DEBUG"] is False


def test_the_demo_command_runs_without_any_configuration():
    result = run(["manage.py", "demo", "--help"])
    assert result.returncode == 0, result.stderr
    assert "--no-serve" in result.stdout
    assert run(["manage.py", "check"]).returncode != 0  # other commands still need a key


def test_https_settings_come_from_the_environment():
    plain = settings_with(DJANGO_SECRET_KEY=STRONG_KEY)
    assert (plain["SESSION_COOKIE_SECURE"], plain["CSRF_COOKIE_SECURE"],
            plain["SECURE_SSL_REDIRECT"], plain["SECURE_HSTS_SECONDS"]) == (False, False,
                                                                            False, 0)
    https = settings_with(DJANGO_SECRET_KEY=STRONG_KEY, UNPACK_HTTPS="true",
                          DJANGO_SECURE_HSTS_SECONDS="31536000",
                          DJANGO_SECURE_PROXY_SSL_HEADER="true")
    assert (https["SESSION_COOKIE_SECURE"], https["CSRF_COOKIE_SECURE"],
            https["SECURE_SSL_REDIRECT"], https["SECURE_HSTS_SECONDS"]) == (True, True, True,
                                                                            31536000)
    assert https["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert plain["X_FRAME_OPTIONS"] == "DENY"


def test_check_deploy_is_clean_when_configured_for_https():
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                 DJANGO_SECRET_KEY=STRONG_KEY, UNPACK_HTTPS="true",
                 DJANGO_SECURE_HSTS_SECONDS="31536000",
                 DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS="true",
                 DJANGO_SECURE_HSTS_PRELOAD="true", DJANGO_ALLOWED_HOSTS="annotate.example.org")
    security = [line for line in (result.stdout + result.stderr).splitlines()
                if "(security." in line]
    assert security == []


@pytest.mark.django_db
def test_pages_cannot_be_framed_except_the_mturk_task_page(client):
    from tests.factories import publish_hit, sluice_project

    project = sluice_project()
    publish_hit(project)
    assert client.get("/accounts/login/")["X-Frame-Options"] == "DENY"
    task = client.get(f"/mturk/task/{project.slug}/", {"hitId": "HIT123"})
    assert task.status_code == 200 and not task.has_header("X-Frame-Options")
