"""A small stdlib client for the stand-in's simulator routes (workers, clock, faults, stats).

Used by tests, benches and anyone scripting a fake crowd; it never talks to the MTurk API itself
(use the provider for that).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode


class SimulatorRefused(Exception):
    """The simulator refused an action; ``code`` says why (WorkerBlocked, NotQualified, ...)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class FakeMTurkSimulator:
    """Drives the simulated crowd of a running stand-in at ``base_url``."""

    def __init__(self, base_url: str, *, timeout_seconds: float = 10.0) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.timeout_seconds = timeout_seconds

    def _request(self, method: str, path: str, payload: dict | None = None) -> Any:
        data = json.dumps(payload).encode() if payload is not None else None
        # The scheme is checked in __init__ (http/https only).
        request = urllib.request.Request(  # noqa: S310
            self.base_url + path, data=data, method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(  # noqa: S310
                request, timeout=self.timeout_seconds
            ) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            body = error.read()
            try:
                details = json.loads(body)
            except ValueError:
                details = {"error": "HTTPError", "message": body.decode(errors="replace")}
            raise SimulatorRefused(
                error.code, details.get("error", ""), details.get("message", "")
            ) from error

    def register_worker(self, worker_id: str | None = None, **attributes: Any) -> str:
        """Attributes: country, subdivision, percent_approved, number_approved, qualifications."""
        payload = dict(attributes)
        if worker_id:
            payload["worker_id"] = worker_id
        return self._request("POST", "/_sim/workers", payload)["worker_id"]

    def accept(self, worker_id: str, hit_id: str) -> dict:
        """Returns ``{"assignment_id", "task_url"}`` (task_url None unless ExternalQuestion)."""
        return self._request("POST", "/_sim/accept", {"worker_id": worker_id, "hit_id": hit_id})

    def return_assignment(self, assignment_id: str) -> None:
        self._request("POST", "/_sim/return", {"assignment_id": assignment_id})

    def abandon(self, assignment_id: str) -> None:
        self._request("POST", "/_sim/abandon", {"assignment_id": assignment_id})

    def external_submit(self, assignment_id: str, fields: dict[str, str]) -> str:
        """POST the form a task page sends to ``turkSubmitTo + /mturk/externalSubmit``."""
        body = urlencode([("assignmentId", assignment_id), *fields.items()]).encode()
        # The scheme is checked in __init__ (http/https only).
        request = urllib.request.Request(  # noqa: S310
            self.base_url + "/mturk/externalSubmit", data=body, method="POST",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        try:
            with urllib.request.urlopen(  # noqa: S310
                request, timeout=self.timeout_seconds
            ) as response:
                return response.read().decode()
        except urllib.error.HTTPError as error:
            message = error.read().decode(errors="replace")
            code = message.split(":", 1)[0]
            raise SimulatorRefused(error.code, code, message) from error

    def advance_clock(self, seconds: float) -> float:
        return self._request("POST", "/_sim/advance_clock", {"seconds": seconds})["now"]

    def inject_fault(self, operation: str, *, count: int = 1, error: str = "throttling",
                     message: str | None = None, http_status: int | None = None) -> None:
        payload: dict[str, Any] = {"operation": operation, "count": count, "error": error}
        if message is not None:
            payload["message"] = message
        if http_status is not None:
            payload["http_status"] = http_status
        self._request("POST", "/_sim/faults", payload)

    def throttle_every(self, every: int) -> None:
        """Every ``every``-th API call from now on is throttled; 0 stops it."""
        self._request("POST", "/_sim/throttle", {"every": every})

    def withhold_replies(self, operation: str, *, count: int = 1) -> None:
        """The next ``count`` calls of ``operation`` are carried out but never answered."""
        self._request("POST", "/_sim/withhold", {"operation": operation, "count": count})

    def reset(self) -> None:
        self._request("POST", "/_sim/reset", {})

    def stats(self) -> dict:
        return self._request("GET", "/_sim/stats")

    def ledger(self) -> dict:
        return self._request("GET", "/_sim/ledger")
