"""The one way a service starts background work: enqueue a Celery task by its registered name
once the current transaction commits (so the job never looks for rows not yet committed).

Services never import ``annotation.tasks`` (tasks import services); the task is looked up in
the Celery app's registry, which imports ``annotation.tasks`` through Celery's own
autodiscovery. The database row a job works on is its outbox (``Assignment.decision_synced``,
``Bonus.sent_at``, ``Worker.block_synced``, a publishing ``Batch``): a wake-up call that never
arrives (the broker was down, the worker was killed) is repeated by the periodic
``resume_unfinished_work`` job, so an enqueue failure is logged, never shown as a 500.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction
from kombu.exceptions import OperationalError

from ..providers import ProviderError

logger = logging.getLogger(__name__)


class JobQueueUnavailable(Exception):
    """The broker cannot be reached: nothing that needs a background job may start now."""


def load_task_registry() -> None:
    """Import the app's tasks now (Celery's autodiscovery), e.g. when a web server starts."""
    current_app.loader.import_default_modules()


def _task(task_name: str):
    if task_name not in current_app.tasks:
        load_task_registry()
    return current_app.tasks[task_name]


def enqueue_now(task_name: str, *args) -> bool:
    """Send the job now; False (logged) when it could not be sent or, inline, failed."""
    try:
        _task(task_name).delay(*args)
    except OperationalError as error:
        logger.warning("job %s%r not queued (broker unreachable: %s); the periodic resume "
                       "job will send it", task_name, args, error)
        return False
    except ProviderError as error:
        # Inline (no broker) a job runs in the caller, whose provider calls were retried
        # where they failed; what outlasted that is recorded on its row, which says how to
        # resume it (nothing runs it again by itself here).
        logger.warning("job %s%r failed inline: %s", task_name, args, error)
        return False
    return True


def enqueue_after_commit(task_name: str, *args) -> None:
    """Send the job once the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: enqueue_now(task_name, *args))


def check_job_queue() -> None:
    """Raise ``JobQueueUnavailable`` unless the broker answers (inline tasks need none).

    Called before a launch commits anything, so a launch with the broker down changes nothing.
    """
    if current_app.conf.task_always_eager:
        return
    try:
        with current_app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=2)
    except OperationalError as error:
        raise JobQueueUnavailable(f"the job queue ({current_app.conf.broker_url.split('@')[-1]})"
                                  f" cannot be reached: {error}") from error
