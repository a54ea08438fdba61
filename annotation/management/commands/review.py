"""python manage.py review list|approve|reject|approve-answer|reject-answer|bonus|bonus-resolve|
block|unblock|dismiss|adjudicate -- decide on collected work.

Every action is a service of ``annotation.services.decisions`` (the same as the review pages,
the API and the admin). Decisions are recorded at once and sent to the provider by Celery jobs
(retried until they land).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.management.progress import ProgressBar
from annotation.models import Annotation, Bonus, Flag, Item, Project, Worker
from annotation.pseudonyms import is_pseudonym
from annotation.selectors.adjudication import answer_words, item_answers, item_reference
from annotation.selectors.batches import assignment_by_reference, assignments_pending_review
from annotation.selectors.bonuses import bonus_report
from annotation.services import decisions
from annotation.services.adjudication import PICKABLE_STATES, item_reference_set
from annotation.services.audit import command_line

from ..actor import add_actor_argument, os_login, resolve_actor

#: The ``annotation.roles`` action of each subcommand that decides (``list`` only reads).
ACTION_OF = {"approve": "decide_assignments", "reject": "decide_assignments",
             "bonus": "decide_assignments", "bonus-check": "decide_assignments",
             "approve-answer": "decide_annotations",
             "reject-answer": "decide_annotations", "block": "decide_workers",
             "unblock": "decide_workers", "dismiss": "decide_flags",
             # Settling a reference; listing an item's answers only reads (``see_work``).
             "adjudicate": "decide_annotations"}


class Command(BaseCommand):
    help = ("List submitted assignments; approve or reject whole HITs, pay bonuses, block or "
            "unblock workers, dismiss flags.")

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        listing = actions.add_parser("list", help="submitted assignments awaiting a decision")
        listing.add_argument("--project", default=None)
        listing.add_argument("--batch", type=int, default=None)
        listing.add_argument("--limit", type=int, default=100)
        approve = actions.add_parser("approve", help="approve whole assignments (HITs)")
        approve.add_argument("assignments", nargs="*", help="AssignmentIds or ids; several "
                             "are approved at once (Prolific: one bulk call)")
        approve.add_argument("--message", default="")
        approve.add_argument("--all-pending", action="store_true",
                             help="approve every submitted assignment without an open flag "
                                  "(of --project; else of every project), as the review "
                                  "page's job does, with a progress bar")
        approve.add_argument("--project", default=None)
        reject = actions.add_parser("reject", help="reject whole assignments (HITs)")
        reject.add_argument("assignments", nargs="+")
        reject.add_argument("--message", required=True, help="what the worker reads "
                            "(Prolific: at least 100 characters)")
        reject.add_argument("--category", default="",
                            help="Prolific (required there): a rejection category, e.g. "
                                 "LOW_EFFORT, FAILED_INSTRUCTIONS, NO_DATA, OTHER")
        bonus = actions.add_parser("bonus", help="pay a bonus; re-sends an unpaid one")
        bonus.add_argument("assignment")
        bonus.add_argument("--amount", required=True,
                           help="in the currency the provider pays in (MTurk: US dollars), "
                           "e.g. 0.25")
        bonus.add_argument("--reason", required=True)
        bonus.add_argument("--again", action="store_true",
                           help="a second bonus for an assignment that already got one")
        approve_answer = actions.add_parser(
            "approve-answer", help="approve answers given outside a HIT (local, imported)")
        approve_answer.add_argument("annotations", nargs="+", type=int, help="annotation ids")
        approve_answer.add_argument("--message", default="")
        reject_answer = actions.add_parser(
            "reject-answer", help="reject answers given outside a HIT (in a HIT: the whole HIT)")
        reject_answer.add_argument("annotations", nargs="+", type=int)
        reject_answer.add_argument("--message", required=True)
        reject_answer.add_argument("--category", default="",
                                   help="Prolific: the rejection category of the whole HIT")
        block = actions.add_parser("block")
        block.add_argument("worker", help="the worker's provider id (e.g. MTurk WorkerId) or "
                                           "pseudonym")
        block.add_argument("--reason", default="")
        block.add_argument("--unblock", action="store_true", help="same as 'unblock'")
        block.add_argument("--project", default=None,
                           help="block from this project only (default: everywhere, which "
                                "also puts them on the provider's block list)")
        block.add_argument("--pending", choices=decisions.PENDING_CHOICES, default="leave",
                           help="their submitted, undecided work: reject it (with --message) "
                                "or leave it for review (bulk approvals skip it)")
        block.add_argument("--message", default="", help="with --pending reject: what the "
                           "worker reads (Prolific: at least 100 characters)")
        block.add_argument("--category", default="",
                           help="with --pending reject, Prolific: the rejection category")
        unblock = actions.add_parser("unblock")
        unblock.add_argument("worker")
        unblock.add_argument("--project", default=None,
                             help="lift the block from this project (default: everywhere)")
        resolve = actions.add_parser(
            "bonus-resolve", help="Prolific: after checking on Prolific a bonus whose pay call "
                                  "had an unknown outcome, say whether it was paid")
        resolve.add_argument("bonus", type=int, help="the bonus id")
        outcome = resolve.add_mutually_exclusive_group(required=True)
        outcome.add_argument("--paid", action="store_true", help="it was paid: mark it sent")
        outcome.add_argument("--not-paid", action="store_true",
                             help="it was not paid: pay it (once)")
        check = actions.add_parser(
            "bonus-check", help="check an unpaid bonus again now: settle a lost reply from the "
                                "provider's list of payments, or pay one never sent")
        check.add_argument("bonus", type=int, help="the bonus id")
        dismiss = actions.add_parser("dismiss", help="dismiss flags (the work is fine)")
        dismiss.add_argument("flags", nargs="+", type=int, help="flag ids")
        dismiss.add_argument("--note", default="")
        adjudicate = actions.add_parser(
            "adjudicate", help="list every answer to one item; with --answer, --text or "
                               "--rating settle its reference (exports: adjudicated.jsonl)")
        adjudicate.add_argument("item", help="the item's id, or its dataset id with --project")
        adjudicate.add_argument("--project", default=None, help="the item's project (slug)")
        adjudicate.add_argument("--answer", type=int, default=None,
                                help="pick this answer (counted or imported) as the reference")
        adjudicate.add_argument("--text", default="", help="or write the reference (text kinds)")
        adjudicate.add_argument("--rating", default="",
                                help="or write the reference rating, 1-5 (plausibility)")
        adjudicate.add_argument("--note", default="", help="why, for the other reviewers")
        for deciding in (approve, reject, bonus, approve_answer, reject_answer, block, unblock,
                         dismiss, check, adjudicate):
            add_actor_argument(deciding)

    def handle(self, *args, **options):
        action = options["action"]
        # Who decides: ``--actor`` (checked like a page or API user) and the OS login, on
        # every audit row (annotation/management/actor.py).
        needs = ACTION_OF.get(action)
        if action == "adjudicate" and not _settles(options):
            needs = "see_work"
        self.actor = resolve_actor(options, needs) if needs else None
        try:
            with command_line(os_login()):
                getattr(self, f"_{action.replace('-', '_')}")(options)
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from error

    def _assignment(self, reference: str):
        assignment = assignment_by_reference(reference)
        if assignment is None:
            raise CommandError(f"no assignment {reference!r}")
        return assignment

    def _worker(self, external_id: str) -> Worker:
        """A provider's worker by their provider id (an MTurk WorkerId) or by the pseudonym
        staff see everywhere."""
        candidates = Worker.objects.exclude(provider__in=decisions.APP_ONLY_WORKERS)
        if is_pseudonym(external_id):
            workers = [worker for worker in candidates.iterator()
                       if worker.anonymous_id == external_id][:2]
        else:
            workers = list(candidates.filter(external_id=external_id)[:2])
        if len(workers) != 1:
            raise CommandError(f"no worker {external_id!r}" if not workers else
                               f"several providers know a worker {external_id!r}")
        return workers[0]

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
                f"worker {assignment.worker.anonymous_id}\tbatch {assignment.hit.batch_id}\t"
                f"{assignment.annotation_count} annotations\tsubmitted {submitted}")
        self.stdout.write(f"{count} assignment(s) awaiting review")

    def _approve(self, options):
        references = options["assignments"]
        if options["all_pending"]:
            self._approve_all_unflagged(options)
            return
        if not references:
            raise CommandError("name assignments to approve, or --all-pending")
        ids = [self._assignment(reference).pk for reference in references]
        if len(ids) == 1:
            decided = [decisions.assignment_approve(assignment_id=ids[0],
                                                    message=options["message"],
                                                    actor=self.actor)]
        else:
            decided = decisions.assignments_approve(assignment_ids=ids,
                                                    message=options["message"],
                                                    actor=self.actor)
        for assignment in decided:
            self.stdout.write(f"{assignment.provider_assignment_id}: {assignment.status}")

    def _approve_all_unflagged(self, options):
        """The review page's "Approve all unflagged" job's service, project by project, with a
        progress bar: never a blocked worker's, never unconfirmed or flagged work."""
        if options["project"]:
            projects = [self._project(options["project"])]
        else:
            projects = list(Project.objects.filter(pk__in=assignments_pending_review(
                project_slug=None).values("hit__batch__project_id")).order_by("slug"))
        decided = 0
        for project in projects:
            with ProgressBar(f"approve {project.slug}", unit="assignment") as progress:
                result = decisions.unflagged_assignments_approve(
                    project=project, actor=self.actor, message=options["message"],
                    progress=progress)
            if not (result["approved"] or result["refused"]):
                continue
            decided += 1
            held = result["held_back"]
            line = (f"{project.slug}: {result['approved']} assignment(s) approved; held back: "
                    f"{held['blocked']} of blocked workers, {held['unconfirmed']} not yet "
                    "confirmed by collection")
            if result["refused"]:
                line += (f"; {result['refused']} not approved, changed since they were "
                         f"listed: {result['refusal']}")
            self.stdout.write(line)
        if not decided:
            raise CommandError("no submitted assignment may be approved in bulk (flagged work, "
                               "blocked workers' and unconfirmed work are left out)")

    def _reject(self, options):
        ids = [self._assignment(reference).pk for reference in options["assignments"]]
        # Several: one message for all, all or none (``assignments_reject``).
        decided = (decisions.assignments_reject(assignment_ids=ids, message=options["message"],
                                                rejection_category=options["category"],
                                                actor=self.actor) if len(ids) > 1 else
                   [decisions.assignment_reject(assignment_id=ids[0], message=options["message"],
                                                rejection_category=options["category"],
                                                actor=self.actor)])
        for assignment in decided:
            self.stdout.write(f"{assignment.provider_assignment_id}: {assignment.status}")

    def _approve_answer(self, options):
        for annotation_id in self._annotation_ids(options):
            annotation = decisions.annotation_approve(annotation_id=annotation_id,
                                                      message=options["message"],
                                                      actor=self.actor)
            self.stdout.write(f"annotation {annotation.pk}: {annotation.review_status}")

    def _reject_answer(self, options):
        for annotation_id in self._annotation_ids(options):
            annotation = decisions.annotation_reject(annotation_id=annotation_id,
                                                     message=options["message"],
                                                     rejection_category=options["category"],
                                                     actor=self.actor)
            self.stdout.write(f"annotation {annotation.pk}: {annotation.review_status}")

    def _annotation_ids(self, options) -> list[int]:
        ids = options["annotations"]
        missing = sorted(set(ids) - set(Annotation.objects.filter(pk__in=ids)
                                        .values_list("pk", flat=True)))
        if missing:
            raise CommandError(f"no annotation {', '.join(map(str, missing))}")
        return ids

    def _bonus(self, options):
        try:
            dollars = Decimal(options["amount"])
        except InvalidOperation as error:
            raise CommandError("--amount must be an amount such as 0.25 (in the provider's "
                               "currency)") from error
        if not dollars.is_finite() or dollars.as_tuple().exponent < -2:
            raise CommandError("--amount must have at most two decimals")
        outcome = decisions.bonus_create(
            assignment_id=self._assignment(options["assignment"]).pk,
            amount_cents=int(dollars * 100), reason=options["reason"], again=options["again"],
            actor=self.actor)
        self._say_bonus(outcome.bonus.pk)

    def _say_bonus(self, bonus_id: int) -> None:
        """What became of the bonus (its job has run inline, or is queued for a worker);
        exits non-zero unless it is paid or in a worker's hands."""
        done, text = bonus_report(bonus_id)
        if not done:
            raise CommandError(text)
        self.stdout.write(text)

    def _bonus_check(self, options):
        if not Bonus.objects.filter(pk=options["bonus"]).exists():
            raise CommandError(f"no bonus {options['bonus']}")
        decisions.bonus_check(bonus_id=options["bonus"], actor=self.actor)
        self._say_bonus(options["bonus"])

    def _bonus_resolve(self, options):
        if not Bonus.objects.filter(pk=options["bonus"]).exists():
            raise CommandError(f"no bonus {options['bonus']}")
        bonus = decisions.bonus_resolve(bonus_id=options["bonus"], paid=options["paid"])
        self.stdout.write(f"bonus {bonus.pk}: " + ("marked paid" if options["paid"]
                                                   else "being paid"))

    def _block(self, options):
        if options["unblock"]:
            self._unblock(options)
            return
        project = self._project(options["project"])
        outcome = decisions.worker_block(
            worker_id=self._worker(options["worker"]).pk, reason=options["reason"],
            actor=self.actor, scope="project" if project else "everywhere",
            project_id=project.pk if project else None, pending=options["pending"],
            message=options["message"], rejection_category=options["category"])
        self.stdout.write(outcome.summary())

    def _unblock(self, options):
        project = self._project(options.get("project"))
        worker = decisions.worker_unblock(worker_id=self._worker(options["worker"]).pk,
                                          actor=self.actor,
                                          project_id=project.pk if project else None)
        where = f" from {project.slug}" if project else ""
        self.stdout.write(f"{worker.anonymous_id}: unblocked{where}")

    def _project(self, slug: str | None) -> Project | None:
        if not slug:
            return None
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"no project {slug!r}")
        return project

    def _dismiss(self, options):
        for flag_id in options["flags"]:
            if not Flag.objects.filter(pk=flag_id).exists():
                raise CommandError(f"no flag {flag_id}")
        # All or none: one flag already decided changes nothing (``flags_dismiss``).
        for flag in decisions.flags_dismiss(flag_ids=options["flags"], note=options["note"],
                                            actor=self.actor):
            self.stdout.write(f"flag {flag.pk}: {flag.status}")

    def _item(self, options) -> Item:
        reference, project = options["item"], self._project(options["project"])
        items = Item.objects.select_related("project")
        if project is not None:
            items = items.filter(project=project)
            found = items.filter(external_id=reference).first()
            if found is None and reference.isdigit():
                found = items.filter(pk=int(reference)).first()
        else:
            found = items.filter(pk=int(reference)).first() if reference.isdigit() else None
        if found is None:
            where = f" in {project.slug}" if project else " (a dataset id needs --project)"
            raise CommandError(f"no item {reference!r}{where}")
        return found

    def _adjudicate(self, options):
        item = self._item(options)
        if _settles(options):
            reference = item_reference_set(item_id=item.pk, actor=self.actor,
                                           answer_id=options["answer"], text=options["text"],
                                           rating=options["rating"], note=options["note"])
            source = (f"answer {reference.chosen_id}" if reference.chosen_id
                      else "written")
            self.stdout.write(f"item {item.pk} ({item.external_id}): reference set ({source}): "
                              f"{reference.text or f'{reference.rating:g}'}")
            return
        answers, total = item_answers(item)
        self.stdout.write(f"item {item.pk} ({item.external_id}) of {item.project.slug}: "
                          f"{total} answer(s)" + (f", the newest {len(answers)} listed"
                                                  if total > len(answers) else ""))
        for answer in answers:
            words = (f"{answer.rating:g}" if answer.rating is not None
                     else answer_words(answer))
            pick = "pickable" if answer.state in PICKABLE_STATES else "not pickable"
            self.stdout.write(f"{answer.pk}\tworker {answer.worker.anonymous_id}\t"
                              f"{answer.get_state_display()} ({pick})\t{words}")
        reference = item_reference(item)
        self.stdout.write("reference: " + ("none yet" if reference is None else
                                           reference.text or f"{reference.rating:g}"))


def _settles(options: dict) -> bool:
    """The adjudicate command settles a reference (else it lists the item's answers)."""
    return (options.get("answer") is not None or bool(options.get("text"))
            or bool(options.get("rating")))
