"""The console's operations for scripts (``/api/``, in ``/api/schema/``): a project's splits
(preview, freeze, list), the upload import (preview, then commit) and the export.

As on the console's import page, the preview runs in the request, and so does the commit of an
upload smaller than ``UNPACK_UPLOAD_JOB_MIN_BYTES`` (200 with the result); a bigger one is
committed by the console's import job (``services.staff_jobs``, kind ``import``): 202 with the
job (``api/jobs.py``: its URL answers its state, progress and, once done, the result, or the
importer's error naming the file, line and field). Committing the same upload again while its
job runs answers that job, starting nothing.
Projects themselves are created and changed through ``/api/projects/`` (``api/projects.py``).

The same services as the console's pages: ``split_preview`` (a job), ``annotation.services.uploads``
(over the importers of ``import_data``), and the staff jobs (``services.staff_jobs``) the
console starts for the long work: freezing a split and an export answer ``202 Accepted`` with
the job (``api/jobs.py``: poll its URL, then download its file), never work inside the request.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from qc import splits as qc_splits

from ..exporters import EXPORTERS
from ..importers import FORMATS
from ..importers.base import ImportInputError
from ..models import Job, Project, SplitManifest
from ..request_guard import streams_upload
from ..services.splits import RULES
from ..services.uploads import (
    UploadError,
    upload_commit,
    upload_discard,
    upload_get,
    upload_preview,
    upload_runs_as_job,
    upload_stage,
)
from ..upload_limits import over_limit_message, too_large, upload_handlers
from .jobs import JobSerializer, start_job_response
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


class ProjectSplits(APIView):
    """GET: the project's manifests. POST: preview (``"preview": true``, nothing written) or
    make and freeze a split: either starts the split job the console starts (202 with the
    job; ``api/jobs.py``). A preview job's result is ``SplitPreview.as_result``
    (``"preview": true``, counts, items moved and with answers, leaks, unchanged, the frozen
    manifest). A freeze job fails, saying why, when the split would replace a frozen manifest
    or move annotated items without ``force``; its result names the new manifest. A rule that
    does not fit the project is a 400. A second identical request while it runs answers the
    same job."""

    permission_classes = [action_permission(GET="see_projects", POST="change_projects")]

    @extend_schema(responses=ManifestSerializer(many=True))
    def get(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        return Response(ManifestSerializer(
            SplitManifest.objects.filter(project=project).order_by("-created_at", "-id")[:100],
            many=True).data)

    @extend_schema(request=SplitRequestSerializer,
                   responses={202: OpenApiResponse(JobSerializer, description="the split job"),
                              400: OpenApiResponse(description="bad input"),
                              503: OpenApiResponse(description="the job queue is down")})
    def post(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        body = SplitRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        # The preview reads every item (3.4 s at 200,000): a job too, with ``preview``.
        choice = ({"preview": True} if data["preview"] else {"force": data["force"]})
        return start_job_response(request, kind=Job.Kind.SPLITS, project=project, params={
            "rule": data["rule"], "seed": data["seed"], **choice,
            "fractions": split_fractions(data.get("fractions"))})


def split_fractions(given: dict | None) -> dict:
    """The job's fractions from the request's: the defaults when none are given, a split the
    request leaves out gets 0 (as ``project_split`` reads a missing one)."""
    if not given:
        return dict(qc_splits.DEFAULT_FRACTIONS)
    return {name: float(given.get(name, 0)) for name in ("train", "dev", "test")}


class ImportPreviewRequest(serializers.Serializer):
    format = serializers.ChoiceField(choices=list(FORMATS))
    split = serializers.ChoiceField(choices=["train", "dev", "test"], required=False)
    files = serializers.ListField(child=serializers.FileField())
    licence = serializers.CharField(max_length=200, required=False, allow_blank=True,
                                    help_text="the source data's licence, stored on the "
                                              "project by the import (dataset card)")
    attribution = serializers.CharField(required=False, allow_blank=True,
                                        help_text="the source data's attribution, stored on "
                                                  "the project by the import")


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
        self.size_limit = upload_handlers(request) if request.method == "POST" else None
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
            return Response({"detail": over_limit_message()},
                            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        files = request.FILES.getlist("files")  # reads the body: the size limit is known after
        if self.size_limit is not None and self.size_limit.exceeded:
            # Stopped while streaming (no or a false Content-Length): what came is cut short.
            return Response({"detail": over_limit_message()},
                            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        body = ImportPreviewRequest(data={
            "format": request.data.get("format"), "split": request.data.get("split") or None,
            "files": files, **{name: request.data[name] for name in ("licence", "attribution")
                               if name in request.data}})
        if not body.initial_data["split"]:
            body.initial_data.pop("split")
        body.is_valid(raise_exception=True)
        try:
            staged = upload_stage(files=body.validated_data["files"], project=project,
                                  fmt=body.validated_data["format"],
                                  split=body.validated_data.get("split"),
                                  user_id=request.user.pk,
                                  licence=body.validated_data.get("licence") or None,
                                  attribution=body.validated_data.get("attribution") or None)
        except UploadError as error:  # the page's words
            return Response({"detail": f"{error}; nothing was imported."},
                            status=status.HTTP_400_BAD_REQUEST)
        try:
            preview = upload_preview(staged=staged)
        except ImportInputError as error:
            upload_discard(staged=staged)  # as the page does: no file left behind
            return Response({"detail": f"{error} — nothing was imported."},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(_result(preview, upload=staged.token))


class ImportCommit(APIView):
    """Import a previewed upload (all-or-nothing) and forget its files: in the request (200,
    the result) below ``UNPACK_UPLOAD_JOB_MIN_BYTES``, else as the console's import job (202,
    the job as ``api/jobs.py`` answers it, its URL also in ``Location``)."""

    permission_classes = [action_permission(POST="change_projects")]

    @extend_schema(request=ImportCommitRequest,
                   responses={200: ImportResultSerializer,
                              202: OpenApiResponse(JobSerializer, description="the import job"),
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
                return start_job_response(request, kind=Job.Kind.IMPORT, project=project,
                                          params={"upload": staged.token})
            result = upload_commit(staged=staged)
        except (UploadError, ImportInputError) as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_result(result))


class ExportRequestSerializer(serializers.Serializer):
    export_format = serializers.ChoiceField(choices=sorted(EXPORTERS),
                                            help_text="``format`` is DRF's own parameter")


class ProjectExport(APIView):
    """Start the project's export in ``export_format``: the export job the console starts
    (202 with the job; ``api/jobs.py``), whose file is a zip with ``MANIFEST.json`` (its files
    and the warnings ``export_data`` prints). A second identical request while it runs
    answers the same job."""

    permission_classes = [action_permission(POST="see_work")]

    @extend_schema(request=ExportRequestSerializer,
                   responses={202: OpenApiResponse(JobSerializer, description="the export job"),
                              400: OpenApiResponse(description="no such format for it"),
                              503: OpenApiResponse(description="the job queue is down")})
    def post(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        body = ExportRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return start_job_response(request, kind=Job.Kind.EXPORT, project=project,
                                  params={"format": body.validated_data["export_format"]})


urlpatterns = [
    path("projects/<slug:slug>/splits/", ProjectSplits.as_view(), name="api-project-splits"),
    path("projects/<slug:slug>/imports/preview/", streams_upload(ImportPreview.as_view()),
         name="api-import-preview"),
    path("projects/<slug:slug>/imports/commit/", ImportCommit.as_view(),
         name="api-import-commit"),
    path("projects/<slug:slug>/export/", ProjectExport.as_view(), name="api-project-export"),
]
