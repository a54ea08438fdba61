"""Requests refused before anything reads them: bodies too large, text PostgreSQL cannot store.

Two middlewares, early in ``settings.MIDDLEWARE`` (before sessions, CSRF, the login lockout
and every view), so one rule covers every endpoint, the admin's and the API's included:

* :class:`BodySizeLimitMiddleware` — a body above ``UNPACK_MAX_REQUEST_BYTES`` is refused
  with 413 before a byte of it is read: by its ``Content-Length``, or, for a body streamed
  without one (``Transfer-Encoding: chunked``), by counting while reading at most the limit
  plus one byte. Before, DRF's parsers read the whole body during the CSRF check (a 100 MB JSON
  body to ``/api/projects/`` cost +298 MB of RSS for its 403; Django's
  ``DATA_UPLOAD_MAX_MEMORY_SIZE`` does not cover ``request.read()``).
* :class:`UnstorableTextMiddleware` — a NUL character or a lone UTF-16 surrogate in the path,
  a query parameter (name or value) or a form field is refused with 400 naming the parameter.
  PostgreSQL's text cannot hold NUL (filtering by ``?project=a%00`` was a 500) and UTF-8
  cannot encode a surrogate. JSON bodies get the same check from ``annotation.jsonbody``
  (``check_text`` is the one test of a string for both).

JSON callers (the API, the task pages' ``fetch``) get ``{"error", "message", "field"}``, the
shape the task page shows as "Not saved: <message>"; everyone else a short plain-text answer.
"""

from __future__ import annotations

import io

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpResponse, JsonResponse
from django.urls import Resolver404, resolve

from .jsonbody import BadJSON, check_text

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def wants_json(request) -> bool:
    """The caller reads JSON: the API, a ``fetch`` of a task page, a JSON body or Accept."""
    return (request.path.startswith("/api/") or request.content_type == "application/json"
            or request.headers.get("X-Requested-With") == "fetch"
            or "application/json" in request.headers.get("Accept", ""))


def refusal(request, status: int, code: str, message: str, field: str):
    if wants_json(request):
        return JsonResponse({"error": code, "message": message, "field": field}, status=status)
    return HttpResponse(f"{message}\n", status=status, content_type="text/plain; charset=utf-8")


def streams_upload(view):
    """Mark ``view`` as one that streams its own multipart upload to disk, bounded by
    ``UNPACK_UPLOAD_MAX_BYTES`` (``annotation.upload_limits``): its body may be that large,
    and its form fields are left for the view to read once its upload handlers are set (the
    upload forms' fields are Django form fields, which refuse NUL characters themselves)."""
    view.streams_upload = True
    return view


def _streams_upload(request) -> bool:
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return False
    return getattr(match.func, "streams_upload", False)


def body_limit(request) -> int:
    """The most bytes this request's body may carry."""
    if request.method == "POST" and _streams_upload(request):
        return settings.UNPACK_UPLOAD_MAX_BYTES + 64 * 1024  # the form's own fields
    return settings.UNPACK_MAX_REQUEST_BYTES


def too_large_message(limit: int | None = None) -> str:
    limit = settings.UNPACK_MAX_REQUEST_BYTES if limit is None else limit
    return (f"The request body is larger than the {limit:,} bytes "
            "this server accepts; nothing was read or saved.")


class BodySizeLimitMiddleware:
    """413 for a body above ``UNPACK_MAX_REQUEST_BYTES``, before it is read (see the module)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = body_limit(request)
        declared = request.META.get("CONTENT_LENGTH")
        if declared:
            try:
                length = int(declared)
            except ValueError:
                return refusal(request, 400, "invalid", "Content-Length is not a number.",
                               "body")
            if length > limit:
                return refusal(request, 413, "too_large", too_large_message(limit), "body")
        elif "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            # Django reads no body without a Content-Length; read it here, counting, at most
            # the limit plus one byte, and hand the rest of the stack what was read.
            source = request.META["wsgi.input"]
            chunks, size = [], 0
            while size <= limit:
                chunk = source.read(min(64 * 1024, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size > limit:
                return refusal(request, 413, "too_large", too_large_message(limit), "body")
            body = b"".join(chunks)
            request.META["CONTENT_LENGTH"] = str(len(body))
            request._stream = LimitedStream(io.BytesIO(body), len(body))
        return self.get_response(request)


def _unstorable(text: str) -> str | None:
    """Why ``text`` cannot be stored (PostgreSQL text, UTF-8), or None."""
    try:
        check_text(text)
    except BadJSON as error:
        return str(error)
    return None


#: The longest query parameter (name or value) read. gunicorn refuses request lines over 4,094
#: bytes before the app sees them, other servers and the test client do not; SQLite refuses a
#: LIKE pattern over 50,000 characters (an admin search), and no filter needs more than this.
MAX_QUERY_PARAMETER_CHARS = 2000


def unstorable_parameter(request) -> tuple[str, str] | None:
    """``(parameter, reason)`` of the first part of the request that cannot be stored: the
    path, a query parameter's name or value, a form field's (read after the size check); or
    a query parameter longer than ``MAX_QUERY_PARAMETER_CHARS``."""
    reason = _unstorable(request.path_info)
    if reason:
        return "path", reason
    for name, values in request.GET.lists():
        if any(len(text) > MAX_QUERY_PARAMETER_CHARS for text in (name, *values)):
            return (_printable(name[:100]),
                    f"longer than the {MAX_QUERY_PARAMETER_CHARS:,} characters a query "
                    "parameter may have")
    sources = [request.GET]
    if (request.method == "POST" and request.content_type in FORM_TYPES
            and not _streams_upload(request)):
        sources.append(request.POST)
    for source in sources:
        for name, values in source.lists():
            for text in (name, *values):
                reason = _unstorable(text)
                if reason:
                    return _printable(name), reason
    return None


def _printable(name: str) -> str:
    return name.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


class UnstorableTextMiddleware:
    """400 for a NUL or a lone surrogate in the path, a query parameter or a form field, and
    for a query parameter over ``MAX_QUERY_PARAMETER_CHARS``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        found = unstorable_parameter(request)
        if found is not None:
            parameter, reason = found
            return refusal(request, 400, "invalid", f"{parameter}: {reason}.", parameter)
        return self.get_response(request)
