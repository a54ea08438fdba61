"""The one door to Prolific: the ONLY project module that talks to Prolific's REST API (v1).

``ProlificProvider`` speaks Prolific's public API through ``requests``:

* token auth (``Authorization: Token …``) against ``ProlificConfig.api_url`` (Prolific's own by
  default; the local ``annotation.fake_prolific`` stand-in in development and tests);
* maps every HTTP failure onto the provider error model: 429 becomes ``ProviderThrottled``
  carrying the ``Retry-After`` delay, 5xx and dropped connections ``ProviderTransientError``,
  other 4xx ``ProviderPermanentError`` with Prolific's own explanation. Throttled and
  transient calls are retried where they failed by the shared ``retry.call_with_retry``
  (honouring ``Retry-After``); a POST is repeated after a lost reply only where it is safe
  (a study is first looked up by its token; a bonus pay never is: its outcome is read back);
* follows every page of a list (``_links.next.href``);
* implements the provider interface of ``base.py`` so the batch services drive it like MTurk:
  one **study** is one HIT (``PublishedHit.hit_id`` is the study id), one **submission**
  (a participant's session, Prolific's ``SESSION_ID``) is one assignment.

Prolific has no request tokens. A study therefore carries the caller's token in its
``internal_name`` (``"<name> [<token>]"``): ``create_hit`` first looks for a study with that
token and adopts it, so a publish killed between "study created" and "id stored" never makes a
second study when resumed. Paying a bonus is two calls (set up, then pay) and paying is not
idempotent at Prolific, so the caller stores the set-up id between them
(``set_up_bonus`` / ``pay_bonus``; ``two_step_bonus`` is True).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from urllib.parse import quote, urljoin

import requests
import urllib3.exceptions

from .base import (
    AccountBalance,
    AnnotationProvider,
    CollectedAssignment,
    HitTypeSpec,
    NotifyFailure,
    PaidBonus,
    ProviderPermanentError,
    ProviderThrottled,
    ProviderTransientError,
    PublishedHit,
    check_create_hit_arguments,
)
from .retry import DEFAULT_RETRY, SINGLE_ATTEMPT, RetryPolicy, call_with_retry

logger = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.prolific.com"
#: Where a participant's browser goes when they finish; ``cc`` is the study's completion code.
#: ``PROLIFIC_COMPLETION_URL`` overrides it (a rehearsal points it at the stand-in).
COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"
#: Prolific's ids (participant, study, submission) are MongoDB ObjectIds: 24 lower-case hex
#: digits, e.g. ``PROLIFIC_PID=5a9d64f5f6dfdd0001eaa73d`` in Prolific's documentation.
PROLIFIC_ID = re.compile(r"[0-9a-f]{24}")
#: Submission statuses in which a session is real and still counts: the participant is working
#: (ACTIVE) or has finished (AWAITING REVIEW). Decided, returned or timed-out ones do not.
LIVE_SUBMISSION_STATUSES = frozenset({"ACTIVE", "AWAITING REVIEW"})
#: ``assignment_is_live`` is asked while a participant's save waits: a short timeout, one try.
LIVE_CHECK_TIMEOUT = (3.05, 5.0)
#: The placeholders Prolific fills into ``external_study_url`` for each participant.
URL_PLACEHOLDERS = {"PROLIFIC_PID": "{{%PROLIFIC_PID%}}", "STUDY_ID": "{{%STUDY_ID%}}",
                    "SESSION_ID": "{{%SESSION_ID%}}"}

#: Prolific's rejection categories (the ``rejection_category`` of a REJECT transition).
REJECTION_CATEGORIES = frozenset({
    "TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
    "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER",
})
#: The rejection categories in words, for people (staff pages show these, never the codes).
REJECTION_CATEGORY_WORDS = {
    "TOO_QUICKLY": "Completed too quickly", "TOO_SLOWLY": "Completed too slowly",
    "FAILED_INSTRUCTIONS": "Did not follow the instructions",
    "INCOMP_LONGITUDINAL": "Did not complete a longitudinal study",
    "FAILED_CHECK": "Failed an attention check", "LOW_EFFORT": "Low effort",
    "MALINGERING": "Malingering (answers not given in good faith)",
    "NO_CODE": "No completion code", "BAD_CODE": "Wrong completion code",
    "NO_DATA": "No data", "UNSUPP_DEVICE": "Unsupported device", "OTHER": "Other",
}
#: Prolific refuses a rejection whose message to the participant is shorter than this.
MIN_REJECTION_MESSAGE_LENGTH = 100
DEVICES = frozenset({"desktop", "tablet", "mobile"})

# Submission statuses, as Prolific spells them, in the provider-neutral vocabulary of
# ``CollectedAssignment.status`` (MTurk's words). RETURNED and TIMED-OUT free their place:
# Prolific recruits another participant, and collection releases the session on our side.
SUBMISSION_STATUS = {
    "RESERVED": "Accepted",
    "ACTIVE": "Accepted",
    "AWAITING REVIEW": "Submitted",
    "APPROVED": "Approved",
    "PARTIALLY APPROVED": "Approved",
    "REJECTED": "Rejected",
    "RETURNED": "Returned",
    "TIMED-OUT": "Abandoned",
    "SCREENED OUT": "Returned",
}
# Study statuses in the HIT vocabulary collection understands.
STUDY_STATUS = {
    "UNPUBLISHED": "Assignable",
    "PUBLISHING": "Assignable",
    "SCHEDULED": "Assignable",
    "ACTIVE": "Assignable",
    "PAUSED": "Unassignable",
    "AWAITING REVIEW": "Reviewable",
    "COMPLETED": "Reviewable",
}

_TOKEN_IN_NAME = re.compile(r"\[([A-Za-z0-9_.:-]{1,64})\]$")


@dataclass(frozen=True)
class ProlificConfig:
    """Where and how to reach Prolific.

    ``workspace_id`` is needed for the blocklist's participant group and the balance;
    ``project_id`` (optional) files new studies under a Prolific project.
    """

    api_url: str = DEFAULT_API_URL
    api_token: str = ""
    workspace_id: str = ""
    project_id: str = ""
    blocklist_group_name: str = "Unpack blocklist"
    connect_timeout_seconds: float = 10.0
    read_timeout_seconds: float = 60.0
    page_size: int = 100
    retry: RetryPolicy = DEFAULT_RETRY

    @classmethod
    def from_settings(cls, settings: Any = None) -> ProlificConfig:
        """From Django settings ``PROLIFIC_API_URL``, ``PROLIFIC_API_TOKEN``,
        ``PROLIFIC_WORKSPACE_ID``, ``PROLIFIC_PROJECT_ID`` and ``PROLIFIC_BLOCKLIST_GROUP``."""
        if settings is None:
            from django.conf import settings as django_settings

            settings = django_settings
        return cls(
            api_url=getattr(settings, "PROLIFIC_API_URL", "") or DEFAULT_API_URL,
            api_token=getattr(settings, "PROLIFIC_API_TOKEN", "") or "",
            workspace_id=getattr(settings, "PROLIFIC_WORKSPACE_ID", "") or "",
            project_id=getattr(settings, "PROLIFIC_PROJECT_ID", "") or "",
            blocklist_group_name=(getattr(settings, "PROLIFIC_BLOCKLIST_GROUP", "")
                                  or "Unpack blocklist"),
            retry=RetryPolicy.from_settings(settings),
        )


@dataclass(frozen=True)
class StudyTemplate:
    """What every study of one batch shares; ``create_hit`` adds the places and the token.

    ``external_study_url`` must carry the three placeholders (``study_url`` builds it).
    ``reward_cents`` is per submission in the smallest unit of the account's currency; the two
    times are in minutes. ``filters`` are Prolific filter objects
    (``{"filter_id": …, "selected_values": […]}`` or ``{"filter_id": …, "selected_range": …}``).
    """

    name: str
    description: str
    external_study_url: str
    reward_cents: int
    estimated_completion_minutes: int
    maximum_allowed_minutes: int
    completion_code: str
    failed_check_code: str
    internal_name: str = ""
    device_compatibility: tuple[str, ...] = ("desktop",)
    filters: tuple[dict, ...] = ()
    blocklist: bool = True  # exclude the members of our blocklist participant group

    def __post_init__(self) -> None:
        missing = [name for name, placeholder in URL_PLACEHOLDERS.items()
                   if placeholder not in self.external_study_url]
        if missing:
            raise ValueError(f"external_study_url lacks the placeholders for {missing}")
        if self.reward_cents < 1:
            raise ValueError("reward_cents must be at least 1")
        if not 1 <= self.estimated_completion_minutes <= self.maximum_allowed_minutes:
            raise ValueError("need 1 <= estimated_completion_minutes <= maximum_allowed_minutes")
        if self.completion_code == self.failed_check_code or not self.completion_code:
            raise ValueError("the completion and failed-check codes must differ and be set")
        if not set(self.device_compatibility) <= DEVICES:
            raise ValueError(f"device_compatibility must be a subset of {sorted(DEVICES)}")


def study_url(base: str) -> str:
    """``base`` (our task page) with Prolific's three placeholders as query parameters."""
    separator = "&" if "?" in base else "?"
    query = "&".join(f"{name}={placeholder}" for name, placeholder in URL_PLACEHOLDERS.items())
    return f"{base}{separator}{query}"


