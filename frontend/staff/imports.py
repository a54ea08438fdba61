"""The console's upload import: choose the format (and a split), upload one or more files
(CLAIRE's three TSVs at once), see a preview — rows parsed, items per split, what already
exists, or the importer's error naming the file, line and field — then import. Nothing is
written before the import, and the import is all-or-nothing (``annotation.services.uploads``
over the importers ``import_data`` uses).

Uploads stream to temporary files (``TemporaryFileUploadHandler`` only: nothing is held in
memory) through a handler that stops a request past ``UNPACK_UPLOAD_MAX_BYTES``. The import
runs in the request; an upload near the limit takes as long as ``import_data`` would (about
10,000+ rows a second, docs/importing.md), which the page says.
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
from annotation.models import Project
from annotation.request_guard import streams_upload
from annotation.roles import page_requires
from annotation.services.uploads import (
    UploadError,
    upload_commit,
    upload_discard,
    upload_get,
    upload_preview,
    upload_stage,
)
from annotation.upload_limits import SizeLimitHandler, too_large, upload_handlers

FORMAT_KINDS = {name: getattr(module, "KIND", None) for name, module in FORMATS.items()}


class UploadForm(forms.Form):
    format = forms.ChoiceField()
    split = forms.ChoiceField(choices=[("", "as the files say"), ("train", "train"),
                                       ("dev", "dev"), ("test", "test")], required=False)

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = [
            (name, name) for name, kind in FORMAT_KINDS.items()
            if kind in (None, project.kind)]


def _page(request, project, form, *, status=200, **context):
    return render(request, "frontend/staff/import.html", {
        "project": project, "form": form, "limit": settings.UNPACK_UPLOAD_MAX_BYTES,
        "max_files": settings.UNPACK_UPLOAD_MAX_FILES, **context}, status=status)


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
                     upload_error=f"The files are larger than the upload limit of "
                                  f"{settings.UNPACK_UPLOAD_MAX_BYTES:,} bytes; nothing was "
                                  "imported.")
    form = UploadForm(request.POST, project=project)
    if limit is not None and limit.exceeded:
        return _page(request, project, UploadForm(project=project), status=413,
                     upload_error=f"The files are larger than the upload limit of "
                                  f"{settings.UNPACK_UPLOAD_MAX_BYTES:,} bytes; nothing was "
                                  "imported.")
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
        try:
            result = upload_commit(staged=staged)
        except ImportInputError as error:
            return _page(request, project, UploadForm(project=project), status=400,
                         upload_error=f"{error} — nothing was imported.")
        messages.success(request, (
            f"Imported {result.rows} row(s) from {', '.join(result.files_imported)}."
            if result.files_imported else
            f"Nothing new: {', '.join(result.files_skipped)} had been imported already."))
        for warning in result.warnings:
            messages.warning(request, warning)
        return redirect("staff:import", slug=project.slug)
    if not form.is_valid():
        return _page(request, project, form, status=400)
    try:
        staged = upload_stage(files=request.FILES.getlist("files"), project=project,
                              fmt=form.cleaned_data["format"],
                              split=form.cleaned_data["split"] or None,
                              user_id=request.user.pk)
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


urlpatterns = [
    path("projects/<slug:slug>/import/", import_upload, name="import"),
]
