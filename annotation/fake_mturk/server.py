"""HTTP front of the MTurk stand-in: MTurk's JSON 1.1 protocol plus simulator routes.

API calls, exactly as boto3 sends them::

    POST /   X-Amz-Target: MTurkRequesterServiceV20170117.<Operation>
             Content-Type: application/x-amz-json-1.1      (any SigV4 signature is accepted)

answer ``200`` with the operation's JSON, or ``400``/``500`` with
``{"__type": "<code>", "Message": "..."}``. Simulator routes (JSON in, JSON out)::

    POST /_sim/workers          {"worker_id"?, "country"?, "subdivision"?, "percent_approved"?,
                                 "number_approved"?, "qualifications"?: {type_id: value}}
    POST /_sim/accept           {"worker_id", "hit_id"} -> {"assignment_id", "task_url"}
    POST /_sim/return           {"assignment_id"}       (worker returns the HIT)
    POST /_sim/abandon          {"assignment_id"}       (worker walks away)
    POST /_sim/advance_clock    {"seconds"} -> {"now"}
    POST /_sim/faults           {"operation", "count"?, "error"?: "throttling" | <code>,
                                 "message"?, "http_status"?}
    POST /_sim/throttle         {"every": N}: every Nth API call is throttled (0: off)
    POST /_sim/withhold         {"operation", "count"?}: do the call, never answer it
    POST /_sim/reset            forget everything
    GET  /_sim/stats            {"calls": {operation: n}, "total": n}
    GET  /_sim/ledger           balance, bonuses, notifications, blocks
    POST /mturk/externalSubmit  form-encoded, as an ExternalQuestion page posts it

Simulator refusals answer ``409`` with ``{"error": code, "message": ...}``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from ..standin_server import BackgroundServer
from .state import MTurkApiError, MTurkWorld, SimulationError

TARGET_PREFIX = "MTurkRequesterServiceV20170117."
JSON_CONTENT_TYPE = "application/x-amz-json-1.1"
LOOPBACK_HOST = "127.0.0.1"


class FakeMTurkHandler(BaseHTTPRequestHandler):
    """One request; the world lives on the server object."""

    server: FakeMTurkHTTPServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without TCP_NODELAY, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms to every keep-alive response.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    # -- plumbing -------------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amzn-RequestId", self.server.next_request_id())
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, payload: Any, content_type: str = JSON_CONTENT_TYPE) -> None:
        self._send(status, json.dumps(payload).encode(), content_type)

    # -- routes ---------------------------------------------------------------------------------

    def do_GET(self) -> None:
        world = self.server.world
        if self.path == "/_sim/stats":
            self._send_json(200, world.stats(), "application/json")
        elif self.path == "/_sim/ledger":
            self._send_json(200, world.ledger(), "application/json")
        else:
            self._send_json(404, {"error": "NotFound", "message": self.path}, "application/json")

    def do_POST(self) -> None:
        body = self._read_body()
        if self.path == "/":
            self._api_call(body)
        elif self.path == "/mturk/externalSubmit":
            self._external_submit(body)
        elif self.path.startswith("/_sim/"):
            self._simulator(self.path[len("/_sim/"):], body)
        else:
            self._send_json(404, {"error": "NotFound", "message": self.path}, "application/json")

    def _api_call(self, body: bytes) -> None:
        world = self.server.world
        target = self.headers.get("X-Amz-Target", "")
        if not target.startswith(TARGET_PREFIX):
            error = MTurkApiError(f"X-Amz-Target {target!r} is not an MTurk operation",
                                  error_type="UnknownOperationException")
            self._send_json(error.http_status, error.body())
            return
        operation = target[len(TARGET_PREFIX):]
        world.record_call(operation)
        try:
            params = json.loads(body or b"{}")
            if not isinstance(params, dict):
                raise ValueError("request body is not a JSON object")
        except ValueError as parse_error:
            error = MTurkApiError(f"Malformed request body: {parse_error}",
                                  error_type="SerializationException")
            self._send_json(error.http_status, error.body())
            return
        fault = world.take_fault(operation)
        if fault is not None:
            self._send_json(fault.http_status, fault.body())
            return
        try:
            result = world.call(operation, params)
        except MTurkApiError as api_error:
            self._send_json(api_error.http_status, api_error.body())
            return
        if world.take_withheld(operation):
            self.close_connection = True  # done, but the reply is lost
            return
        self._send_json(200, result)

    def _external_submit(self, body: bytes) -> None:
        fields = parse_qsl(body.decode("utf-8"), keep_blank_values=True)
        assignment_id = next((value for name, value in fields if name == "assignmentId"), "")
        if not assignment_id:
            self._send(400, b"assignmentId is missing from the submitted form",
                       "text/plain; charset=utf-8")
            return
        try:
            self.server.world.submit(assignment_id, fields)
        except SimulationError as refusal:
            self._send(409, f"{refusal.code}: {refusal.message}".encode(),
                       "text/plain; charset=utf-8")
            return
        self._send(200, b"<html><body>Your HIT has been submitted.</body></html>",
                   "text/html; charset=utf-8")

    def _simulator(self, route: str, body: bytes) -> None:
        world = self.server.world
        try:
            request = json.loads(body or b"{}")
            if not isinstance(request, dict):
                raise ValueError("body must be a JSON object")
            if route == "workers":
                result: dict = {"worker_id": world.register_worker(request)}
            elif route == "accept":
                result = world.accept(request["worker_id"], request["hit_id"],
                                      turk_submit_to=self.server.base_url)
            elif route in {"return", "abandon"}:
                world.release(request["assignment_id"],
                              how="Returned" if route == "return" else "Abandoned")
                result = {}
            elif route == "advance_clock":
                result = {"now": world.advance_clock(float(request["seconds"]))}
            elif route == "faults":
                world.add_fault(
                    request["operation"],
                    count=int(request.get("count", 1)),
                    error=request.get("error", "throttling"),
                    message=request.get("message"),
                    http_status=request.get("http_status"),
                )
                result = {}
            elif route == "throttle":
                world.throttle_every(int(request.get("every", 0)))
                result = {}
            elif route == "withhold":
                world.withhold_replies(request["operation"], count=int(request.get("count", 1)))
                result = {}
            elif route == "reset":
                world.reset()
                result = {}
            else:
                self._send_json(404, {"error": "NotFound", "message": route}, "application/json")
                return
        except SimulationError as refusal:
            self._send_json(409, {"error": refusal.code, "message": refusal.message},
                            "application/json")
            return
        except MTurkApiError as api_error:
            self._send_json(400, {"error": api_error.error_type, "message": api_error.message},
                            "application/json")
            return
        except (KeyError, ValueError, TypeError) as bad_request:
            self._send_json(400, {"error": "BadRequest", "message": repr(bad_request)},
                            "application/json")
            return
        self._send_json(200, result, "application/json")


class FakeMTurkHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer holding one ``MTurkWorld``."""

    daemon_threads = True

    def __init__(self, port: int = 0, *, world: MTurkWorld | None = None,
                 verbose: bool = False) -> None:
        super().__init__((LOOPBACK_HOST, port), FakeMTurkHandler)
        self.world = world or MTurkWorld()
        self.verbose = verbose
        self._request_counter = 0
        self._counter_lock = threading.Lock()

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def next_request_id(self) -> str:
        with self._counter_lock:
            self._request_counter += 1
            return f"fake-{self._request_counter:012d}"


class FakeMTurk(BackgroundServer[FakeMTurkHTTPServer]):
    """The stand-in running in a background thread, for tests and benches.

    >>> fake = FakeMTurk().start()      # binds 127.0.0.1 on a free port
    >>> fake.base_url                   # 'http://127.0.0.1:PORT' -> MTurkConfig(endpoint_url=...)
    >>> fake.stop()

    Also a context manager. ``world`` gives direct access to the state for assertions.
    """

    server_class = FakeMTurkHTTPServer
    label = "fake MTurk"
