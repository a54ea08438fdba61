"""JSON from outside (request bodies): parsed, then checked for what the database cannot keep.

One rule for the submit endpoints and the REST API (``UntrustedJSONParser``): a body that is not
JSON, nests deeper than ``MAX_DEPTH``, or holds a NUL character, a lone UTF-16 surrogate
(``"\\ud800"``) or a non-finite number (``NaN``, ``Infinity``) anywhere is refused with
``BadJSON`` naming the problem. Without this, Python's parser overflows its stack on deep
nesting (``RecursionError``), PostgreSQL refuses NUL in text and jsonb, UTF-8 cannot encode a
lone surrogate, and jsonb has no NaN: each was a 500 after the request had been accepted.
"""

from __future__ import annotations

import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32


class BadJSON(ValueError):
    """A body that is not acceptable JSON; the message says why."""


def _refuse_constant(name: str):
    raise BadJSON(f"{name} is not a number JSON allows")


def check_text(text: str) -> None:
    if "\x00" in text:
        raise BadJSON("text must not contain a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadJSON("text must not contain a lone UTF-16 surrogate") from None


def check_tree(value: Any) -> None:
    """Walk a parsed JSON value without recursion; ``BadJSON`` on the first bad part."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            check_text(node)
        elif isinstance(node, dict | list):
            if depth > MAX_DEPTH:
                raise BadJSON(f"nested deeper than {MAX_DEPTH} levels")
            if isinstance(node, dict):
                for key, child in node.items():
                    check_text(key)
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in node)


def loads(raw: bytes | str) -> Any:
    """The parsed value of ``raw``, or ``BadJSON``."""
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except RecursionError:
        raise BadJSON(f"nested deeper than {MAX_DEPTH} levels") from None
    except BadJSON:
        raise
    except (ValueError, UnicodeDecodeError):
        raise BadJSON("not valid JSON") from None
    check_tree(value)
    return value


class UntrustedJSONParser(JSONParser):
    """DRF's JSON parser with the checks above: a 400 ``ParseError`` instead of a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return loads(stream.read() if stream is not None else b"")
        except BadJSON as error:
            raise ParseError(f"JSON parse error - {error}") from None
