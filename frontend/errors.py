"""Server error pages that need nothing the failure may have taken away.

``handler500`` (annotation/urls.py) renders these without the request's context processors, so
no session, user or database is read while answering. When the database is unreachable
(``OperationalError``/``InterfaceError``: down, restarting, out of connections) the answer is a
503 with ``Retry-After`` saying so, not a bare 500: pages say that nothing was lost and to try
again in a minute (a task page keeps its draft until the server confirms a save), JSON callers
(the task pages' submits, the API) get ``{"error": "unavailable", "message"}``.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults

RETRY_AFTER_SECONDS = 30
MESSAGES = {
    "unavailable": "The database is unavailable for a moment. Nothing you saved is lost; "
                   "please try again in a minute.",
    "server_error": "Something went wrong on our side. It has been logged; please try again.",
}


def server_error(request):
    error = sys.exc_info()[1]
    code = ("unavailable" if isinstance(error, OperationalError | InterfaceError)
            else "server_error")
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
