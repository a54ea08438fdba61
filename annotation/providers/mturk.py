"""The one door to Amazon Mechanical Turk: the ONLY project module that imports boto3.

``MTurkProvider`` wraps boto3's ``mturk`` client:

* builds the client lazily from ``MTurkConfig`` (sandbox unless ``live=True``; an explicit
  ``endpoint_url`` such as the local ``annotation.fake_mturk`` server overrides both);
* turns every botocore and network failure into the provider error model
  (``ProviderThrottled``, ``ProviderTransientError``, ``ProviderPermanentError``; missing
  credentials are a permanent error that says what to set), by error code and HTTP status,
  never by message wording. Throttled and transient calls are retried where they failed by
  the shared ``retry.call_with_retry`` (``RetryPolicy`` from settings); every MTurk write it
  may repeat is idempotent (``UniqueRequestToken``, or a state change MTurk refuses twice).
  botocore's own retries are off, so every retry is ours and counted once;
* pages every list call through every ``NextToken``;
* resolves a CreateHIT retried with the same ``UniqueRequestToken`` to the HIT the first call
  made, whatever the error's wording: a HIT id anywhere in the message (confirmed by GetHIT),
  else the HIT whose ``RequesterAnnotation`` is ours (ListHITs, every page), so a retried task
  never publishes twice;
* returns the small dataclasses of ``base.py``.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import boto3
import botocore.config
import botocore.exceptions

from .answers import parse_question_form_answers
from .base import (
    AccountBalance,
    AnnotationProvider,
    CollectedAssignment,
    HitTypeSpec,
    NotifyFailure,
    PaidBonus,
    ProviderError,
    ProviderPermanentError,
    ProviderThrottled,
    ProviderTransientError,
    PublishedHit,
    check_create_hit_arguments,
)
from .retry import DEFAULT_RETRY, SINGLE_ATTEMPT, RetryPolicy, call_with_retry

logger = logging.getLogger(__name__)

SANDBOX_ENDPOINT_URL = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
LIVE_ENDPOINT_URL = "https://mturk-requester.us-east-1.amazonaws.com"
MTURK_REGION = "us-east-1"
MAX_PAGE_SIZE = 100  # MTurk's largest MaxResults
NOTIFY_WORKERS_BATCH = 100  # MTurk's limit of WorkerIds per NotifyWorkers call

THROTTLING_ERROR_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "SlowDown",
    }
)
TRANSIENT_ERROR_CODES = frozenset(
    {"ServiceFault", "ServiceUnavailable", "InternalError", "InternalFailure", "RequestTimeout"}
)
#: Configuration problems: retrying cannot help until someone fixes the settings.
CONFIGURATION_ERRORS = (
    botocore.exceptions.NoCredentialsError,
    botocore.exceptions.PartialCredentialsError,
    botocore.exceptions.NoRegionError,
    botocore.exceptions.ParamValidationError,
)
MISSING_CREDENTIALS_MESSAGE = (
    "AWS credentials for MTurk are not configured: set AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY (or an AWS profile) for the web app and the Celery worker, then "
    "resume the batch")

# MTurk answers a write repeated with a used UniqueRequestToken with a RequestError saying so;
# AWS documents only that the message contains the HITId, not its wording.
_DUPLICATE_TOKEN_PATTERN = re.compile(
    r"idempotency token|unique ?request ?token|already (exists|been processed)", re.IGNORECASE
)
#: Anything in a message that could be a HIT id (MTurk's are 30 characters of [A-Z0-9]).
_HIT_ID_CANDIDATE_PATTERN = re.compile(r"(?<![A-Za-z0-9])[A-Z0-9]{20,64}(?![A-Za-z0-9])")


@dataclass(frozen=True)
class MTurkConfig:
    """Where and how to reach MTurk.

    ``endpoint_url`` (when set) wins over ``live``; otherwise the sandbox is used unless
    ``live`` is True. Credentials left as None come from boto3's standard chain (the
    ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` environment variables, profiles, ...).
    """

    endpoint_url: str | None = None
    live: bool = False
    region: str = MTURK_REGION
    aws_access_key_id: str | None = None
    aws_secret_access_key: str | None = None
    aws_session_token: str | None = None
    retry: RetryPolicy = DEFAULT_RETRY
    connect_timeout_seconds: float = 10.0
    read_timeout_seconds: float = 60.0

    @property
    def resolved_endpoint_url(self) -> str:
        """The URL the client will talk to."""
        if self.endpoint_url:
            return self.endpoint_url
        return LIVE_ENDPOINT_URL if self.live else SANDBOX_ENDPOINT_URL

    @property
    def is_sandbox(self) -> bool:
        return self.resolved_endpoint_url == SANDBOX_ENDPOINT_URL

    @classmethod
    def from_settings(cls, settings: Any = None) -> MTurkConfig:
        """Build from Django settings ``MTURK_ENDPOINT_URL`` and ``MTURK_LIVE`` (default False).

        ``settings`` defaults to ``django.conf.settings``, imported here so that this module
        works without Django.
        """
        if settings is None:
            from django.conf import settings as django_settings

            settings = django_settings
        return cls(
            endpoint_url=getattr(settings, "MTURK_ENDPOINT_URL", None) or None,
            live=bool(getattr(settings, "MTURK_LIVE", False)),
            retry=RetryPolicy.from_settings(settings),
        )


def classify_client_error(error: botocore.exceptions.ClientError, operation: str) -> ProviderError:
    """Map a botocore ``ClientError`` onto the provider error model."""
    details = error.response.get("Error", {})
    code = details.get("Code", "") or ""
    message = details.get("Message", "") or str(error)
    http_status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
    if code in THROTTLING_ERROR_CODES or http_status == 429:
        return ProviderThrottled(message, code=code or "Throttling", operation=operation)
    if code in TRANSIENT_ERROR_CODES or http_status >= 500:
        return ProviderTransientError(message, code=code or "ServiceFault", operation=operation)
    return ProviderPermanentError(message, code=code, operation=operation)


def is_duplicate_token_error(error: ProviderError) -> bool:
    """True for MTurk's RequestError saying a UniqueRequestToken was already processed."""
    return error.code == "RequestError" and bool(_DUPLICATE_TOKEN_PATTERN.search(error.message))


def hit_id_candidates(message: str) -> list[str]:
    """Every string in ``message`` that could be a HIT id, in order, whatever the wording
    around it ("HIT ID: X", ``The HIT with ID "X" already exists``, ...)."""
    return _HIT_ID_CANDIDATE_PATTERN.findall(message)


def classify_botocore_error(error: Exception, operation: str) -> ProviderError:
    """Map any botocore exception (a ``ClientError`` answer, a network failure, missing
    credentials) onto the provider error model."""
    if isinstance(error, botocore.exceptions.ClientError):
        return classify_client_error(error, operation)
    if isinstance(error, (botocore.exceptions.NoCredentialsError,
                          botocore.exceptions.PartialCredentialsError)):
        return ProviderPermanentError(MISSING_CREDENTIALS_MESSAGE, code="NoCredentials",
                                      operation=operation)
    if isinstance(error, CONFIGURATION_ERRORS):
        return ProviderPermanentError(str(error), code=type(error).__name__,
                                      operation=operation)
    # Connection refused or reset, DNS, TLS, proxy, timeouts: the network may come back.
    transient = ProviderTransientError(str(error), code=type(error).__name__,
                                       operation=operation)
    # Refused or timed out while connecting: the request never reached MTurk.
    transient.request_sent = not isinstance(error, (
        botocore.exceptions.EndpointConnectionError, botocore.exceptions.ConnectTimeoutError))
    return transient


def _as_datetime(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) else None


def _published_hit(hit: dict) -> PublishedHit:
    return PublishedHit(
        hit_id=hit["HITId"],
        hit_type_id=hit.get("HITTypeId", ""),
        status=hit.get("HITStatus", ""),
        max_assignments=int(hit.get("MaxAssignments", 0)),
        assignments_available=int(hit.get("NumberOfAssignmentsAvailable", 0)),
        assignments_pending=int(hit.get("NumberOfAssignmentsPending", 0)),
        assignments_completed=int(hit.get("NumberOfAssignmentsCompleted", 0)),
        expiration=_as_datetime(hit.get("Expiration")),
        creation_time=_as_datetime(hit.get("CreationTime")),
        requester_annotation=hit.get("RequesterAnnotation", "") or "",
    )


def _collected_assignment(assignment: dict) -> CollectedAssignment:
    answer_xml = assignment.get("Answer", "") or ""
    return CollectedAssignment(
        assignment_id=assignment["AssignmentId"],
        worker_id=assignment["WorkerId"],
        hit_id=assignment["HITId"],
        status=assignment.get("AssignmentStatus", ""),
        accept_time=_as_datetime(assignment.get("AcceptTime")),
        submit_time=_as_datetime(assignment.get("SubmitTime")),
        answers=parse_question_form_answers(answer_xml),
        answer_xml=answer_xml,
        auto_approval_time=_as_datetime(assignment.get("AutoApprovalTime")),
        requester_feedback=assignment.get("RequesterFeedback", "") or "",
    )


def _money(amount: Decimal) -> str:
    """MTurk's CurrencyAmount: dollars with at most two decimals, e.g. ``"0.50"``."""
    if not isinstance(amount, Decimal):
        raise TypeError("amounts must be Decimal (e.g. Decimal('0.50'))")
    if amount < 0 or amount.as_tuple().exponent < -2:
        raise ValueError(f"amount {amount} is not a non-negative amount in cents")
    return f"{amount:.2f}"


class MTurkProvider(AnnotationProvider):
    """Amazon Mechanical Turk through boto3. Thread-safe (boto3 clients are)."""

    name = "mturk"
    collects_remotely = True

    def __init__(
        self,
        config: MTurkConfig | None = None,
        *,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        """``client`` injects a ready client (tests with botocore's Stubber); ``sleep`` and
        ``rng`` make backoff observable and deterministic in tests."""
        self.config = config or MTurkConfig()
        self._client = client
        self._client_lock = threading.Lock()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.retries_performed = 0  # throttled/transient attempts we retried, for benches

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The boto3 ``mturk`` client, built on first use."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    self._client = self._build_client()
        return self._client

    def _build_client(self) -> Any:
        session = boto3.session.Session(
            aws_access_key_id=self.config.aws_access_key_id,
            aws_secret_access_key=self.config.aws_secret_access_key,
            aws_session_token=self.config.aws_session_token,
        )
        client_config = botocore.config.Config(
            # One attempt per call from botocore: retries are ours, so they are counted once.
            retries={"total_max_attempts": 1, "mode": "standard"},
            connect_timeout=self.config.connect_timeout_seconds,
            read_timeout=self.config.read_timeout_seconds,
        )
        return session.client(
            "mturk",
            region_name=self.config.region,
            endpoint_url=self.config.resolved_endpoint_url,
            config=client_config,
        )

    def _call(self, operation: str, *, retry_policy: RetryPolicy | None = None,
              repeatable: bool = True, **params: Any) -> dict:
        """Call one MTurk operation (boto3 method name), retrying throttled/transient errors
        where they failed as ``retry_policy`` (default: the config's) allows
        (``retry.call_with_retry``)."""
        try:
            method = getattr(self.client, operation)
        except botocore.exceptions.BotoCoreError as botocore_error:  # building the client
            raise classify_botocore_error(botocore_error, operation) from botocore_error

        def attempt() -> dict:
            try:
                return method(**params)
            except (botocore.exceptions.ClientError,
                    botocore.exceptions.BotoCoreError) as botocore_error:
                raise classify_botocore_error(botocore_error, operation) from botocore_error

        return call_with_retry(attempt, provider="MTurk", operation=operation,
                               repeatable=repeatable,
                               policy=retry_policy or self.config.retry, sleep=self._sleep,
                               rng=self._rng,
                               on_retry=self._count_retry)

    def _count_retry(self) -> None:
        self.retries_performed += 1

    def _call_once_per_token(self, operation: str, **params: Any) -> None:
        """A token-deduplicated write: "token already processed" means an earlier attempt (whose
        answer we lost) did the work, so it counts as success, not as an error."""
        try:
            self._call(operation, **params)
        except ProviderPermanentError as error:
            if not is_duplicate_token_error(error):
                raise
            logger.info("MTurk %s token %s already processed; treating as done",
                        operation, params.get("UniqueRequestToken"))

    def _paginate(self, operation: str, result_key: str, **params: Any) -> list[dict]:
        """Every item of a list operation, following NextToken to the last page."""
        items: list[dict] = []
        next_token: str | None = None
        while True:
            page_params = dict(params, MaxResults=MAX_PAGE_SIZE)
            if next_token:
                page_params["NextToken"] = next_token
            page = self._call(operation, **page_params)
            items.extend(page.get(result_key, []))
            next_token = page.get("NextToken")
            if not next_token:
                return items

    # -- publishing -----------------------------------------------------------------------------

    def create_hit_type(self, spec: HitTypeSpec) -> str:
        params: dict[str, Any] = {
            "AutoApprovalDelayInSeconds": spec.auto_approval_delay_seconds,
            "AssignmentDurationInSeconds": spec.assignment_duration_seconds,
            "Reward": _money(spec.reward),
            "Title": spec.title,
            "Description": spec.description,
        }
        if spec.keywords:
            params["Keywords"] = ", ".join(spec.keywords)
        if spec.qualification_requirements:
            params["QualificationRequirements"] = [
                requirement.to_mturk() for requirement in spec.qualification_requirements
            ]
        return self._call("create_hit_type", **params)["HITTypeId"]

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
        params: dict[str, Any] = {
            "HITTypeId": hit_type_id,
            "MaxAssignments": max_assignments,
            "LifetimeInSeconds": lifetime_seconds,
            "Question": question_xml,
            "UniqueRequestToken": unique_request_token,
        }
        if requester_annotation:
            params["RequesterAnnotation"] = requester_annotation
        try:
            response = self._call("create_hit_with_hit_type", **params)
        except ProviderPermanentError as error:
            existing = self._hit_made_earlier(error, requester_annotation)
            if existing is None:
                raise
            # An earlier attempt (whose answer we lost) already created it: adopt that HIT.
            logger.info("CreateHIT token %s already used; resolving to HIT %s",
                        unique_request_token, existing.hit_id)
            return existing
        return _published_hit(response["HIT"])

    def _hit_made_earlier(self, error: ProviderPermanentError,
                          requester_annotation: str) -> PublishedHit | None:
        """The HIT an earlier CreateHIT with the same token made, or None.

        Never depends on the message's wording: a HIT id found anywhere in it counts when
        GetHIT confirms it is ours (same ``RequesterAnnotation``); otherwise, for an error that
        may be the duplicate token, our HITs are searched by ``RequesterAnnotation``.
        """
        if error.code != "RequestError":
            return None
        for candidate in hit_id_candidates(error.message):
            try:
                hit = self.get_hit(candidate)
            except ProviderPermanentError:
                continue
            if not requester_annotation or hit.requester_annotation == requester_annotation:
                return hit
        if requester_annotation:
            return self.find_hit_by_annotation(requester_annotation)
        return None

    def find_hit_by_annotation(self, requester_annotation: str) -> PublishedHit | None:
        """Our HIT whose ``RequesterAnnotation`` is ``requester_annotation`` (ListHITs, every
        page), or None."""
        for hit in self._paginate("list_hits", "HITs"):
            if (hit.get("RequesterAnnotation") or "") == requester_annotation:
                return _published_hit(hit)
        return None

    def get_hit(self, hit_id: str) -> PublishedHit:
        return _published_hit(self._call("get_hit", HITId=hit_id)["HIT"])

    #: GetAssignment "retrieves an assignment with an AssignmentStatus value of Submitted,
    #: Approved, or Rejected" (MTurk API reference): a worker still answering is unknown to it.
    confirms_work_in_progress = False
    LIVE_ASSIGNMENT_STATUSES = frozenset({"Submitted", "Approved", "Rejected"})

    def assignment_is_live(self, *, assignment_id: str, hit_id: str, worker_id: str) -> bool:
        """GetAssignment: True when MTurk reports this assignment for this worker and HIT.
        MTurk answers a RequestError for an id it does not know, one of another requester,
        and one not yet submitted: all False."""
        try:
            # A worker's save may be waiting: one attempt (base.py's contract).
            response = self._call("get_assignment", retry_policy=SINGLE_ATTEMPT,
                                  AssignmentId=assignment_id)
        except ProviderPermanentError as error:
            if error.code == "RequestError":
                return False
            raise
        assignment = response.get("Assignment", {})
        return (assignment.get("WorkerId") == worker_id and assignment.get("HITId") == hit_id
                and assignment.get("AssignmentStatus") in self.LIVE_ASSIGNMENT_STATUSES)

    def update_expiration(self, hit_id: str, *, expire_at: datetime) -> None:
        self._call("update_expiration_for_hit", HITId=hit_id, ExpireAt=expire_at)

    def create_additional_assignments(
        self, hit_id: str, *, count: int, unique_request_token: str
    ) -> None:
        self._call_once_per_token(
            "create_additional_assignments_for_hit",
            HITId=hit_id,
            NumberOfAdditionalAssignments=count,
            UniqueRequestToken=unique_request_token,
        )

    # -- collecting -----------------------------------------------------------------------------

    def list_reviewable_hits(
        self, *, hit_type_id: str | None = None, status: str = "Reviewable"
    ) -> list[PublishedHit]:
        params: dict[str, Any] = {"Status": status}
        if hit_type_id:
            params["HITTypeId"] = hit_type_id
        return [
            _published_hit(hit)
            for hit in self._paginate("list_reviewable_hits", "HITs", **params)
        ]

    def list_assignments_for_hit(
        self, hit_id: str, *, statuses: Sequence[str] = ("Submitted", "Approved", "Rejected")
    ) -> list[CollectedAssignment]:
        return [
            _collected_assignment(assignment)
            for assignment in self._paginate(
                "list_assignments_for_hit",
                "Assignments",
                HITId=hit_id,
                AssignmentStatuses=list(statuses),
            )
        ]

    # -- reviewing and paying -------------------------------------------------------------------

    def approve_assignment(
        self, assignment_id: str, *, feedback: str = "", override_rejection: bool = False
    ) -> None:
        params: dict[str, Any] = {"AssignmentId": assignment_id}
        if feedback:
            params["RequesterFeedback"] = feedback
        if override_rejection:
            params["OverrideRejection"] = True
        self._call("approve_assignment", **params)

    def reject_assignment(self, assignment_id: str, *, message: str) -> None:
        if not message:
            raise ValueError("a rejection needs a message the worker can read")
        self._call("reject_assignment", AssignmentId=assignment_id, RequesterFeedback=message)

    def send_bonus(
        self,
        *,
        worker_id: str,
        assignment_id: str,
        amount: Decimal,
        reason: str,
        unique_request_token: str,
    ) -> None:
        """MTurk pays a token once. A repeated token is refused with a RequestError whose
        wording AWS does not document: it is raised like any refusal, and the bonus service
        asks :meth:`bonus_payments` whether the bonus was paid (never the message)."""
        # Not repeated after a lost reply: the bonus service reads ListBonusPayments first.
        self._call(
            "send_bonus",
            repeatable=False,
            WorkerId=worker_id,
            AssignmentId=assignment_id,
            BonusAmount=_money(amount),
            Reason=reason,
            UniqueRequestToken=unique_request_token,
        )

    def bonus_payments(self, *, assignment_id: str) -> list[PaidBonus]:
        return [
            PaidBonus(worker_id=payment.get("WorkerId", ""),
                      assignment_id=payment.get("AssignmentId", assignment_id),
                      amount=Decimal(str(payment.get("BonusAmount", "0"))),
                      reason=payment.get("Reason", ""))
            for payment in self._paginate("list_bonus_payments", "BonusPayments",
                                          AssignmentId=assignment_id)
        ]

    def get_account_balance(self) -> AccountBalance:
        response = self._call("get_account_balance")
        on_hold = response.get("OnHoldBalance")
        return AccountBalance(
            available=Decimal(response["AvailableBalance"]),
            on_hold=Decimal(on_hold) if on_hold is not None else None,
        )

    # -- workers --------------------------------------------------------------------------------

    def create_worker_block(self, worker_id: str, *, reason: str) -> None:
        self._call("create_worker_block", WorkerId=worker_id, Reason=reason)

    def delete_worker_block(self, worker_id: str, *, reason: str = "") -> None:
        params: dict[str, Any] = {"WorkerId": worker_id}
        if reason:
            params["Reason"] = reason
        self._call("delete_worker_block", **params)

    def notify_workers(
        self, worker_ids: Sequence[str], *, subject: str, message: str
    ) -> list[NotifyFailure]:
        failures: list[NotifyFailure] = []
        ids = list(worker_ids)
        for start in range(0, len(ids), NOTIFY_WORKERS_BATCH):
            response = self._call(
                "notify_workers",
                Subject=subject,
                MessageText=message,
                WorkerIds=ids[start : start + NOTIFY_WORKERS_BATCH],
            )
            failures.extend(
                NotifyFailure(
                    worker_id=status.get("WorkerId", ""),
                    code=status.get("NotifyWorkersFailureCode", ""),
                    message=status.get("NotifyWorkersFailureMessage", ""),
                )
                for status in response.get("NotifyWorkersFailureStatuses", [])
            )
        return failures

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
        params: dict[str, Any] = {
            "Name": name,
            "Description": description,
            "QualificationTypeStatus": "Active",
            "Test": test_xml,
            "AnswerKey": answer_key_xml,
            "TestDurationInSeconds": test_duration_seconds,
        }
        if retry_delay_seconds is not None:
            params["RetryDelayInSeconds"] = retry_delay_seconds
        if keywords:
            params["Keywords"] = ", ".join(keywords)
        response = self._call("create_qualification_type", **params)
        return response["QualificationType"]["QualificationTypeId"]
