"""Two review rules, each written once and read by every entry point (pages, the ``review``
command, the API, the admin, the decision services):

* **blocked for a project**: a worker is blocked for a project when they are blocked
  everywhere (``Worker.is_blocked``, also on the provider's block list) or for that project
  (``WorkerProjectBlock``). Such a worker gets none of the project's work, and their pending
  work is never approved by a bulk action (``services.decisions.assignments_approve``).
* **unconfirmed crowd work**: an assignment (an MTurk assignment, a Prolific session) whose
  answers are still provisional: the task page stored them, but collection has not seen the
  assignment submitted at the provider yet (``services.annotations.annotations_confirm``).
  Nobody may approve, reject or pay it until collection confirms it.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from ..models import Annotation, Assignment, Project, Worker, WorkerProjectBlock


def blocked_q(*, worker: str = "worker", project: str = "project") -> Q:
    """Rows whose worker (the ``worker`` path) is blocked for their project (the ``project``
    path, ending in the project's id: ``"project"``, ``"hit__batch__project"``)."""
    return Q(**{f"{worker}__is_blocked": True}) | Q(Exists(WorkerProjectBlock.objects.filter(
        worker_id=OuterRef(worker), project_id=OuterRef(project))))


def worker_blocked_for(worker: Worker, project: Project | int | None) -> bool:
    """Whether ``worker`` is blocked for ``project`` (None: blocked everywhere only)."""
    if worker.is_blocked:
        return True
    if project is None:
        return False
    project_id = project if isinstance(project, int) else project.pk
    return WorkerProjectBlock.objects.filter(worker=worker, project_id=project_id).exists()


def blocked_worker_ids(project: Project) -> set[int]:
    """Ids of the workers blocked from ``project`` alone (add ``Worker.is_blocked``)."""
    return set(WorkerProjectBlock.objects.filter(project=project)
               .values_list("worker_id", flat=True))


def blocked_projects(worker: Worker) -> list[WorkerProjectBlock]:
    """The projects ``worker`` is blocked from (besides a block everywhere)."""
    return list(worker.project_blocks.select_related("project", "created_by")
                .order_by("project__slug"))


def unconfirmed_q(*, assignment: str = "") -> Q:
    """Assignments (at the ``assignment`` path; "" for Assignment rows) not yet confirmed by
    collection: some of their answers are still provisional."""
    return Q(unconfirmed_exists(assignment=assignment))


def unconfirmed_exists(*, assignment: str = "") -> Exists:
    """``unconfirmed_q`` as an expression (to annotate rows with)."""
    return Exists(Annotation.objects.filter(assignment_id=OuterRef(assignment or "pk"),
                                            state=Annotation.State.PROVISIONAL))


def assignment_unconfirmed(assignment: Assignment | int) -> bool:
    assignment_id = assignment if isinstance(assignment, int) else assignment.pk
    return Annotation.objects.filter(assignment_id=assignment_id,
                                     state=Annotation.State.PROVISIONAL).exists()


def bulk_approvable(assignments):
    """``assignments`` (a queryset) without those a bulk approval must never take: a worker
    blocked for the assignment's project, or work collection has not confirmed."""
    return (assignments.exclude(blocked_q(project="hit__batch__project"))
            .exclude(unconfirmed_q()))


def unconfirmed_assignment_ids(project_id: int) -> set[int]:
    """Ids of the project's undecided (accepted or submitted) assignments collection has not
    confirmed: one query for a page listing many of them."""
    return set(Assignment.objects.filter(
        hit__batch__project_id=project_id,
        status__in=(Assignment.Status.ACCEPTED, Assignment.Status.SUBMITTED))
        .filter(unconfirmed_q()).values_list("pk", flat=True))


def held_back(*, project: Project, limit: int = 200) -> dict:
    """The project's submitted, undecided assignments a bulk approval leaves out, by why:
    ``unconfirmed`` (collection has not confirmed them: nobody may decide them yet) and
    ``blocked`` (their worker is blocked for the project: decide each one yourself)."""
    pending = (Assignment.objects.filter(hit__batch__project=project,
                                         status=Assignment.Status.SUBMITTED)
               .select_related("worker", "hit__batch").order_by("pk"))
    return {"unconfirmed": list(pending.filter(unconfirmed_q())[:limit]),
            "blocked": list(pending.exclude(unconfirmed_q())
                            .filter(blocked_q(project="hit__batch__project"))[:limit])}
