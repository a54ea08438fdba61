"""What is done and what is left, for one annotator: the "N done · M left for you" of the task
pages and the home page.

One reader for every page that shows it, so the rule of what counts is read in one place: an
item is *left* for a worker exactly when the work queue could still hand it to them (the same
SQL predicate, ``annotation.services.work_queue``), and *done* is the worker's answers in the
project.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from ..models import Annotation, Project, Worker
from ..services import work_queue
from ..sql import work_queue as work_queue_sql


@dataclass(frozen=True)
class AnnotatorProgress:
    done: int  # the worker's answers in the project (latest versions; problem reports too)
    left: int  # items the work queue could still give them (open, not done by them)


def annotator_progress(*, project: Project, worker: Worker | None) -> AnnotatorProgress:
    """``worker``'s progress in ``project`` (one statement). Reads every item of the project
    once (two index probes each): for pages loaded once per session, never for a submit."""
    if worker is None:
        worker = Worker()  # no Worker yet (never opened a task): nothing done, all open left
    open_sql, open_params = work_queue.open_items_where(project=project, worker=worker)
    sql = (f"SELECT (SELECT COUNT(*) FROM {work_queue_sql.ANNOTATION_TABLE} a "  # noqa: S608
           "WHERE a.worker_id = %(worker_id)s AND a.project_id = %(project_id)s "
           "AND a.state <> %(superseded)s), "
           f"(SELECT COUNT(*) FROM {work_queue_sql.ITEM_TABLE} i WHERE {open_sql})")
    with connection.cursor() as cursor:
        cursor.execute(sql, {**open_params, "superseded": Annotation.State.SUPERSEDED})
        done, left = cursor.fetchone()
    return AnnotatorProgress(done=done, left=0 if worker.is_blocked else left)


def annotator_progress_by_project(*, projects, worker: Worker | None
                                  ) -> dict[int, AnnotatorProgress]:
    """``annotator_progress`` of each project, by project id (the home page)."""
    return {project.pk: annotator_progress(project=project, worker=worker)
            for project in projects}

