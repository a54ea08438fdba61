"""Who may work on a project: the one rule every entry point asks (the local queue and its
submit, lease and progress endpoints, the MTurk and Prolific task pages and their submits, the
home page and the API's project list).

A project takes work only while it is **open** and its stored settings are sound (a row written
before the settings were validated must not break a page: work there is refused with a plain
message, and staff see the error on that project). A local annotator must also be chosen when
the project is not open to every annotator: named on the project, or in one of its groups.
Crowd workers (MTurk, Prolific: ``user=None``) were chosen by the batch that reached them, so
only the project's state applies to them.
"""

from __future__ import annotations

from ..models import Project

#: The plain message an annotator reads for each refusal.
REFUSALS: dict[str, str] = {
    "paused": "This project is paused: no new work is taken for now. Please come back later.",
    "closed": "This project is closed and takes no more work. Thank you for your help.",
    "not_chosen": "You are not on the team of this project. Ask the researcher who runs it to "
                  "add you.",
    "misconfigured": "This project cannot take work until its researchers fix its settings.",
}


def work_refusal(*, project: Project, user=None, worker=None) -> str | None:
    """Why the local annotator ``user`` (or the local ``worker``'s user; neither: a crowd
    worker arriving through MTurk or Prolific) may not work on ``project`` now — a key of
    :data:`REFUSALS` — or None when they may. No query unless the project is limited to chosen
    people (the submit's hot path asks it too)."""
    # Imported here: services.annotations (which the projects service imports) asks this rule.
    from ..services.projects import project_settings_errors

    if project.status == Project.Status.PAUSED:
        return "paused"
    if project.status == Project.Status.CLOSED:
        return "closed"
    if project_settings_errors(project):
        return "misconfigured"
    if project.workers_everyone:
        return None
    if user is None and worker is not None:
        if worker.user_id is None:  # a crowd worker: chosen by the batch that reached them
            return None
        user = worker.user
    if user is not None and not user_is_chosen(project=project, user=user):
        return "not_chosen"
    return None


def user_is_chosen(*, project: Project, user) -> bool:
    """True when ``user`` is named on the project or in one of its groups."""
    if not user.is_authenticated:
        return False
    return (project.allowed_users.filter(pk=user.pk).exists()
            or project.allowed_groups.filter(user=user).exists())
