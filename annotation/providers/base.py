"""The provider interface: how Unpack publishes work and collects results.

A provider is the door to one source of annotators. ``MTurkProvider`` (``mturk.py``) talks to
Amazon Mechanical Turk; ``LocalProvider`` (``local.py``) serves annotators logged into the app.
Both return the small frozen dataclasses below, never boto3 dictionaries, so services and tasks
can be written (and tested) without knowing which door the work went through.

Error model, shared by every provider:

* ``ProviderThrottled`` -- the remote side asked us to slow down; retry later with backoff.
* ``ProviderTransientError`` -- a fault that may go away (5xx, ServiceFault, timeout, dropped
  connection); retry with backoff.
* ``ProviderPermanentError`` -- the request itself is wrong or impossible (bad parameter, unknown
  HIT, insufficient funds); retrying cannot help. It carries the remote error code and the
  message a researcher should see.

Every provider retries throttled and transient errors where the call failed, a bounded number
of times (``retry.py``); an error of those kinds that escapes it means the retries ran out (or
a write's outcome is unknown), and the Celery job or a resume tries again later.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

# System qualification type ids, as documented by MTurk (same in sandbox and production).
LOCALE_QUALIFICATION_ID = "00000000000000000071"
PERCENT_ASSIGNMENTS_APPROVED_QUALIFICATION_ID = "000000000000000000L0"
NUMBER_HITS_APPROVED_QUALIFICATION_ID = "00000000000000000040"

COMPARATORS = frozenset(
    {
        "LessThan",
        "LessThanOrEqualTo",
        "GreaterThan",
        "GreaterThanOrEqualTo",
        "EqualTo",
        "NotEqualTo",
        "Exists",
        "DoesNotExist",
        "In",
        "NotIn",
    }
)


class ProviderError(Exception):
    """Base of every provider error.

    ``code`` is the remote error code (e.g. ``RequestError``, ``ThrottlingException``) and
    ``message`` the remote explanation, both meant to be shown to a researcher as they are.
    """

    def __init__(self, message: str, *, code: str = "", operation: str = "") -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code
        self.message = message
        self.operation = operation


class ProviderThrottled(ProviderError):
    """The provider is rate limiting us; the same call may succeed later.

    ``retry_after_seconds`` is the wait the provider asked for (HTTP ``Retry-After``), when it
    said one."""

    retry_after_seconds: float | None = None


class ProviderTransientError(ProviderError):
    """A temporary fault (5xx, ServiceFault, timeout); the same call may succeed later.

    ``request_sent`` is False only when the request certainly never reached the provider
    (connection refused, connect timeout): then even a write that is not idempotent may be
    sent again. True means the provider may have acted on it (its reply was lost)."""

    request_sent: bool = True


class ProviderPermanentError(ProviderError):
    """The call cannot succeed as made; do not retry it. Show ``code``/``message`` to a human.

    ``http_status`` is the HTTP status of the refusal when the provider speaks HTTP (e.g. 404:
    no such object), for callers that must tell "unknown" from other refusals."""

    http_status: int | None = None


@dataclass(frozen=True)
class LocaleValue:
    """One MTurk locale: an ISO 3166 country code, optionally with a subdivision (US state)."""

    country: str
    subdivision: str | None = None


@dataclass(frozen=True)
class QualificationRequirementSpec:
    """One condition a worker must meet to see/accept a HIT (MTurk's QualificationRequirement)."""

    qualification_type_id: str
    comparator: str
    integer_values: tuple[int, ...] = ()
    locale_values: tuple[LocaleValue, ...] = ()
    actions_guarded: str | None = None

    def __post_init__(self) -> None:
        if self.comparator not in COMPARATORS:
            raise ValueError(
                f"unknown comparator {self.comparator!r}; expected one of {sorted(COMPARATORS)}"
            )

    @classmethod
    def locale_in(cls, *countries: str) -> QualificationRequirementSpec:
        """Workers located in one of ``countries`` (e.g. ``"US", "GB"``)."""
        return cls(
            LOCALE_QUALIFICATION_ID,
            "In",
            locale_values=tuple(LocaleValue(country) for country in countries),
        )

    @classmethod
    def percent_approved_at_least(cls, percent: int) -> QualificationRequirementSpec:
        """Workers whose HIT approval rate is at least ``percent`` (0-100)."""
        return cls(
            PERCENT_ASSIGNMENTS_APPROVED_QUALIFICATION_ID,
            "GreaterThanOrEqualTo",
            integer_values=(percent,),
        )

    @classmethod
    def number_approved_at_least(cls, count: int) -> QualificationRequirementSpec:
        """Workers with at least ``count`` approved HITs."""
        return cls(
            NUMBER_HITS_APPROVED_QUALIFICATION_ID,
            "GreaterThanOrEqualTo",
            integer_values=(count,),
        )

    @classmethod
    def score_at_least(
        cls, qualification_type_id: str, score: int
    ) -> QualificationRequirementSpec:
        """Workers holding our custom qualification with a value (test score) >= ``score``."""
        return cls(qualification_type_id, "GreaterThanOrEqualTo", integer_values=(score,))

    def to_mturk(self) -> dict:
        """This requirement in MTurk's wire shape (a ``QualificationRequirement`` structure)."""
        requirement: dict = {
            "QualificationTypeId": self.qualification_type_id,
            "Comparator": self.comparator,
        }
        if self.integer_values:
            requirement["IntegerValues"] = list(self.integer_values)
        if self.locale_values:
            requirement["LocaleValues"] = [
                {"Country": locale.country}
                if locale.subdivision is None
                else {"Country": locale.country, "Subdivision": locale.subdivision}
                for locale in self.locale_values
            ]
        if self.actions_guarded:
            requirement["ActionsGuarded"] = self.actions_guarded
        return requirement


@dataclass(frozen=True)
class HitTypeSpec:
    """What every HIT of one batch shares: title, pay, time limits and who may work on it.

    ``reward`` is in US dollars (``Decimal("0.50")``). ``auto_approval_delay_seconds`` is how long
    after submission MTurk approves an assignment we have not reviewed.
    """

    title: str
    description: str
    reward: Decimal
    assignment_duration_seconds: int
    auto_approval_delay_seconds: int = 3 * 24 * 3600
    keywords: tuple[str, ...] = ()
    qualification_requirements: tuple[QualificationRequirementSpec, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.reward, Decimal):
            raise TypeError("HitTypeSpec.reward must be a Decimal (e.g. Decimal('0.50'))")
        if self.reward < 0 or self.reward.as_tuple().exponent < -2:
            raise ValueError(f"reward {self.reward} is not a non-negative amount in cents")
        if len(self.qualification_requirements) > 10:
            raise ValueError("MTurk accepts at most 10 qualification requirements per HIT")


@dataclass(frozen=True)
class PublishedHit:
    """A HIT as the provider knows it right now."""

    hit_id: str
    hit_type_id: str
    status: str  # Assignable | Unassignable | Reviewable | Reviewing | Disposed
    max_assignments: int
    assignments_available: int = 0
    assignments_pending: int = 0
    assignments_completed: int = 0
    expiration: datetime | None = None
    creation_time: datetime | None = None
    requester_annotation: str = ""


@dataclass(frozen=True)
class CollectedAssignment:
    """One worker's submitted work on one HIT.

    ``answers`` maps each QuestionIdentifier (for ExternalQuestion HITs: each form field name the
    task page posted) to its value: a string for free text or a single selection, a tuple of
    strings when several selections were made. ``answer_xml`` keeps the original
    QuestionFormAnswers document for audit.
    """

    assignment_id: str
    worker_id: str
    hit_id: str
    status: str  # Submitted | Approved | Rejected
    accept_time: datetime | None
    submit_time: datetime | None
    answers: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    answer_xml: str = ""
    auto_approval_time: datetime | None = None
    requester_feedback: str = ""


@dataclass(frozen=True)
class NotifyFailure:
    """A worker a message could not be delivered to (MTurk's NotifyWorkersFailureStatus)."""

    worker_id: str
    code: str  # SoftFailure (may retry) | HardFailure
    message: str


@dataclass(frozen=True)
class PaidBonus:
    """One bonus the provider reports as paid (MTurk's ListBonusPayments)."""

    worker_id: str
    assignment_id: str
    amount: Decimal
    reason: str


@dataclass(frozen=True)
class AccountBalance:
    """Money available to pay workers, in US dollars."""

    available: Decimal
    on_hold: Decimal | None = None


def check_create_hit_arguments(*, unique_request_token: str, max_assignments: int) -> None:
    """Preconditions every provider's ``create_hit`` shares (MTurk's own limits)."""
    if not unique_request_token or len(unique_request_token) > 64:
        raise ValueError("unique_request_token must be 1-64 characters")
    if max_assignments < 1:
        raise ValueError("max_assignments must be at least 1")


class AnnotationProvider(abc.ABC):
    """The door to one pool of annotators. Every method may raise a ``ProviderError``.

    Writes that MTurk can deduplicate take a ``unique_request_token`` (at most 64 characters):
    callers derive it from their own database ids (e.g. ``f"hit-{hit.pk}"``) so that a retried
    task never publishes a second HIT or pays a second bonus.
    """

    name: str = ""

    #: False when results never come back through the provider (they arrive through the app's
    #: own views instead); collection code checks this before listing assignments.
    collects_remotely: bool = True

    @abc.abstractmethod
    def create_hit_type(self, spec: HitTypeSpec) -> str:
        """Register (or find; MTurk returns the same id for identical specs) a HIT type id."""

    @abc.abstractmethod
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
        """Publish one HIT. A repeat with the same token returns the HIT made the first time."""

    @abc.abstractmethod
    def get_hit(self, hit_id: str) -> PublishedHit:
        """The HIT's current state."""

    @abc.abstractmethod
    def list_reviewable_hits(
        self, *, hit_type_id: str | None = None, status: str = "Reviewable"
    ) -> list[PublishedHit]:
        """Every HIT in ``status`` (Reviewable or Reviewing), following every page."""

    @abc.abstractmethod
    def list_assignments_for_hit(
        self, hit_id: str, *, statuses: Sequence[str] = ("Submitted", "Approved", "Rejected")
    ) -> list[CollectedAssignment]:
        """Every submitted assignment of the HIT with one of ``statuses``, following every page."""

    @abc.abstractmethod
    def approve_assignment(
        self, assignment_id: str, *, feedback: str = "", override_rejection: bool = False
    ) -> None:
        """Approve (and pay) a submitted assignment."""

    @abc.abstractmethod
    def reject_assignment(self, assignment_id: str, *, message: str) -> None:
        """Reject a submitted assignment; ``message`` is what the worker reads."""

    @abc.abstractmethod
    def send_bonus(
        self,
        *,
        worker_id: str,
        assignment_id: str,
        amount: Decimal,
        reason: str,
        unique_request_token: str,
    ) -> None:
        """Pay a bonus once per token, even when retried."""

    @abc.abstractmethod
    def create_worker_block(self, worker_id: str, *, reason: str) -> None:
        """Stop a worker from accepting any of our HITs."""

    @abc.abstractmethod
    def delete_worker_block(self, worker_id: str, *, reason: str = "") -> None:
        """Lift a block."""

    @abc.abstractmethod
    def notify_workers(
        self, worker_ids: Sequence[str], *, subject: str, message: str
    ) -> list[NotifyFailure]:
        """Message workers (in groups of 100, MTurk's limit). Returns per-worker failures."""

    @abc.abstractmethod
    def update_expiration(self, hit_id: str, *, expire_at: datetime) -> None:
        """Move the HIT's expiry; a moment in the past expires it now."""

    @abc.abstractmethod
    def create_additional_assignments(
        self, hit_id: str, *, count: int, unique_request_token: str
    ) -> None:
        """Ask for ``count`` more assignments on an existing HIT, once per token."""

    @abc.abstractmethod
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
        """Create a qualification type graded by ``answer_key_xml``; returns its id."""

    @abc.abstractmethod
    def get_account_balance(self) -> AccountBalance:
        """Money available for rewards and bonuses."""

    #: True when ``assignment_is_live`` can vouch for work still in progress (a session whose
    #: worker is still answering). The app asks a provider about a new session only then: a
    #: provider that can confirm only finished work would answer no for every real worker.
    confirms_work_in_progress: bool = False

    def bonus_payments(self, *, assignment_id: str) -> list[PaidBonus] | None:
        """Every bonus the provider has paid for ``assignment_id``; None when it cannot list
        them (this default). The bonus service reads it when a SendBonus is refused, to tell a
        token the provider already paid from a real refusal without reading the error's
        wording."""
        return None

    def assignment_is_live(self, *, assignment_id: str, hit_id: str, worker_id: str) -> bool:
        """Whether the provider vouches that ``worker_id`` holds ``assignment_id`` on ``hit_id``
        and that it still counts (not returned, abandoned or timed out).

        False for an id the provider does not know, one of another worker or HIT, and one it
        cannot report (yet); raises ``ProviderError`` when it could not be asked. This default
        vouches for nothing: a provider that cannot check confirms no session, whose work then
        holds no slot until collection sees it (docs/annotating.md, "Trust"). A provider with
        ``confirms_work_in_progress`` is asked while a worker's save waits: answer in one
        attempt, without retrying (the caller caches answers and treats an error as no).
        """
        return False
