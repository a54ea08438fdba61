"""The console's operations for scripts (``/api/``, in ``/api/schema/``): a project's splits
(preview, freeze, list), the upload import (preview, then commit) and the export download.

As on the console's import page, the preview runs in the request, and so does the commit of an
upload smaller than ``UNPACK_UPLOAD_JOB_MIN_BYTES`` (200 with the result); a bigger one is
committed by the console's import job (``services.staff_jobs``, kind ``import``): 202 with the
job's URL (``…/imports/jobs/<id>/``), which answers its state, progress and, once done, the
result (or the importer's error naming the file, line and field). Committing the same upload
again while its job runs answers that job, starting nothing.
Projects themselves are created and changed through ``/api/projects/`` (``api/projects.py``).

The same services as the console's pages: ``split_preview`` / ``project_split``,
``annotation.services.uploads`` (over the importers of ``import_data``) and
``annotation.exporters.export_zip``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from django.http import FileResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from ..exporters import EXPORTERS, ExportError, export_zip
from ..importers import FORMATS
from ..importers.base import ImportInputError
from ..models import Job, Project, SplitManifest
from ..request_guard import streams_upload
from ..services.jobs import JobQueueUnavailable
from ..services.splits import RULES, SplitRefused, project_split, split_preview
from ..services.staff_jobs import JobRefused, job_start
from ..services.uploads import (
    UploadError,
    upload_commit,
    upload_get,
    upload_preview,
    upload_runs_as_job,
    upload_stage,
)
from ..upload_limits import too_large, upload_handlers
from .permissions import action_permission

INT32 = 2**31 - 1


class SplitRequestSerializer(serializers.Serializer):
    rule = serializers.ChoiceField(choices=RULES)
    seed = serializers.IntegerField(min_value=-INT32 - 1, max_value=INT32)
    fractions = serializers.DictField(child=serializers.FloatField(min_value=0, max_value=1e6),
                                      required=False)
    force = serializers.BooleanField(required=False, default=False)
    preview = serializers.BooleanField(required=False, default=False,
                                       help_text="only say what the split would do")

    def validate_fractions(self, value):
        if set(value) - {"train", "dev", "test"} or not sum(value.values()) > 0:
            raise serializers.ValidationError(
                "an object of train/dev/test fractions adding up to more than 0")
        return value


class ManifestSerializer(serializers.ModelSerializer):
    class Meta:
        model = SplitManifest
        fields = ["id", "rule", "seed", "fractions", "counts", "frozen", "created_at"]


class SplitPreviewSerializer(serializers.Serializer):
    counts = serializers.DictField(child=serializers.IntegerField())
    moved_items = serializers.IntegerField()
    annotated_moves = serializers.IntegerField()
    leaks = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
    unchanged = serializers.BooleanField()


class ProjectSplits(APIView):
    """GET: the project's manifests. POST: preview (``"preview": true``, nothing written) or
    make and freeze a split (409 when it would replace a frozen manifest or move annotated
    items without ``force``)."""

    permission_classes = [action_permission(GET="see_projects", POST="change_projects")]

    @extend_schema(responses=ManifestSerializer(many=True))
    def get(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        return Response(ManifestSerializer(
            SplitManifest.objects.filter(project=project).order_by("-created_at", "-id")[:100],
            many=True).data)

    @extend_schema(request=SplitRequestSerializer,
                   responses={200: SplitPreviewSerializer, 201: ManifestSerializer,
                              400: OpenApiResponse(description="bad input"),
                              409: OpenApiResponse(description="refused: needs force")})
    def post(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        body = SplitRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            if data["preview"]:
                preview = split_preview(project=project, rule=data["rule"], seed=data["seed"],
                                        fractions=data.get("fractions"))
                return Response({"counts": preview.counts, "moved_items": preview.moved_items,
                                 "annotated_moves": preview.annotated_moves,
                                 "leaks": {key: list(value)
                                           for key, value in preview.leaks.items()},
                                 "unchanged": preview.unchanged})
            result = project_split(project=project, rule=data["rule"], seed=data["seed"],
                                   fractions=data.get("fractions"), force=data["force"])
        except SplitRefused as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        except ValueError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(ManifestSerializer(result.manifest).data,
                        status=status.HTTP_200_OK if result.unchanged
                        else status.HTTP_201_CREATED)


class ImportPreviewRequest(serializers.Serializer):
    format = serializers.ChoiceField(choices=list(FORMATS))
    split = serializers.ChoiceField(choices=["train", "dev", "test"], required=False)
    files = serializers.ListField(child=serializers.FileField())


class ImportCommitRequest(serializers.Serializer):
    upload = serializers.CharField(max_length=64, help_text="the token of the preview")


class ImportResultSerializer(serializers.Serializer):
    upload = serializers.CharField(required=False)
    dry_run = serializers.BooleanField()
    rows = serializers.IntegerField()
    files_imported = serializers.ListField(child=serializers.CharField())
    files_skipped = serializers.ListField(child=serializers.CharField())
    created = serializers.DictField(child=serializers.IntegerField())
    existing_items_per_split = serializers.DictField(child=serializers.IntegerField())
    new_items_per_split = serializers.DictField(child=serializers.IntegerField())
    warnings = serializers.ListField(child=serializers.CharField())


def _result(result, **extra) -> dict:
    return {"dry_run": result.dry_run, "rows": result.rows,
            "files_imported": result.files_imported, "files_skipped": result.files_skipped,
            "created": result.created,
            "existing_items_per_split": result.existing_items_per_split,
            "new_items_per_split": result.new_items_per_split, "warnings": result.warnings,
            **extra}


class _Upload(APIView):
    permission_classes = [action_permission(POST="change_projects")]

    def initialize_request(self, request, *args, **kwargs):
        # Stream uploads to disk, bounded, before anything reads the body (the page's rule).
        if request.method == "POST":
            upload_handlers(request)
        return super().initialize_request(request, *args, **kwargs)


class ImportPreview(_Upload):
    """Upload files (multipart: ``format``, optional ``split``, one or more ``files``) and get
    the import's preview; nothing is written. The answer's ``upload`` commits it
    (``…/imports/commit/``). Bad input: 400 naming the file, line and field."""

    parser_classes = [MultiPartParser]

    @extend_schema(request={"multipart/form-data": ImportPreviewRequest},
                   responses={200: ImportResultSerializer,
                              400: OpenApiResponse(description="bad input: file, line, field"),
                              413: OpenApiResponse(description="over the upload limit")})
    def post(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        if too_large(request):
            return Response({"detail": "over the upload limit"},
                            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        body = ImportPreviewRequest(data={
            "format": request.data.get("format"), "split": request.data.get("split") or None,
            "files": request.FILES.getlist("files")})
        if not body.initial_data["split"]:
            body.initial_data.pop("split")
        body.is_valid(raise_exception=True)
        try:
            staged = upload_stage(files=body.validated_data["files"], project=project,
                                  fmt=body.validated_data["format"],
                                  split=body.validated_data.get("split"),
                                  user_id=request.user.pk)
        except UploadError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        try:
            preview = upload_preview(staged=staged)
        except ImportInputError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_result(preview, upload=staged.token))


class ImportJobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField(help_text="GET it for the state, progress and result")
    state = serializers.ChoiceField(choices=Job.State.choices)
    done = serializers.IntegerField(help_text="how far the step in message has come (bytes "
                                              "read, then writing steps or rows written)")
    total = serializers.IntegerField(allow_null=True, help_text="the step's end, or null")
    message = serializers.CharField(allow_blank=True, help_text="the step, e.g. 'reading …'")
    finished = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True,
                                  help_text="a failed import's reason (file, line, field)")
    result = serializers.DictField(allow_null=True, help_text=(
        "once done: message, rows, files_imported, files_skipped, created, warnings"))
    started = serializers.BooleanField(required=False, help_text=(
        "false when this upload's import was already queued or running"))


def _job(job: Job, **extra) -> dict:
    return {"id": job.pk,
            "url": reverse("api-import-job", args=[job.project.slug, job.pk]),
            "state": job.state, "done": job.progress_done, "total": job.progress_total,
            "message": job.progress_message, "finished": not job.active, "error": job.error,
            "result": job.result if job.state == Job.State.DONE else None, **extra}


class ImportCommit(APIView):
    """Import a previewed upload (all-or-nothing) and forget its files: in the request (200,
    the result) below ``UNPACK_UPLOAD_JOB_MIN_BYTES``, else as the console's import job (202,
    the job and its URL, also in ``Location``)."""

    permission_classes = [action_permission(POST="change_projects")]

    @extend_schema(request=ImportCommitRequest,
                   responses={200: ImportResultSerializer,
                              202: ImportJobSerializer,
                              400: OpenApiResponse(description="bad input or unknown upload"),
                              503: OpenApiResponse(description="the job queue is down")})
    def post(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        body = ImportCommitRequest(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            staged = upload_get(token=body.validated_data["upload"], user_id=request.user.pk,
                                project=project)
            if upload_runs_as_job(staged):
                return self._as_job(request, project, staged)
            result = upload_commit(staged=staged)
        except (UploadError, ImportInputError) as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_result(result))

    @staticmethod
    def _as_job(request, project: Project, staged) -> Response:
        try:
            started = job_start(kind=Job.Kind.IMPORT, project=project, user=request.user,
                                params={"upload": staged.token})
        except JobRefused as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        except JobQueueUnavailable as error:
            return Response({"detail": f"the import did not start: {error}"},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE)
        answer = _job(started.job, started=started.created)
        return Response(answer, status=status.HTTP_202_ACCEPTED,
                        headers={"Location": answer["url"]})


class ImportJobDetail(APIView):
    """An import job of the project (started by ``…/imports/commit/`` or the console's
    import page): its state, progress and, once done, its result; a failed one its error."""

    permission_classes = [action_permission(GET="change_projects")]

    @extend_schema(responses={200: ImportJobSerializer,
                              404: OpenApiResponse(description="no such import job here")})
    def get(self, request, slug: str, job_id: int):
        job = get_object_or_404(Job.objects.select_related("project"), pk=job_id,
                                kind=Job.Kind.IMPORT, project__slug=slug)
        return Response(_job(job))


class ProjectExport(APIView):
    """The project's export in ``export_format`` (``format`` is DRF's own parameter) as a
    zip with ``MANIFEST.json`` (its files and the warnings ``export_data`` prints)."""

    permission_classes = [action_permission(GET="see_work")]

    @extend_schema(parameters=[OpenApiParameter("export_format", str, enum=sorted(EXPORTERS),
                                                required=True)],
                   responses={(200, "application/zip"): OpenApiTypes.BINARY,
                              400: OpenApiResponse(description="no such format for it")})
    def get(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        format_name = request.query_params.get("export_format", "")
        if format_name not in EXPORTERS:
            return Response({"detail": f"export_format: one of {', '.join(sorted(EXPORTERS))}"},
                            status=status.HTTP_400_BAD_REQUEST)
        folder = Path(tempfile.mkdtemp(prefix="unpack-export-"))
        try:
            archive, _ = export_zip(project=project, format_name=format_name, work_dir=folder)
            handle = archive.open("rb")
        except ExportError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return FileResponse(handle, as_attachment=True,
                            filename=f"{project.slug}-{format_name}.zip",
                            content_type="application/zip")


urlpatterns = [
    path("projects/<slug:slug>/splits/", ProjectSplits.as_view(), name="api-project-splits"),
    path("projects/<slug:slug>/imports/preview/", streams_upload(ImportPreview.as_view()),
         name="api-import-preview"),
    path("projects/<slug:slug>/imports/commit/", ImportCommit.as_view(),
         name="api-import-commit"),
    path("projects/<slug:slug>/imports/jobs/<int:job_id>/", ImportJobDetail.as_view(),
         name="api-import-job"),
    path("projects/<slug:slug>/export/", ProjectExport.as_view(), name="api-project-export"),
]
