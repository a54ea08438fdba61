"""The API's query parameters, validated in one place: a value the API cannot use is a 400
naming the parameter, never silently replaced (``?offset=null&offset=null`` was a first page).
The paginator (``annotation/api/pagination.py``) reads ``limit`` and ``offset`` through here;
NUL characters and lone surrogates in any parameter are refused earlier, for every endpoint,
by ``annotation.request_guard``."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError


def whole_number(request, name: str, *, minimum: int) -> int | None:
    """``?name=`` as a whole number ≥ ``minimum`` (no upper bound: the caller caps it); None
    when absent; a 400 when it is given twice, is not a whole number or is below
    ``minimum``."""
    values = request.query_params.getlist(name)
    if not values:
        return None
    if len(values) > 1:
        raise ValidationError({name: ["give it once"]})
    raw = values[0]
    # Any length of digits is a number (a limit above the ceiling is the ceiling, an offset past
    # the end an empty page); beyond 4,000 digits Python would refuse to convert it anyway.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 4000 or int(raw) < minimum:
        raise ValidationError({name: [f"must be one whole number, at least {minimum}"]})
    return int(raw)
