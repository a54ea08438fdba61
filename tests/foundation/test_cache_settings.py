"""The shared cache and the session engine chosen from the environment (annotation.settings),
and sessions on a real Redis: read through the cache, ended everywhere by a logout."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.models import Session
from django.core.cache import caches, close_caches
from django.test import Client, override_settings

from tests.factories import plausibility_project

REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE_ENV = ("DATABASE_URL", "REDIS_URL", "UNPACK_CACHE_URL")
PRINT_SETTINGS = (
    "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='annotation.settings'; "
    "django.setup(); from django.conf import settings; "
    "print(settings.CACHES['default']['BACKEND'], settings.SESSION_ENGINE, "
    "settings.CACHES['default'].get('LOCATION') or '-', "
    "settings.CACHES['default'].get('KEY_PREFIX') or '-')"
)


def settings_under(**env: str) -> list[str]:
    """Cache backend, session engine, cache location and key prefix of ``annotation.settings``
    loaded in a fresh process with ``env`` (and none of the cache/database variables this
    process may have)."""
    environment = {k: v for k, v in os.environ.items()
                   if k not in CACHE_ENV and k != "DJANGO_SETTINGS_MODULE"}
    environment.update(UNPACK_ALLOW_DEV_KEY="true", **env)
    result = subprocess.run([sys.executable, "-c", PRINT_SETTINGS], cwd=REPO_ROOT,
                            env=environment, capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_without_a_shared_cache_sessions_stay_in_the_database():
    backend, engine, _, _ = settings_under()
    assert backend == "django.core.cache.backends.locmem.LocMemCache"
    assert engine == "django.contrib.sessions.backends.db"


def test_redis_url_gives_a_redis_cache_and_cached_database_sessions():
    assert settings_under(REDIS_URL="redis://127.0.0.1:6379/15") == [
        "django_redis.cache.RedisCache", "django.contrib.sessions.backends.cached_db",
        "redis://127.0.0.1:6379/15", "unpack"]


def test_unpack_cache_url_overrides_the_location_of_redis_url():
    assert settings_under(REDIS_URL="redis://127.0.0.1:6379/15",
                          UNPACK_CACHE_URL="redis://127.0.0.1:6379/7") == [
        "django_redis.cache.RedisCache", "django.contrib.sessions.backends.cached_db",
        "redis://127.0.0.1:6379/7", "unpack"]
    # Alone, without a broker.
    assert settings_under(UNPACK_CACHE_URL="redis://127.0.0.1:6379/7")[:3] == [
        "django_redis.cache.RedisCache", "django.contrib.sessions.backends.cached_db",
        "redis://127.0.0.1:6379/7"]


# --- a real Redis ------------------------------------------------------------------------------


@pytest.fixture
def redis_url() -> str:
    """UNPACK_TEST_REDIS_URL, reachable; skipped without it (failed in CI, which sets it)."""
    url = os.environ.get("UNPACK_TEST_REDIS_URL")
    reason = None
    if not url:
        reason = "UNPACK_TEST_REDIS_URL is unset (e.g. redis://127.0.0.1:6379/15)"
    else:
        import redis

        try:
            redis.Redis.from_url(url, socket_connect_timeout=2).ping()
        except redis.RedisError as error:
            reason = f"Redis at UNPACK_TEST_REDIS_URL is unreachable: {error}"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the Redis session test: {reason}")
        pytest.skip(reason)
    return url


@pytest.fixture
def redis_sessions(redis_url):
    """The deployed configuration (django-redis cache, cached_db sessions) under a key prefix
    of this test only; its keys are deleted afterwards (the rest of the Redis DB is left)."""
    import redis

    prefix = f"unpack-test-{uuid.uuid4().hex[:12]}"
    raw = redis.Redis.from_url(redis_url)
    cache = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": redis_url,
                         "KEY_PREFIX": prefix}}
    try:
        with override_settings(CACHES=cache,
                               SESSION_ENGINE="django.contrib.sessions.backends.cached_db"):
            assert type(caches["default"]).__module__ == "django_redis.cache"
            yield raw, prefix
    finally:
        close_caches()
        for key in raw.scan_iter(match=f"{prefix}:*", count=500):
            raw.delete(key)
        left = list(raw.scan_iter(match=f"{prefix}:*"))
        raw.close()
    assert not left


def session_keys_in_redis(raw, prefix: str) -> set[str]:
    found = set()
    for key in raw.scan_iter(match=f"{prefix}:*", count=500):
        name = key.decode()
        if "django.contrib.sessions.cached_db" in name:
            found.add(name.split("django.contrib.sessions.cached_db", 1)[1])
    return found


@pytest.mark.django_db
def test_sessions_are_written_through_to_redis_and_read_from_it(redis_sessions):
    raw, prefix = redis_sessions
    project = plausibility_project("redis-sessions", items=1)
    user = get_user_model().objects.create_user("cached", password="cached-session-pass")
    client = Client()
    response = client.post("/accounts/login/", {"username": "cached",
                                                 "password": "cached-session-pass"})
    assert response.status_code == 302
    session_key = client.cookies["sessionid"].value
    assert client.session[SESSION_KEY] == str(user.pk)
    # Written through: in Redis under our prefix, and in the database.
    assert session_key in session_keys_in_redis(raw, prefix)
    assert Session.objects.filter(session_key=session_key).exists()

    page = client.get(f"/annotate/{project.slug}/")
    assert page.status_code == 200 and page.context["items"]
    # Read from Redis: another client (another process, as far as the session goes) with the
    # same cookie is logged in even with the database row gone.
    Session.objects.filter(session_key=session_key).delete()
    other = Client()
    other.cookies["sessionid"] = session_key
    assert other.get(f"/annotate/{project.slug}/").status_code == 200
    # And only from there: once the cached copy is gone too, the cookie logs nobody in.
    caches["default"].delete(f"django.contrib.sessions.cached_db{session_key}")
    assert session_key not in session_keys_in_redis(raw, prefix)
    response = client.get(f"/annotate/{project.slug}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_a_logout_deletes_the_session_from_redis_and_the_database(redis_sessions):
    raw, prefix = redis_sessions
    project = plausibility_project("redis-logout", items=1)
    get_user_model().objects.create_user("leaver", password="leaver-session-pass")
    client = Client()
    assert client.post("/accounts/login/", {"username": "leaver",
                                            "password": "leaver-session-pass"}
                       ).status_code == 302
    old_key = client.cookies["sessionid"].value
    assert client.get(f"/annotate/{project.slug}/").status_code == 200
    stale = Client()
    stale.cookies["sessionid"] = old_key
    assert stale.get(f"/annotate/{project.slug}/").status_code == 200  # the cookie works
    assert old_key in session_keys_in_redis(raw, prefix)

    assert client.post("/accounts/logout/").status_code == 302
    assert old_key not in session_keys_in_redis(raw, prefix)
    assert not Session.objects.filter(session_key=old_key).exists()
    # The old cookie, replayed by a fresh client, no longer logs anyone in.
    replay = Client()
    replay.cookies["sessionid"] = old_key
    response = replay.get(f"/annotate/{project.slug}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert client.get(f"/annotate/{project.slug}/").status_code == 302
