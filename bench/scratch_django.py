"""Django for an in-process bench on a scratch database: the ``DATABASE_URL`` given, else a
SQLite file in a new temporary folder; Celery tasks inline (no ``REDIS_URL``); the public
development key (a local benchmark); responses carrying their template context (a task page's
token), any host; the schema migrated."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def setup_scratch_django(prefix: str) -> str:
    """Set Django up as the module says; the scratch folder."""
    workdir = tempfile.mkdtemp(prefix=prefix)
    if not os.environ.get("DATABASE_URL"):
        os.environ["UNPACK_SQLITE_PATH"] = str(Path(workdir) / "bench.sqlite3")
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    return workdir
