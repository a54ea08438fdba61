"""``python manage.py export_data SLUG --format FORMAT --out DIR``."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.exporters import EXPORTERS, ExportError, export_project, export_warnings
from annotation.management.progress import ProgressBar
from annotation.models import Project
from annotation.selectors import projects as project_selectors


class Command(BaseCommand):
    help = "Write a project's train/dev/test files in a dataset's own format."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--format", required=True, choices=sorted(EXPORTERS),
                            dest="format_name")
        parser.add_argument("--out", required=True, type=Path)

    def handle(self, *args, slug, format_name, out, **options):
        try:
            project = project_selectors.project_get(slug=slug)
        except Project.DoesNotExist:
            raise CommandError(f"no project {slug!r}") from None
        try:
            with ProgressBar(f"export {project.slug} ({format_name})", unit="file") as progress:
                written = export_project(project=project, format_name=format_name,
                                         out_dir=out, progress=progress)
        except ExportError as error:
            raise CommandError(str(error)) from None
        for file in written:
            self.stdout.write(f"{file.path}  {file.records} records  {file.bytes_written} bytes")
        for warning in export_warnings(written):
            self.stdout.write(f"note: {warning}")
