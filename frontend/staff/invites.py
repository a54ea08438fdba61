"""The console's invites (``/staff/team/invites/``): make a single-use link for a role (and
access to chosen projects) and see the invites still open. The link is shown once, on the
page that made it; only its hash is kept (``annotation.services.invites``)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.shortcuts import render
from django.urls import path, reverse

from annotation.models import Project
from annotation.roles import page_requires
from annotation.services.accounts import ROLES
from annotation.services.invites import invite_create, invites_pending


class InviteForm(forms.Form):
    role = forms.ChoiceField(choices=[(role, role) for role in ROLES], initial="annotator")
    projects = forms.ModelMultipleChoiceField(
        queryset=Project.objects.order_by("name"), required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="the projects they may work on when a project takes only chosen people "
                  "(none: as every annotator)")


@page_requires("manage_team")
def invites(request):
    form = InviteForm(request.POST or None)
    link = None
    if request.method == "POST" and form.is_valid():
        _, token = invite_create(role=form.cleaned_data["role"],
                                 projects=form.cleaned_data["projects"],
                                 created_by=request.user)
        link = request.build_absolute_uri(reverse("invite-accept", args=[token]))
        form = InviteForm()
    return render(request, "frontend/staff/invites.html", {
        "form": form, "link": link, "pending": invites_pending(),
        "days": settings.UNPACK_INVITE_DAYS})


urlpatterns = [
    path("team/invites/", invites, name="invites"),
]
