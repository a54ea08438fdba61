"""The in-memory world of the MTurk stand-in: HITs, assignments, workers, money and a clock.

Pure stdlib and thread-safe: every public method takes the one lock. Operations are named as in
MTurk's API and take/return the JSON-1.1 structures boto3 sends and expects (timestamps as epoch
seconds). A failure raises ``MTurkApiError``, which the HTTP layer turns into MTurk's error shape.
Time comes from ``SimulatedClock`` so tests can jump ahead (expiry, auto-approval, deadlines).
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import uuid
import xml.etree.ElementTree as ElementTree
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlencode
from xml.sax.saxutils import escape

LOCALE_QUALIFICATION_ID = "00000000000000000071"
PERCENT_ASSIGNMENTS_APPROVED_QUALIFICATION_ID = "000000000000000000L0"
NUMBER_HITS_APPROVED_QUALIFICATION_ID = "00000000000000000040"

ANSWERS_NAMESPACE = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/"
    "QuestionFormAnswers.xsd"
)
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 10
DEFAULT_AUTO_APPROVAL_DELAY = 2_592_000  # 30 days, MTurk's default
STARTING_BALANCE = Decimal("10000.00")  # what the sandbox shows every requester
WORKER_ID_PATTERN = re.compile(r"^A[A-Z0-9]{1,63}$")
CURRENCY_PATTERN = re.compile(r"^[0-9]+(\.)?[0-9]{0,2}$")


class MTurkApiError(Exception):
    """An error answer: ``error_type`` goes in ``__type``; ``http_status`` is the HTTP status."""

    def __init__(
        self,
        message: str,
        *,
        error_type: str = "RequestError",
        http_status: int = 400,
        turk_error_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.error_type = error_type
        self.http_status = http_status
        self.turk_error_code = turk_error_code

    def body(self) -> dict:
        body: dict[str, Any] = {"__type": self.error_type, "Message": self.message}
        if self.turk_error_code:
            body["TurkErrorCode"] = self.turk_error_code
        return body


class SimulationError(Exception):
    """A simulated worker's action was refused (blocked, not qualified, HIT full, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SimulatedClock:
    """Wall-clock time plus an offset that tests move forward with ``advance``."""

    def __init__(self) -> None:
        self.offset_seconds = 0.0

    def now(self) -> float:
        return time.time() + self.offset_seconds

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self.offset_seconds += seconds
        return self.now()


def parse_xml(text: str) -> ElementTree.Element:
    """Parse XML we were sent. The stdlib parser is safe enough here: expat >= 2.4.1 (Python
    3.11) refuses entity-expansion bombs and ElementTree never fetches external entities."""
    return ElementTree.fromstring(text)  # noqa: S314 - see docstring


def _new_id(prefix: str = "3") -> str:
    """A 30-character id in MTurk's ``^[A-Z0-9]+$`` alphabet."""
    return (prefix + uuid.uuid4().hex.upper())[:30]


def _request_error(message: str, turk_code: str | None = None) -> MTurkApiError:
    # MTurk stamps messages with the request time in milliseconds, e.g. "... (1626172412406)".
    return MTurkApiError(
        f"{message} ({int(time.time() * 1000)})",
        error_type="RequestError",
        turk_error_code=turk_code,
    )


def _required(params: dict, *names: str) -> None:
    missing = [name for name in names if params.get(name) in (None, "")]
    if missing:
        raise _request_error(f"Value null at '{missing[0]}' failed to satisfy constraint: "
                             "Member must not be null")


def _currency(params: dict, name: str) -> Decimal:
    value = str(params.get(name, ""))
    if not CURRENCY_PATTERN.match(value):
        raise _request_error(f"{name} '{value}' is not a valid currency amount")
    try:
        return Decimal(value)
    except InvalidOperation as error:
        raise _request_error(f"{name} '{value}' is not a valid currency amount") from error


def _page_size(params: dict) -> int:
    size = params.get("MaxResults", DEFAULT_PAGE_SIZE)
    if not isinstance(size, int) or size < 1 or size > MAX_PAGE_SIZE:
        raise _request_error(
            f"1 validation error detected: Value '{size}' at 'maxResults' failed to satisfy "
            f"constraint: Member must have value less than or equal to {MAX_PAGE_SIZE}"
        )
    return size


def _encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def _decode_token(params: dict) -> int:
    token = params.get("NextToken")
    if not token:
        return 0
    try:
        offset = int(json.loads(base64.urlsafe_b64decode(token.encode()))["offset"])
    except (ValueError, KeyError, TypeError) as error:
        raise _request_error(f"NextToken '{token}' is not valid") from error
    if offset < 0:
        raise _request_error(f"NextToken '{token}' is not valid")
    return offset


def _page(items: list, params: dict, key: str) -> dict:
    size = _page_size(params)
    offset = _decode_token(params)
    chunk = items[offset : offset + size]
    response: dict[str, Any] = {"NumResults": len(chunk), key: chunk}
    if offset + size < len(items):
        response["NextToken"] = _encode_token(offset + size)
    return response