def is_prolific_id(value: str) -> bool:
    """Whether ``value`` is shaped like a Prolific id (participant, study or submission)."""
    return PROLIFIC_ID.fullmatch(value) is not None


def completion_url(code: str, *, template: str | None = None) -> str:
    """Where to send a participant who finished, with the study's completion ``code``:
    ``template`` (default ``settings.PROLIFIC_COMPLETION_URL``, else Prolific's own) with
    ``{code}`` filled in, URL-encoded."""
    if template is None:
        from django.conf import settings

        template = getattr(settings, "PROLIFIC_COMPLETION_URL", "") or COMPLETION_URL
    return template.format(code=quote(code, safe=""))


@dataclass(frozen=True)
class Study:
    """A study as Prolific describes it (the fields we use)."""

    id: str
    status: str
    internal_name: str = ""
    total_available_places: int = 0
    places_taken: int = 0
    filters: tuple[dict, ...] = ()

    @classmethod
    def from_api(cls, data: dict) -> Study:
        return cls(id=str(data["id"]), status=str(data.get("status", "")),
                   internal_name=str(data.get("internal_name") or ""),
                   total_available_places=int(data.get("total_available_places") or 0),
                   places_taken=int(data.get("places_taken") or 0),
                   filters=tuple(data.get("filters") or ()))

    @property
    def request_token(self) -> str | None:
        match = _TOKEN_IN_NAME.search(self.internal_name)
        return match.group(1) if match else None


