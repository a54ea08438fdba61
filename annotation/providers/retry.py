"""Call-level retry for every provider: the one place a throttled or transient provider call is
tried again, where it failed, with backoff.

Both providers (``mturk.py``, ``prolific.py``) send each remote call through ``call_with_retry``.
It never reads an error's wording: the provider has already turned its own error codes into
the provider error model (MTurk's ``ThrottlingException`` / ``ServiceUnavailable`` codes, HTTP
429 / 5xx at Prolific), and the retry decision is made on those classes:

* ``ProviderThrottled`` is retried: the provider refused the call before doing anything. Its
  ``retry_after_seconds`` (HTTP ``Retry-After``) is honoured: never sooner than asked.
* ``ProviderTransientError`` is retried when the call is safe to repeat (``repeatable``: a read,
  an idempotent write, a write the provider deduplicates by request token) or when the request
  never left this machine (``request_sent`` False: connection refused, connect timeout).
  A non-idempotent write whose reply was lost is NOT repeated blindly: the caller decides how to
  learn its outcome (a Prolific study is looked up by its token, a bonus payment is read back).
* ``ProviderPermanentError`` is raised at once.

Retrying is bounded by ``RetryPolicy`` (settings ``UNPACK_PROVIDER_RETRY_*``): a number of
attempts and a total wait per call. What it cannot cover (a killed process, an outage longer
than the bound) is left to the Celery job's retry and the periodic resume job, or, on the
embedded default with no worker, to the resume command a caller names.

Whoever waits for a job (the ``launch_batch`` command) can watch the waits:
``retry_waits_reported_to(callback)`` calls ``callback(RetryWait)`` before every sleep made in
this thread (inline jobs run in the caller's thread).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from .base import ProviderPermanentError, ProviderThrottled, ProviderTransientError

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter.

    The wait after failed attempt ``n`` (1-based) is ``min(max_delay, base_delay * 2**(n-1))``
    scaled by a random factor in [0.5, 1.0], and never less than the provider's
    ``Retry-After``. The last error is raised after ``max_attempts`` attempts, or as soon as the
    next wait would take the call's total wait past ``max_total_wait_seconds``.
    """

    max_attempts: int = 8
    base_delay_seconds: float = 0.5
    max_delay_seconds: float = 20.0
    max_total_wait_seconds: float = 120.0

    def delay_before_retry(self, failed_attempt: int, rng: random.Random,
                           retry_after: float | None = None) -> float:
        ceiling = min(self.max_delay_seconds, self.base_delay_seconds * 2 ** (failed_attempt - 1))
        delay = ceiling * rng.uniform(0.5, 1.0)
        return max(delay, retry_after or 0.0)

    @classmethod
    def from_settings(cls, settings: Any = None) -> RetryPolicy:
        """From Django settings ``UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS``,
        ``UNPACK_PROVIDER_RETRY_BASE_DELAY_SECONDS``, ``UNPACK_PROVIDER_RETRY_MAX_DELAY_SECONDS``
        and ``UNPACK_PROVIDER_RETRY_MAX_TOTAL_WAIT_SECONDS`` (this class's defaults where
        unset)."""
        if settings is None:
            from django.conf import settings as django_settings

            settings = django_settings
        default = cls()
        return cls(
            max_attempts=int(getattr(settings, "UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS",
                                     default.max_attempts)),
            base_delay_seconds=float(getattr(settings, "UNPACK_PROVIDER_RETRY_BASE_DELAY_SECONDS",
                                             default.base_delay_seconds)),
            max_delay_seconds=float(getattr(settings, "UNPACK_PROVIDER_RETRY_MAX_DELAY_SECONDS",
                                            default.max_delay_seconds)),
            max_total_wait_seconds=float(getattr(
                settings, "UNPACK_PROVIDER_RETRY_MAX_TOTAL_WAIT_SECONDS",
                default.max_total_wait_seconds)),
        )


#: The policy of a provider built without settings (scripts, benches).
DEFAULT_RETRY = RetryPolicy()
#: One attempt, no wait: for calls a person is waiting on (a participant's save).
SINGLE_ATTEMPT = RetryPolicy(max_attempts=1)


@dataclass(frozen=True)
class RetryWait:
    """A wait before trying a provider call again, as ``retry_waits_reported_to`` sees it."""

    provider: str
    operation: str
    code: str
    throttled: bool
    next_attempt: int
    max_attempts: int
    delay_seconds: float

    def describe(self) -> str:
        """E.g. ``MTurk create_hit_with_hit_type throttled (ThrottlingException), retrying in
        2.0 s (attempt 3/8)``."""
        what = "throttled" if self.throttled else "temporary error"
        return (f"{self.provider} {self.operation} {what} ({self.code}), retrying in "
                f"{self.delay_seconds:.1f} s (attempt {self.next_attempt}/{self.max_attempts})")


_listeners: ContextVar[tuple[Callable[[RetryWait], None], ...]] = ContextVar(
    "provider_retry_listeners", default=())


@contextmanager
def retry_waits_reported_to(callback: Callable[[RetryWait], None]) -> Iterator[None]:
    """Call ``callback`` with every ``RetryWait`` of provider calls made in this context."""
    token = _listeners.set((*_listeners.get(), callback))
    try:
        yield
    finally:
        _listeners.reset(token)


def _retryable(error: Exception, *, repeatable: bool) -> bool:
    if isinstance(error, ProviderThrottled):
        return True
    if isinstance(error, ProviderTransientError):
        return repeatable or not error.request_sent
    return False


def call_with_retry(call: Callable[[], T], *, provider: str, operation: str,
                    policy: RetryPolicy, repeatable: bool = True,
                    sleep: Callable[[float], None] = time.sleep,
                    rng: random.Random | None = None,
                    on_retry: Callable[[], None] | None = None) -> T:
    """``call()``, tried again after throttled/transient provider errors as ``policy`` allows.

    ``repeatable`` False: a transient error after the request was sent (the outcome is
    unknown) is raised at once, for the caller to find out what happened."""
    rng = rng or random.Random()
    attempt = 0
    waited = 0.0
    while True:
        attempt += 1
        try:
            return call()
        except ProviderPermanentError:
            raise
        except (ProviderThrottled, ProviderTransientError) as error:
            if not _retryable(error, repeatable=repeatable) or attempt >= policy.max_attempts:
                raise
            retry_after = getattr(error, "retry_after_seconds", None)
            delay = policy.delay_before_retry(attempt, rng, retry_after)
            if waited + delay > policy.max_total_wait_seconds:
                raise
            wait = RetryWait(provider=provider, operation=operation, code=error.code,
                             throttled=isinstance(error, ProviderThrottled),
                             next_attempt=attempt + 1, max_attempts=policy.max_attempts,
                             delay_seconds=delay)
            logger.warning("%s", wait.describe())
            for listener in _listeners.get():
                listener(wait)
            if on_retry is not None:
                on_retry()
            sleep(delay)
            waited += delay
