"""The Prolific stand-in's world: studies, submissions, participant groups and money, in memory.

Every API operation is a method ``op_<name>`` taking the path ids, the query and the JSON body;
it answers a JSON-able value or raises ``ProlificApiError`` (an HTTP status plus Prolific's
error body). Simulated participants act through ``start``, ``complete``, ``return_session`` and
``time_out``. One lock serialises everything (the HTTP server is threaded).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

PLACEHOLDERS = ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}")
STUDY_ACTIONS = {"PUBLISH", "PAUSE", "START", "STOP"}
SUBMISSION_STATUSES = ("RESERVED", "ACTIVE", "AWAITING REVIEW", "APPROVED", "REJECTED",
                       "RETURNED", "TIMED-OUT", "SCREENED OUT", "PARTIALLY APPROVED")
REJECTION_CATEGORIES = {"TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS",
                        "INCOMP_LONGITUDINAL", "FAILED_CHECK", "LOW_EFFORT", "MALINGERING",
                        "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER"}
CODE_TYPES = {"COMPLETED", "FAILED_ATTENTION_CHECK", "FOLLOW_UP_STUDY", "GIVE_BONUS",
              "INCOMPATIBLE_DEVICE", "NO_CONSENT", "OTHER", "FIXED_SCREENOUT"}
DEVICES = {"desktop", "tablet", "mobile"}
#: Submissions that hold a place (returned and timed-out ones give it back).
HOLDING = {"RESERVED", "ACTIVE", "AWAITING REVIEW", "APPROVED", "REJECTED", "PARTIALLY APPROVED"}
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 200
SERVICE_FEE_RATE = Decimal("0.333")  # what the stand-in charges on bonuses, like Prolific
STARTING_BALANCE_CENTS = 1_000_000


class ProlificApiError(Exception):
    """An API refusal: ``status`` and Prolific's error body."""

    def __init__(self, status: int, title: str, detail: Any = None, *,
                 retry_after: float | None = None) -> None:
        super().__init__(title)
        self.status = status
        self.title = title
        self.detail = detail if detail is not None else title
        self.retry_after = retry_after

    def body(self) -> dict:
        return {"error": {"status": self.status, "error_code": 140000 + self.status,
                          "title": self.title, "detail": self.detail}}


