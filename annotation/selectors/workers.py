"""What staff read about one worker: their work by project, their pending work (confirmed by
collection, or not yet), and what a block would do with it (``services.decisions.worker_block``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, Q

from ..models import Annotation, Assignment, Project, Worker
from .blocks import unconfirmed_exists

#: Assignments shown on a worker's page (the most recent first).
RECENT_ASSIGNMENTS = 100


@dataclass
class PendingWork:
    """A worker's submitted, undecided work in a scope (one project, or everywhere)."""

    assignments: int = 0
    answers: int = 0  # outside a HIT (local annotators)
    unconfirmed: int = 0  # crowd work collection has not confirmed: a block leaves it
    prolific: int = 0  # Prolific sessions among ``assignments`` (a rejection needs a category)
    #: the earliest moment MTurk approves (and pays) one of them by itself, unless decided
    earliest_auto_approval: datetime | None = None
    providers: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return self.assignments + self.answers


def pending_work(*, worker: Worker, project: Project | None) -> PendingWork:
    """What ``worker_block(pending=...)`` would reject or leave in the scope."""
    assignments = Assignment.objects.filter(worker=worker, status=Assignment.Status.SUBMITTED)
    answers = Annotation.objects.filter(worker=worker, assignment__isnull=True,
                                        review_status=Annotation.Review.PENDING,
                                        state=Annotation.State.COUNTED)
    if project is not None:
        assignments = assignments.filter(hit__batch__project=project)
        answers = answers.filter(project=project)
    work = PendingWork(answers=answers.count())
    rows = assignments.annotate(unconfirmed=unconfirmed_exists()).values_list(
        "unconfirmed", "hit__batch__provider", "submitted_at",
        "hit__batch__auto_approval_delay_seconds")
    for unconfirmed, provider, submitted_at, delay in rows:
        if unconfirmed:
            work.unconfirmed += 1
            continue
        work.assignments += 1
        work.providers.add(provider)
        work.prolific += provider == "prolific"
        if provider == "mturk" and submitted_at is not None:
            at = submitted_at + timedelta(seconds=delay)
            if work.earliest_auto_approval is None or at < work.earliest_auto_approval:
                work.earliest_auto_approval = at
    return work


def worker_projects(worker: Worker) -> list[dict]:
    """The projects the worker answered in, with their answers by state."""
    rows = (Annotation.objects.filter(worker=worker).values("project__slug", "project__name")
            .annotate(counted=Count("pk", filter=Q(state=Annotation.State.COUNTED)),
                      rejected=Count("pk", filter=Q(state=Annotation.State.REJECTED)),
                      provisional=Count("pk", filter=Q(state=Annotation.State.PROVISIONAL)),
                      total=Count("pk", filter=~Q(state=Annotation.State.SUPERSEDED)))
            .order_by("project__slug"))
    return list(rows)


def worker_assignments(worker: Worker, *, limit: int = RECENT_ASSIGNMENTS) -> list[Assignment]:
    """The worker's most recent assignments, each with ``unconfirmed`` (collection has not
    confirmed it) and its batch and project."""
    return list(Assignment.objects.filter(worker=worker)
                .select_related("hit__batch__project")
                .annotate(unconfirmed=unconfirmed_exists(), answers=Count("annotations"))
                .order_by("-pk")[:limit])
