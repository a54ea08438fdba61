"""``python manage.py make_splits SLUG --rule group|websplit|canard --seed N
[--fractions 0.8,0.1,0.1] [--force]``: ``project_split``, the service the console's splits
job runs, with a progress bar on stderr (items moved)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.management.progress import ProgressBar
from annotation.models import Project
from annotation.selectors import projects as project_selectors
from annotation.services.splits import RULES, SplitRefused, project_split


def parse_fractions(text: str) -> dict[str, float]:
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise CommandError(f"--fractions: not numbers: {text!r}") from None
    if len(values) != 3 or any(value < 0 for value in values) or sum(values) <= 0:
        raise CommandError("--fractions: three non-negative numbers train,dev,test")
    return dict(zip(("train", "dev", "test"), values, strict=True))


class Command(BaseCommand):
    help = "Split a project's items into train/dev/test without leakage and freeze the result."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--rule", required=True, choices=RULES)
        parser.add_argument("--seed", required=True, type=int)
        parser.add_argument("--fractions", default="0.8,0.1,0.1")
        parser.add_argument("--force", action="store_true",
                            help="replace a frozen manifest and move annotated items")

    def handle(self, *args, slug, rule, seed, fractions, force, **options):
        try:
            project = project_selectors.project_get(slug=slug)
        except Project.DoesNotExist:
            raise CommandError(f"no project {slug!r}") from None
        try:
            with ProgressBar(f"split {project.slug} ({rule})", unit="item") as progress:
                result = project_split(project=project, rule=rule, seed=seed,
                                       fractions=parse_fractions(fractions), force=force,
                                       progress=progress)
        except (SplitRefused, ValueError) as error:
            raise CommandError(str(error)) from None
        state = "unchanged (same frozen manifest)" if result.unchanged else (
            f"{result.moved_items} item(s) moved")
        counts = ", ".join(f"{split} {n}" for split, n in result.counts.items())
        self.stdout.write(f"{project.slug}: {rule} split, seed {seed}: {counts}; {state}; "
                          f"manifest {result.manifest.pk}")
