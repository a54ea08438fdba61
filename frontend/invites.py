"""The invite link's page (``/invite/<token>/``): the invited person sets their username and
password once, is logged in, and the link is used up (``annotation.services.invites``). An
unknown, forged, expired or used link gets a page saying which (status 404 or 410), with
nothing written."""

from __future__ import annotations

from django import forms
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.cache import never_cache

from annotation.services.invites import InviteRefused, invite_accept, invite_check


class AcceptForm(forms.Form):
    # The characters allowed are checked by ``accounts.account_create`` (one rule for the
    # team page, the invite link and every other way in).
    username = forms.CharField(max_length=150, help_text="letters, digits and @ . + - _ only")
    password = forms.CharField(widget=forms.PasswordInput, strip=False)
    password_again = forms.CharField(widget=forms.PasswordInput, strip=False,
                                     label="Password again")

    def clean(self):
        data = super().clean()
        if data.get("password") != data.get("password_again"):
            self.add_error("password_again", "the two passwords differ")
        return data


@never_cache
def invite_accept_page(request, token: str):
    try:
        invite = invite_check(token)
    except InviteRefused as refused:
        return render(request, "frontend/invite.html", {"refused": str(refused)},
                      status=410 if refused.gone else 404)
    form = AcceptForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = invite_accept(token=token, username=form.cleaned_data["username"],
                                 password=form.cleaned_data["password"])
        except InviteRefused as refused:  # used up by someone else meanwhile
            return render(request, "frontend/invite.html", {"refused": str(refused)},
                          status=410)
        except ValidationError as error:
            for name, messages in error.message_dict.items():
                form.add_error(name if name in form.fields else None, messages)
        else:
            login(request, user)
            return redirect("/")
    return render(request, "frontend/invite.html", {"form": form, "invite": invite},
                  status=400 if form.errors else 200)


urlpatterns = [
    path("<str:token>/", invite_accept_page, name="invite-accept"),
]
