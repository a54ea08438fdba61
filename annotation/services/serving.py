"""When the server served an item to a local annotator: the start of the server's own measure
of the work (``Annotation.served_at``; qc's timing flags compare it with the browser's claim).

Kept in the cache (Redis in production): a page view records it, the answer's submit reads it.
A missing entry (evicted, or a cache per process) only means the server's measure of that one
answer is unknown. MTurk pages carry theirs in the signed task token instead."""

from __future__ import annotations

from datetime import UTC, datetime

from django.core.cache import cache
from django.utils import timezone

#: Longer than anyone works on one item; an older serving is not this answer's.
SERVED_CACHE_SECONDS = 6 * 3600


def _key(worker_id: int, item_id: int) -> str:
    return f"served:{worker_id}:{item_id}"


def item_record_served(*, worker_id: int, item_id: int) -> None:
    """The item is being shown to the worker now (a later view replaces an earlier one)."""
    cache.set(_key(worker_id, item_id), timezone.now().timestamp(), SERVED_CACHE_SECONDS)


def item_served_at(*, worker_id: int, item_id: int) -> datetime | None:
    """When the item was last served to the worker, or None if not known."""
    served = cache.get(_key(worker_id, item_id))
    return None if served is None else datetime.fromtimestamp(served, tz=UTC)
