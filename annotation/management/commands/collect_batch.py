"""python manage.py collect_batch BATCH_ID | --all  -- fetch submitted MTurk work now."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Batch
from annotation.services.batches.collect import CollectResult, batch_collect, open_batch_ids


class Command(BaseCommand):
    help = "Collect submitted assignments of one batch (or every open MTurk batch)."

    def add_arguments(self, parser):
        parser.add_argument("batch_id", nargs="?", type=int)
        parser.add_argument("--all", action="store_true", help="every open MTurk batch")

    def handle(self, *args, **options):
        if options["all"] == (options["batch_id"] is not None):
            raise CommandError("give a BATCH_ID or --all")
        if options["all"]:
            batch_ids = open_batch_ids()
        else:
            if not Batch.objects.filter(pk=options["batch_id"]).exists():
                raise CommandError(f"no batch {options['batch_id']}")
            batch_ids = [options["batch_id"]]
        total = CollectResult()
        for batch_id in batch_ids:
            result = batch_collect(batch_id=batch_id)
            total.merge(result)
            self.stdout.write(
                f"batch {batch_id}: {result.hits_seen} HITs, {result.assignments_seen} "
                f"assignments seen, {result.assignments_created} new, "
                f"{result.annotations_created} annotations stored, "
                f"{result.invalid_answers} invalid answers, {result.status_changes} status "
                "changes")
        if len(batch_ids) != 1:
            self.stdout.write(f"{len(batch_ids)} batches: {total.assignments_created} new "
                              f"assignments, {total.annotations_created} annotations")
