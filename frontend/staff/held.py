"""``/staff/projects/<slug>/held/``: the project's submitted work that bulk approvals leave
out, shown apart: crowd work collection has not confirmed (no decision, no pay until it is)
and blocked workers' pending work (each decided on its own, here: the review queue's
approve / reject / bonus forms). The rules are
``annotation/selectors/blocks.py``."""

from __future__ import annotations

from django.shortcuts import get_object_or_404, render

from annotation.models import Project
from annotation.providers.prolific import REJECTION_CATEGORIES
from annotation.roles import page_requires
from annotation.selectors.blocks import held_back


@page_requires("see_work")
def held_work(request, slug: str):
    project = get_object_or_404(Project, slug=slug)
    return render(request, "frontend/staff_decisions/held.html",
                  {"project": project, **held_back(project=project),
                   "rejection_categories": sorted(REJECTION_CATEGORIES)})
