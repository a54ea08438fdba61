"""Failed logins are counted and, past a limit, refused before any password is checked —
without handing an attacker a switch that locks someone else out (issue 26, point 7).

One rule for every door that checks a password with a request: ``/accounts/login/``,
``/admin/login/`` and the API's Basic authentication (when turned on) all call
``django.contrib.auth.authenticate(request, …)``, which reaches
``auth.WorkerLoadingModelBackend.authenticate`` and so ``attempt_allowed`` / ``record``.

Counted in the shared cache (``UNPACK_CACHE_URL``; the embedded default's cache is per process,
so there each process counts on its own), each count for ``UNPACK_LOGIN_LOCKOUT_SECONDS`` (900)
from its first failure:

* per client address (any username): ``UNPACK_LOGIN_FAILURE_LIMIT`` (10) failures lock that
  address — an attacker locks out only their own address;
* per (username, address): the same limit;
* per username from every address: ``UNPACK_LOGIN_USERNAME_FAILURE_LIMIT`` (50) failures lock
  the username **for browsers that never logged in as it**. A browser that logged in as that
  username before carries a signed cookie saying so (``KNOWN_COOKIE``, 90 days) and keeps
  logging in: attackers guessing from many addresses cannot lock the real user out of the
  browser they use, and still get no more than 50 guesses per window at that account.

A locked attempt is refused without hashing the password — hashing (PBKDF2, ~0.3 s of CPU) is
what let four password-guessing clients take most of the CPU from annotators. A success clears
its (username, address) count (not the address's nor the username's: a valid account must not
reset an attacker's count). The address is ``REMOTE_ADDR``: behind a proxy that is the
proxy's, so the address lock then covers every client of that proxy.
"""

from __future__ import annotations

import hashlib
import logging
import time

from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.http import HttpResponse

#: The cookie of a browser that logged in before: the signed name digests of the (at most
#: ``KNOWN_NAMES``) usernames it logged in as.
KNOWN_COOKIE = "unpack_known_login"
KNOWN_SALT = "unpack.login_throttle.known"
KNOWN_MAX_AGE = 90 * 24 * 3600
KNOWN_NAMES = 5

logger = logging.getLogger(__name__)


def _address(request) -> str:
    return request.META.get("REMOTE_ADDR", "")


def _address_key(request) -> str:
    return _address_key_of(_address(request))


def _address_key_of(address: str) -> str:
    return f"login-failures:addr:{address}"


def _name_digest(username: str) -> str:
    return hashlib.sha256(str(username or "").strip().lower().encode("utf-8", "replace")
                          ).hexdigest()[:32]


def _keys(request, username: str) -> tuple[str, str, str]:
    """The address's, the (username, address) pair's and the username's count keys."""
    name = _name_digest(username)
    return (_address_key(request), f"login-failures:pair:{name}:{_address(request)}",
            f"login-failures:user:{name}")


def _known_names(request) -> list[str]:
    try:
        names = signing.loads(request.COOKIES.get(KNOWN_COOKIE, ""), salt=KNOWN_SALT,
                              max_age=KNOWN_MAX_AGE)
    except signing.BadSignature:
        return []
    return names if isinstance(names, list) else []


def known_browser(request, username: str) -> bool:
    """True when this browser logged in as ``username`` before (its signed cookie says so)."""
    return _name_digest(username) in _known_names(request)


#: With a shared cache, a process remembers for this many seconds that an address is locked
#: rather than asking Redis again on each of its requests: a guessing script left running sends
#: hundreds a second, and each read cost more CPU than the rest of the refusal (0.26 against
#: 0.10 ms in-process). A lock can so outlast its window by up to this much in one process.
#: The embedded default's cache is in the process already; it is read every time.
REMEMBER_LOCK_SECONDS = 5.0
#: At most this many addresses remembered per process (an attacker with many addresses cannot
#: grow it without bound: when full it starts again empty, and the shared cache still holds).
REMEMBER_LOCKS_MAX = 10_000
_locked_until: dict[str, float] = {}


def forget_remembered_locks() -> None:
    _locked_until.clear()


def address_allowed(request) -> bool:
    """False while the client's address is locked out (whatever the username)."""
    return not address_locked(_address(request))


