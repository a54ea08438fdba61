"""Reads of staff jobs for the pages that start them (the console's export page)."""

from __future__ import annotations

from ..models import Job, Project


def latest_export_jobs(*, project: Project, format_names: list[str]) -> dict[str, Job]:
    """format → the project's latest export job in that format (one indexed query per
    format, so as many statements as the project has formats, however many jobs ran)."""
    latest = {}
    for name in format_names:
        job = (Job.objects.filter(project=project, kind=Job.Kind.EXPORT, params__format=name)
               .order_by("-id").first())
        if job is not None:
            latest[name] = job
    return latest
