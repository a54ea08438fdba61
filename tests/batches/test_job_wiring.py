"""Finding 7: one way to trigger a job. Services queue Celery tasks by their registered name
through ``services.jobs`` after commit; only ``annotation.tasks`` imports services, never the
other way round (the old ``services/batches`` <-> ``tasks`` cycle, function-level import plus
``getattr``, is gone)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from celery import current_app

SERVICES = Path(__file__).resolve().parents[2] / "annotation" / "services"
QUEUED = re.compile(r'enqueue_(?:after_commit|now)\(\s*"([^"]+)"')


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
            names.update(f"{'.' * node.level}{node.module or ''}:{alias.name}"
                         for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_service_imports_the_tasks():
    offenders = {}
    for path in SERVICES.rglob("*.py"):
        tasks = {name for name in imported_modules(path)
                 if name.endswith((".tasks", ":tasks")) or name == "annotation.tasks"}
        if tasks:
            offenders[str(path.relative_to(SERVICES))] = tasks
    assert offenders == {}


def test_every_job_a_service_queues_is_a_registered_task():
    queued = {name for path in SERVICES.rglob("*.py") for name in QUEUED.findall(
        path.read_text())}
    assert {"annotation.tasks.publish_batch", "annotation.tasks.sync_assignment_decision",
            "annotation.tasks.send_bonus", "annotation.tasks.sync_worker_block",
            "annotation.tasks.expire_hit"} <= queued
    current_app.loader.import_default_modules()
    assert queued - set(current_app.tasks) == set()


def test_the_periodic_resume_job_is_scheduled(settings):
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "annotation.tasks.resume_unfinished_work" in scheduled
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] > 600
