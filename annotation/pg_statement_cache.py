"""psycopg's cache of converted statements, wide enough for the annotator's statements.

On every execute psycopg turns a statement's ``%(name)s`` placeholders into PostgreSQL's ``$n``,
and it caches that conversion (an LRU of 128 statements) only for statements of at most 4,096
bytes (``psycopg._queries.MAX_CACHED_STATEMENT_LENGTH``). The statement that chooses, leases and
loads a local annotator's next item (``annotation.sql.work_queue``) is 4.1 to 5.9 KB depending
on the task kind: converting it again on every submit cost about 75 µs of CPU (3-4% of the
submit). The limit is raised to ``STATEMENT_BYTES``; psycopg's other limit, 50 parameters, is
kept, so bulk INSERTs (many parameters, rarely repeated) still bypass the cache and the 128
places hold statements that repeat. Checked by ``tests/foundation/test_pg_statement_cache.py``,
which fails if a psycopg release renames the setting.
"""

from __future__ import annotations

#: The longest statement whose conversion psycopg keeps (bytes).
STATEMENT_BYTES = 16_384


def install() -> None:
    """Raise psycopg's limit (called once, from AppConfig.ready); never lowers it."""
    try:
        from psycopg import _queries
    except ImportError:  # no psycopg: SQLite only
        return
    current = getattr(_queries, "MAX_CACHED_STATEMENT_LENGTH", None)
    if current is not None and current < STATEMENT_BYTES:
        _queries.MAX_CACHED_STATEMENT_LENGTH = STATEMENT_BYTES
