"""The console's export page: every format the project exports to, each with a button that
starts the export as a job (``annotation.services.staff_jobs``, kind ``export``: what
``manage.py export_data`` writes, zipped on disk with its ``MANIFEST.json``) and the latest
export of that format: its state, its files and warnings once done, and the download.

The request only starts the job: with a worker the page goes to the job's page, which follows
its progress; inline (no broker, the embedded default) the job has finished when the start
returns, and the page comes back with the files and the download. A second click while the
same export is queued or running starts nothing (``job_start`` returns the running one)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods

from annotation.exporters import EXPORTERS
from annotation.exporters.base import files_and_records
from annotation.models import Job, Project
from annotation.roles import page_requires
from annotation.selectors import staff_jobs as job_selectors
from frontend.staff_jobs import progress_of, start_job_from_page


def project_formats(project: Project) -> list[dict]:
    """The formats ``project`` exports to, as plain values for a template."""
    return [{"name": exporter.format_name, "description": exporter.description,
             "every_kind": not exporter.kinds}
            for exporter in EXPORTERS.values()
            if not exporter.kinds or project.kind in exporter.kinds]


def export_done_message(job: Job) -> str:
    """What the page says once an export job has finished (the figures of its result)."""
    files = job.result.get("files", [])
    records = sum(file["records"] for file in files)
    return (f"Export {job.params['format']} done (job {job.pk}): "
            f"{files_and_records(len(files), records)}; the download is below.")


@require_http_methods(["GET", "POST"])
@page_requires("see_work")
def exports(request, slug: str):
    """GET: the formats and the latest export job of each. POST ``format``: start that
    export as a job (see the module docstring)."""
    project = get_object_or_404(Project, slug=slug)
    formats = project_formats(project)
    if request.method == "POST":
        job, refused = start_job_from_page(request, kind=Job.Kind.EXPORT, project=project,
                                           params={"format": request.POST.get("format", "")})
        if job is None:
            messages.error(request, refused)
        elif job.state == Job.State.DONE:
            messages.success(request, export_done_message(job))
        elif job.state == Job.State.FAILED:
            messages.error(request, f"The export failed (job {job.pk}): {job.error}")
        else:
            return redirect("staff_jobs:detail", job_id=job.pk)
        return redirect("staff:exports", slug=slug)
    latest = job_selectors.latest_export_jobs(
        project=project, format_names=[entry["name"] for entry in formats])
    for entry in formats:
        job = latest.get(entry["name"])
        entry["job"] = job
        entry["progress"] = progress_of(job) if job is not None else None
    return render(request, "frontend/staff/exports.html", {"project": project,
                                                           "formats": formats})


urlpatterns = [
    path("projects/<slug:slug>/export/", exports, name="exports"),
]
