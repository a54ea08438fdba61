"""The API's query parameters, validated in one place: a value the API cannot use is a 400
naming the parameter, never silently replaced (``?offset=null&offset=null`` was a first page).
The paginator (``annotation/api/pagination.py``) reads ``limit`` and ``offset`` through here;
NUL characters and lone surrogates in any parameter are refused earlier, for every endpoint,
by ``annotation.request_guard``."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError


def whole_number(request, name: str, *, minimum: int) -> int | None:
    """``?name=`` as a whole number ≥ ``minimum``; None when absent; a 400 when it is given
    twice, is not a whole number or is below ``minimum``."""
    values = request.query_params.getlist(name)
    if not values:
        return None
    if len(values) > 1:
        raise ValidationError({name: ["give it once"]})
    raw = values[0]
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        raise ValidationError({name: [f"must be a whole number from {minimum} to 2^63 - 1"]})
    value = int(raw)
    if value < minimum or value >= 2**63:
        raise ValidationError({name: [f"must be a whole number from {minimum} to 2^63 - 1"]})
    return value
