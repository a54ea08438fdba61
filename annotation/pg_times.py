"""Reading PostgreSQL timestamps that Python cannot represent.

PostgreSQL keeps timestamps from 4713 BC to 294276 AD; Python's ``datetime`` only years 1 to
9999. A row holding one outside that range (e.g. stored before client-reported times were
checked: ``0001-01-01T00:00:00+14:00`` is 31 December 1 BC in UTC) would make every query that
reads it fail, so the staff pages, the admin (even its delete page) and the exports could not
show or remove it. On every PostgreSQL connection the timestamptz loader Django installs is
wrapped so that such a value reads as None (unknown) instead; every value Python can represent
reads exactly as before.
"""

from __future__ import annotations

import functools

from django.db.backends.signals import connection_created


@functools.cache
def _tolerant(loader_class: type) -> type:
    import psycopg

    class TolerantTimestamptzLoader(loader_class):
        def load(self, data):
            try:
                return super().load(data)
            except psycopg.DataError:  # before year 1 or after year 9999
                return None

    return TolerantTimestamptzLoader


def _install(sender, connection, **kwargs) -> None:
    if connection.vendor != "postgresql":
        return
    from psycopg.pq import Format

    adapters = connection.connection.adapters
    oid = adapters.types["timestamptz"].oid
    current = adapters.get_loader(oid, Format.TEXT)
    if current is not None:
        adapters.register_loader("timestamptz", _tolerant(current))


def install() -> None:
    """Wrap the loader on every new PostgreSQL connection (called once, from AppConfig.ready)."""
    connection_created.connect(_install, dispatch_uid="unpack.pg_times")
