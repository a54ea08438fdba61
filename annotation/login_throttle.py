"""Failed logins are counted and, past a limit, refused before any password is checked.

One rule for every door that checks a password with a request: ``/accounts/login/``,
``/admin/login/`` and the API's Basic authentication (when turned on) all call
``django.contrib.auth.authenticate(request, …)``, which reaches
``auth.WorkerLoadingModelBackend.authenticate`` and so ``attempt_allowed`` / ``record``.

Counted in the shared cache (``UNPACK_CACHE_URL``; the embedded default's cache is per process,
so there each process counts on its own) per client address and per username:
``UNPACK_LOGIN_FAILURE_LIMIT`` failures (10) within ``UNPACK_LOGIN_LOCKOUT_SECONDS`` (900) of
the first lock that address, or that username from every address, until the window ends. A
locked attempt is refused without hashing the password — hashing (PBKDF2, ~0.3 s of CPU) is
what let four password-guessing clients take most of the CPU from annotators. A success clears
the username's count (not the address's: a valid account must not reset an attacker's count).
The address is ``REMOTE_ADDR``: behind a proxy that is the proxy's, so the address lock then
covers every client of that proxy and the username lock still applies.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse


def _address_key(request) -> str:
    return f"login-failures:addr:{request.META.get('REMOTE_ADDR', '')}"


def _keys(request, username: str) -> tuple[str, str]:
    name = hashlib.sha256(str(username or "").strip().lower().encode("utf-8", "replace"))
    return _address_key(request), f"login-failures:user:{name.hexdigest()[:32]}"


def address_allowed(request) -> bool:
    """False while the client's address is locked out (whatever the username)."""
    count = cache.get(_address_key(request))
    return count is None or count < settings.UNPACK_LOGIN_FAILURE_LIMIT


def attempt_allowed(request, username: str) -> bool:
    """False while the client's address or the username is locked out."""
    counts = cache.get_many(_keys(request, username))
    return all(count < settings.UNPACK_LOGIN_FAILURE_LIMIT for count in counts.values())


def record(request, username: str, *, succeeded: bool) -> None:
    address_key, user_key = _keys(request, username)
    if succeeded:
        cache.delete(user_key)
        return
    for key in (address_key, user_key):
        # add() starts the window with the first failure; incr() keeps its expiry.
        cache.add(key, 0, timeout=settings.UNPACK_LOGIN_LOCKOUT_SECONDS)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr: a new window
            cache.add(key, 1, timeout=settings.UNPACK_LOGIN_LOCKOUT_SECONDS)


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
    request, so a password-guessing script left running takes little CPU from annotators."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path in LOGIN_PATHS and not address_allowed(request):
            return HttpResponse(LOCKED_PAGE.format(message=locked_message()), status=429,
                                headers={"Retry-After": str(
                                    settings.UNPACK_LOGIN_LOCKOUT_SECONDS)})
        return self.get_response(request)
