"""Staff job pages: a job's progress and result (``/staff/jobs/<id>/``), its progress as JSON
for the page's poller (``…/progress/``) and its file (``…/download/``, an export's zip streamed
from disk).

Who may look: the permission of the page that starts the kind of job (``KIND_ACTION``): a QC
job is the QC button's (``decide_flags``), an export the export page's (``see_work``). Jobs
are started by the review pages and the console's export page through
``start_job_from_page`` (``annotation.services.staff_jobs.job_start``).
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET

from annotation.models import Job
from annotation.roles import may, page_requires
from annotation.services import staff_jobs
from annotation.services.jobs import JobQueueUnavailable

app_name = "staff_jobs"

KIND_ACTION = staff_jobs.KIND_ACTION  # one definition, shared with the API


def _job_for(request, job_id: int) -> Job:
    job = get_object_or_404(Job.objects.select_related("project", "requested_by"), pk=job_id)
    if not may(request.user, KIND_ACTION[job.kind]):
        raise PermissionDenied("this job needs the permission of the page that started it")
    return job


def start_job_from_page(request, *, kind: str, project, params: dict):
    """Start a staff job from a page (``services.staff_jobs.job_start``): ``(job, None)``,
    or ``(None, why it could not start)``; a job already queued or running is returned, and
    the page says it was not started a second time."""
    try:
        started = staff_jobs.job_start(kind=kind, project=project, user=request.user,
                                       params=params)
    except (staff_jobs.JobRefused, JobQueueUnavailable) as error:
        return None, str(error)
    if not started.created:
        messages.info(request, f"This {started.job.get_kind_display()} is already "
                               f"{started.job.state} (job {started.job.pk}); it was not "
                               "started a second time.")
    return started.job, None


def progress_of(job: Job) -> dict:
    """What the page and its poller show: the state, the figures and the links."""
    percent = None
    if job.progress_total:
        percent = round(100 * min(job.progress_done, job.progress_total) / job.progress_total)
    return {
        "id": job.pk, "kind": job.kind, "state": job.state,
        "done": job.progress_done, "total": job.progress_total, "percent": percent,
        "message": job.progress_message, "error": job.error,
        "finished": not job.active,
        "download": reverse("staff_jobs:download", args=[job.pk])
        if job.state == Job.State.DONE and job.result_path else None,
    }


def qc_summary(report: dict) -> str:
    """One line for the reviewer: what this QC run found and what it did to the stored flags."""
    raised = report.get("flags_raised", {})
    stored = report.get("flags_stored", {})
    by_reason = ", ".join(f"{reason} {count}" for reason, count in raised.items())
    open_now = report.get("flags_by_status", {}).get("open", 0)
    return (f"QC ran on {report['annotations']} annotations: "
            f"{sum(raised.values())} flags raised"
            f"{f' ({by_reason})' if by_reason else ''}; "
            f"{stored.get('created', 0)} new, {stored.get('still_raised', 0)} kept, "
            f"{stored.get('removed_stale_open', 0)} cleared; {open_now} open now.")


def approvals_summary(result: dict) -> str:
    """One line on a finished approval of the unflagged work: how many were approved and how
    many a bulk approval held back, and why (the review page's message and the job page)."""
    held = result["held_back"]
    line = f"{result['approved']} assignment(s) approved"
    if held["blocked"] or held["unconfirmed"]:
        line += (f"; held back: {held['blocked']} of workers blocked for the project (decide "
                 f"each yourself), {held['unconfirmed']} not yet confirmed by collection")
    if result["refused"]:
        line += (f"; {result['refused']} not approved, changed since they were listed: "
                 f"{result['refusal']}")
    return line + "."


def _figures(section: dict | None) -> list[tuple[str, object]]:
    """A report section's plain figures (lists such as per-worker tables left out)."""
    return [(key, value) for key, value in (section or {}).items()
            if not isinstance(value, list)]


@page_requires("see_work")
@require_GET
def job_detail(request, job_id: int):
    job = _job_for(request, job_id)
    context = {"job": job, "project": job.project, "progress": progress_of(job)}
    if job.kind == Job.Kind.QC and job.state == Job.State.DONE and job.result:
        context.update(summary=qc_summary(job.result),
                       agreement=_figures(job.result.get("agreement")),
                       aggregation=_figures(job.result.get("aggregation")),
                       warnings=job.result.get("warnings", []))
    if job.kind == Job.Kind.APPROVALS and job.state == Job.State.DONE and job.result:
        context.update(approvals_summary=approvals_summary(job.result))
    if job.kind == Job.Kind.SPLITS and job.state == Job.State.DONE and job.result:
        from .staff.splits import split_summary

        context.update(split_summary=split_summary(job.result))
    return render(request, "frontend/staff/job.html", context)


@page_requires("see_work")
@require_GET
def job_progress(request, job_id: int):
    return JsonResponse(progress_of(_job_for(request, job_id)))


@page_requires("see_work")
@require_GET
def job_download(request, job_id: int):
    job = _job_for(request, job_id)
    if job.state != Job.State.DONE or not job.result_path:
        raise Http404("this job has no file to download")
    file = staff_jobs.job_result_file(job)
    if file is None:
        raise Http404("the job's file is no longer there")
    return FileResponse(file.open("rb"), as_attachment=True, filename=file.name,
                        content_type="application/zip")


urlpatterns = [
    path("<int:job_id>/", job_detail, name="detail"),
    path("<int:job_id>/progress/", job_progress, name="progress"),
    path("<int:job_id>/download/", job_download, name="download"),
]
