from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation.selectors import projects as project_selectors


@login_required
def home(request):
    """The projects a user can work on (annotators) or manage (staff)."""
    projects = project_selectors.project_list_with_progress()
    return render(request, "frontend/home.html", {"projects": projects})