@dataclass
class SimulatedWorker:
    """A worker's attributes as MTurk's system qualifications see them."""

    worker_id: str
    country: str = "US"
    subdivision: str | None = None
    percent_approved: int = 100
    number_approved: int = 0
    qualifications: dict[str, int] = field(default_factory=dict)


@dataclass
class Assignment:
    assignment_id: str
    hit_id: str
    worker_id: str
    accept_time: float
    deadline: float
    # Accepted | Submitted | Approved | Rejected | Returned | Abandoned
    status: str = "Accepted"
    submit_time: float | None = None
    auto_approval_time: float | None = None
    approval_time: float | None = None
    rejection_time: float | None = None
    answer: str = ""
    requester_feedback: str | None = None

    def occupies_slot(self) -> bool:
        return self.status in {"Accepted", "Submitted", "Approved", "Rejected"}

    def to_api(self) -> dict:
        api: dict[str, Any] = {
            "AssignmentId": self.assignment_id,
            "WorkerId": self.worker_id,
            "HITId": self.hit_id,
            "AssignmentStatus": self.status,
            "AcceptTime": self.accept_time,
            "Deadline": self.deadline,
            "Answer": self.answer,
        }
        for key, value in (
            ("SubmitTime", self.submit_time),
            ("AutoApprovalTime", self.auto_approval_time),
            ("ApprovalTime", self.approval_time),
            ("RejectionTime", self.rejection_time),
            ("RequesterFeedback", self.requester_feedback),
        ):
            if value is not None:
                api[key] = value
        return api


@dataclass
class Hit:
    hit_id: str
    hit_type_id: str
    hit_type: dict
    question: str
    max_assignments: int
    creation_time: float
    expiration: float
    requester_annotation: str | None = None
    review_status_override: str | None = None  # Reviewing | Disposed
    assignment_ids: list[str] = field(default_factory=list)