@dataclass(frozen=True)
class BonusSetUp:
    """A bulk bonus set up at Prolific and not paid yet (amounts in the account's cents)."""

    id: str
    amount_cents: int
    fees_cents: int
    vat_cents: int
    total_cents: int


@dataclass
class _Cache:
    studies_by_token: dict[str, Study] | None = None
    blocklist_group_id: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def _cents(value: Any) -> int:
    return int(Decimal(str(value or 0)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _error_text(response: requests.Response) -> tuple[str, str]:
    """(code, message) from a Prolific error body, whatever its exact shape."""
    try:
        body = response.json()
    except ValueError:
        return str(response.status_code), (response.text or response.reason or "")[:500]
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        code = str(error.get("error_code") or error.get("code") or response.status_code)
        detail = error.get("detail") or error.get("title") or error.get("message") or error
        message = detail if isinstance(detail, str) else json.dumps(detail, sort_keys=True)
        return code, message[:500]
    return str(response.status_code), json.dumps(error)[:500]


def _retry_after_seconds(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _connection_refused(error: requests.RequestException) -> bool:
    """Whether the connection itself failed (refused, no route, DNS): nothing was sent."""
    reason = getattr(error.args[0], "reason", None) if error.args else None
    return isinstance(reason, urllib3.exceptions.NewConnectionError)


def _money_csv(amount: Decimal) -> str:
    """A bonus amount as Prolific's CSV wants it: the currency's major unit, e.g. ``0.50``."""
    if not isinstance(amount, Decimal):
        raise TypeError("amounts must be Decimal (e.g. Decimal('0.50'))")
    if amount <= 0 or amount.as_tuple().exponent < -2:
        raise ValueError(f"bonus {amount} is not a positive amount in cents")
    return f"{amount:.2f}"


class ProlificProvider(AnnotationProvider):
    """Prolific through its REST API. One instance may be shared by threads."""

    name = "prolific"
    collects_remotely = True
    two_step_bonus = True

    def __init__(self, config: ProlificConfig | None = None, *,
                 template: StudyTemplate | None = None,
                 session: requests.Session | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 rng: random.Random | None = None) -> None:
        """``template`` is the batch's study (``create_hit`` needs it); ``session`` injects a
        ready ``requests.Session`` (tests); ``sleep`` and ``rng`` make backoff observable."""
        self.config = config or ProlificConfig()
        self.template = template
        self._session = session or requests.Session()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._cache = _Cache()
        self.calls = 0  # HTTP requests made, for benches and tests

    def with_template(self, template: StudyTemplate) -> ProlificProvider:
        """This provider, publishing studies from ``template``."""
        return ProlificProvider(self.config, template=template, session=self._session,
                                sleep=self._sleep, rng=self._rng)

    # -- plumbing -------------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return urljoin(self.config.api_url.rstrip("/") + "/", path.lstrip("/"))

    def _request(self, method: str, path: str, operation: str, *, body: Any = None,
                 params: dict | None = None, timeout: tuple[float, float] | None = None,
                 repeatable: bool | None = None, retry: RetryPolicy | None = None) -> Any:
        """One call, retried where it failed (``retry.call_with_retry``, ``retry`` or the
        config's policy); the decoded JSON answer (None for an empty one), or a
        ``ProviderError``. ``repeatable`` (default: every method but POST) says whether the
        call may be sent again after a reply was lost."""
        if repeatable is None:
            repeatable = method != "POST"
        return call_with_retry(
            lambda: self._request_once(method, path, operation, body=body, params=params,
                                       timeout=timeout),
            provider="Prolific", operation=operation, policy=retry or self.config.retry,
            repeatable=repeatable, sleep=self._sleep, rng=self._rng)

    def _request_once(self, method: str, path: str, operation: str, *, body: Any = None,
                      params: dict | None = None,
                      timeout: tuple[float, float] | None = None) -> Any:
        if not self.config.api_token:
            raise ProviderPermanentError("PROLIFIC_API_TOKEN is not set", code="NoToken",
                                         operation=operation)
        url = path if path.startswith(("http://", "https://")) else self._url(path)
        self.calls += 1
        try:
            response = self._session.request(
                method, url, params=params,
                data=None if body is None else json.dumps(body),
                headers={"Authorization": f"Token {self.config.api_token}",
                         "Content-Type": "application/json", "Accept": "application/json"},
                timeout=timeout or (self.config.connect_timeout_seconds,
                                    self.config.read_timeout_seconds))
        except (requests.ConnectionError, requests.Timeout) as error:
            transient = ProviderTransientError(str(error), code=type(error).__name__,
                                               operation=operation)
            # Refused or timed out while connecting: the request never reached Prolific.
            transient.request_sent = not (isinstance(error, requests.exceptions.ConnectTimeout)
                                          or _connection_refused(error))
            raise transient from error
        if response.status_code < 400:
            if not response.content:
                return None
            try:
                return response.json()
            except ValueError:
                return response.text
        code, message = _error_text(response)
        if response.status_code == 429:
            throttled = ProviderThrottled(message or "rate limited", code="429",
                                          operation=operation)
            throttled.retry_after_seconds = _retry_after_seconds(response)
            raise throttled
        if response.status_code >= 500:
            raise ProviderTransientError(message, code=code, operation=operation)
        refused = ProviderPermanentError(message, code=code, operation=operation)
        refused.http_status = response.status_code
        raise refused

    def _pages(self, path: str, operation: str, params: dict | None = None) -> list[dict]:
        """Every result of a list call, following ``_links.next.href`` to the last page."""
        results: list[dict] = []
        url: str | None = path
        page_params: dict | None = {**(params or {}), "page_size": self.config.page_size}
        seen: set[str] = set()
        while url:
            page = self._request("GET", url, operation, params=page_params)
            page_params = None  # the next link carries its own query
            results.extend(page.get("results", []) if isinstance(page, dict) else page or [])
            links = page.get("_links", {}) if isinstance(page, dict) else {}
            next_link = (links.get("next") or {}).get("href") if isinstance(links, dict) else None
            if not next_link or next_link in seen:
                break
            seen.add(next_link)
            url = next_link
        return results

    # -- studies --------------------------------------------------------------------------------

    def study_body(self, template: StudyTemplate, *, places: int, internal_name: str) -> dict:
        """The body of ``POST /api/v1/studies/`` for one study of ``template``."""
        filters = list(template.filters)
        if template.blocklist and self.config.workspace_id:
            filters.append({"filter_id": "participant_group_blocklist",
                            "selected_values": [self.blocklist_group_id()]})
        body = {
            "name": template.name,
            "internal_name": internal_name,
            "description": template.description,
            "external_study_url": template.external_study_url,
            "prolific_id_option": "url_parameters",
            "completion_codes": [
                {"code": template.completion_code, "code_type": "COMPLETED",
                 "actions": [{"action": "MANUALLY_REVIEW"}]},
                {"code": template.failed_check_code, "code_type": "FAILED_ATTENTION_CHECK",
                 "actions": [{"action": "MANUALLY_REVIEW"}]},
            ],
            "total_available_places": places,
            "estimated_completion_time": template.estimated_completion_minutes,
            "maximum_allowed_time": template.maximum_allowed_minutes,
            "reward": template.reward_cents,
            "device_compatibility": list(template.device_compatibility),
            "filters": filters,
        }
        if self.config.project_id:
            body["project"] = self.config.project_id
        return body

    def create_draft_study(self, template: StudyTemplate, *, places: int,
                           internal_name: str) -> Study:
        data = self._request("POST", "/api/v1/studies/", "create_study",
                             body=self.study_body(template, places=places,
                                                  internal_name=internal_name))
        return Study.from_api(data)

    def get_study(self, study_id: str) -> Study:
        return Study.from_api(self._request("GET", f"/api/v1/studies/{study_id}/", "get_study"))

    def list_studies(self) -> list[Study]:
        return [Study.from_api(study)
                for study in self._pages("/api/v1/studies/", "list_studies")]

    def transition_study(self, study_id: str, action: str) -> Study:
        """``PUBLISH``, ``PAUSE``, ``START`` (resume) or ``STOP``."""
        if action not in {"PUBLISH", "PAUSE", "START", "STOP"}:
            raise ValueError(f"unknown study action {action!r}")
        data = self._request("POST", f"/api/v1/studies/{study_id}/transition/",
                             f"transition_study_{action.lower()}", body={"action": action})
        return Study.from_api(data) if isinstance(data, dict) and "id" in data \
            else self.get_study(study_id)

    def publish_study(self, study_id: str) -> Study:
        return self.transition_study(study_id, "PUBLISH")

    def pause_study(self, study_id: str) -> Study:
        return self.transition_study(study_id, "PAUSE")

    def resume_study(self, study_id: str) -> Study:
        return self.transition_study(study_id, "START")

    def stop_study(self, study_id: str) -> Study:
        return self.transition_study(study_id, "STOP")

    def set_total_places(self, study_id: str, total: int) -> Study:
        """Raise the study's places to ``total`` (Prolific only lets them grow). Idempotent."""
        data = self._request("PATCH", f"/api/v1/studies/{study_id}/", "update_study",
                             body={"total_available_places": total})
        return Study.from_api(data)

    def _study_for_token(self, token: str) -> Study | None:
        """The study an earlier attempt made with ``token``, if any. The account's studies are
        listed once per provider instance (one publish job), then kept up to date by us."""
        with self._cache.lock:
            if self._cache.studies_by_token is None:
                self._cache.studies_by_token = {
                    study.request_token: study for study in self.list_studies()
                    if study.request_token}
            return self._cache.studies_by_token.get(token)

    def _remember(self, token: str, study: Study) -> None:
        with self._cache.lock:
            if self._cache.studies_by_token is not None:
                self._cache.studies_by_token[token] = study

    # -- the provider interface: publishing -----------------------------------------------------

    def create_hit_type(self, spec: HitTypeSpec) -> str:
        # Prolific has no HIT types; a stable id of the spec keeps the batch bookkeeping.
        digest = hashlib.sha256(json.dumps(asdict(spec), sort_keys=True, default=str).encode())
        return f"PROLIFIC{digest.hexdigest()[:24].upper()}"

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
        """Create and publish one study of ``self.template`` with ``max_assignments`` places.

        ``question_xml`` is not used (the template holds the study URL). A study already made
        with ``unique_request_token`` is adopted (and published if it is still a draft)."""
        check_create_hit_arguments(unique_request_token=unique_request_token,
                                   max_assignments=max_assignments)
        if self.template is None:
            raise ProviderPermanentError("no study template: build the provider for a batch",
                                         code="NoStudyTemplate", operation="create_study")
        study = self._study_for_token(unique_request_token)
        if study is None:
            internal_name = f"{self.template.internal_name or self.template.name}"[:150]
            internal_name = f"{internal_name} [{unique_request_token}]"
            try:
                study = self.create_draft_study(self.template, places=max_assignments,
                                                internal_name=internal_name)
            except ProviderTransientError:
                # The reply was lost: the study may exist. Look it up by its token (the one
                # read this write needs) and create it only if Prolific has none.
                with self._cache.lock:
                    self._cache.studies_by_token = None
                study = self._study_for_token(unique_request_token)
                if study is None:
                    study = self.create_draft_study(self.template, places=max_assignments,
                                                    internal_name=internal_name)
            self._remember(unique_request_token, study)
        else:
            logger.info("Prolific study %s already made for %s; adopting it", study.id,
                        unique_request_token)
        if study.status == "UNPUBLISHED":
            study = self.publish_study(study.id)
            self._remember(unique_request_token, study)
        return self._published(study, hit_type_id=hit_type_id,
                               requester_annotation=requester_annotation)

    @staticmethod
    def _published(study: Study, *, hit_type_id: str = "",
                   requester_annotation: str = "") -> PublishedHit:
        available = max(0, study.total_available_places - study.places_taken)
        return PublishedHit(hit_id=study.id, hit_type_id=hit_type_id,
                            status=STUDY_STATUS.get(study.status, "Assignable"),
                            max_assignments=study.total_available_places,
                            assignments_available=available,
                            requester_annotation=requester_annotation)

    def get_hit(self, hit_id: str) -> PublishedHit:
        return self._published(self.get_study(hit_id))

    def list_reviewable_hits(
        self, *, hit_type_id: str | None = None, status: str = "Reviewable"
    ) -> list[PublishedHit]:
        # Callers match the ids against their own studies. A status no study can have
        # (Prolific has no "Reviewing") lists nothing, without asking Prolific.
        if status not in STUDY_STATUS.values():
            return []
        return [self._published(study) for study in self.list_studies()
                if STUDY_STATUS.get(study.status) == status]

    def update_expiration(self, hit_id: str, *, expire_at: datetime) -> None:
        """A moment in the past stops the study now; Prolific studies have no expiry time, so
        a future one changes nothing."""
        from datetime import UTC

        moment = expire_at if expire_at.tzinfo else expire_at.replace(tzinfo=UTC)
        if moment <= datetime.now(UTC):
            study = self.get_study(hit_id)
            if study.status not in ("AWAITING REVIEW", "COMPLETED"):
                self.stop_study(hit_id)

    def create_additional_assignments(
        self, hit_id: str, *, count: int, unique_request_token: str
    ) -> None:
        if count < 1:
            raise ValueError("count must be at least 1")
        study = self.get_study(hit_id)
        self.set_total_places(hit_id, study.total_available_places + count)

    # -- the provider interface: collecting -----------------------------------------------------

    def list_submissions(self, study_id: str) -> list[dict]:
        """Every submission of the study, as Prolific gives them, following every page."""
        return self._pages(f"/api/v1/studies/{study_id}/submissions/", "list_submissions")

    def list_assignments_for_hit(
        self, hit_id: str, *, statuses: Sequence[str] = ("Submitted", "Approved", "Rejected")
    ) -> list[CollectedAssignment]:
        """Every submission of study ``hit_id``, whatever its status (``statuses`` is MTurk's
        filter and not applied: collection needs the returned and timed-out ones too, to free
        their items). The answers are in our database, not at Prolific."""
        collected = []
        for submission in self.list_submissions(hit_id):
            remote = str(submission.get("status", ""))
            collected.append(CollectedAssignment(
                assignment_id=str(submission["id"]),
                worker_id=str(submission.get("participant_id") or submission.get("participant")
                              or ""),
                hit_id=hit_id,
                status=SUBMISSION_STATUS.get(remote, remote),
                accept_time=_parse_time(submission.get("started_at")),
                submit_time=_parse_time(submission.get("completed_at")),
                answer_xml="",
                requester_feedback=str(submission.get("study_code") or ""),
            ))
        return collected

    # -- the provider interface: reviewing ------------------------------------------------------

    def approve_assignment(
        self, assignment_id: str, *, feedback: str = "", override_rejection: bool = False
    ) -> None:
        # Prolific cannot turn a rejection into an approval: an override is refused there
        # (ProviderPermanentError), which is what the reviewer should see.
        self._request("POST", f"/api/v1/submissions/{assignment_id}/transition/",
                      "approve_submission", body={"action": "APPROVE"})

    def reject_assignment(self, assignment_id: str, *, message: str,
                          rejection_category: str = "OTHER") -> None:
        self._request("POST", f"/api/v1/submissions/{assignment_id}/transition/",
                      "reject_submission",
                      body=self.rejection_body(message, rejection_category))

    @staticmethod
    def rejection_body(message: str, rejection_category: str) -> dict:
        if rejection_category not in REJECTION_CATEGORIES:
            raise ValueError(f"unknown rejection category {rejection_category!r}; expected one "
                             f"of {sorted(REJECTION_CATEGORIES)}")
        if len(message.strip()) < MIN_REJECTION_MESSAGE_LENGTH:
            raise ProviderPermanentError(
                f"Prolific needs a rejection message of at least "
                f"{MIN_REJECTION_MESSAGE_LENGTH} characters (this one has "
                f"{len(message.strip())}); say what was wrong and how to do better",
                code="MessageTooShort", operation="reject_submission")
        return {"action": "REJECT", "message": message,
                "rejection_category": rejection_category}

    def approve_assignments(self, assignment_ids: Iterable[str]) -> None:
        """Approve many submissions (of any studies) in one call."""
        ids = list(assignment_ids)
        if ids:
            self._request("POST", "/api/v1/submissions/bulk-approve/", "bulk_approve",
                          body={"submission_ids": ids})

    def reject_assignments(self, assignment_ids: Iterable[str], *, message: str,
                           rejection_category: str = "OTHER") -> None:
        """Reject many submissions with one message: one transition each (Prolific's reference
        has a bulk approve, not a bulk reject). The message is checked before any is sent."""
        body = self.rejection_body(message, rejection_category)
        for assignment_id in assignment_ids:
            self._request("POST", f"/api/v1/submissions/{assignment_id}/transition/",
                          "reject_submission", body=body)

    def get_submission(self, submission_id: str) -> dict:
        return self._request("GET", f"/api/v1/submissions/{submission_id}/", "get_submission")

    #: Prolific reports a submission from the moment the participant starts it (ACTIVE), so it
    #: can vouch for a session while the participant is still answering.
    confirms_work_in_progress = True

    def assignment_is_live(self, *, assignment_id: str, hit_id: str, worker_id: str) -> bool:
        """``GET /api/v1/submissions/{id}/``: True when Prolific reports submission
        ``assignment_id`` (the ``SESSION_ID``) as participant ``worker_id``'s on study
        ``hit_id``, ACTIVE or AWAITING REVIEW. An id that is not Prolific-shaped is False
        without a call; one Prolific does not know (404) is False. One attempt, a short
        timeout, no retry: a participant's save is waiting (the caller caches the answer and
        takes an error for no)."""
        if not all(is_prolific_id(value) for value in (assignment_id, hit_id, worker_id)):
            return False
        try:
            submission = self._request("GET", f"/api/v1/submissions/{assignment_id}/",
                                       "get_submission", timeout=LIVE_CHECK_TIMEOUT,
                                       retry=SINGLE_ATTEMPT)
        except ProviderPermanentError as error:
            if error.http_status == 404:
                return False
            raise
        if not isinstance(submission, dict):
            return False
        participant = submission.get("participant") or submission.get("participant_id")
        return (str(submission.get("id", "")) == assignment_id
                and str(submission.get("study_id", "")) == hit_id
                and str(participant or "") == worker_id
                and submission.get("status") in LIVE_SUBMISSION_STATUSES)

    # -- bonuses --------------------------------------------------------------------------------

    def set_up_bonus(self, *, worker_id: str, assignment_id: str, amount: Decimal,
                     reason: str = "") -> BonusSetUp:
        """Step one: a bulk bonus of ``amount`` for the submission ``assignment_id``. Nothing is
        paid; store ``.id`` before calling ``pay_bonus``. A set-up never paid costs nothing."""
        study_id = str(self.get_submission(assignment_id).get("study_id", ""))
        data = self._request("POST", "/api/v1/submissions/bonus-payments/", "set_up_bonus",
                             body={"study_id": study_id,
                                   "csv_bonuses": f"{assignment_id},{_money_csv(amount)}\n"})
        return BonusSetUp(id=str(data["id"]), amount_cents=_cents(data.get("amount")),
                          fees_cents=_cents(data.get("fees")), vat_cents=_cents(data.get("vat")),
                          total_cents=_cents(data.get("total_amount")))

    def bonus_payments(self, *, assignment_id: str) -> list[PaidBonus]:
        """The bonuses Prolific has paid for submission ``assignment_id``: its
        ``bonus_payments`` (amounts in the account's cents; Prolific reports no reason).
        Prolific pays asynchronously, so a bonus paid a moment ago may not be listed yet."""
        submission = self.get_submission(assignment_id) or {}
        participant = str(submission.get("participant_id") or submission.get("participant")
                          or "")
        return [PaidBonus(worker_id=participant, assignment_id=assignment_id,
                          amount=Decimal(_cents(cents)) / 100, reason="")
                for cents in submission.get("bonus_payments") or ()]

    def pay_bonus(self, setup_id: str) -> None:
        """Step two: pay a set-up bonus. NOT idempotent at Prolific: call it at most once per
        set-up id (the caller records that it is paying before it calls)."""
        self._request("POST", f"/api/v1/bulk-bonus-payments/{setup_id}/pay/", "pay_bonus",
                      body={})

    def send_bonus(
        self,
        *,
        worker_id: str,
        assignment_id: str,
        amount: Decimal,
        reason: str,
        unique_request_token: str,
    ) -> None:
        """Refused: a one-call bonus cannot be made safe to retry on Prolific. Use
        ``set_up_bonus``, store its id, then ``pay_bonus`` (the bonus service does)."""
        raise ProviderPermanentError(
            "Prolific bonuses are paid in two steps (set_up_bonus, then pay_bonus with the "
            "stored set-up id)", code="TwoStepBonus", operation="send_bonus")

    # -- blocking: a participant group used as a blocklist filter -------------------------------

    def blocklist_group_id(self) -> str:
        """Our blocklist participant group in the workspace, found by name or created once."""
        with self._cache.lock:
            if self._cache.blocklist_group_id:
                return self._cache.blocklist_group_id
        if not self.config.workspace_id:
            raise ProviderPermanentError("PROLIFIC_WORKSPACE_ID is not set; blocking needs it",
                                         code="NoWorkspace", operation="blocklist")
        name = self.config.blocklist_group_name
        groups = self._pages("/api/v1/participant-groups/", "list_participant_groups",
                             params={"workspace_id": self.config.workspace_id})
        found = next((group for group in groups
                      if group.get("name") == name and not group.get("is_deleted")), None)
        if found is None:
            found = self._request("POST", "/api/v1/participant-groups/",
                                  "create_participant_group",
                                  body={"name": name, "workspace_id": self.config.workspace_id,
                                        "description": "Participants blocked in Unpack; every "
                                                       "Unpack study excludes this group."})
        with self._cache.lock:
            self._cache.blocklist_group_id = str(found["id"])
            return self._cache.blocklist_group_id

    def create_worker_block(self, worker_id: str, *, reason: str) -> None:
        """Add the participant to the blocklist group; every study with our blocklist filter
        (all of ours) stops admitting them, including studies already running."""
        group_id = self.blocklist_group_id()
        self._request("POST", f"/api/v1/participant-groups/{group_id}/participants/",
                      "block_participant", body={"participant_ids": [worker_id]})

    def delete_worker_block(self, worker_id: str, *, reason: str = "") -> None:
        group_id = self.blocklist_group_id()
        self._request("DELETE", f"/api/v1/participant-groups/{group_id}/participants/",
                      "unblock_participant", body={"participant_ids": [worker_id]})

    # -- the rest of the interface --------------------------------------------------------------

    def notify_workers(
        self, worker_ids: Sequence[str], *, subject: str, message: str
    ) -> list[NotifyFailure]:
        # Prolific messages are tied to a study; not offered through this generic call.
        return [NotifyFailure(worker_id=worker_id, code="HardFailure",
                              message="messaging Prolific participants is done on Prolific")
                for worker_id in worker_ids]

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
        raise ProviderPermanentError(
            "Prolific has no qualification tests; screen with filters or a participant group",
            code="NotApplicable", operation="create_qualification_type")

    def get_account_balance(self) -> AccountBalance:
        if not self.config.workspace_id:
            raise ProviderPermanentError("PROLIFIC_WORKSPACE_ID is not set", code="NoWorkspace",
                                         operation="get_balance")
        data = self._request("GET", f"/api/v1/workspaces/{self.config.workspace_id}/balance/",
                             "get_balance")
        return AccountBalance(available=Decimal(_cents(data.get("available_balance"))) / 100,
                              on_hold=None)


__all__ = [
    "COMPLETION_URL",
    "REJECTION_CATEGORIES",
    "BonusSetUp",
    "ProlificConfig",
    "ProlificProvider",
    "Study",
    "StudyTemplate",
    "completion_url",
    "is_prolific_id",
    "study_url",
]
