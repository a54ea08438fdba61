"""A real Celery worker on a real Redis broker, the MTurk stand-in, and PostgreSQL.

The worker is a subprocess (``python3 -m celery -A annotation worker --pool=solo``) whose
DATABASE_URL points at the test database pytest-django created, whose REDIS_URL is
``UNPACK_TEST_REDIS_URL`` and whose MTURK_ENDPOINT_URL is the stand-in running in this process.
The test process switches the Celery app from inline tasks to that broker only while these
fixtures are active. Without PostgreSQL or UNPACK_TEST_REDIS_URL the tests skip, unless CI=true
(then they fail: CI must run them).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings
from django.db import connection

from annotation.celery import app as celery_app
from annotation.fake_mturk import FakeMTurk, FakeMTurkSimulator

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKER_START_TIMEOUT = 60
PUBLIC_URL = "https://unpack.example.org"


def _missing_services() -> str | None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        return "DATABASE_URL is not PostgreSQL (a worker process cannot share SQLite's test db)"
    if not os.environ.get("UNPACK_TEST_REDIS_URL"):
        return "UNPACK_TEST_REDIS_URL is unset (e.g. redis://127.0.0.1:6379/15)"
    return None


@pytest.fixture(scope="session")
def integration_services() -> str:
    reason = _missing_services()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"integration tests must run in CI: {reason}")
        pytest.skip(reason)
    return os.environ["UNPACK_TEST_REDIS_URL"]


def wait_for(condition: Callable[[], object], *, timeout: float = 60, what: str = "") -> object:
    """Poll ``condition`` until it is truthy; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what or condition}")
        time.sleep(0.1)


def _test_database_url() -> str:
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


@pytest.fixture(scope="module")
def fake_mturk_server() -> Iterator[FakeMTurk]:
    with FakeMTurk() as server:
        yield server


def service_environment(redis_url: str, django_db_blocker, fake_mturk_server) -> dict:
    """The environment of a process serving the tests (a Celery worker, beat, gunicorn): the
    test database, ``redis_url`` (emptied now) and the MTurk stand-in."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    with django_db_blocker.unblock():
        database_url = _test_database_url()
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "annotation.settings",
        "DATABASE_URL": database_url,
        "DATABASE_CONN_MAX_AGE": "0",
        "REDIS_URL": redis_url,
        "MTURK_ENDPOINT_URL": fake_mturk_server.base_url,
        "MTURK_LIVE": "",
        "UNPACK_PUBLIC_URL": PUBLIC_URL,
        "AWS_ACCESS_KEY_ID": "AKIDFAKEFAKEFAKE",
        "AWS_SECRET_ACCESS_KEY": "fake-secret",
        "UNPACK_LOG_LEVEL": "INFO",
    }


def start_worker(env: dict[str, str], *options: str) -> tuple[subprocess.Popen, str]:
    """``celery -A annotation worker --pool=solo`` (plus ``options``, e.g. ``-B``); returns
    the process and its log file."""
    log_fd, log_path = tempfile.mkstemp(prefix="celery-worker-", suffix=".log")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "annotation", "worker", "--pool=solo",
         "--loglevel=INFO", "--without-gossip", "--without-mingle", "--without-heartbeat",
         "-n", f"unpack-test-{os.getpid()}-{time.monotonic_ns()}@%h", *options],
        cwd=REPO_ROOT, env=env, stdout=log_fd, stderr=subprocess.STDOUT,
    )
    os.close(log_fd)
    return worker, log_path


@contextlib.contextmanager
def running_worker(env: dict, redis_url: str) -> Iterator[subprocess.Popen]:
    """A Celery worker started with ``env``, with this process's Celery app sending to it (not
    eager) until the block ends; then the worker is stopped and the app restored."""
    worker, log_path = start_worker(env)
    # The app reads Django settings under the CELERY_ namespace, so override those keys.
    saved = {key: celery_app.conf.get(key) for key in
             ("CELERY_TASK_ALWAYS_EAGER", "CELERY_BROKER_URL")}
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=False, CELERY_BROKER_URL=redis_url)
    _drop_connection_pools()
    try:
        deadline = time.monotonic() + WORKER_START_TIMEOUT
        while not celery_app.control.ping(timeout=0.5):
            if worker.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the Celery worker did not start:\n"
                            + Path(log_path).read_text()[-3000:])
        yield worker
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        celery_app.conf.update(saved)
        _drop_connection_pools()
        if os.environ.get("UNPACK_KEEP_WORKER_LOG") != "1":
            os.unlink(log_path)


@pytest.fixture(scope="module")
def celery_worker(integration_services, django_db_setup, django_db_blocker, fake_mturk_server
                  ) -> Iterator[subprocess.Popen]:
    redis_url = integration_services
    with running_worker(service_environment(redis_url, django_db_blocker, fake_mturk_server),
                        redis_url) as worker:
        yield worker


def _drop_connection_pools() -> None:
    """Forget connections made for the previous broker so the next send uses the new one."""
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


def wait_for_idle_worker(*, timeout: float = 60) -> None:
    """Wait until the queue is empty and the worker runs nothing: every job sent has finished."""
    import redis

    queue = redis.Redis.from_url(os.environ["UNPACK_TEST_REDIS_URL"])
    inspector = celery_app.control.inspect(timeout=0.5)

    def idle() -> bool:
        if queue.llen("celery"):
            return False
        active = inspector.active() or {}
        reserved = inspector.reserved() or {}
        return bool(active) and not any(active.values()) and not any(reserved.values())

    wait_for(idle, timeout=timeout, what="the worker to finish its jobs")


@pytest.fixture
def mturk(celery_worker, fake_mturk_server, transactional_db, monkeypatch) -> FakeMTurk:
    """The stand-in, emptied, seen by this process the way the worker sees it."""
    fake_mturk_server.world.reset()
    monkeypatch.setattr(settings, "MTURK_ENDPOINT_URL", fake_mturk_server.base_url)
    monkeypatch.setattr(settings, "UNPACK_PUBLIC_URL", PUBLIC_URL)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    return fake_mturk_server


@pytest.fixture
def simulator(mturk: FakeMTurk) -> FakeMTurkSimulator:
    return FakeMTurkSimulator(mturk.base_url)
