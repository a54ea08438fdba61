"""Fixtures shared by every test package."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.db import DatabaseError

from annotation.selectors import annotate as annotate_selectors
from tests.factories import wrongly_filled_items

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
    # Nor project kinds learnt from an earlier test's projects (slugs are reused across tests,
    # and a known kind saves the submit a statement: query counts would depend on the order).
    annotate_selectors._kind_by_slug.clear()
    yield


#: Fixtures that give a test the database (directly or through others).
DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences",
                     "django_db_serialized_rollback", "live_server"}


@pytest.fixture(autouse=True)
def _filled_marks_never_lie(request):
    """Every test that used the database ends with no item marked filled while a slot is open
    (``Item.filled``), whatever it did through the services: a writer of answers, splits or
    redundancy that forgot the mark shows up here, in whichever test exercises it."""
    uses_database = (request.node.get_closest_marker("django_db") is not None
                     or bool(DATABASE_FIXTURES.intersection(request.fixturenames)))
    if uses_database:
        # Set up before this check, so torn down (rolled back) after it.
        request.getfixturevalue("_django_db_helper")
    yield
    if not uses_database:
        return
    try:
        wrong = wrongly_filled_items()
    except DatabaseError:
        return  # the test left its transaction broken; its own failure says why
    assert not wrong, f"items marked filled with a slot open: {wrong}"


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


@pytest.fixture
def with_broker(monkeypatch):
    """As with a real broker: ``job_start`` only queues a staff job (the sends are recorded
    in the list returned), it does not run it inline."""
    from annotation.celery import app as celery_app
    from annotation.services import staff_jobs

    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_ALWAYS_EAGER", False)
    monkeypatch.setattr(staff_jobs, "check_job_queue", lambda: None)
    sent = []
    monkeypatch.setattr(staff_jobs, "enqueue_after_commit",
                        lambda name, job_id: sent.append((name, job_id)))
    return sent
