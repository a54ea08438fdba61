"""HTTP front of the Prolific stand-in: Prolific's REST API v1 (the part Unpack uses) plus a
side door for simulated participants.

API routes (``Authorization: Token <anything>`` required; JSON in, JSON out)::

    GET   /api/v1/studies/                          paged: ?page=&page_size=, _links.next.href
    POST  /api/v1/studies/                          create a draft (UNPUBLISHED)
    GET   /api/v1/studies/<id>/
    PATCH /api/v1/studies/<id>/                     places may only grow once published
    POST  /api/v1/studies/<id>/transition/          {"action": PUBLISH | PAUSE | START | STOP}
    GET   /api/v1/studies/<id>/submissions/         paged
    GET   /api/v1/submissions/<id>/
    POST  /api/v1/submissions/<id>/transition/      {"action": APPROVE | REJECT, ...}
    POST  /api/v1/submissions/bulk-approve/         {"submission_ids": [...]}
    POST  /api/v1/submissions/bonus-payments/       {"study_id", "csv_bonuses"}
    POST  /api/v1/bulk-bonus-payments/<id>/pay/     pays EVERY time it is called, like Prolific
    GET   /api/v1/participant-groups/               paged, ?workspace_id=
    POST  /api/v1/participant-groups/
    POST  /api/v1/participant-groups/<id>/participants/   {"participant_ids": [...]}
    DELETE /api/v1/participant-groups/<id>/participants/  {"participant_ids": [...]}
    GET   /api/v1/workspaces/<id>/balance/

Errors answer ``{"error": {"status", "error_code", "title", "detail"}}``; an injected 429
carries ``Retry-After``. Side door (JSON; refusals answer 409 ``{"error", "message"}``)::

    POST /_sim/participants   {"participant_id"?} -> {"participant_id"}
    POST /_sim/start          {"participant_id", "study_id"} -> {"session_id", "task_url"}
    POST /_sim/complete       {"session_id", "code"}          (finished: AWAITING REVIEW)
    POST /_sim/return         {"session_id"}                  (RETURNED)
    POST /_sim/time_out       {"session_id"}                  (TIMED-OUT)
    POST /_sim/faults         {"operation" (or "*"), "count"?, "status"? = 429, "retry_after"?}
    POST /_sim/throttle       {"every": N, "retry_after"?}: every Nth API call answers 429
    POST /_sim/withhold       {"operation", "count"?}: do the call, never answer it
    POST /_sim/reset
    GET  /_sim/stats          calls per operation
    GET  /_sim/ledger         balance, payments, bonus set-ups, groups, completions
    GET  /submissions/complete?cc=CODE   where a finished participant's browser lands
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..standin_server import BackgroundServer
from .state import ProlificApiError, ProlificWorld, SimulationError

LOOPBACK_HOST = "127.0.0.1"
ID = r"(?P<id>[A-Za-z0-9_-]+)"

# (method, path pattern, operation name, how to call the world)
Route = tuple[str, re.Pattern, str, Callable[..., Any]]


def _routes() -> list[Route]:
    def route(method: str, pattern: str, operation: str, call: Callable[..., Any]) -> Route:
        return method, re.compile(f"^{pattern}$"), operation, call

    return [
        route("GET", "/api/v1/studies/", "list_studies",
              lambda w, m, q, b, base: w.op_list_studies(q, base)),
        route("POST", "/api/v1/studies/", "create_study",
              lambda w, m, q, b, base: w.op_create_study(b)),
        route("GET", f"/api/v1/studies/{ID}/", "get_study",
              lambda w, m, q, b, base: w.op_get_study(m["id"])),
        route("PATCH", f"/api/v1/studies/{ID}/", "update_study",
              lambda w, m, q, b, base: w.op_update_study(m["id"], b)),
        route("POST", f"/api/v1/studies/{ID}/transition/", "transition_study",
              lambda w, m, q, b, base: w.op_transition_study(m["id"], b)),
        route("GET", f"/api/v1/studies/{ID}/submissions/", "list_submissions",
              lambda w, m, q, b, base: w.op_list_study_submissions(m["id"], q, base)),
        route("POST", "/api/v1/submissions/bulk-approve/", "bulk_approve",
              lambda w, m, q, b, base: w.op_bulk_approve(b)),
        route("POST", "/api/v1/submissions/bonus-payments/", "set_up_bonus",
              lambda w, m, q, b, base: w.op_set_up_bonus(b)),
        route("GET", f"/api/v1/submissions/{ID}/", "get_submission",
              lambda w, m, q, b, base: w.op_get_submission(m["id"])),
        route("POST", f"/api/v1/submissions/{ID}/transition/", "transition_submission",
              lambda w, m, q, b, base: w.op_transition_submission(m["id"], b)),
        route("POST", f"/api/v1/bulk-bonus-payments/{ID}/pay/", "pay_bonus",
              lambda w, m, q, b, base: w.op_pay_bonus(m["id"])),
        route("GET", "/api/v1/participant-groups/", "list_participant_groups",
              lambda w, m, q, b, base: w.op_list_groups(q, base)),
        route("POST", "/api/v1/participant-groups/", "create_participant_group",
              lambda w, m, q, b, base: w.op_create_group(b)),
        route("POST", f"/api/v1/participant-groups/{ID}/participants/", "add_to_group",
              lambda w, m, q, b, base: w.op_add_to_group(m["id"], b)),
        route("DELETE", f"/api/v1/participant-groups/{ID}/participants/", "remove_from_group",
              lambda w, m, q, b, base: w.op_remove_from_group(m["id"], b)),
        route("GET", f"/api/v1/workspaces/{ID}/balance/", "get_balance",
              lambda w, m, q, b, base: w.op_get_balance(m["id"])),
    ]


ROUTES = _routes()


class FakeProlificHandler(BaseHTTPRequestHandler):
    server: FakeProlificHTTPServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None
                   ) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw.strip() else {}

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        try:
            body = self._body()
        except ValueError:
            self._send_json(400, ProlificApiError(400, "Malformed JSON").body())
            return
        if parts.path.startswith("/_sim/"):
            self._simulator(method, parts.path[len("/_sim/"):], body)
            return
        if method == "GET" and parts.path == "/submissions/complete":
            code = query.get("cc", "")
            self.server.world.completion_seen(code)
            page = (f"<!doctype html><title>Prolific (stand-in)</title><h1>Submission "
                    f"complete</h1><p id=code>{html.escape(code)}</p>").encode()
            self._send(200, page, "text/html; charset=utf-8")
            return
        for route_method, pattern, operation, call in ROUTES:
            match = pattern.match(parts.path)
            if match is None or route_method != method:
                continue
            self._api(operation, call, match, query, body, parts.path)
            return
        self._send_json(404, ProlificApiError(404, "Not found", parts.path).body())

    def _api(self, operation: str, call: Callable[..., Any], match: re.Match, query: dict,
             body: Any, path: str) -> None:
        world = self.server.world
        world.record_call(operation)
        authorization = self.headers.get("Authorization", "")
        token = authorization[len("Token "):] if authorization.startswith("Token ") else ""
        if not token or (world.tokens is not None and token not in world.tokens):
            self._send_json(401, ProlificApiError(401, "Unauthorized",
                                                  "Invalid token.").body())
            return
        fault = world.take_fault(operation)
        if fault is None:
            try:
                if not isinstance(body, dict):
                    raise ProlificApiError(400, "Bad request", "the body must be an object")
                result = call(world, match.groupdict(), query, body,
                              f"{self.server.base_url}{path}")
            except ProlificApiError as error:
                fault = error
        if fault is not None:
            headers = ({"Retry-After": f"{fault.retry_after:g}"}
                       if fault.retry_after is not None else None)
            self._send_json(fault.status, fault.body(), headers)
            return
        if world.take_withheld(operation):
            self.close_connection = True  # done, but the reply is lost
            return
        status = 201 if method_creates(operation) else 200
        self._send_json(status, result)

    def _simulator(self, method: str, route: str, body: Any) -> None:
        world = self.server.world
        try:
            if method == "GET" and route == "stats":
                result: Any = world.stats()
            elif method == "GET" and route == "ledger":
                result = world.ledger()
            elif route == "participants":
                result = {"participant_id": world.register_participant(
                    body.get("participant_id"))}
            elif route == "start":
                result = world.start(body["participant_id"], body["study_id"])
            elif route == "complete":
                result = world.complete(body["session_id"], body["code"])
            elif route in ("return", "time_out"):
                result = world.return_session(body["session_id"],
                                              timed_out=route == "time_out")
            elif route == "faults":
                world.add_fault(body["operation"], count=int(body.get("count", 1)),
                                status=int(body.get("status", 429)),
                                retry_after=body.get("retry_after", 1.0))
                result = {}
            elif route == "throttle":
                world.throttle_every(int(body.get("every", 0)),
                                     retry_after=body.get("retry_after", 1.0))
                result = {}
            elif route == "withhold":
                world.withhold_replies(body["operation"], count=int(body.get("count", 1)))
                result = {}
            elif route == "reset":
                world.reset()
                result = {}
            else:
                self._send_json(404, {"error": "NotFound", "message": route})
                return
        except SimulationError as refusal:
            self._send_json(409, {"error": refusal.code, "message": refusal.message})
            return
        except (KeyError, ValueError, TypeError, AttributeError) as bad:
            self._send_json(400, {"error": "BadRequest", "message": repr(bad)})
            return
        self._send_json(200, result)


def method_creates(operation: str) -> bool:
    return operation in {"create_study", "set_up_bonus", "create_participant_group"}


class FakeProlificHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer holding one ``ProlificWorld``."""

    daemon_threads = True

    def __init__(self, port: int = 0, *, world: ProlificWorld | None = None,
                 verbose: bool = False) -> None:
        super().__init__((LOOPBACK_HOST, port), FakeProlificHandler)
        self.world = world or ProlificWorld()
        self.verbose = verbose

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


class FakeProlific(BackgroundServer[FakeProlificHTTPServer]):
    """The stand-in in a background thread, for tests and benches (also a context manager):
    ``FakeProlific().start()`` binds 127.0.0.1 on a free port; ``.base_url``, ``.world``."""

    server_class = FakeProlificHTTPServer
    label = "fake Prolific"
