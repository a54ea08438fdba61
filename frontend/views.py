from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation.selectors import projects as project_selectors
from annotation.selectors.progress import annotator_progress_by_project


@login_required
def home(request):
    """The projects a user can work on (annotators) or manage (staff), with what is left in
    each for this user."""
    projects = list(project_selectors.project_list_with_progress())
    # The user's Worker if they have one (a GET creates none).
    progress = annotator_progress_by_project(projects=projects,
                                             worker=getattr(request.user, "worker", None))
    for project in projects:
        project.mine = progress[project.pk]
    return render(request, "frontend/home.html", {"projects": projects})
