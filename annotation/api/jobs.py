"""Staff jobs for scripts (``/api/jobs/<id>/``, in ``/api/schema/``): a job's state, progress
and result, and its file (``…/download/``, an export's zip streamed from disk).

The API's long operations -- freezing a split (``POST /api/projects/<slug>/splits/``) and an
export (``POST /api/projects/<slug>/export/``) -- start the same staff jobs as the console
(``annotation.services.staff_jobs.job_start``) and answer ``202 Accepted`` with this
representation and a ``Location`` header; a script polls the job's URL until ``finished``.
Who may see a job is the permission of what starts it (``staff_jobs.KIND_ACTION``).
"""

from __future__ import annotations

from django.http import FileResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Job
from ..roles import may
from ..services import staff_jobs
from ..services.jobs import JobQueueUnavailable
from .permissions import action_permission


class JobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=Job.Kind.choices)
    project = serializers.CharField(allow_null=True, help_text="the project's slug")
    state = serializers.ChoiceField(choices=Job.State.choices)
    finished = serializers.BooleanField(help_text="done or failed: poll until true")
    created = serializers.BooleanField(
        help_text="false when an identical job was already queued or running and is the one "
                  "answered (only in the answer that starts a job)", required=False)
    done = serializers.IntegerField(help_text="progress: units done")
    total = serializers.IntegerField(allow_null=True, help_text="progress: units, when known")
    message = serializers.CharField(allow_blank=True,
                                    help_text="what the job is doing (or did)")
    error = serializers.CharField(allow_blank=True,
                                  help_text="why it failed (empty unless failed)")
    result = serializers.JSONField(allow_null=True, help_text="the result once done")
    url = serializers.CharField(help_text="this job's URL (poll it)")
    download = serializers.CharField(allow_null=True,
                                     help_text="the job's file once done (an export's zip)")


def job_representation(request, job: Job, *, created: bool | None = None) -> dict:
    """The JSON of a job for the API (``JobSerializer``)."""
    data = {
        "id": job.pk, "kind": job.kind,
        "project": job.project.slug if job.project_id else None,
        "state": job.state, "finished": not job.active,
        "done": job.progress_done, "total": job.progress_total,
        "message": job.progress_message, "error": job.error,
        "result": job.result if job.state == Job.State.DONE else None,
        "url": request.build_absolute_uri(reverse("api-job", args=[job.pk])),
        "download": request.build_absolute_uri(reverse("api-job-download", args=[job.pk]))
        if job.state == Job.State.DONE and job.result_path else None,
    }
    if created is not None:
        data["created"] = created
    return data


def start_job_response(request, *, kind: str, project, params: dict) -> Response:
    """Start a staff job for an API call: 202 with the job (a running identical job is
    answered, ``created`` false), 400 when refused, 503 when the job queue is down."""
    try:
        started = staff_jobs.job_start(kind=kind, project=project, user=request.user,
                                       params=params)
    except staff_jobs.JobRefused as error:
        return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
    except JobQueueUnavailable as error:
        return Response({"detail": str(error)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    data = job_representation(request, started.job, created=started.created)
    return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["url"]})


def _job_for(request, job_id: int) -> Job:
    job = get_object_or_404(Job.objects.select_related("project"), pk=job_id)
    if not may(request.user, staff_jobs.KIND_ACTION[job.kind]):
        raise PermissionDenied("this job needs the permission of the call that started it")
    return job


class JobDetail(APIView):
    """A staff job: state, progress and, once done, its result and download link."""

    permission_classes = [action_permission(GET="see_work")]

    @extend_schema(responses={200: JobSerializer, 403: OpenApiResponse(description="not yours"),
                              404: OpenApiResponse(description="no such job")})
    def get(self, request, job_id: int):
        return Response(job_representation(request, _job_for(request, job_id)))


class JobDownload(APIView):
    """The finished job's file (an export's zip with ``MANIFEST.json``); 404 while it runs,
    when it failed, has no file or the file was cleared."""

    permission_classes = [action_permission(GET="see_work")]

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY,
                              404: OpenApiResponse(description="no file (yet)")})
    def get(self, request, job_id: int):
        job = _job_for(request, job_id)
        file = staff_jobs.job_result_file(job)
        if file is None:
            raise NotFound("this job has no file to download (not done, none, or cleared)")
        return FileResponse(file.open("rb"), as_attachment=True, filename=file.name,
                            content_type="application/zip")


urlpatterns = [
    path("jobs/<int:job_id>/", JobDetail.as_view(), name="api-job"),
    path("jobs/<int:job_id>/download/", JobDownload.as_view(), name="api-job-download"),
]
