"""Statements with many ids, cut to a size every database takes.

PostgreSQL refuses a statement with more than 65,535 bind parameters ("number of parameters
must be between 0 and 65535"), SQLite one with more than its ``SQLITE_MAX_VARIABLE_NUMBER``
(32,766 since 3.32). A service that filters on, or writes, an id list whose length grows with
the project (items a split moves, assignments approved at once) goes through ``chunks``: one
statement per ``ID_CHUNK`` ids, far below both limits and leaving room for the statement's
other parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

#: Ids per statement: well under PostgreSQL's 65,535 and SQLite's 32,766 parameters.
ID_CHUNK = 10_000


def chunks(values: Iterable[T], size: int = ID_CHUNK) -> Iterator[list[T]]:
    """``values`` in consecutive lists of at most ``size`` (the last may be shorter)."""
    if size < 1:
        raise ValueError("a chunk holds at least one value")
    chunk: list[T] = []
    for value in values:
        chunk.append(value)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
