"""Fixtures shared by every test package."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache

REPO_ROOT = Path(__file__).resolve().parents[1]
INTEGRATION_TESTS = Path(__file__).resolve().parent / "integration"
# Real released data sits beside the repository (../shared/data), read-only.
SHARED_DATA = (REPO_ROOT / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the shared data folder is missing: {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _fresh_local_cache():
    """Each test starts with an empty per-process cache (e.g. no failed logins counted by an
    earlier test: they all come from 127.0.0.1). A shared Redis cache is left alone."""
    if isinstance(caches["default"], LocMemCache):
        caches["default"].clear()
    yield


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user(
        username="researcher", password="researcher-pass", is_staff=True, is_superuser=True
    )


@pytest.fixture
def annotator_user(django_user_model):
    return django_user_model.objects.create_user(username="annotator",
                                                 password="annotator-pass")


@pytest.fixture
def staff_client(client, staff_user):
    client.force_login(staff_user)
    return client


@pytest.fixture
def annotator_client(client, annotator_user):
    client.force_login(annotator_user)
    return client


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Every test under tests/integration/ needs the real services (a Celery worker shares the
    test database, which SQLite cannot), so it carries the ``integration`` mark whether or not
    its module says so; ``-m "not integration"`` (the SQLite run in .ci/run) then leaves it out.
    tryfirst: the mark must be there before pytest's own -m selection runs."""
    for item in items:
        if Path(str(item.path)).is_relative_to(INTEGRATION_TESTS):
            item.add_marker(pytest.mark.integration)