class SimulationError(Exception):
    """A simulated participant's action that the world refuses (answered with 409)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _bad(detail: Any, title: str = "Bad request") -> ProlificApiError:
    return ProlificApiError(400, title, detail)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class Study:
    id: str
    body: dict
    status: str = "UNPUBLISHED"
    created: str = field(default_factory=_now_iso)

    def to_api(self, places_taken: int) -> dict:
        return {**self.body, "id": self.id, "status": self.status, "places_taken": places_taken,
                "date_created": self.created}


@dataclass
class Submission:
    id: str
    study_id: str
    participant_id: str
    status: str = "ACTIVE"
    started_at: str = field(default_factory=_now_iso)
    completed_at: str | None = None
    study_code: str | None = None
    rejection: dict | None = None
    bonus_payments: list[int] = field(default_factory=list)

    def to_api(self) -> dict:
        return {"id": self.id, "study_id": self.study_id, "participant_id": self.participant_id,
                "participant": self.participant_id, "status": self.status,
                "started_at": self.started_at, "completed_at": self.completed_at,
                "study_code": self.study_code, "entered_code": self.study_code,
                "bonus_payments": list(self.bonus_payments)}


@dataclass
class Group:
    id: str
    name: str
    workspace_id: str
    description: str = ""
    participants: dict[str, str] = field(default_factory=dict)  # id -> when added
    is_deleted: bool = False

    def to_api(self) -> dict:
        return {"id": self.id, "name": self.name, "workspace_id": self.workspace_id,
                "description": self.description, "participant_count": len(self.participants),
                "is_deleted": self.is_deleted, "feeder_studies": []}


@dataclass
class BonusSetUp:
    id: str
    study_id: str
    lines: list[tuple[str, int]]  # (submission id, cents)
    amount: int
    fees: int
    payments: int = 0  # how many times it was paid (Prolific does not stop a second pay)


class ProlificWorld:
    """Everything the stand-in knows."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.reset()

    def reset(self) -> None:
        with getattr(self, "lock", threading.RLock()):
            self._ids = itertools.count(1)
            self.studies: dict[str, Study] = {}
            self.submissions: dict[str, Submission] = {}
            self.participants: set[str] = set()
            self.groups: dict[str, Group] = {}
            self.bonus_setups: dict[str, BonusSetUp] = {}
            self.payments: list[dict] = []
            self.completions: list[str] = []  # completion codes browsers arrived with
            self.balance_cents = STARTING_BALANCE_CENTS
            self.calls: Counter[str] = Counter()
            self.faults: dict[str, list[tuple[int, float | None]]] = {}
            self.throttle_every_n = 0  # answer every Nth API call 429 (0: never)
            self.throttle_retry_after: float | None = 1.0
            self.api_calls = 0
            self.withheld: dict[str, int] = {}  # operation -> replies still to withhold
            self.tokens: set[str] | None = None  # None: any non-empty token is accepted

    def new_id(self) -> str:
        # Prolific ids are 24 lowercase hex digits (MongoDB ObjectIds).
        return f"{int(time.time()):08x}{next(self._ids):016x}"

    # -- bookkeeping for the HTTP front ---------------------------------------------------------

    def record_call(self, operation: str) -> None:
        with self.lock:
            self.calls[operation] += 1
            self.api_calls += 1

    def throttle_every(self, every: int, *, retry_after: float | None = 1.0) -> None:
        """Answer every ``every``-th API call (counted from now) 429 Too Many Requests with
        ``Retry-After: retry_after``; 0 stops it."""
        if every < 0:
            raise ValueError("every must be 0 (off) or more")
        with self.lock:
            self.throttle_every_n, self.throttle_retry_after = every, retry_after
            self.api_calls = 0

    def withhold_replies(self, operation: str, *, count: int = 1) -> None:
        """Carry out the next ``count`` calls of ``operation`` but never answer them (the
        connection closes): the caller cannot know whether they happened."""
        if count < 1:
            raise ValueError("count must be at least 1")
        with self.lock:
            self.withheld[operation] = self.withheld.get(operation, 0) + count

    def take_withheld(self, operation: str) -> bool:
        with self.lock:
            if not self.withheld.get(operation):
                return False
            self.withheld[operation] -= 1
            return True

    def add_fault(self, operation: str, *, count: int = 1, status: int = 429,
                  retry_after: float | None = 1.0) -> None:
        with self.lock:
            self.faults.setdefault(operation, []).extend([(status, retry_after)] * count)

    def take_fault(self, operation: str) -> ProlificApiError | None:
        with self.lock:
            pending = self.faults.get(operation) or self.faults.get("*")
            if not pending:
                if self.throttle_every_n and self.api_calls % self.throttle_every_n == 0:
                    return ProlificApiError(429, "Too many requests",
                                            retry_after=self.throttle_retry_after)
                return None
            status, retry_after = pending.pop(0)
        title = "Too many requests" if status == 429 else "Injected fault"
        return ProlificApiError(status, title, retry_after=retry_after if status == 429 else None)

    def stats(self) -> dict:
        with self.lock:
            return {"calls": dict(self.calls), "total": sum(self.calls.values())}

    def ledger(self) -> dict:
        with self.lock:
            return {"balance_cents": self.balance_cents, "payments": list(self.payments),
                    "bonus_setups": {setup.id: {"study_id": setup.study_id,
                                                "lines": setup.lines, "payments": setup.payments}
                                     for setup in self.bonus_setups.values()},
                    "groups": {group.id: sorted(group.participants)
                               for group in self.groups.values()},
                    "completions": list(self.completions)}

    # -- helpers --------------------------------------------------------------------------------

    def _study(self, study_id: str) -> Study:
        study = self.studies.get(study_id)
        if study is None:
            raise ProlificApiError(404, "Not found", f"no study {study_id}")
        return study

    def _submission(self, submission_id: str) -> Submission:
        submission = self.submissions.get(submission_id)
        if submission is None:
            raise ProlificApiError(404, "Not found", f"no submission {submission_id}")
        return submission

    def _places_taken(self, study: Study) -> int:
        return sum(1 for s in self.submissions.values()
                   if s.study_id == study.id and s.status in HOLDING)

    def _settle(self, study: Study) -> None:
        """Prolific's own study transitions: full and nobody active -> AWAITING REVIEW; all
        reviewed -> COMPLETED; a place given back reopens a study waiting for review."""
        mine = [s for s in self.submissions.values() if s.study_id == study.id]
        taken = sum(1 for s in mine if s.status in HOLDING)
        active = any(s.status in ("ACTIVE", "RESERVED") for s in mine)
        waiting = any(s.status == "AWAITING REVIEW" for s in mine)
        full = taken >= int(study.body["total_available_places"])
        if study.status == "ACTIVE" and full and not active:
            study.status = "AWAITING REVIEW"
        elif study.status == "AWAITING REVIEW" and not full and not study.body.get("_stopped"):
            study.status = "ACTIVE"
        if study.status == "AWAITING REVIEW" and not waiting and not active and (
                full or study.body.get("_stopped")):
            study.status = "COMPLETED"

    def _study_api(self, study: Study) -> dict:
        data = study.to_api(self._places_taken(study))
        data.pop("_stopped", None)
        return data

    @staticmethod
    def page(items: list, query: dict, base_url: str) -> dict:
        """Prolific's paged list: ``results``, ``_links`` (``next`` while more) and ``meta``."""
        try:
            size = int(query.get("page_size", DEFAULT_PAGE_SIZE))
            number = int(query.get("page", 1))
        except ValueError as error:
            raise _bad(f"bad paging parameter: {error}") from None
        if not 1 <= size <= MAX_PAGE_SIZE or number < 1:
            raise _bad(f"page_size must be 1-{MAX_PAGE_SIZE} and page >= 1")
        start = (number - 1) * size
        links: dict[str, Any] = {"self": {"href": f"{base_url}?page={number}&page_size={size}"}}
        if start + size < len(items):
            links["next"] = {"href": f"{base_url}?page={number + 1}&page_size={size}"}
        if number > 1:
            links["previous"] = {"href": f"{base_url}?page={number - 1}&page_size={size}"}
        return {"results": items[start:start + size], "_links": links,
                "meta": {"count": len(items)}}

    # -- studies --------------------------------------------------------------------------------

    def _validate_study(self, body: dict) -> None:
        errors: dict[str, str] = {}
        for name in ("name", "description", "external_study_url", "completion_codes",
                     "total_available_places", "estimated_completion_time", "reward"):
            if body.get(name) in (None, "", []):
                errors[name] = "This field is required."
        url = str(body.get("external_study_url") or "")
        if url and not url.startswith(("http://", "https://")):
            errors["external_study_url"] = "Enter a valid URL."
        if url and body.get("prolific_id_option") == "url_parameters" and not all(
                placeholder in url for placeholder in PLACEHOLDERS):
            errors["external_study_url"] = "URL parameters need {{%PROLIFIC_PID%}}, " \
                                           "{{%STUDY_ID%}} and {{%SESSION_ID%}}."
        for name in ("total_available_places", "estimated_completion_time", "reward",
                     "maximum_allowed_time"):
            value = body.get(name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or value < 1):
                errors[name] = "A positive integer is required."
        if isinstance(body.get("maximum_allowed_time"), int) and isinstance(
                body.get("estimated_completion_time"), int) and \
                body["maximum_allowed_time"] < body["estimated_completion_time"]:
            errors["maximum_allowed_time"] = "Must not be below the estimated completion time."
        codes = body.get("completion_codes") or []
        if not isinstance(codes, list) or any(
                not isinstance(code, dict) or not code.get("code")
                or code.get("code_type") not in CODE_TYPES
                or not isinstance(code.get("actions", []), list) for code in codes):
            errors["completion_codes"] = "Each code needs a code, a code_type and actions."
        devices = body.get("device_compatibility", [])
        if not isinstance(devices, list) or not set(devices) <= DEVICES:
            errors["device_compatibility"] = f"Choose from {sorted(DEVICES)}."
        for entry in body.get("filters", []) or []:
            if not isinstance(entry, dict) or not entry.get("filter_id") or not (
                    "selected_values" in entry or "selected_range" in entry):
                errors["filters"] = "Each filter needs filter_id and selected_values or " \
                                    "selected_range."
                break
            if entry["filter_id"] in ("participant_group_blocklist",
                                      "participant_group_allowlist"):
                unknown = [group for group in entry.get("selected_values", [])
                           if group not in self.groups]
                if unknown:
                    errors["filters"] = f"Unknown participant groups {unknown}."
        if errors:
            raise _bad(errors)

    def op_create_study(self, body: dict) -> dict:
        with self.lock:
            self._validate_study(body)
            study = Study(id=self.new_id(), body=dict(body))
            self.studies[study.id] = study
            return self._study_api(study)

    def op_list_studies(self, query: dict, base_url: str) -> dict:
        with self.lock:
            for study in self.studies.values():
                self._settle(study)
            studies = [self._study_api(study) for study in self.studies.values()]
        if query.get("state"):
            studies = [study for study in studies if study["status"] == query["state"]]
        return self.page(studies, query, base_url)

    def op_get_study(self, study_id: str) -> dict:
        with self.lock:
            study = self._study(study_id)
            self._settle(study)
            return self._study_api(study)

    def op_update_study(self, study_id: str, body: dict) -> dict:
        with self.lock:
            study = self._study(study_id)
            if study.status != "UNPUBLISHED":
                # After publishing, Prolific lets only these change (places may only grow).
                allowed = {"internal_name", "total_available_places"}
                if set(body) - allowed:
                    raise _bad(f"Only {sorted(allowed)} can change on a published study.")
            places = body.get("total_available_places")
            shrinks = (isinstance(places, int) and study.status != "UNPUBLISHED"
                       and places < int(study.body["total_available_places"]))
            if places is not None and (not isinstance(places, int) or shrinks):
                raise _bad({"total_available_places": "Places can only be increased."})
            study.body.update(body)
            if places is not None and study.status in ("AWAITING REVIEW", "COMPLETED"):
                study.status = "ACTIVE"
                study.body.pop("_stopped", None)
            self._settle(study)
            return self._study_api(study)

    def op_transition_study(self, study_id: str, body: dict) -> dict:
        action = body.get("action")
        if action not in STUDY_ACTIONS:
            raise _bad({"action": f"Choose from {sorted(STUDY_ACTIONS)}."})
        with self.lock:
            study = self._study(study_id)
            allowed = {"PUBLISH": {"UNPUBLISHED"}, "PAUSE": {"ACTIVE"}, "START": {"PAUSED"},
                       "STOP": {"ACTIVE", "PAUSED"}}[action]
            if study.status not in allowed:
                raise _bad(f"Cannot {action} a study that is {study.status}.",
                           "Invalid transition")
            if action in ("PUBLISH", "START"):
                study.status = "ACTIVE"
            elif action == "PAUSE":
                study.status = "PAUSED"
            else:
                study.status = "AWAITING REVIEW"
                study.body["_stopped"] = True
            self._settle(study)
            return self._study_api(study)

    # -- submissions ----------------------------------------------------------------------------

    def op_list_study_submissions(self, study_id: str, query: dict, base_url: str) -> dict:
        with self.lock:
            self._study(study_id)
            items = [s.to_api() for s in self.submissions.values() if s.study_id == study_id]
        return self.page(items, query, base_url)

    def op_get_submission(self, submission_id: str) -> dict:
        with self.lock:
            return self._submission(submission_id).to_api()

    def _decide(self, submission: Submission, body: dict) -> None:
        action = body.get("action")
        if action not in ("APPROVE", "REJECT"):
            raise _bad({"action": "Choose APPROVE or REJECT."})
        target = "APPROVED" if action == "APPROVE" else "REJECTED"
        if submission.status == target:
            return  # Prolific: the same transition twice is ignored
        if submission.status != "AWAITING REVIEW":
            raise _bad(f"Cannot {action} a submission that is {submission.status}.",
                       "Invalid transition")
        if action == "REJECT":
            message = str(body.get("message") or "")
            if len(message) < 100:
                raise _bad({"message": "Ensure this field has at least 100 characters."})
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                raise _bad({"rejection_category": "Not a valid choice."})
            submission.rejection = {"message": message,
                                    "category": body["rejection_category"]}
        submission.status = target
        self._settle(self._study(submission.study_id))

    def op_transition_submission(self, submission_id: str, body: dict) -> dict:
        with self.lock:
            submission = self._submission(submission_id)
            self._decide(submission, body)
            return submission.to_api()

    def op_bulk_approve(self, body: dict) -> str:
        with self.lock:
            if "submission_ids" in body:
                targets = [self._submission(sid) for sid in body["submission_ids"]]
            elif "study_id" in body and "participant_ids" in body:
                wanted = set(body["participant_ids"])
                targets = [s for s in self.submissions.values()
                           if s.study_id == body["study_id"] and s.participant_id in wanted]
            else:
                raise _bad("Give submission_ids, or study_id and participant_ids.")
            for submission in targets:
                if submission.status == "AWAITING REVIEW":
                    self._decide(submission, {"action": "APPROVE"})
            return "The request to bulk approve has been made successfully."

    # -- bonuses --------------------------------------------------------------------------------

    def op_set_up_bonus(self, body: dict) -> dict:
        with self.lock:
            study = self._study(str(body.get("study_id", "")))
            lines: list[tuple[str, int]] = []
            for raw in str(body.get("csv_bonuses", "")).splitlines():
                if not raw.strip():
                    continue
                try:
                    who, amount = (part.strip() for part in raw.split(","))
                    cents = int((Decimal(amount) * 100).quantize(Decimal(1),
                                                                 rounding=ROUND_HALF_UP))
                except (ValueError, InvalidOperation):
                    raise _bad({"csv_bonuses": f"Bad line {raw!r}."}) from None
                took_part = any(
                    s.study_id == study.id and who in (s.id, s.participant_id)
                    for s in self.submissions.values())
                if not took_part or cents <= 0:
                    raise _bad({"csv_bonuses": f"{who} did not take part in {study.id}."})
                lines.append((who, cents))
            if not lines:
                raise _bad({"csv_bonuses": "No bonuses."})
            amount = sum(cents for _, cents in lines)
            fees = int((Decimal(amount) * SERVICE_FEE_RATE).quantize(Decimal(1),
                                                                     rounding=ROUND_HALF_UP))
            setup = BonusSetUp(id=self.new_id(), study_id=study.id, lines=lines,
                               amount=amount, fees=fees)
            self.bonus_setups[setup.id] = setup
            return {"id": setup.id, "study": study.id, "amount": amount, "fees": fees,
                    "vat": 0, "total_amount": amount + fees}

    def op_pay_bonus(self, setup_id: str) -> str:
        with self.lock:
            setup = self.bonus_setups.get(setup_id)
            if setup is None:
                raise ProlificApiError(404, "Not found", f"no bulk bonus payment {setup_id}")
            # Like Prolific, paying the same set-up again pays again.
            setup.payments += 1
            self.balance_cents -= setup.amount + setup.fees
            for who, cents in setup.lines:
                self.payments.append({"setup_id": setup.id, "to": who, "cents": cents})
                for submission in self.submissions.values():
                    if who in (submission.id, submission.participant_id) \
                            and submission.study_id == setup.study_id:
                        submission.bonus_payments.append(cents)
            return (f"Bulk bonus payment with ID {setup_id} is being processed "
                    "asynchronously. Payments will be completed shortly.")

    # -- participant groups ---------------------------------------------------------------------

    def op_list_groups(self, query: dict, base_url: str) -> dict:
        with self.lock:
            groups = [group.to_api() for group in self.groups.values()
                      if not query.get("workspace_id")
                      or group.workspace_id == query["workspace_id"]]
        return self.page(groups, query, base_url)

    def op_create_group(self, body: dict) -> dict:
        if not body.get("name") or not body.get("workspace_id"):
            raise _bad({"name": "Required.", "workspace_id": "Required."})
        with self.lock:
            group = Group(id=self.new_id(), name=str(body["name"]),
                          workspace_id=str(body["workspace_id"]),
                          description=str(body.get("description", "")))
            for participant in body.get("participant_ids") or []:
                group.participants[participant] = _now_iso()
            self.groups[group.id] = group
            return group.to_api()

    def _group(self, group_id: str) -> Group:
        group = self.groups.get(group_id)
        if group is None or group.is_deleted:
            raise ProlificApiError(404, "Not found", f"no participant group {group_id}")
        return group

    def op_add_to_group(self, group_id: str, body: dict) -> dict:
        with self.lock:
            group = self._group(group_id)
            for participant in body.get("participant_ids") or []:
                group.participants.setdefault(participant, _now_iso())
            return {"results": [{"participant_id": pid, "datetime_created": when}
                                for pid, when in group.participants.items()]}

    def op_remove_from_group(self, group_id: str, body: dict) -> dict:
        with self.lock:
            group = self._group(group_id)
            for participant in body.get("participant_ids") or []:
                group.participants.pop(participant, None)
            return {"results": [{"participant_id": pid, "datetime_created": when}
                                for pid, when in group.participants.items()]}

    def op_get_balance(self, workspace_id: str) -> dict:
        with self.lock:
            return {"currency_code": "USD", "total_balance": self.balance_cents,
                    "available_balance": self.balance_cents}

    # -- simulated participants -----------------------------------------------------------------

    def register_participant(self, participant_id: str | None = None) -> str:
        with self.lock:
            participant = participant_id or self.new_id()
            self.participants.add(participant)
            return participant

    def _eligible(self, study: Study, participant: str) -> str | None:
        for entry in study.body.get("filters", []) or []:
            groups = entry.get("selected_values", [])
            if entry.get("filter_id") == "participant_group_blocklist" and any(
                    participant in self.groups[group].participants for group in groups
                    if group in self.groups):
                return "blocked"
            if entry.get("filter_id") == "participant_group_allowlist" and not any(
                    participant in self.groups[group].participants for group in groups
                    if group in self.groups):
                return "not_allowed"
        return None

    def start(self, participant_id: str, study_id: str) -> dict:
        """A participant takes a place: an ACTIVE submission, and the study URL with the
        placeholders filled in (what Prolific sends their browser to)."""
        with self.lock:
            study = self.studies.get(study_id)
            if study is None:
                raise SimulationError("no_study", f"no study {study_id}")
            self._settle(study)
            if study.status != "ACTIVE":
                raise SimulationError("not_active", f"study {study_id} is {study.status}")
            if participant_id not in self.participants:
                raise SimulationError("no_participant", f"unknown participant {participant_id}")
            refusal = self._eligible(study, participant_id)
            if refusal:
                raise SimulationError(refusal, f"{participant_id} may not take {study_id}")
            if any(s.study_id == study_id and s.participant_id == participant_id
                   for s in self.submissions.values()):
                raise SimulationError("already_taken", "one submission per participant")
            if self._places_taken(study) >= int(study.body["total_available_places"]):
                raise SimulationError("full", f"study {study_id} has no place left")
            submission = Submission(id=self.new_id(), study_id=study_id,
                                    participant_id=participant_id)
            self.submissions[submission.id] = submission
            url = (str(study.body["external_study_url"])
                   .replace("{{%PROLIFIC_PID%}}", participant_id)
                   .replace("{{%STUDY_ID%}}", study_id)
                   .replace("{{%SESSION_ID%}}", submission.id))
            return {"session_id": submission.id, "task_url": url}

    def _active(self, session_id: str) -> Submission:
        submission = self.submissions.get(session_id)
        if submission is None:
            raise SimulationError("no_session", f"no session {session_id}")
        if submission.status != "ACTIVE":
            raise SimulationError("not_active", f"session {session_id} is {submission.status}")
        return submission

    def complete(self, session_id: str, code: str) -> dict:
        """The participant finishes with ``code``: AWAITING REVIEW (every code of ours asks
        for manual review)."""
        with self.lock:
            submission = self._active(session_id)
            submission.status = "AWAITING REVIEW"
            submission.completed_at = _now_iso()
            submission.study_code = code
            self._settle(self._study(submission.study_id))
            return submission.to_api()

    def return_session(self, session_id: str, *, timed_out: bool = False) -> dict:
        with self.lock:
            submission = self._active(session_id)
            submission.status = "TIMED-OUT" if timed_out else "RETURNED"
            self._settle(self._study(submission.study_id))
            return submission.to_api()

    def completion_seen(self, code: str) -> None:
        with self.lock:
            self.completions.append(code)
