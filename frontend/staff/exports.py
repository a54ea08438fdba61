"""The console's export page: every format the project exports to, a check that lists the
files and the warnings (examples left out…) before downloading, and the download itself (a
zip with ``MANIFEST.json`` carrying the same warnings, ``annotation.exporters.export_zip``)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from django.contrib import messages
from django.http import FileResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_GET

from annotation.exporters import EXPORTERS, ExportError, export_zip
from annotation.models import Project
from annotation.roles import page_requires


def project_formats(project: Project) -> list[dict]:
    """The formats ``project`` exports to, as plain values for a template."""
    return [{"name": exporter.format_name, "description": exporter.description,
             "every_kind": not exporter.kinds}
            for exporter in EXPORTERS.values()
            if not exporter.kinds or project.kind in exporter.kinds]


def export_download(request, *, project: Project, format_name: str, back: tuple[str, str]):
    """The export as a zip streamed from a temporary file (removed once sent); an export that
    fails goes back to the page ``back`` (url name, slug) with its message."""
    folder = Path(tempfile.mkdtemp(prefix="unpack-export-"))
    try:
        archive, _ = export_zip(project=project, format_name=format_name, work_dir=folder)
        handle = archive.open("rb")  # still readable once its folder is removed (POSIX)
    except ExportError as error:
        messages.error(request, f"The export failed: {error}")
        return redirect(back[0], slug=back[1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return FileResponse(handle, as_attachment=True,
                        filename=f"{project.slug}-{format_name}.zip",
                        content_type="application/zip")


@require_GET
@page_requires("see_work")
def exports(request, slug: str):
    """GET: the formats. ``?check=FORMAT``: the export is made (nothing kept) and its files
    and warnings listed. ``?format=FORMAT``: the download."""
    project = get_object_or_404(Project, slug=slug)
    formats = project_formats(project)
    names = {entry["name"] for entry in formats}
    chosen = request.GET.get("format")
    if chosen is not None:
        if chosen not in names:
            messages.error(request, f"{project.name} has no export format {chosen!r}.")
            return redirect("staff:exports", slug=slug)
        return export_download(request, project=project, format_name=chosen,
                               back=("staff:exports", slug))
    checked = request.GET.get("check")
    manifest = None
    if checked is not None:
        if checked not in names:
            messages.error(request, f"{project.name} has no export format {checked!r}.")
            return redirect("staff:exports", slug=slug)
        with tempfile.TemporaryDirectory(prefix="unpack-export-") as folder:
            try:
                _, manifest = export_zip(project=project, format_name=checked,
                                         work_dir=Path(folder))
            except ExportError as error:
                messages.error(request, f"The export failed: {error}")
    return render(request, "frontend/staff/exports.html", {
        "project": project, "formats": formats, "checked": checked, "manifest": manifest})


urlpatterns = [
    path("projects/<slug:slug>/export/", exports, name="exports"),
]
