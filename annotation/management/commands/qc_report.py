"""``python manage.py qc_report SLUG [--json] [--no-flags]``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.progress import ProgressBar
from annotation.models import Project
from annotation.selectors import projects as project_selectors
from annotation.selectors.counts import COUNT_LABELS
from annotation.services.qc import REPORT_WORKERS, project_qc_run
from annotation.services.staff_jobs import job_record_finished


class Command(BaseCommand):
    help = "Agreement, aggregation, cleaning figures and flags of a project (flags are stored)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--no-flags", action="store_true",
                            help="compute flags without storing them")

    def handle(self, *args, slug, json: bool, no_flags: bool, **options):
        try:
            project = project_selectors.project_get(slug=slug)
        except Project.DoesNotExist:
            raise CommandError(f"no project {slug!r}") from None
        try:
            with ProgressBar(f"QC {project.slug}") as progress:
                report = project_qc_run(project=project, store_flags=not no_flags,
                                        progress=progress)
        except ValueError as error:
            raise CommandError(str(error)) from None
        # Recorded as a finished QC job, as "Run QC now" records its run: the dashboard's
        # figures and the Hugging Face card read the latest QC job, whoever started it.
        job = job_record_finished(kind="qc", project=project, result=report,
                                  params={"store_flags": not no_flags})
        self.stderr.write(f"recorded as QC job {job.pk}: the dashboard and the Hugging Face "
                          "card show this report")
        if json:
            self.stdout.write(dumps(report))
        else:
            self.stdout.write(render(report))


def dumps(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=True)


def _number(value) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def render(report: dict) -> str:
    lines = [f"QC report — {report['project']} ({report['task']})",
             "items per split: " + ", ".join(f"{split} {n}" for split, n in
                                             sorted(report["items_per_split"].items())),
             f"answers in QC (counted + imported + rejected): {report['annotations']}"]
    counts = report.get("dashboard", {}).get("answer_counts") or {}
    lines += [f"  {COUNT_LABELS[name]}: {n}" for name, n in counts.items()
              if name != "in_qc" and name in COUNT_LABELS]
    lines += ["", "Agreement"]
    for key, value in report["agreement"].items():
        if key not in ("per_worker", "intervals_by_split"):
            lines.append(f"  {key}: {_number(value) if not isinstance(value, dict) else value}")
    workers = report["agreement"].get("per_worker") or []
    if workers:
        lines.append("  per worker (leave-one-out, lowest first): worker (pseudonym)  items  "
                     "agreement  mean |dev|")
        for row in workers[:REPORT_WORKERS]:
            lines.append(f"    {worker_name(row):>13}  "
                         f"{row['n_compared']:>5}  "
                         f"{_number(row['agreement']):>9}  {_number(row['mean_abs_deviation'])}")
    lines += _interval_lines(report["agreement"].get("intervals_by_split") or {})
    if "aggregation" in report:
        lines += ["", "Aggregation"]
        lines += [f"  {key}: {_number(value) if not isinstance(value, dict) else value}"
                  for key, value in report["aggregation"].items()]
    lines += _worker_quality_lines(report.get("worker_quality") or {})
    if "cleaning" in report:
        lines += ["", "Cleaning (applied by export_data --format sluice)"]
        for split, counts in report["cleaning"].items():
            lines.append(f"  {split}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for warning in report.get("warnings", []):
        lines += ["", f"WARNING: {warning}"]
    lines += ["", "Flags"]
    lines.append("  raised: " + (", ".join(f"{reason} {n}" for reason, n in
                                          report["flags_raised"].items()) or "none"))
    if "flags_stored" in report:
        lines.append("  stored: " + ", ".join(f"{k} {v}" for k, v in
                                               report["flags_stored"].items()))
    lines.append("  by status: " + (", ".join(f"{k} {v}" for k, v in
                                             sorted(report["flags_by_status"].items())) or "none"))
    return "\n".join(lines)


def _interval_lines(intervals: dict) -> list[str]:
    """Bootstrap 95% intervals per split (resampling items)."""
    lines = []
    for split, statistics in intervals.items():
        for name, interval in statistics.items():
            lines.append(f"  {split} {name}: {_number(interval['estimate'])} "
                         f"[{_number(interval['low'])}, {_number(interval['high'])}] "
                         f"(95% bootstrap over items, {interval['n_resamples']} resamples)")
    return lines


def _worker_quality_lines(quality: dict) -> list[str]:
    """Which aggregation was used and why, and the least reliable workers."""
    if not quality.get("n_items"):
        return []
    used = quality["model"] if quality["used"] == "model" else quality["plain"]
    lines = ["", "Worker quality", f"  aggregation used: {used} ({quality['reason']})"]
    if quality.get("labels"):
        lines.append("  labels: " + ", ".join(f"{label} {n}" for label, n in
                                               quality["labels"].items()))
    lines.append("  estimated reliability (least reliable first): " + ", ".join(
        f"{worker_name(row)} {row['reliability']:.2f}"
        for row in quality["workers"][:REPORT_WORKERS]))
    return lines


def worker_name(row: dict) -> str:
    """A worker as staff see them everywhere (issue 24): the pseudonym, a local annotator's
    username beside it; the database id only in a report stored before workers had names."""
    name = row.get("pseudonym") or f"worker {row['worker']}"
    return f"{name} ({row['username']})" if row.get("username") else name
