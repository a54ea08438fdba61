"""The local provider: annotators logged into the Unpack app itself. The default provider.

Local work never leaves the app: the task pages read items from the database and submissions
arrive through the app's own views, so there is nothing remote to publish to, poll, pay or block.
This provider therefore only

* hands out stable local ids, derived from the caller's request tokens so that a retried
  publish yields the same id (the same idempotency contract as MTurk);
* reports success for approvals, rejections, bonuses, blocks and notifications, which for local
  annotators are pure bookkeeping done by the caller's services in the database;
* returns nothing from the collection calls (``collects_remotely`` is False) and refuses, with a
  ``ProviderPermanentError``, the two questions only a remote service can answer (a HIT's remote
  state and an account balance).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from decimal import Decimal

from .base import (
    AccountBalance,
    AnnotationProvider,
    CollectedAssignment,
    HitTypeSpec,
    NotifyFailure,
    ProviderPermanentError,
    PublishedHit,
    check_create_hit_arguments,
)

LOCAL_ID_PREFIX = "LOCAL"
NOT_APPLICABLE_CODE = "Local.NotApplicable"


def _stable_id(kind: str, key: str) -> str:
    """An id matching MTurk's ``^[A-Z0-9]+$`` shape, the same for the same (kind, key)."""
    digest = hashlib.sha256(f"{kind}:{key}".encode()).hexdigest().upper()[:24]
    return f"{LOCAL_ID_PREFIX}{kind.upper()}{digest}"


class LocalProvider(AnnotationProvider):
    """Work done by logged-in annotators; state lives in the app's database, not here."""

    name = "local"
    collects_remotely = False

    def create_hit_type(self, spec: HitTypeSpec) -> str:
        # Identical specs share an id, as on MTurk.
        return _stable_id("HT", json.dumps(asdict(spec), sort_keys=True, default=str))

    def create_hit(
        self,
        *,
        hit_type_id: str,
        question_xml: str,
        max_assignments: int,
        lifetime_seconds: int,
        unique_request_token: str,
        requester_annotation: str = "",
    ) -> PublishedHit:
        check_create_hit_arguments(unique_request_token=unique_request_token,
                                   max_assignments=max_assignments)
        return PublishedHit(
            hit_id=_stable_id("H", unique_request_token),
            hit_type_id=hit_type_id,
            status="Assignable",
            max_assignments=max_assignments,
            assignments_available=max_assignments,
            requester_annotation=requester_annotation,
        )

    def get_hit(self, hit_id: str) -> PublishedHit:
        raise ProviderPermanentError(
            f"local HIT {hit_id} has no remote state; read it from the database (selectors)",
            code=NOT_APPLICABLE_CODE,
            operation="get_hit",
        )

    def list_reviewable_hits(
        self, *, hit_type_id: str | None = None, status: str = "Reviewable"
    ) -> list[PublishedHit]:
        return []

    def list_assignments_for_hit(
        self, hit_id: str, *, statuses: Sequence[str] = ("Submitted", "Approved", "Rejected")
    ) -> list[CollectedAssignment]:
        return []

    def approve_assignment(
        self, assignment_id: str, *, feedback: str = "", override_rejection: bool = False
    ) -> None:
        return None

    def reject_assignment(self, assignment_id: str, *, message: str) -> None:
        if not message:
            raise ValueError("a rejection needs a message the annotator can read")

    def send_bonus(
        self,
        *,
        worker_id: str,
        assignment_id: str,
        amount: Decimal,
        reason: str,
        unique_request_token: str,
    ) -> None:
        return None

    def create_worker_block(self, worker_id: str, *, reason: str) -> None:
        return None

    def delete_worker_block(self, worker_id: str, *, reason: str = "") -> None:
        return None

    def notify_workers(
        self, worker_ids: Sequence[str], *, subject: str, message: str
    ) -> list[NotifyFailure]:
        return []

    def update_expiration(self, hit_id: str, *, expire_at: datetime) -> None:
        return None

    def create_additional_assignments(
        self, hit_id: str, *, count: int, unique_request_token: str
    ) -> None:
        if count < 1:
            raise ValueError("count must be at least 1")

    def create_qualification_type(
        self,
        *,
        name: str,
        description: str,
        test_xml: str,
        answer_key_xml: str,
        test_duration_seconds: int,
        retry_delay_seconds: int | None = None,
        keywords: Sequence[str] = (),
    ) -> str:
        # The app grades local qualification tests itself; the id only has to be stable.
        return _stable_id("QT", f"{name}\n{test_xml}\n{answer_key_xml}")

    def get_account_balance(self) -> AccountBalance:
        raise ProviderPermanentError(
            "local annotators are not paid through a provider account",
            code=NOT_APPLICABLE_CODE,
            operation="get_account_balance",
        )
