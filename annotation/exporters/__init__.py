"""Exports: one module per format over the streaming base in ``base.py``.

``export_project(project=…, format_name=…, out_dir=…)`` is what ``manage.py export_data``
calls; :data:`EXPORTERS` maps each format name to its exporter class.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..models import Project
from .aggregated import AggregatedExporter, aggregation_is_on
from .base import Exporter, ExportError, WrittenFile
from .canard import CanardExporter
from .claire import ClaireExporter
from .decontext import DecontextExporter
from .generic import GenericJsonlExporter
from .sluice import SluiceExporter
from .websplit import WebSplitExporter

EXPORTERS: dict[str, type[Exporter]] = {
    exporter.format_name: exporter
    for exporter in (DecontextExporter, ClaireExporter, CanardExporter, WebSplitExporter,
                     SluiceExporter, GenericJsonlExporter)
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
    return written


__all__ = ["EXPORTERS", "ExportError", "export_project"]
