"""PostgreSQL connection options from the environment: server-side binding, and statements
prepared after DATABASE_PREPARE_THRESHOLD runs (annotation/settings.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

REPO = Path(__file__).resolve().parents[2]
PRINT_OPTIONS = (
    "import json, django; django.setup(); from django.conf import settings; "
    "print(json.dumps([settings.DATABASES['default']['ENGINE'], "
    "settings.DATABASES['default'].get('OPTIONS', {})]))"
)


def database_options(**environment: str) -> tuple[str, dict]:
    env = {name: value for name, value in os.environ.items()
           if name not in ("DATABASE_URL", "DATABASE_PREPARE_THRESHOLD")}
    env.update({"DJANGO_SETTINGS_MODULE": "annotation.settings", "UNPACK_ALLOW_DEV_KEY": "true",
                **environment})
    done = subprocess.run([sys.executable, "-c", PRINT_OPTIONS], cwd=REPO, env=env,
                          capture_output=True, text=True, check=True)
    engine, options = json.loads(done.stdout.strip().splitlines()[-1])
    return engine, options


POSTGRES = "postgres://postgres@127.0.0.1:5432/unpack"


def test_postgres_binds_on_the_server_and_prepares_after_five_runs_by_default():
    engine, options = database_options(DATABASE_URL=POSTGRES)
    assert engine == "django.db.backends.postgresql"
    assert options["server_side_binding"] is True and options["prepare_threshold"] == 5


@pytest.mark.parametrize("value, expected", [("2", 2), ("off", None), ("OFF", None)])
def test_the_prepare_threshold_comes_from_the_environment(value, expected):
    _, options = database_options(DATABASE_URL=POSTGRES, DATABASE_PREPARE_THRESHOLD=value)
    assert options["server_side_binding"] is True and options["prepare_threshold"] == expected


def test_sqlite_gets_none_of_it():
    engine, options = database_options()
    assert engine == "django.db.backends.sqlite3"
    assert "server_side_binding" not in options and "prepare_threshold" not in options


@pytest.mark.django_db
def test_a_statement_run_often_is_prepared_on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only: run with DATABASE_URL=postgres://…")
    threshold = connection.settings_dict["OPTIONS"]["prepare_threshold"]
    assert threshold is not None
    marker = "SELECT 1 AS unpack_prepare_probe WHERE %s > 0"
    with connection.cursor() as cursor:
        for run in range(threshold + 2):
            cursor.execute(marker, [run + 1])
        cursor.execute("SELECT count(*) FROM pg_prepared_statements "
                       "WHERE statement LIKE %s", ["%unpack_prepare_probe%"])
        assert cursor.fetchone()[0] == 1
