"""python manage.py launch_batch SLUG --split dev --items-per-hit 5 --reward 0.50 --title ...

Prolific: ``--provider prolific --estimated-minutes 10`` (required), ``--duration`` is the
study's maximum allowed time, ``--device desktop`` (repeatable), ``--first-language 19``
(Prolific's choice ids, repeatable), ``--min-approval`` and ``--min-approved`` become filters.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from functools import partial

from celery import current_app
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.models import Batch, Project
from annotation.money import provider_money_text
from annotation.providers.retry import RetryWait, retry_waits_reported_to
from annotation.services.audit import command_line
from annotation.services.batches.common import DEFAULT_LOCALES
from annotation.services.batches.decide import parse_duration_seconds
from annotation.services.batches.plan import (
    LAUNCH_PROVIDERS,
    PROLIFIC_DEVICES,
    LaunchOptions,
    adaptive_cost_lines,
    batch_launch,
    batch_plan,
)
from annotation.services.batches.publish import batch_resume, resume_command

from ..actor import add_actor_argument, os_login, resolve_actor


def _cents(text: str) -> int:
    try:
        dollars = Decimal(text)
    except InvalidOperation as error:
        raise CommandError(f"--reward {text!r} is not an amount such as 0.50 (in the "
                           "provider's currency)") from error
    if dollars.as_tuple().exponent < -2:
        raise CommandError(f"--reward {text!r} has more than two decimals")
    return int(dollars * 100)


def _seconds(option: str, text: str) -> int:
    try:
        return parse_duration_seconds(text)
    except ValueError as error:
        raise CommandError(f"{option}: {error}") from error


class Command(BaseCommand):
    help = ("Plan a batch of HITs, show its cost estimate and (with --yes) launch it. "
            "MTurk sandbox unless --live.")

    def add_arguments(self, parser):
        parser.add_argument("slug", nargs="?", help="project slug")
        parser.add_argument("--split", action="append", default=[],
                            help="train, dev or test (repeatable)")
        parser.add_argument("--items", default="", help="explicit item ids, comma-separated")
        parser.add_argument("--items-per-hit", type=int, default=5)
        parser.add_argument("--reward", default=None,
                            help="per assignment, in the currency the provider pays in "
                            "(MTurk: US dollars), e.g. 0.50")
        parser.add_argument("--title", default="")
        parser.add_argument("--description", default="")
        parser.add_argument("--keywords", default="")
        parser.add_argument("--assignments", type=int, default=None,
                            help="per item (default: the project's redundancy for the split)")
        parser.add_argument("--lifetime", default="7d")
        parser.add_argument("--duration", default="1h", help="time allotted per assignment")
        parser.add_argument("--auto-approve", default="3d")
        parser.add_argument("--locale", default=",".join(DEFAULT_LOCALES),
                            help="MTurk: countries workers must be in; '' for anywhere")
        parser.add_argument("--min-approval", type=int, default=None, help="percent, e.g. 90")
        parser.add_argument("--min-approved", type=int, default=None, help="approved HITs")
        parser.add_argument("--qualification-test", type=int, default=None,
                            help="id of a Qualification whose test workers must pass")
        parser.add_argument("--provider", default="mturk",
                            help=f"one of: {', '.join(LAUNCH_PROVIDERS)} (local annotators need "
                                 "no batch: they work from /annotate/<project>/)")
        parser.add_argument("--estimated-minutes", type=int, default=None,
                            help="Prolific: the study's estimated completion time (required)")
        parser.add_argument("--device", action="append", default=[],
                            choices=PROLIFIC_DEVICES,
                            help="Prolific: a device the study admits (repeatable; desktop "
                                 "when none is given)")
        parser.add_argument("--first-language", action="append", default=[],
                            help="Prolific: a first-language choice id participants must have "
                                 "(repeatable)")
        parser.add_argument("--live", action="store_true",
                            help="real MTurk with real money (default: the sandbox)")
        parser.add_argument("--yes", action="store_true", help="confirm the estimate and launch")
        add_actor_argument(parser)
        parser.add_argument("--resume", type=int, default=None, metavar="BATCH_ID",
                            help="publish a failed or interrupted batch again")

    def handle(self, *args, **options):
        with command_line(os_login()):
            self._handle(options)

    def _handle(self, options):
        if options["resume"] is not None:
            self._resume(options["resume"], resolve_actor(options, "run_batches"))
            return
        if not options["slug"] or options["reward"] is None or not options["title"]:
            raise CommandError("SLUG, --reward and --title are required (or --resume ID)")
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"no project {options['slug']!r}")
        try:
            item_ids = tuple(int(part) for part in options["items"].split(",") if part.strip())
        except ValueError as error:
            raise CommandError("--items must be comma-separated integers") from error
        launch = LaunchOptions(
            title=options["title"],
            description=options["description"],
            keywords=options["keywords"],
            reward_cents=_cents(options["reward"]),
            items_per_hit=options["items_per_hit"],
            splits=tuple(options["split"]),
            item_ids=item_ids,
            assignments=options["assignments"],
            lifetime_seconds=_seconds("--lifetime", options["lifetime"]),
            assignment_duration_seconds=_seconds("--duration", options["duration"]),
            auto_approval_delay_seconds=_seconds("--auto-approve", options["auto_approve"]),
            locales=tuple(code.strip().upper() for code in options["locale"].split(",")
                          if code.strip()),
            min_percent_approved=options["min_approval"],
            min_hits_approved=options["min_approved"],
            qualification_id=options["qualification_test"],
            provider=options["provider"],
            live=options["live"],
            estimated_minutes=options["estimated_minutes"],
            devices=tuple(options["device"]) or ("desktop",),
            first_languages=tuple(options["first_language"]),
        )
        try:
            plan = batch_plan(project=project, options=launch)
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from error
        estimate = plan.estimate
        if launch.provider == "prolific":
            where = f"Prolific ({settings.PROLIFIC_API_URL})"
            amount = partial(provider_money_text, provider="prolific")
            money = (f"  rewards {amount(estimate.reward_cents)} + Prolific service fee "
                     f"({settings.PROLIFIC_SERVICE_FEE_PERCENT}%) "
                     f"{amount(estimate.fee_cents)} + VAT on the fee "
                     f"({settings.PROLIFIC_VAT_PERCENT}%) {amount(estimate.vat_cents)} = "
                     f"{amount(estimate.total_cents)}")
            units = f"{estimate.hits} studies, {estimate.assignments} places"
        else:
            where = "LIVE MTurk (real money)" if launch.live else "MTurk sandbox"
            if settings.MTURK_ENDPOINT_URL:
                # Say where the requests really go: a rehearsal against the stand-in is no
                # sandbox.
                where = f"the MTurk endpoint {settings.MTURK_ENDPOINT_URL}"
            amount = partial(provider_money_text, provider="mturk")
            money = (f"  rewards {amount(estimate.reward_cents)} + MTurk fee "
                     f"{amount(estimate.fee_cents)} = {amount(estimate.total_cents)}")
            units = f"{estimate.hits} HITs, {estimate.assignments} assignments"
        self.stdout.write(
            f"{project.slug}: {units} on {where}; {len(plan.skipped_item_ids)} items skipped "
            f"(already covered)\n{money}")
        if estimate.adaptive is not None:
            self.stdout.write("\n".join(f"  {line}" for line in adaptive_cost_lines(
                estimate.adaptive, partial(provider_money_text, provider=launch.provider))))
        if not options["yes"]:
            self.stdout.write("Nothing launched: re-run with --yes to confirm this estimate.")
            return
        actor = resolve_actor(options, "launch_batches")
        try:
            with retry_waits_reported_to(self._show_wait):
                batch = batch_launch(project=project, options=launch,
                                     confirmed_total_cents=estimate.total_cents,
                                     created_by=actor)
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from error
        batch.refresh_from_db()
        self._report(batch, done=f"batch {batch.pk} launched")

    def _resume(self, batch_id: int, actor) -> None:
        if not Batch.objects.filter(pk=batch_id).exists():
            raise CommandError(f"no batch {batch_id}")
        try:
            with retry_waits_reported_to(self._show_wait):
                batch = batch_resume(batch_id=batch_id, actor=actor)
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from error
        self._report(batch, done=f"batch {batch.pk}: publishing resumed")

    def _show_wait(self, wait: RetryWait) -> None:
        """Inline, the publishing job runs in this command: say when it waits, and why."""
        self.stdout.write(wait.describe())
        self.stdout.flush()

    def _report(self, batch: Batch, *, done: str) -> None:
        """Say how publishing ended; a batch that did not publish everything inline exits
        non-zero. Inline (no broker) the job has run already, and nothing runs it again by
        itself: the message names the resume command. With a worker it is queued."""
        published = batch.hits.filter(provider_hit_id__isnull=False).count()
        progress = f"{published}/{batch.hits.count()} HITs published"
        if batch.status == Batch.Status.FAILED:
            raise CommandError(f"{done}, but publishing failed ({progress}): {batch.error}; "
                               f"fix the cause, then `{resume_command(batch.pk)}`")
        if batch.status == Batch.Status.PUBLISHED:
            self.stdout.write(self.style.SUCCESS(f"{done}: published, {progress}"))
            return
        if batch.error:  # the batch's own words say what happens next (publish.py)
            raise CommandError(f"{done}, but publishing did not finish ({batch.status}, "
                               f"{progress}): {batch.error}")
        if current_app.conf.task_always_eager and transaction.get_connection().in_atomic_block:
            # Called inside a transaction (a script, a test): the inline job runs at its commit.
            self.stdout.write(f"{done} ({batch.status}, {progress}); publishing runs inline "
                              "when the surrounding transaction commits")
            return
        if current_app.conf.task_always_eager:
            raise CommandError(f"{done}, but publishing stopped ({batch.status}, {progress}); "
                               f"nothing runs it again by itself here: "
                               f"`{resume_command(batch.pk)}`")
        self.stdout.write(self.style.SUCCESS(
            f"{done} ({batch.status}, {progress}); publishing runs as a Celery job on the "
            "worker, which retries throttled calls"))
