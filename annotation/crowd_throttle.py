"""Rate limits of the anonymous crowd saves (issue 26, point 5): the MTurk and Prolific submit
endpoints take no login, so anyone with a HIT's or study's id could store sessions as fast as
the server answers (one client stored 21 forged MTurk sessions per second, three rows each, and
every invented Prolific session cost a synchronous Prolific API call).

Counted in the shared cache (one ``incr`` per counter, in fixed windows of
``UNPACK_CROWD_WINDOW_SECONDS``, 60 s), before anything is read from the provider or written:

* every save from one address: ``UNPACK_CROWD_SAVES_PER_ADDRESS`` (120) per window — a person
  saves an item every few seconds at most;
* new sessions (a save that would create the Worker and the Assignment, and ask the provider)
  from one address: ``UNPACK_CROWD_SESSIONS_PER_ADDRESS`` (10) per window;
* new sessions of one HIT or study: ``UNPACK_CROWD_SESSIONS_PER_HIT`` (30) per window, or twice
  the HIT's assignments if more. Saves of a session already started never count here, so
  sessions others invent cannot stop a worker who has begun; a new worker refused for this
  waits a minute (the page keeps the answer and says so).

Behind a proxy ``REMOTE_ADDR`` is the proxy's: the address limits then cover all its clients.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache


@dataclass(frozen=True)
class Limited:
    """A save refused by a limit: what the page shows, and when to try again."""

    message: str
    retry_after: int


def _count(key: str) -> int:
    """Add one to ``key``'s count in the current window; the new count."""
    window = settings.UNPACK_CROWD_WINDOW_SECONDS
    cache.add(key, 0, timeout=window)  # starts the window with the first save
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: a new window
        cache.add(key, 1, timeout=window)
        return 1


def crowd_save_limited(*, address: str, provider: str, hit_id: str, new_session: bool,
                       hit_assignments: int) -> Limited | None:
    """Count one anonymous crowd save; a ``Limited`` when it is over a limit (see the module),
    else None. Call before anything of the save is looked up at the provider or written."""
    retry = settings.UNPACK_CROWD_WINDOW_SECONDS
    if _count(f"crowd-saves:addr:{address}") > settings.UNPACK_CROWD_SAVES_PER_ADDRESS:
        return Limited("Too many saves from your network just now: nothing was saved. Please "
                       "wait a minute, then save again.", retry)
    if not new_session:
        return None
    if _count(f"crowd-sessions:addr:{address}") > settings.UNPACK_CROWD_SESSIONS_PER_ADDRESS:
        return Limited("Too many new task sessions from your network just now: nothing was "
                       "saved. Please wait a minute, then save again.", retry)
    per_hit = max(settings.UNPACK_CROWD_SESSIONS_PER_HIT, 2 * hit_assignments)
    if _count(f"crowd-sessions:hit:{provider}:{hit_id}") > per_hit:
        return Limited("Too many people are starting this task right now: nothing was saved. "
                       "Please wait a minute, then save again.", retry)
    return None
