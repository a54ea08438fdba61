"""Progress of a job whose work runs in one long transaction (a split moves every item or none).

``staff_jobs.DatabaseProgress`` writes the job row on the runner's own connection. Inside the
work's transaction those writes stay invisible to the job page until the commit, and the row
stays locked meanwhile: the page would show "started" for the whole run, and a job silent for
``UNPACK_JOB_STALE_SECONDS`` looks dead. ``CommittedProgress`` writes on PostgreSQL through a
second connection in autocommit, so every report is visible at once and keeps the heartbeat
alive. It never touches the row on the runner's connection while it can use the second one
(two connections updating one row would wait on each other).

When the second connection cannot see the row (the job was created inside the caller's still
open transaction: an inline run in a test or a request), or on SQLite (one writer at a time),
it writes on the runner's connection as ``DatabaseProgress`` does; nobody else can see the row
then anyway.
"""

from __future__ import annotations

import time

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils import timezone

from ..models import Job
from .staff_jobs import PROGRESS_EVERY_SECONDS, job_report_progress


class CommittedProgress:
    """``progress(done, total, message)`` for a job, visible while its transaction runs;
    at most every ``every`` seconds (always the last step). Use as a context manager: it
    closes its second connection."""

    def __init__(self, job_id: int, *, every: float | None = None) -> None:
        self.job_id = job_id
        self.every = PROGRESS_EVERY_SECONDS if every is None else every
        self._last = float("-inf")
        self._side = None

    def __enter__(self) -> CommittedProgress:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._side is not None:
            self._side.close()
            self._side = None

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None:
        now = time.monotonic()
        if now - self._last < self.every and not (total is not None and done >= total):
            return
        self._last = now
        if not self._write_committed(done, total, message):
            job_report_progress(job_id=self.job_id, done=done, total=total, message=message)

    def _write_committed(self, done: int, total: int | None, message: str) -> bool:
        """Write through the second connection; False when it cannot (see the module doc)."""
        if connection.vendor != "postgresql":
            return False
        if self._side is None:
            self._side = connections.create_connection(DEFAULT_DB_ALIAS)
        with self._side.cursor() as cursor:
            cursor.execute(
                f"UPDATE {Job._meta.db_table} SET progress_done = %s, progress_total = %s, "  # noqa: S608 — the table name is the model's
                "progress_message = %s, heartbeat_at = %s WHERE id = %s AND state = %s",
                [max(int(done), 0), total, message[:300], timezone.now(), self.job_id,
                 Job.State.RUNNING])
            return cursor.rowcount == 1
