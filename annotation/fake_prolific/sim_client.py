"""A small client for the stand-in's side door: simulated participants, faults, the ledger."""

from __future__ import annotations

from typing import Any

import requests


class SimulatorRefused(Exception):
    """The world refused a participant's action (HTTP 409): ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class FakeProlificSimulator:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self._session = requests.Session()

    def _post(self, route: str, body: dict) -> Any:
        response = self._session.post(f"{self.base_url}/_sim/{route}", json=body, timeout=10)
        if response.status_code == 409:
            answer = response.json()
            raise SimulatorRefused(answer["error"], answer["message"])
        response.raise_for_status()
        return response.json()

    def participant(self, participant_id: str | None = None) -> str:
        body = {"participant_id": participant_id} if participant_id else {}
        return self._post("participants", body)["participant_id"]

    def start(self, participant_id: str, study_id: str) -> dict:
        return self._post("start", {"participant_id": participant_id, "study_id": study_id})

    def complete(self, session_id: str, code: str) -> dict:
        return self._post("complete", {"session_id": session_id, "code": code})

    def return_session(self, session_id: str) -> dict:
        return self._post("return", {"session_id": session_id})

    def time_out(self, session_id: str) -> dict:
        return self._post("time_out", {"session_id": session_id})

    def fault(self, operation: str, *, count: int = 1, status: int = 429,
              retry_after: float | None = 1.0) -> None:
        self._post("faults", {"operation": operation, "count": count, "status": status,
                              "retry_after": retry_after})

    def throttle_every(self, every: int, *, retry_after: float | None = 1.0) -> None:
        """Every ``every``-th API call from now on answers 429 with ``Retry-After``."""
        self._post("throttle", {"every": every, "retry_after": retry_after})

    def withhold_replies(self, operation: str, *, count: int = 1) -> None:
        """The next ``count`` calls of ``operation`` are carried out but never answered."""
        self._post("withhold", {"operation": operation, "count": count})

    def reset(self) -> None:
        self._post("reset", {})

    def stats(self) -> dict:
        return self._session.get(f"{self.base_url}/_sim/stats", timeout=10).json()

    def ledger(self) -> dict:
        return self._session.get(f"{self.base_url}/_sim/ledger", timeout=10).json()
