"""Server error pages that need nothing the failure may have taken away.

``handler500`` (annotation/urls.py) renders these without the request's context processors, so
no session, user or database is read while answering. When the database is unreachable
(``InterfaceError``, or an ``OperationalError`` from a connection that failed: down,
restarting, out of connections) the answer is a 503 with ``Retry-After`` saying so, not a bare
500: pages say that nothing was lost and to try
again in a minute (a task page keeps its draft until the server confirms a save), JSON callers
(the task pages' submits, the API) get ``{"error": "unavailable", "message"}``. A statement
that failed on a working database (cut by ``statement_timeout``, a ProgrammingError…) is a 500
that says so (``query_timeout`` / ``query_failed``), never "unavailable" (``error_code``).
"""

from __future__ import annotations

import sys

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults

RETRY_AFTER_SECONDS = 30
MESSAGES = {
    "unavailable": "The database is unavailable for a moment. Nothing you saved is lost; "
                   "please try again in a minute.",
    "query_timeout": "The database stopped a query of this page because it ran past its time "
                     "limit. The database itself is up; the error has been logged.",
    "query_failed": "A database query of this page failed. The database itself is up; the "
                    "error has been logged.",
    "server_error": "Something went wrong on our side. It has been logged; please try again.",
}
#: SQLSTATEs of an OperationalError that mean the database could not be reached or is going
#: away (class 08 connection exceptions, 57P01-57P03 shutdown / cannot connect now, 53300 too
#: many connections); any other SQLSTATE is a statement that failed on a working database.
UNAVAILABLE_SQLSTATE_PREFIXES = ("08", "57P01", "57P02", "57P03", "53300")
QUERY_TIMEOUT_SQLSTATES = {"57014"}  # query_canceled: statement_timeout, a cancel request
#: SQLite: a busy/locked or unopenable file is the database being unavailable; other codes
#: (e.g. SQLITE_ERROR: no such table) are a failed statement.
SQLITE_UNAVAILABLE = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN", "SQLITE_IOERR")


def error_code(error: BaseException | None) -> str:
    """What went wrong, as one of ``MESSAGES``' keys.

    Django raises every failure of PostgreSQL's "operator intervention" and resource classes as
    ``OperationalError`` — a refused connection, and also a statement cancelled by
    ``statement_timeout`` — so the driver's error underneath decides: no SQLSTATE (the
    connection never came up or broke) or a connection SQLSTATE is "unavailable"; a
    cancelled statement is "query_timeout"; any other is "query_failed"."""
    if isinstance(error, InterfaceError):
        return "unavailable"
    if not isinstance(error, OperationalError):
        return "query_failed" if isinstance(error, DatabaseError) else "server_error"
    cause = error.__cause__
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate is not None:
        if sqlstate in QUERY_TIMEOUT_SQLSTATES:
            return "query_timeout"
        return ("unavailable" if sqlstate.startswith(UNAVAILABLE_SQLSTATE_PREFIXES)
                else "query_failed")
    sqlite_name = getattr(cause, "sqlite_errorname", None)
    if sqlite_name is not None:
        return ("unavailable" if sqlite_name.startswith(SQLITE_UNAVAILABLE)
                else "query_failed")
    return "unavailable"  # no code: the connection could not be made or was lost


def server_error(request):
    code = error_code(sys.exc_info()[1])
    status = 503 if code == "unavailable" else 500
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else {}
    if _wants_json(request):
        return JsonResponse({"error": code, "message": MESSAGES[code]}, status=status,
                            headers=headers)
    page = render_to_string("frontend/error.html", {"code": code, "message": MESSAGES[code]})
    return HttpResponse(page, status=status, headers=headers)


def _wants_json(request) -> bool:
    return (request.path.startswith("/api/") or request.content_type == "application/json"
            or "application/json" in request.headers.get("Accept", ""))


def page_not_found(request, exception):
    """``handler404``: JSON callers (the API: ``/api/items/abc/`` matches no URL pattern) get
    ``{"detail"}`` as the API's own 404s do, the schema's documented answer; pages Django's."""
    if _wants_json(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request, exception):
    """``handler400`` (a suspicious request refused before any view): JSON for JSON callers."""
    if _wants_json(request):
        return JsonResponse({"detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)
