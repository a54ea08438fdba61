"""Exports: one module per format over the streaming base in ``base.py``.

``export_project(project=…, format_name=…, out_dir=…)`` is what ``manage.py export_data``
calls; :data:`EXPORTERS` maps each format name to its exporter class.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

from ..models import Project
from .adjudicated import AdjudicatedExporter, has_references
from .aggregated import AggregatedExporter, aggregation_is_on
from .base import Exporter, ExportError, WrittenFile
from .canard import CanardExporter
from .claire import ClaireExporter
from .decontext import DecontextExporter
from .generic import GenericJsonlExporter
from .huggingface import HuggingFaceExporter
from .sluice import SluiceExporter
from .websplit import WebSplitExporter

#: The download's deflate level: zlib's fastest. The zip holds the same files; at level 6 (the
#: default) zipping the 589 MB JSONL of 1,000,000 answers took 3.6 s of CPU, at 1 1.9 s, for
#: 41 MB instead of 34 MB.
ZIP_LEVEL = 1

EXPORTERS: dict[str, type[Exporter]] = {
    exporter.format_name: exporter
    for exporter in (DecontextExporter, ClaireExporter, CanardExporter, WebSplitExporter,
                     SluiceExporter, GenericJsonlExporter, HuggingFaceExporter)
}


def export_project(*, project: Project, format_name: str, out_dir: Path,
                   progress: Callable[[int, int | None, str], None] | None = None
                   ) -> list[WrittenFile]:
    """Write the project's files in ``format_name`` into ``out_dir`` (created if needed);
    ``progress(files done, files, message)`` hears how far it got (``Exporter.write``)."""
    try:
        exporter_class = EXPORTERS[format_name]
    except KeyError:
        raise ExportError(
            f"unknown export format {format_name!r}; choose from {', '.join(sorted(EXPORTERS))}"
        ) from None
    written = exporter_class(project).write(Path(out_dir), progress=progress)
    if aggregation_is_on(project):  # beside the dataset; its own files never change
        written += AggregatedExporter(project).write(Path(out_dir))
    if has_references(project):  # reviewers' adjudicated references, beside the dataset too
        written += AdjudicatedExporter(project).write(Path(out_dir))
    return written


def export_warnings(written: list[WrittenFile]) -> list[str]:
    """What the reader of an export must know (examples left out…), one line each, in the
    words every entry point shows: ``export_data`` prints each as ``note: …``, the export
    pages list them and the download's ``MANIFEST.json`` carries them."""
    return [note for file in written for note in file.notes]


def export_manifest(*, project: Project, format_name: str, written: list[WrittenFile],
                    out_dir: Path) -> dict:
    """The ``MANIFEST.json`` of a download: what was exported, its files and its warnings."""
    return {"project": project.slug, "task": project.kind, "format": format_name,
            "files": [{"name": str(Path(file.path).relative_to(out_dir)),
                       "records": file.records, "bytes": file.bytes_written}
                      for file in written],
            "warnings": export_warnings(written)}


def export_zip(*, project: Project, format_name: str, work_dir: Path) -> tuple[Path, dict]:
    """Export into ``work_dir``/files and zip it (with ``MANIFEST.json``) to
    ``work_dir``/export.zip, streamed from disk; returns the zip's path and the manifest."""
    files_dir = work_dir / "files"
    written = export_project(project=project, format_name=format_name, out_dir=files_dir)
    manifest = export_manifest(project=project, format_name=format_name, written=written,
                               out_dir=files_dir)
    archive = work_dir / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL) as bundle:
        for file in written:
            bundle.write(file.path, arcname=str(Path(file.path).relative_to(files_dir)))
        bundle.writestr("MANIFEST.json", json.dumps(manifest, indent=2, sort_keys=True))
    return archive, manifest


__all__ = ["EXPORTERS", "ZIP_LEVEL", "ExportError", "export_manifest", "export_project",
           "export_warnings", "export_zip"]
