"""``python manage.py import_data FORMAT PATH… --project SLUG [--split SPLIT] [--name NAME]``."""

from __future__ import annotations

from contextlib import nullcontext

from django.core.management.base import BaseCommand, CommandError

from annotation.importers import FORMATS, ImportInputError
from annotation.management.progress import ProgressBar
from annotation.services.imports import UnknownFormatError, import_files


class Command(BaseCommand):
    help = ("Import source material (and released annotations) from a dataset's own files "
            "into a project, all-or-nothing. Formats: " + ", ".join(FORMATS) + ".")

    def add_arguments(self, parser):
        # Not choices=: an unknown format gets the same one-line error as any other bad input.
        parser.add_argument("format", help=", ".join(FORMATS))
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--project", required=True, help="project slug (created if missing,"
                            " except for mturk-csv)")
        parser.add_argument("--split", choices=["train", "dev", "test"],
                            help="split of the new items (default: from the file name)")
        parser.add_argument("--name", help="name of the project when it is created")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")
        parser.add_argument("--licence", help="the source data's licence, stored on the project "
                            "(the Hugging Face dataset card shows it)")
        parser.add_argument("--attribution", help="the source data's attribution (citation, "
                            "authors), stored on the project for the dataset card")

    def handle(self, *args, **options):
        quiet = options["quiet"] or options["verbosity"] == 0
        # The same progress the console's import job records: bytes read, then the writing
        # steps (a bar on stderr, drawn only on a terminal).
        bar = nullcontext() if quiet else ProgressBar("import", unit="step")
        try:
            with bar:
                result = import_files(fmt=options["format"], paths=options["paths"],
                                      project_slug=options["project"],
                                      split=options["split"], name=options["name"],
                                      progress=None if quiet else bar,
                                      licence=options["licence"],
                                      attribution=options["attribution"])
        except (ImportInputError, UnknownFormatError) as error:
            raise CommandError(str(error)) from None
        if options["verbosity"] == 0:
            return
        if not result.files_imported:
            self.stdout.write(f"nothing to do: {', '.join(result.files_skipped)} already "
                              f"imported into {result.project.slug}")
            return
        created = ", ".join(f"{count} {model}" for model, count in result.created.items())
        self.stdout.write(self.style.SUCCESS(
            f"imported {result.rows} rows from {', '.join(result.files_imported)} into "
            f"{result.project.slug}" + (" (new project)" if result.project_created else "")
            + f": {created or 'nothing new'}"))
        if result.files_skipped:
            self.stdout.write(f"already imported, skipped: {', '.join(result.files_skipped)}")
        for warning in result.warnings:
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
