"""Helpers for the importer tests: paths, running the command, counting every table."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import call_command

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
BAD = HERE / "bad"


def run_import(fmt: str, *paths, project: str, **options) -> str:
    out = StringIO()
    call_command("import_data", fmt, *map(str, paths), project=project, quiet=True,
                 stdout=out, **options)
    return out.getvalue()


def row_counts() -> dict[str, int]:
    """Rows of every model of the app (and users): proof that a failed import wrote nothing."""
    counts = {model.__name__: model.objects.count()
              for model in apps.get_app_config("annotation").get_models()}
    for model in apps.get_app_config("annotation").get_models():
        for m2m in model._meta.local_many_to_many:
            through = m2m.remote_field.through
            counts[through.__name__] = through.objects.count()
    return counts


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