class MTurkWorld:
    """All state of one fake MTurk account. Public methods are the API and simulator calls."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.clock = SimulatedClock()
            self.hit_types: dict[str, dict] = {}
            self.hit_type_ids_by_spec: dict[str, str] = {}
            self.hits: dict[str, Hit] = {}
            self.assignments: dict[str, Assignment] = {}
            self.workers: dict[str, SimulatedWorker] = {}
            self.blocks: dict[str, str] = {}
            self.qualification_types: dict[str, dict] = {}
            self.hit_tokens: dict[str, str] = {}
            self.used_tokens: set[tuple[str, str]] = set()
            self.bonuses: list[dict] = []
            self.notifications: list[dict] = []
            self.balance = STARTING_BALANCE
            self.faults: dict[str, list[dict]] = {}
            self.call_counts: Counter[str] = Counter()
            self.duplicate_hit_wording = "ours"
            self.throttle_every_n = 0  # throttle every Nth API call (0: never)
            self.api_calls = 0
            self.withheld: dict[str, int] = {}  # operation -> replies still to withhold

    #: How a CreateHIT with a used UniqueRequestToken is answered. AWS documents only "a
    #: HitAlreadyExists error with a message containing the HITId"; recovery must work with
    #: any of these (``set_duplicate_hit_wording``).
    DUPLICATE_HIT_WORDINGS = {
        "ours": 'The idempotency token "{token}" has already been processed. HIT ID: {hit_id}',
        "aws": 'The HIT with ID "{hit_id}" already exists.',
        "no-id": "The request has already been processed.",
    }

    def set_duplicate_hit_wording(self, wording: str) -> None:
        if wording not in self.DUPLICATE_HIT_WORDINGS:
            raise ValueError(f"unknown wording {wording!r}; one of "
                             f"{sorted(self.DUPLICATE_HIT_WORDINGS)}")
        with self._lock:
            self.duplicate_hit_wording = wording

    # -- bookkeeping ----------------------------------------------------------------------------

    def record_call(self, operation: str) -> None:
        with self._lock:
            self.call_counts[operation] += 1
            self.api_calls += 1

    def throttle_every(self, every: int) -> None:
        """Answer every ``every``-th API call (of any operation, counted from now) with
        MTurk's ThrottlingException, as a busy account sees it; 0 stops it."""
        if every < 0:
            raise ValueError("every must be 0 (off) or more")
        with self._lock:
            self.throttle_every_n = every
            self.api_calls = 0

    def withhold_replies(self, operation: str, *, count: int = 1) -> None:
        """Carry out the next ``count`` calls of ``operation`` but never answer them (the
        connection closes): the caller cannot know whether they happened."""
        if count < 1:
            raise ValueError("count must be at least 1")
        with self._lock:
            self.withheld[operation] = self.withheld.get(operation, 0) + count

    def take_withheld(self, operation: str) -> bool:
        with self._lock:
            if not self.withheld.get(operation):
                return False
            self.withheld[operation] -= 1
            return True

    def add_fault(
        self,
        operation: str,
        *,
        count: int = 1,
        error: str = "throttling",
        message: str | None = None,
        http_status: int | None = None,
    ) -> None:
        """Make the next ``count`` calls of ``operation`` fail.

        ``error`` is ``"throttling"`` (ThrottlingException, "Rate exceeded", HTTP 400), or any
        error type such as ``ServiceFault`` (HTTP 500 by default) or ``RequestError`` (HTTP 400).
        """
        if count < 1:
            raise ValueError("count must be at least 1")
        if error == "throttling":
            fault = {"type": "ThrottlingException", "message": message or "Rate exceeded",
                     "status": http_status or 400}
        else:
            default_status = 500 if error == "ServiceFault" else 400
            fault = {"type": error, "message": message or f"Injected {error}",
                     "status": http_status or default_status}
        with self._lock:
            self.faults.setdefault(operation, []).extend([fault] * count)

    def take_fault(self, operation: str) -> MTurkApiError | None:
        with self._lock:
            queue = self.faults.get(operation)
            if not queue:
                if self.throttle_every_n and self.api_calls % self.throttle_every_n == 0:
                    return MTurkApiError("Rate exceeded", error_type="ThrottlingException",
                                         http_status=400)
                return None
            fault = queue.pop(0)
        return MTurkApiError(fault["message"], error_type=fault["type"],
                             http_status=fault["status"])

    def stats(self) -> dict:
        with self._lock:
            return {"calls": dict(self.call_counts), "total": sum(self.call_counts.values())}

    # -- lifecycle ------------------------------------------------------------------------------

    def _tick(self) -> None:
        """Apply everything the passage of time does: abandonment and auto-approval."""
        now = self.clock.now()
        for assignment in self.assignments.values():
            if assignment.status == "Accepted" and now >= assignment.deadline:
                assignment.status = "Abandoned"
            elif (
                assignment.status == "Submitted"
                and assignment.auto_approval_time is not None
                and now >= assignment.auto_approval_time
            ):
                self._approve(assignment, assignment.auto_approval_time)

    def _approve(self, assignment: Assignment, when: float) -> None:
        assignment.status = "Approved"
        assignment.approval_time = when
        assignment.rejection_time = None
        self.balance -= Decimal(self.hits[assignment.hit_id].hit_type["Reward"])

    def _counts(self, hit: Hit) -> tuple[int, int, int]:
        """(pending, completed, available) assignment counts of a HIT, right now."""
        pending = completed = 0
        for assignment_id in hit.assignment_ids:
            status = self.assignments[assignment_id].status
            if status == "Accepted":
                pending += 1
            elif status in {"Submitted", "Approved", "Rejected"}:
                completed += 1
        expired = self.clock.now() >= hit.expiration
        available = 0 if expired else max(0, hit.max_assignments - pending - completed)
        return pending, completed, available

    def _status(self, hit: Hit) -> str:
        if hit.review_status_override:
            return hit.review_status_override
        pending, completed, available = self._counts(hit)
        if available > 0:
            return "Assignable"
        if pending > 0:
            return "Unassignable"
        expired = self.clock.now() >= hit.expiration
        if expired or completed >= hit.max_assignments:
            return "Reviewable"
        return "Unassignable"

    def _hit_api(self, hit: Hit) -> dict:
        pending, completed, available = self._counts(hit)
        hit_type = hit.hit_type
        api: dict[str, Any] = {
            "HITId": hit.hit_id,
            "HITTypeId": hit.hit_type_id,
            "HITGroupId": hit.hit_type_id,
            "CreationTime": hit.creation_time,
            "Title": hit_type["Title"],
            "Description": hit_type["Description"],
            "Question": hit.question,
            "HITStatus": self._status(hit),
            "MaxAssignments": hit.max_assignments,
            "Reward": hit_type["Reward"],
            "AutoApprovalDelayInSeconds": hit_type["AutoApprovalDelayInSeconds"],
            "Expiration": hit.expiration,
            "AssignmentDurationInSeconds": hit_type["AssignmentDurationInSeconds"],
            "QualificationRequirements": hit_type.get("QualificationRequirements", []),
            "HITReviewStatus": "NotReviewed",
            "NumberOfAssignmentsPending": pending,
            "NumberOfAssignmentsAvailable": available,
            "NumberOfAssignmentsCompleted": completed,
        }
        if hit_type.get("Keywords"):
            api["Keywords"] = hit_type["Keywords"]
        if hit.requester_annotation is not None:
            api["RequesterAnnotation"] = hit.requester_annotation
        return api

    def _hit(self, hit_id: Any) -> Hit:
        hit = self.hits.get(hit_id) if isinstance(hit_id, str) else None
        if hit is None:
            raise _request_error(f"Hit {hit_id} does not exist.")
        return hit

    def _assignment(self, assignment_id: Any) -> Assignment:
        assignment = (
            self.assignments.get(assignment_id) if isinstance(assignment_id, str) else None
        )
        if assignment is None or assignment.status in {"Returned", "Abandoned"}:
            raise _request_error(f"Assignment {assignment_id} does not exist.")
        return assignment

    def _check_token(self, kind: str, params: dict) -> None:
        token = params.get("UniqueRequestToken")
        if token is None:
            return
        if (kind, token) in self.used_tokens:
            raise _request_error(f'The idempotency token "{token}" has already been processed.')
        self.used_tokens.add((kind, token))

    # -- the API --------------------------------------------------------------------------------

    def call(self, operation: str, params: dict) -> dict:
        """Run one API operation; raises ``MTurkApiError`` for unknown ones and failures."""
        handler = getattr(self, f"op_{operation}", None)
        if handler is None:
            raise MTurkApiError(
                f"Operation {operation} is not supported by this MTurk stand-in",
                error_type="UnknownOperationException",
            )
        with self._lock:
            self._tick()
            return handler(params)

    def op_CreateHITType(self, params: dict) -> dict:
        _required(params, "AssignmentDurationInSeconds", "Reward", "Title", "Description")
        _currency(params, "Reward")
        requirements = params.get("QualificationRequirements", [])
        self._validate_requirements(requirements)
        spec = {
            "Title": params["Title"],
            "Description": params["Description"],
            "Reward": params["Reward"],
            "AssignmentDurationInSeconds": int(params["AssignmentDurationInSeconds"]),
            "AutoApprovalDelayInSeconds": int(
                params.get("AutoApprovalDelayInSeconds", DEFAULT_AUTO_APPROVAL_DELAY)
            ),
            "Keywords": params.get("Keywords", ""),
            "QualificationRequirements": requirements,
        }
        # MTurk returns the same HIT type id for identical properties.
        key = json.dumps(spec, sort_keys=True)
        hit_type_id = self.hit_type_ids_by_spec.get(key)
        if hit_type_id is None:
            hit_type_id = _new_id()
            self.hit_type_ids_by_spec[key] = hit_type_id
            self.hit_types[hit_type_id] = spec
        return {"HITTypeId": hit_type_id}

    def _validate_requirements(self, requirements: list) -> None:
        if len(requirements) > 10:
            raise _request_error("A HIT can have at most 10 QualificationRequirements.")
        for requirement in requirements:
            type_id = requirement.get("QualificationTypeId")
            system = {
                LOCALE_QUALIFICATION_ID,
                PERCENT_ASSIGNMENTS_APPROVED_QUALIFICATION_ID,
                NUMBER_HITS_APPROVED_QUALIFICATION_ID,
            }
            if type_id not in system and type_id not in self.qualification_types:
                raise _request_error(f"QualificationType {type_id} does not exist.")

    def op_CreateHITWithHITType(self, params: dict) -> dict:
        _required(params, "HITTypeId", "LifetimeInSeconds")
        hit_type_id = params["HITTypeId"]
        if hit_type_id not in self.hit_types:
            raise _request_error(f"HITType {hit_type_id} does not exist.")
        return self._create_hit(hit_type_id, params)

    def op_CreateHIT(self, params: dict) -> dict:
        _required(
            params, "LifetimeInSeconds", "AssignmentDurationInSeconds", "Reward", "Title",
            "Description",
        )
        hit_type_id = self.op_CreateHITType(params)["HITTypeId"]
        return self._create_hit(hit_type_id, params)

    def _create_hit(self, hit_type_id: str, params: dict) -> dict:
        if not params.get("Question"):
            raise _request_error("The Question parameter is required (HITLayoutId is not "
                                 "supported by this stand-in).")
        try:
            parse_xml(params["Question"])
        except ElementTree.ParseError as error:
            raise _request_error(f"The Question is not well-formed XML: {error}") from error
        max_assignments = int(params.get("MaxAssignments", 1))
        if max_assignments < 1 or max_assignments > 1_000_000_000:
            raise _request_error(f"MaxAssignments {max_assignments} is out of range.")
        token = params.get("UniqueRequestToken")
        if token is not None and token in self.hit_tokens:
            existing = self.hit_tokens[token]
            wording = self.DUPLICATE_HIT_WORDINGS[self.duplicate_hit_wording]
            raise _request_error(wording.format(token=token, hit_id=existing),
                                 turk_code="AWS.MechanicalTurk.HitAlreadyExists")
        now = self.clock.now()
        hit = Hit(
            hit_id=_new_id(),
            hit_type_id=hit_type_id,
            hit_type=self.hit_types[hit_type_id],
            question=params["Question"],
            max_assignments=max_assignments,
            creation_time=now,
            expiration=now + int(params["LifetimeInSeconds"]),
            requester_annotation=params.get("RequesterAnnotation"),
        )
        self.hits[hit.hit_id] = hit
        if token is not None:
            self.hit_tokens[token] = hit.hit_id
        return {"HIT": self._hit_api(hit)}

    def op_GetHIT(self, params: dict) -> dict:
        _required(params, "HITId")
        return {"HIT": self._hit_api(self._hit(params["HITId"]))}

    def op_ListHITs(self, params: dict) -> dict:
        hits = [self._hit_api(hit) for hit in self.hits.values()
                if hit.review_status_override != "Disposed"]
        return _page(hits, params, "HITs")

    def op_ListReviewableHITs(self, params: dict) -> dict:
        wanted = params.get("Status", "Reviewable")
        if wanted not in {"Reviewable", "Reviewing"}:
            raise _request_error(f"Status {wanted} is not Reviewable or Reviewing.")
        hit_type_id = params.get("HITTypeId")
        hits = [
            self._hit_api(hit)
            for hit in self.hits.values()
            if self._status(hit) == wanted and (not hit_type_id or hit.hit_type_id == hit_type_id)
        ]
        return _page(hits, params, "HITs")

    def op_UpdateHITReviewStatus(self, params: dict) -> dict:
        _required(params, "HITId")
        hit = self._hit(params["HITId"])
        status = self._status(hit)
        if params.get("Revert"):
            if status != "Reviewing":
                raise _request_error(f"HIT {hit.hit_id} is not in the Reviewing state.")
            hit.review_status_override = None
        else:
            if status != "Reviewable":
                raise _request_error(f"HIT {hit.hit_id} is not in the Reviewable state.")
            hit.review_status_override = "Reviewing"
        return {}

    def op_ListAssignmentsForHIT(self, params: dict) -> dict:
        _required(params, "HITId")
        hit = self._hit(params["HITId"])
        statuses = set(params.get("AssignmentStatuses") or ["Submitted", "Approved", "Rejected"])
        unknown = statuses - {"Submitted", "Approved", "Rejected"}
        if unknown:
            raise _request_error(f"AssignmentStatuses {sorted(unknown)} are not valid.")
        assignments = [
            self.assignments[assignment_id].to_api()
            for assignment_id in hit.assignment_ids
            if self.assignments[assignment_id].status in statuses
        ]
        return _page(assignments, params, "Assignments")

    def op_GetAssignment(self, params: dict) -> dict:
        _required(params, "AssignmentId")
        assignment = self._assignment(params["AssignmentId"])
        if assignment.status not in {"Submitted", "Approved", "Rejected"}:
            # As MTurk: GetAssignment only retrieves submitted, approved or rejected work, so
            # an assignment still being worked on is unknown to it.
            raise _request_error(
                "This operation can be called with a status of: Submitted, Approved, Rejected")
        return {
            "Assignment": assignment.to_api(),
            "HIT": self._hit_api(self.hits[assignment.hit_id]),
        }

    def op_ApproveAssignment(self, params: dict) -> dict:
        _required(params, "AssignmentId")
        assignment = self._assignment(params["AssignmentId"])
        if assignment.status == "Approved":
            raise _request_error(
                f"This operation can be called with a status of: Submitted "
                f"(assignment {assignment.assignment_id} is Approved)"
            )
        if assignment.status == "Rejected" and not params.get("OverrideRejection"):
            raise _request_error(
                f"Assignment {assignment.assignment_id} was rejected; pass OverrideRejection "
                "to approve it."
            )
        if assignment.status == "Accepted":
            raise _request_error(
                f"This operation can be called with a status of: Submitted "
                f"(assignment {assignment.assignment_id} is not submitted yet)"
            )
        if params.get("RequesterFeedback") is not None:
            assignment.requester_feedback = params["RequesterFeedback"]
        self._approve(assignment, self.clock.now())
        return {}

    def op_RejectAssignment(self, params: dict) -> dict:
        _required(params, "AssignmentId", "RequesterFeedback")
        assignment = self._assignment(params["AssignmentId"])
        if assignment.status != "Submitted":
            raise _request_error(
                f"This operation can be called with a status of: Submitted "
                f"(assignment {assignment.assignment_id} is {assignment.status})"
            )
        assignment.status = "Rejected"
        assignment.rejection_time = self.clock.now()
        assignment.requester_feedback = params["RequesterFeedback"]
        return {}

    def op_SendBonus(self, params: dict) -> dict:
        _required(params, "WorkerId", "BonusAmount", "AssignmentId", "Reason")
        amount = _currency(params, "BonusAmount")
        assignment = self._assignment(params["AssignmentId"])
        if assignment.worker_id != params["WorkerId"]:
            raise _request_error(
                f"Assignment {assignment.assignment_id} does not belong to worker "
                f"{params['WorkerId']}."
            )
        if assignment.status not in {"Approved", "Rejected", "Submitted"}:
            raise _request_error(f"Assignment {assignment.assignment_id} is not submitted.")
        if amount > self.balance:
            raise _request_error("You do not have enough funds to pay this bonus.",
                                 turk_code="AWS.MechanicalTurk.InsufficientFunds")
        self._check_token("SendBonus", params)
        self.balance -= amount
        self.bonuses.append({
            "WorkerId": params["WorkerId"],
            "AssignmentId": assignment.assignment_id,
            "BonusAmount": f"{amount:.2f}",
            "Reason": params["Reason"],
            "GrantTime": self.clock.now(),
        })
        return {}

    def op_ListBonusPayments(self, params: dict) -> dict:
        """As MTurk: the bonuses paid for one HIT or one assignment (exactly one of them)."""
        if bool(params.get("HITId")) == bool(params.get("AssignmentId")):
            raise _request_error("Specify either HITId or AssignmentId.")
        if params.get("AssignmentId"):
            self._assignment(params["AssignmentId"])
            wanted = {params["AssignmentId"]}
        else:
            wanted = set(self._hit(params["HITId"]).assignment_ids)
        return _page([dict(bonus) for bonus in self.bonuses if bonus["AssignmentId"] in wanted],
                     params, "BonusPayments")

    def op_CreateWorkerBlock(self, params: dict) -> dict:
        _required(params, "WorkerId", "Reason")
        self.blocks[params["WorkerId"]] = params["Reason"]
        return {}

    def op_DeleteWorkerBlock(self, params: dict) -> dict:
        _required(params, "WorkerId")
        self.blocks.pop(params["WorkerId"], None)
        return {}

    def op_ListWorkerBlocks(self, params: dict) -> dict:
        blocks = [{"WorkerId": worker, "Reason": reason} for worker, reason in self.blocks.items()]
        return _page(blocks, params, "WorkerBlocks")

    def op_NotifyWorkers(self, params: dict) -> dict:
        _required(params, "Subject", "MessageText", "WorkerIds")
        worker_ids = params["WorkerIds"]
        if len(worker_ids) > 100:
            raise _request_error("NotifyWorkers accepts at most 100 WorkerIds per call.")
        failures = []
        for worker_id in worker_ids:
            if worker_id not in self.workers:
                failures.append({
                    "NotifyWorkersFailureCode": "HardFailure",
                    "NotifyWorkersFailureMessage": f"Worker {worker_id} has not worked for you.",
                    "WorkerId": worker_id,
                })
            else:
                self.notifications.append({"WorkerId": worker_id, "Subject": params["Subject"],
                                           "MessageText": params["MessageText"]})
        return {"NotifyWorkersFailureStatuses": failures}

    def op_UpdateExpirationForHIT(self, params: dict) -> dict:
        _required(params, "HITId")
        if params.get("ExpireAt") is None:
            raise _request_error("ExpireAt is required.")
        hit = self._hit(params["HITId"])
        # A time in the past (or 0) expires the HIT now, as MTurk does.
        hit.expiration = max(float(params["ExpireAt"]), 0.0)
        if hit.expiration < self.clock.now():
            hit.expiration = self.clock.now()
        return {}

    def op_CreateAdditionalAssignmentsForHIT(self, params: dict) -> dict:
        _required(params, "HITId", "NumberOfAdditionalAssignments")
        hit = self._hit(params["HITId"])
        extra = int(params["NumberOfAdditionalAssignments"])
        if extra < 1:
            raise _request_error("NumberOfAdditionalAssignments must be at least 1.")
        if self.clock.now() >= hit.expiration:
            raise _request_error(f"HIT {hit.hit_id} has expired; extend it first.")
        self._check_token("CreateAdditionalAssignmentsForHIT", params)
        hit.max_assignments += extra
        return {}

    def op_DeleteHIT(self, params: dict) -> dict:
        _required(params, "HITId")
        hit = self._hit(params["HITId"])
        status = self._status(hit)
        undecided = any(
            self.assignments[assignment_id].status in {"Accepted", "Submitted"}
            for assignment_id in hit.assignment_ids
        )
        if status not in {"Reviewable", "Reviewing"} or undecided:
            raise _request_error(
                f"This HIT is currently in the state '{status}'. This operation can be called "
                "with a status of: Reviewing, Reviewable, and every assignment approved or "
                "rejected."
            )
        hit.review_status_override = "Disposed"
        return {}

    def op_CreateQualificationType(self, params: dict) -> dict:
        _required(params, "Name", "Description", "QualificationTypeStatus")
        if any(qual["Name"] == params["Name"] for qual in self.qualification_types.values()):
            raise _request_error(
                f"You have already created a QualificationType with this name: {params['Name']}"
            )
        for key in ("Test", "AnswerKey"):
            if params.get(key):
                try:
                    parse_xml(params[key])
                except ElementTree.ParseError as error:
                    raise _request_error(f"{key} is not well-formed XML: {error}") from error
        if params.get("Test") and not params.get("TestDurationInSeconds"):
            raise _request_error("TestDurationInSeconds is required when a Test is given.")
        qualification_type_id = _new_id()
        qualification = {
            "QualificationTypeId": qualification_type_id,
            "CreationTime": self.clock.now(),
            "IsRequestable": True,
            **{key: params[key] for key in (
                "Name", "Description", "Keywords", "QualificationTypeStatus", "Test",
                "TestDurationInSeconds", "AnswerKey", "RetryDelayInSeconds", "AutoGranted",
                "AutoGrantedValue") if key in params},
        }
        self.qualification_types[qualification_type_id] = qualification
        return {"QualificationType": qualification}

    def op_AssociateQualificationWithWorker(self, params: dict) -> dict:
        _required(params, "QualificationTypeId", "WorkerId")
        type_id = params["QualificationTypeId"]
        if type_id not in self.qualification_types:
            raise _request_error(f"QualificationType {type_id} does not exist.")
        worker = self._worker(params["WorkerId"], create=True)
        worker.qualifications[type_id] = int(params.get("IntegerValue", 1))
        return {}

    def op_GetAccountBalance(self, params: dict) -> dict:
        return {"AvailableBalance": f"{self.balance:.2f}", "OnHoldBalance": "0.00"}

    # -- simulated workers ----------------------------------------------------------------------

    def _worker(self, worker_id: str, *, create: bool = False) -> SimulatedWorker:
        worker = self.workers.get(worker_id)
        if worker is None:
            if not create:
                raise SimulationError("UnknownWorker", f"worker {worker_id} is not registered")
            if not WORKER_ID_PATTERN.match(worker_id):
                raise _request_error(f"WorkerId {worker_id} is not valid.")
            worker = SimulatedWorker(worker_id)
            self.workers[worker_id] = worker
        return worker

    def register_worker(self, attributes: dict) -> str:
        """Create or update a simulated worker; returns its id (made up when not given)."""
        with self._lock:
            worker_id = attributes.get("worker_id") or ("A" + uuid.uuid4().hex.upper()[:13])
            if not WORKER_ID_PATTERN.match(worker_id):
                raise SimulationError("InvalidWorkerId", f"{worker_id!r} is not ^A[A-Z0-9]+$")
            worker = self.workers.get(worker_id) or SimulatedWorker(worker_id)
            worker.country = attributes.get("country", worker.country)
            worker.subdivision = attributes.get("subdivision", worker.subdivision)
            worker.percent_approved = int(
                attributes.get("percent_approved", worker.percent_approved)
            )
            worker.number_approved = int(attributes.get("number_approved", worker.number_approved))
            worker.qualifications.update(
                {key: int(value) for key, value in attributes.get("qualifications", {}).items()}
            )
            self.workers[worker_id] = worker
            return worker_id

    @staticmethod
    def _compare(comparator: str, value: int | None, wanted: list[int]) -> bool:
        if comparator == "Exists":
            return value is not None
        if comparator == "DoesNotExist":
            return value is None
        if value is None:
            return False
        if comparator == "In":
            return value in wanted
        if comparator == "NotIn":
            return value not in wanted
        target = wanted[0] if wanted else 0
        return {
            "LessThan": value < target,
            "LessThanOrEqualTo": value <= target,
            "GreaterThan": value > target,
            "GreaterThanOrEqualTo": value >= target,
            "EqualTo": value == target,
            "NotEqualTo": value != target,
        }[comparator]

    @staticmethod
    def _locale_matches(worker: SimulatedWorker, locale: dict) -> bool:
        if locale.get("Country") != worker.country:
            return False
        return not locale.get("Subdivision") or locale["Subdivision"] == worker.subdivision

    def _unmet_requirement(self, worker: SimulatedWorker, hit: Hit) -> str | None:
        for requirement in hit.hit_type.get("QualificationRequirements", []):
            type_id = requirement["QualificationTypeId"]
            comparator = requirement["Comparator"]
            if type_id == LOCALE_QUALIFICATION_ID:
                locales = requirement.get("LocaleValues", [])
                matches = any(self._locale_matches(worker, locale) for locale in locales)
                met = matches if comparator in {"In", "EqualTo"} else not matches
            else:
                if type_id == PERCENT_ASSIGNMENTS_APPROVED_QUALIFICATION_ID:
                    value: int | None = worker.percent_approved
                elif type_id == NUMBER_HITS_APPROVED_QUALIFICATION_ID:
                    value = worker.number_approved
                else:
                    value = worker.qualifications.get(type_id)
                met = self._compare(comparator, value, requirement.get("IntegerValues", []))
            if not met:
                return type_id
        return None

    def accept(self, worker_id: str, hit_id: str, turk_submit_to: str) -> dict:
        """A worker accepts a HIT: returns the assignment id and the task page URL to open."""
        with self._lock:
            self._tick()
            worker = self._worker(worker_id)
            hit = self.hits.get(hit_id)
            if hit is None:
                raise SimulationError("UnknownHIT", f"HIT {hit_id} does not exist")
            if worker_id in self.blocks:
                raise SimulationError("WorkerBlocked", f"worker {worker_id} is blocked")
            unmet = self._unmet_requirement(worker, hit)
            if unmet is not None:
                raise SimulationError(
                    "NotQualified", f"worker {worker_id} does not meet qualification {unmet}"
                )
            if any(self.assignments[assignment_id].worker_id == worker_id
                   and self.assignments[assignment_id].occupies_slot()
                   for assignment_id in hit.assignment_ids):
                raise SimulationError(
                    "AlreadyWorked", f"worker {worker_id} already has an assignment on {hit_id}"
                )
            if self._status(hit) != "Assignable":
                raise SimulationError(
                    "HITNotAssignable", f"HIT {hit_id} is {self._status(hit)}, not Assignable"
                )
            now = self.clock.now()
            assignment = Assignment(
                assignment_id=_new_id(),
                hit_id=hit_id,
                worker_id=worker_id,
                accept_time=now,
                deadline=now + hit.hit_type["AssignmentDurationInSeconds"],
            )
            self.assignments[assignment.assignment_id] = assignment
            hit.assignment_ids.append(assignment.assignment_id)
            return {
                "assignment_id": assignment.assignment_id,
                "task_url": self._task_url(hit, assignment, turk_submit_to),
            }

    @staticmethod
    def _task_url(hit: Hit, assignment: Assignment, turk_submit_to: str) -> str | None:
        """The ExternalQuestion URL with MTurk's four query parameters appended."""
        try:
            root = parse_xml(hit.question)
        except ElementTree.ParseError:
            return None
        if root.tag.rsplit("}", 1)[-1] != "ExternalQuestion":
            return None
        url_element = next(
            (child for child in root if child.tag.rsplit("}", 1)[-1] == "ExternalURL"), None
        )
        if url_element is None or not url_element.text:
            return None
        base_url = url_element.text.strip()
        query = urlencode({
            "assignmentId": assignment.assignment_id,
            "hitId": hit.hit_id,
            "workerId": assignment.worker_id,
            "turkSubmitTo": turk_submit_to,
        })
        return f"{base_url}{'&' if '?' in base_url else '?'}{query}"

    def release(self, assignment_id: str, *, how: str) -> None:
        """Return (``how="Returned"``) or abandon (``"Abandoned"``) an accepted assignment."""
        with self._lock:
            self._tick()
            assignment = self.assignments.get(assignment_id)
            if assignment is None:
                raise SimulationError("UnknownAssignment", f"{assignment_id} does not exist")
            if assignment.status != "Accepted":
                raise SimulationError(
                    "NotAccepted", f"{assignment_id} is {assignment.status}, not Accepted"
                )
            assignment.status = how

    def submit(self, assignment_id: str, fields: list[tuple[str, str]]) -> None:
        """What MTurk does on ``/mturk/externalSubmit``: store the fields as the Answer."""
        with self._lock:
            self._tick()
            assignment = self.assignments.get(assignment_id)
            if assignment is None:
                raise SimulationError("UnknownAssignment", f"{assignment_id} does not exist")
            if assignment.status != "Accepted":
                raise SimulationError(
                    "NotAccepted", f"{assignment_id} is {assignment.status}; cannot submit"
                )
            now = self.clock.now()
            hit = self.hits[assignment.hit_id]
            assignment.status = "Submitted"
            assignment.submit_time = now
            assignment.auto_approval_time = now + hit.hit_type["AutoApprovalDelayInSeconds"]
            assignment.answer = question_form_answers_xml(fields)

    def advance_clock(self, seconds: float) -> float:
        with self._lock:
            now = self.clock.advance(seconds)
            self._tick()
            return now

    def ledger(self) -> dict:
        """Money, bonuses, notifications and blocks, for tests and benches."""
        with self._lock:
            return {
                "balance": f"{self.balance:.2f}",
                "bonuses": list(self.bonuses),
                "notifications": list(self.notifications),
                "blocks": dict(self.blocks),
            }


def question_form_answers_xml(fields: list[tuple[str, str]]) -> str:
    """Form fields as MTurk stores them: one ``<Answer>`` with ``<FreeText>`` per field.

    ``assignmentId`` is MTurk's routing field and is not part of the answer, as on MTurk.
    """
    parts = [f'<?xml version="1.0" encoding="UTF-8" standalone="no"?>'
             f'<QuestionFormAnswers xmlns="{ANSWERS_NAMESPACE}">']
    for name, value in fields:
        if name == "assignmentId":
            continue
        parts.append(
            f"<Answer><QuestionIdentifier>{escape(name)}</QuestionIdentifier>"
            f"<FreeText>{escape(value)}</FreeText></Answer>"
        )
    parts.append("</QuestionFormAnswers>")
    return "".join(parts)
