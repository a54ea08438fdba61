"""The console's invites (``/staff/team/invites/``): make a single-use link for a role (and
access to chosen projects), see the invites still open and withdraw one
(``…/invites/<id>/revoke/``). The link is shown once, on the
page that made it; only its hash is kept (``annotation.services.invites``)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from annotation.models import Invite, Project
from annotation.roles import page_requires
from annotation.services.accounts import ROLES
from annotation.services.invites import (
    InviteNotRevocable,
    invite_create,
    invite_revoke,
    invites_pending,
)


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


@page_requires("manage_team")
@require_POST
def invite_revoke_page(request, invite_id: int):
    """Withdraw one open invite; back to the invites page with a message saying what
    happened."""
    try:
        invite = invite_revoke(invite_id=invite_id, revoked_by=request.user)
    except Invite.DoesNotExist:
        raise Http404("no such invite") from None
    except InviteNotRevocable as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, f"The {invite.role} invite made "
                                  f"{invite.created_at:%Y-%m-%d %H:%M} is withdrawn: its link "
                                  "no longer works.")
    return redirect("staff:invites")


urlpatterns = [
    path("team/invites/", invites, name="invites"),
    path("team/invites/<int:invite_id>/revoke/", invite_revoke_page, name="invite-revoke"),
]
