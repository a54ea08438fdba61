"""The console's upload import: choose the format (and a split), upload one or more files
(CLAIRE's three TSVs at once), see a preview — rows parsed, items per split, what already
exists, or the importer's error naming the file, line and field — then import. Nothing is
written before the import, and the import is all-or-nothing (``annotation.services.uploads``
over the importers ``import_data`` uses).

Uploads stream to temporary files (``TemporaryFileUploadHandler`` only: nothing is held in
memory) through a handler that stops a request past ``UNPACK_UPLOAD_MAX_BYTES``. The import
(commit) of an upload of ``UNPACK_UPLOAD_JOB_MIN_BYTES`` or more runs as a staff job (kind
``import``, ``annotation.services.staff_jobs``) whose page shows its progress; smaller ones run
in the request. The preview (a dry run) runs in the upload's request.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from annotation.importers import FORMATS
from annotation.importers.base import ImportInputError
from annotation.models import Job, Project
from annotation.request_guard import streams_upload
from annotation.roles import page_requires
from annotation.services.jobs import JobQueueUnavailable
from annotation.services.staff_jobs import JobRefused, job_start
from annotation.services.uploads import (
    StagedUpload,
    UploadError,
    upload_commit,
    upload_discard,
    upload_get,
    upload_preview,
    upload_runs_as_job,
    upload_stage,
    upload_summary,
)
from annotation.upload_limits import (
    SizeLimitHandler,
    over_limit_message,
    too_large,
    upload_handlers,
)

FORMAT_KINDS = {name: getattr(module, "KIND", None) for name, module in FORMATS.items()}


class UploadForm(forms.Form):
    format = forms.ChoiceField()
    split = forms.ChoiceField(choices=[("", "as the files say"), ("train", "train"),
                                       ("dev", "dev"), ("test", "test")], required=False)
    licence = forms.CharField(
        max_length=200, required=False,
        help_text="The source data's licence (e.g. CC BY-SA 4.0), stored on the project on "
                  "import for the Hugging Face dataset card; empty leaves the project's as is.")
    attribution = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Who made the source data and how to cite it; empty leaves the project's "
                  "as is.")

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [
            (name, name) for name, kind in FORMAT_KINDS.items()
            if kind in (None, project.kind)]


def _page(request, project, form, *, status=200, **context):
    return render(request, "frontend/staff/import.html", {
        "project": project, "form": form, "limit": settings.UNPACK_UPLOAD_MAX_BYTES,
        "max_files": settings.UNPACK_UPLOAD_MAX_FILES,
        "job_min_bytes": settings.UNPACK_UPLOAD_JOB_MIN_BYTES, **context}, status=status)


@streams_upload  # its body may be an upload's size; its fields are read by the view
@csrf_exempt  # the upload handlers must be set before the body is read; CSRF is checked below
@page_requires("change_projects")
def import_upload(request, slug: str):
    """GET: the form. POST with files: stage them and show the preview. POST ``commit`` (the
    staged upload's token): import. POST ``discard``: forget the staged files."""
    limit = upload_handlers(request) if request.method == "POST" else None
    return _import_upload(request, slug, limit)


@csrf_protect
def _import_upload(request, slug: str, limit: SizeLimitHandler | None):
    project = get_object_or_404(Project, slug=slug)
    if request.method != "POST":
        return _page(request, project, UploadForm(project=project))
    if too_large(request):
        return _page(request, project, UploadForm(project=project), status=413,
                     upload_error=over_limit_message())
    form = UploadForm(request.POST, project=project)
    if limit is not None and limit.exceeded:
        return _page(request, project, UploadForm(project=project), status=413,
                     upload_error=over_limit_message())
    token = request.POST.get("upload", "")
    if token:
        try:
            staged = upload_get(token=token, user_id=request.user.pk, project=project)
        except UploadError as error:
            return _page(request, project, UploadForm(project=project), status=400,
                         upload_error=str(error))
        if "discard" in request.POST:
            upload_discard(staged=staged)
            messages.success(request, "The uploaded files were discarded; nothing was imported.")
            return redirect("staff:import", slug=project.slug)
        if upload_runs_as_job(staged):
            return _import_as_job(request, project, staged)
        try:
            result = upload_commit(staged=staged)
        except ImportInputError as error:
            return _page(request, project, UploadForm(project=project), status=400,
                         upload_error=f"{error} — nothing was imported.")
        messages.success(request, upload_summary(result)["message"])
        for warning in result.warnings:
            messages.warning(request, warning)
        return redirect("staff:import", slug=project.slug)
    if not form.is_valid():
        return _page(request, project, form, status=400)
    try:
        staged = upload_stage(files=request.FILES.getlist("files"), project=project,
                              fmt=form.cleaned_data["format"],
                              split=form.cleaned_data["split"] or None,
                              user_id=request.user.pk,
                              licence=form.cleaned_data["licence"] or None,
                              attribution=form.cleaned_data["attribution"] or None)
    except UploadError as error:
        return _page(request, project, form, status=400,
                     upload_error=f"{error}; nothing was imported.")
    try:
        preview = upload_preview(staged=staged)
    except ImportInputError as error:
        upload_discard(staged=staged)
        return _page(request, project, form, status=400,
                     upload_error=f"{error} — nothing was imported.")
    return _page(request, project, form, staged=staged, preview=preview,
                 created=sorted(preview.created.items()))


def _import_as_job(request, project: Project, staged: StagedUpload):
    """Start the import of a big upload as a staff job and go to its page, which follows its
    progress (and does so again after a reload); inline (no broker) the job has run when
    ``job_start`` returns and its page shows the outcome. A second click on "Import" finds the
    job of this upload already started (its identity is the upload) and starts nothing."""
    try:
        started = job_start(kind=Job.Kind.IMPORT, project=project, user=request.user,
                            params={"upload": staged.token})
    except (JobRefused, JobQueueUnavailable) as error:
        return _page(request, project, UploadForm(project=project), status=400,
                     upload_error=f"The import did not start: {error}")
    if not started.created:
        messages.info(request, f"This import is already {started.job.state} (job "
                               f"{started.job.pk}); it was not started a second time.")
    return redirect("staff_jobs:detail", job_id=started.job.pk)


urlpatterns = [
    path("projects/<slug:slug>/import/", import_upload, name="import"),
]
