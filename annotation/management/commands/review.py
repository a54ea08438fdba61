"""python manage.py review list|approve|reject|bonus|block  -- decide on MTurk work.

Decisions are recorded at once and sent to MTurk by Celery jobs (retried until they land).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Worker
from annotation.selectors.batches import assignment_by_reference, assignments_pending_review
from annotation.services.batches.decide import assignment_decide, bonus_create, worker_set_blocked


class Command(BaseCommand):
    help = "List submitted assignments; approve, reject, bonus; block or unblock workers."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        listing = actions.add_parser("list", help="submitted assignments awaiting a decision")
        listing.add_argument("--project", default=None)
        listing.add_argument("--batch", type=int, default=None)
        listing.add_argument("--limit", type=int, default=100)
        approve = actions.add_parser("approve")
        approve.add_argument("assignments", nargs="+", help="AssignmentIds or ids")
        approve.add_argument("--message", default="")
        reject = actions.add_parser("reject")
        reject.add_argument("assignments", nargs="+")
        reject.add_argument("--message", required=True, help="what the worker reads")
        bonus = actions.add_parser("bonus")
        bonus.add_argument("assignment")
        bonus.add_argument("--amount", required=True, help="dollars, e.g. 0.25")
        bonus.add_argument("--reason", required=True)
        block = actions.add_parser("block")
        block.add_argument("worker", help="MTurk WorkerId")
        block.add_argument("--reason", default="")
        block.add_argument("--unblock", action="store_true")

    def handle(self, *args, **options):
        try:
            getattr(self, f"_{options['action']}")(options)
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from error

    def _assignment(self, reference: str):
        assignment = assignment_by_reference(reference)
        if assignment is None:
            raise CommandError(f"no assignment {reference!r}")
        return assignment

    def _list(self, options):
        pending = assignments_pending_review(project_slug=options["project"],
                                             batch_id=options["batch"])
        count = 0
        for assignment in pending[: options["limit"]]:
            count += 1
            submitted = (f"{assignment.submitted_at:%Y-%m-%d %H:%M}"
                         if assignment.submitted_at else "?")
            self.stdout.write(
                f"{assignment.pk}\t{assignment.provider_assignment_id}\t"
                f"worker {assignment.worker.external_id}\tbatch {assignment.hit.batch_id}\t"
                f"{assignment.annotation_count} annotations\tsubmitted {submitted}")
        self.stdout.write(f"{count} assignment(s) awaiting review")

    def _decide(self, options, approve: bool):
        for reference in options["assignments"]:
            assignment = assignment_decide(assignment_id=self._assignment(reference).pk,
                                           approve=approve, message=options["message"])
            self.stdout.write(f"{assignment.provider_assignment_id}: {assignment.status}")

    def _approve(self, options):
        self._decide(options, approve=True)

    def _reject(self, options):
        self._decide(options, approve=False)

    def _bonus(self, options):
        try:
            dollars = Decimal(options["amount"])
        except InvalidOperation as error:
            raise CommandError("--amount must be dollars, e.g. 0.25") from error
        if dollars.as_tuple().exponent < -2:
            raise CommandError("--amount has fractions of a cent")
        bonus = bonus_create(assignment_id=self._assignment(options["assignment"]).pk,
                             amount_cents=int(dollars * 100), reason=options["reason"])
        self.stdout.write(f"bonus {bonus.pk}: ${dollars:.2f} queued")

    def _block(self, options):
        worker = Worker.objects.filter(provider=Worker.Provider.MTURK,
                                       external_id=options["worker"]).first()
        if worker is None:
            raise CommandError(f"no MTurk worker {options['worker']!r}")
        worker = worker_set_blocked(worker_id=worker.pk, blocked=not options["unblock"],
                                    reason=options["reason"])
        state = "blocked" if worker.is_blocked else "unblocked"
        self.stdout.write(f"{worker.external_id}: {state}")