def address_locked(address: str) -> bool:
    """True while ``address`` is locked out (whatever the username). Also asked by the gunicorn
    worker (``annotation/gunicorn_worker.py``) before it hands a login request to Django."""
    remember = bool(settings.UNPACK_CACHE_URL)
    if remember:
        until = _locked_until.get(address)
        if until is not None:
            if time.monotonic() < until:
                return True
            _locked_until.pop(address, None)
    count = cache.get(_address_key_of(address))
    if count is None or count < settings.UNPACK_LOGIN_FAILURE_LIMIT:
        return False
    if remember:
        if len(_locked_until) >= REMEMBER_LOCKS_MAX:
            _locked_until.clear()
        _locked_until[address] = time.monotonic() + min(
            REMEMBER_LOCK_SECONDS, settings.UNPACK_LOGIN_LOCKOUT_SECONDS)
    return True


def attempt_allowed(request, username: str) -> bool:
    """False while the client's address or this (username, address) is locked out, or the
    username is locked from everywhere and this browser never logged in as it."""
    address_key, pair_key, user_key = _keys(request, username)
    counts = cache.get_many((address_key, pair_key, user_key))
    limit = settings.UNPACK_LOGIN_FAILURE_LIMIT
    if counts.get(address_key, 0) >= limit or counts.get(pair_key, 0) >= limit:
        return False
    return (counts.get(user_key, 0) < settings.UNPACK_LOGIN_USERNAME_FAILURE_LIMIT
            or known_browser(request, username))


def record(request, username: str, *, succeeded: bool) -> None:
    keys = _keys(request, username)
    if succeeded:
        cache.delete(keys[1])
        # LoginLockoutMiddleware gives the browser its cookie on the way out.
        request.unpack_known_login = _name_digest(username)
        return
    for key in keys:
        # add() starts the window with the first failure; incr() keeps its expiry.
        cache.add(key, 0, timeout=settings.UNPACK_LOGIN_LOCKOUT_SECONDS)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr: a new window
            cache.add(key, 1, timeout=settings.UNPACK_LOGIN_LOCKOUT_SECONDS)
            count = 1
        if key == keys[0] and count == settings.UNPACK_LOGIN_FAILURE_LIMIT:
            # One line when an address is locked, none per refused request after it (the
            # middleware marks its 429s logged): a guessing script cannot flood the log.
            logger.warning("login: address %s locked for %d s after %d failed logins",
                           _address(request), settings.UNPACK_LOGIN_LOCKOUT_SECONDS, count)


LOCKED_MESSAGE = ("Too many failed logins from here or for this account. Try again in "
                  "{minutes} minutes.")


def locked_message() -> str:
    return LOCKED_MESSAGE.format(minutes=max(1, settings.UNPACK_LOGIN_LOCKOUT_SECONDS // 60))


LOGIN_PATHS = frozenset({"/accounts/login/", "/admin/login/"})
LOCKED_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Too many failed logins - Unpack</title></head><body><main>
<h1>Too many failed logins</h1><p>{message}</p><p><a href="/">Unpack</a></p>
</main></body></html>"""


class LoginLockoutMiddleware:
    """Answers the login pages with a small 429 page while the client's address is locked,
    before sessions, CSRF or templates: a locked address costs the server a cache read per
    request (with a shared cache, one per ``REMEMBER_LOCK_SECONDS`` per process), so a
    password-guessing script left running takes little CPU from annotators.
    After a successful login it gives the browser its ``KNOWN_COOKIE``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path in LOGIN_PATHS and not address_allowed(request):
            locked = HttpResponse(LOCKED_PAGE.format(message=locked_message()), status=429,
                                  headers={"Retry-After": str(
                                      settings.UNPACK_LOGIN_LOCKOUT_SECONDS)})
            locked._has_been_logged = True  # django.request's warning: once per lock, in record()
            return locked
        response = self.get_response(request)
        name = getattr(request, "unpack_known_login", None)
        if name is not None:
            names = [name, *(known for known in _known_names(request) if known != name)]
            response.set_cookie(KNOWN_COOKIE, signing.dumps(names[:KNOWN_NAMES], salt=KNOWN_SALT),
                                max_age=KNOWN_MAX_AGE, httponly=True, samesite="Lax",
                                secure=settings.SESSION_COOKIE_SECURE)
        return response
