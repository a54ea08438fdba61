"""What every batch stage shares: MTurk's prices and limits, batch statuses that count as
open work, the status-event writer, request tokens and the provider a batch uses."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence

from django.db import transaction

from ...models import (
    Assignment,
    Batch,
    Hit,
    TaskKind,
)
from ...money import MTURK_LARGE_HIT_THRESHOLD
from ...providers import (
    AnnotationProvider,
    get_provider,
)
from ..audit import record_status_event

logger = logging.getLogger(__name__)


# --- MTurk's price list and limits ------------------------------------------------------------

#: MTurk's fees are ``annotation.money``'s. We never create a HIT with 10+ assignments (they
#: pay 20% more): a higher redundancy becomes several HITs.
MAX_ASSIGNMENTS_PER_HIT = MTURK_LARGE_HIT_THRESHOLD - 1
MAX_ITEMS_PER_HIT = 50

#: Kinds whose Item group must be worked on in one HIT, in order: a CANARD annotator rewrites
#: one dialogue's questions one after the other, seeing the earlier answers.
WHOLE_GROUP_KINDS = frozenset({TaskKind.REWRITE})

#: Batches whose HITs count as open work for an item (a failed or cancelled one does not).
ACTIVE_BATCH_STATUSES = (Batch.Status.DRAFT, Batch.Status.PUBLISHING, Batch.Status.PUBLISHED,
                         Batch.Status.COMPLETE)
#: Hit statuses whose remote state can still change, so collection looks at them.
OPEN_HIT_STATUSES = (Hit.Status.ASSIGNABLE, Hit.Status.UNASSIGNABLE, Hit.Status.REVIEWABLE,
                     Hit.Status.REVIEWING)

REMOTE_ASSIGNMENT_STATUS = {
    "Submitted": Assignment.Status.SUBMITTED,
    "Approved": Assignment.Status.APPROVED,
    "Rejected": Assignment.Status.REJECTED,
}
REMOTE_HIT_STATUS = {
    "Assignable": Hit.Status.ASSIGNABLE,
    "Unassignable": Hit.Status.UNASSIGNABLE,
    "Reviewable": Hit.Status.REVIEWABLE,
    "Reviewing": Hit.Status.REVIEWING,
    "Disposed": Hit.Status.DISPOSED,
}
DEFAULT_LOCALES = ("US", "GB")


def new_request_token(prefix: str) -> str:
    return f"unpack-{prefix}-{uuid.uuid4().hex}"


def set_batch_status(batch_id: int, *, old: Sequence[str], new: str, kind: str,
                      error: str = "", detail: dict | None = None) -> bool:
    """Compare-and-set the batch status; records an event when it changed."""
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch_id)
        if batch.status not in old:
            return False
        record_status_event(batch=batch, kind=kind, old=batch.status, new=new, detail=detail)
        batch.status = new
        batch.error = error
        batch.save(update_fields=["status", "error", "updated_at"])
        return True



# --- Providers ---------------------------------------------------------------------------------


def provider_for(*, name: str, live: bool) -> AnnotationProvider:
    """The provider a batch was launched through; ``live`` (recorded on the Batch) decides
    between MTurk production and the sandbox, whatever the MTURK_LIVE default says."""
    return get_provider(name, live=live if name == "mturk" else None)


def provider_for_batch(batch: Batch) -> AnnotationProvider:
    return provider_for(name=batch.provider, live=batch.live)


