from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation.roles import may
from annotation.selectors import projects as project_selectors
from annotation.selectors.access import REFUSALS, work_refusal
from annotation.selectors.progress import annotator_progress_by_project
from annotation.services.projects import project_settings_errors


@login_required
def home(request):
    """The projects a user can work on (annotators) or manage (staff), with what is left in
    each for this user. A project the user may not work on says why (paused, closed…); one
    whose stored settings are broken shows its errors to staff, and breaks nothing else."""
    staff = may(request.user, "see_projects")
    projects = []
    for project in project_selectors.project_list_with_progress():
        project.refusal = work_refusal(project=project, user=request.user)
        if project.refusal == "not_chosen" and not staff:
            continue  # another team's project: nothing to say to this annotator
        project.refusal_message = REFUSALS.get(project.refusal, "")
        project.settings_errors = project_settings_errors(project) if staff else []
        projects.append(project)
    # The user's Worker if they have one (a GET creates none).
    progress = annotator_progress_by_project(
        projects=[project for project in projects if project.refusal != "misconfigured"],
        worker=getattr(request.user, "worker", None))
    for project in projects:
        project.mine = progress.get(project.pk)
    return render(request, "frontend/home.html", {"projects": projects})
