"""A worker's page (``/staff/workers/<id>/``) and the block that asks before it acts
(``/staff/workers/<id>/block/``).

The page names the worker by pseudonym (with a local annotator's username, for staff), says
where they are blocked and lifts a block; it lists their work by project and their pending
assignments, those collection has not confirmed apart (nobody may decide or pay those yet).
Blocking asks the scope (this project / everywhere) and what to do with the pending work
(reject it with a message / leave it for review), saying how much work that is and, for
MTurk, when MTurk would approve it by itself. Every change is ``services.decisions``.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.models import Assignment, Project, Worker
from annotation.providers.prolific import MIN_REJECTION_MESSAGE_LENGTH, REJECTION_CATEGORY_WORDS
from annotation.roles import page_requires
from annotation.selectors import workers as worker_selectors
from annotation.selectors.blocks import blocked_projects
from annotation.selectors.bonuses import bonus_report
from annotation.services import decisions
from frontend.review import _back


def _project_or_none(slug: str) -> Project | None:
    return Project.objects.filter(slug=slug).first() if slug else None


@page_requires("see_work")
def worker_detail(request, worker_id: int):
    worker = get_object_or_404(Worker.objects.select_related("user"), pk=worker_id)
    assignments = worker_selectors.worker_assignments(worker)
    return render(request, "frontend/staff_decisions/worker.html", {
        "worker": worker, "project_blocks": blocked_projects(worker),
        "projects": worker_selectors.worker_projects(worker),
        "unconfirmed": [a for a in assignments if a.unconfirmed],
        "assignments": [a for a in assignments if not a.unconfirmed],
        "recent_limit": worker_selectors.RECENT_ASSIGNMENTS,
        "rejection_words": REJECTION_CATEGORY_WORDS,
    })


@page_requires("decide_workers")
def worker_block(request, worker_id: int):
    """GET: the confirmation (scope, pending work); POST: block through the service."""
    worker = get_object_or_404(Worker, pk=worker_id)
    project = _project_or_none(request.GET.get("project") or request.POST.get("project", ""))
    if request.method == "POST":
        scope = request.POST.get("scope", "")
        try:
            outcome = decisions.worker_block(
                worker_id=worker.pk, actor=request.user, reason=request.POST.get("reason", ""),
                scope=scope, project_id=project.pk if project and scope == "project" else None,
                pending=request.POST.get("pending", ""),
                message=request.POST.get("message", ""),
                rejection_category=request.POST.get("rejection_category", ""))
        except ValidationError as error:
            messages.error(request, "; ".join(error.messages))
            status = 400
        else:
            messages.success(request, outcome.summary())
            return redirect("staff_decisions:worker", worker_id=worker.pk)
    else:
        status = 200
    return render(request, "frontend/staff_decisions/block.html", {
        "worker": worker, "project": project, "form": request.POST,
        "pending_here": (worker_selectors.pending_work(worker=worker, project=project)
                         if project else None),
        "pending_everywhere": worker_selectors.pending_work(worker=worker, project=None),
        "rejection_words": sorted(REJECTION_CATEGORY_WORDS.items(), key=lambda kv: kv[1]),
        "min_prolific_message": MIN_REJECTION_MESSAGE_LENGTH,
        "project_blocks": blocked_projects(worker),
    }, status=status)


@page_requires("decide_workers")
@require_POST
def worker_unblock(request, worker_id: int):
    """Lift the block everywhere, or (``project``) from one project."""
    worker = get_object_or_404(Worker, pk=worker_id)
    slug = request.POST.get("project", "")
    project = _project_or_none(slug)
    if slug and project is None:
        messages.error(request, f"No project {slug!r}.")
    else:
        where = f" from {project.slug}" if project else " everywhere"
        was_blocked = (worker.project_blocks.filter(project=project).exists() if project
                       else worker.is_blocked)
        decisions.worker_unblock(worker_id=worker.pk, actor=request.user,
                                 reason=request.POST.get("note", ""),
                                 project_id=project.pk if project else None)
        if was_blocked:
            messages.success(request, f"Worker {worker.anonymous_id} unblocked{where}.")
        else:
            messages.info(request, f"Worker {worker.anonymous_id} was not blocked{where}.")
    return redirect("staff_decisions:worker", worker_id=worker.pk)


@page_requires("decide_assignments")
@require_POST
def assignment_approve_and_bonus(request, assignment_id: int):
    """Approve a HIT and pay a bonus in one step (the form of
    ``frontend/review/_approve_and_bonus.html``); back to the page it was sent from."""
    assignment = get_object_or_404(Assignment.objects.select_related("hit__batch__project"),
                                   pk=assignment_id)
    slug = assignment.hit.batch.project.slug
    try:
        amount = int(request.POST.get("amount_cents", ""))
    except ValueError:
        messages.error(request, "The bonus amount must be a whole number of the currency's "
                                "smallest unit (cents, pence).")
    else:
        try:
            outcome = decisions.assignment_approve_and_bonus(
                assignment_id=assignment.pk, amount_cents=amount,
                reason=request.POST.get("reason", ""), actor=request.user,
                message=request.POST.get("message", ""))
        except ValidationError as error:
            messages.error(request, "; ".join(error.messages))
        else:
            # What became of the bonus, read back after its job (selectors.bonuses).
            done, text = bonus_report(outcome.bonus.pk)
            (messages.success if done else messages.warning)(
                request, f"Assignment {assignment} approved; {text}")
    return _back(request, slug)
