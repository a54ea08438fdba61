"""Questions to a batch's crowd provider, cached: reads only, never a write."""

from __future__ import annotations

import hashlib
import logging
from enum import StrEnum

from django.core.cache import cache

from ..models import Hit
from ..providers import ProviderError
from ..services.batches.common import provider_for_batch

logger = logging.getLogger(__name__)

#: How long a provider's "yes, this session is real" is remembered; the assignment's own
#: deadline still closes it (services/annotations.py).
CONFIRMED_CACHE_SECONDS = 3600
#: How long a "no" is remembered, so a flood of invented ids costs the provider one call per
#: id per minute at most, and a real session the provider learns about late is asked again.
UNCONFIRMED_CACHE_SECONDS = 60


class SessionCheck(StrEnum):
    """What a batch's provider said about a crowd session (``session_check``)."""

    CONFIRMED = "confirmed"  # the provider vouches for it
    UNKNOWN = "unknown"  # the provider answered: no such live session for this worker and HIT
    UNREACHABLE = "unreachable"  # the provider could not be asked (timeout, 5xx, 429)
    NOT_ASKED = "not_asked"  # the provider cannot vouch for work in progress (MTurk)


def session_check(*, hit: Hit, assignment_id: str, worker_id: str) -> SessionCheck:
    """Whether the provider of ``hit``'s batch vouches that ``worker_id`` holds
    ``assignment_id`` on it (``AnnotationProvider.assignment_is_live``); answers cached.

    Asked only of a provider that can see work in progress (``confirms_work_in_progress``);
    any other is ``NOT_ASKED``. A definite answer (yes, or no: e.g. Prolific's 404 for an
    invented SESSION_ID) is cached; ``UNREACHABLE`` is not, so the next question asks again."""
    provider = provider_for_batch(hit.batch)
    if not provider.confirms_work_in_progress:
        return SessionCheck.NOT_ASKED
    ids = f"{provider.name}\0{hit.provider_hit_id}\0{assignment_id}\0{worker_id}"
    key = "assignment-live:" + hashlib.sha256(ids.encode()).hexdigest()
    known = cache.get(key)
    if known is None:
        try:
            known = provider.assignment_is_live(assignment_id=assignment_id,
                                                hit_id=hit.provider_hit_id, worker_id=worker_id)
        except ProviderError as error:
            # The provider's words may quote the worker's raw id: never into the logs.
            logger.warning("could not confirm assignment %s with %s: %s",
                           assignment_id, provider.name,
                           str(error).replace(worker_id, "<worker id>") if worker_id else error)
            return SessionCheck.UNREACHABLE
        cache.set(key, known, CONFIRMED_CACHE_SECONDS if known else UNCONFIRMED_CACHE_SECONDS)
    return SessionCheck.CONFIRMED if known else SessionCheck.UNKNOWN
