"""Single-use invite links: a researcher makes one for a role (and projects); one person
makes their account with it once; expired, used and forged links are refused with nothing
written; what a person types is escaped."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from annotation.models import Invite, Project
from annotation.services.accounts import account_role
from annotation.services.invites import (
    InviteNotRevocable,
    InviteRefused,
    invite_accept,
    invite_create,
    invite_revoke,
)

pytestmark = pytest.mark.django_db

PASSWORD = "a long enough passphrase 42"


def link_from(response) -> str:
    return re.search(r'value="(http://testserver/invite/[^"]+/)"',
                     response.content.decode()).group(1)


def accept(client: Client, link: str, username: str = "newcomer", **fields):
    return client.post(link, {"username": username, "password": PASSWORD,
                              "password_again": PASSWORD, **fields})


def test_a_researcher_invites_a_reviewer_who_makes_an_account_once(staff_client):
    project = Project.objects.create(slug="p1", name="P1", kind="plausibility",
                                     workers_everyone=False)
    made = staff_client.post("/staff/team/invites/", {"role": "reviewer",
                                                      "projects": [project.pk]})
    assert made.status_code == 200
    link = link_from(made)
    invite = Invite.objects.get()
    token = link.rstrip("/").rsplit("/", 1)[1]
    assert token not in invite.token_sha256 and len(invite.token_sha256) == 64  # hash only
    visitor = Client()
    page = visitor.get(link)
    assert page.status_code == 200 and "invited as a reviewer" in page.content.decode()
    done = accept(visitor, link)
    assert done.status_code == 302
    user = get_user_model().objects.get(username="newcomer")
    assert account_role(user) == "reviewer" and user.is_staff and not user.is_superuser
    assert user.check_password(PASSWORD)
    assert list(project.allowed_users.all()) == [user]
    assert visitor.get("/staff/team/invites/").status_code == 403  # logged in, as a reviewer
    invite.refresh_from_db()
    assert invite.used_by == user and invite.used_at is not None
    # Used: refused for anyone, nothing written.
    again = accept(Client(), link, username="second")
    assert again.status_code == 410 and "used already" in again.content.decode()
    assert not get_user_model().objects.filter(username="second").exists()
    assert "newcomer" not in staff_client.get("/staff/team/invites/").content.decode()


def test_an_expired_link_is_refused_and_writes_nothing():
    invite, token = invite_create(role="annotator")
    Invite.objects.filter(pk=invite.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = accept(Client(), f"/invite/{token}/")
    assert response.status_code == 410 and "expired" in response.content.decode()
    assert not get_user_model().objects.filter(username="newcomer").exists()
    assert Invite.objects.get().used_at is None


@pytest.mark.parametrize("token", ["x" * 43, "short", "A" * 42 + "!", "<script>", "flipped"])
def test_forged_tokens_are_unknown(token):
    _, real = invite_create(role="researcher")
    if token == "flipped":  # the real token with its last character changed
        token = real[:-1] + ("A" if real[-1] != "A" else "B")
    response = accept(Client(), f"/invite/{token}/")
    assert response.status_code == 404
    assert "not valid" in response.content.decode()
    assert not get_user_model().objects.filter(username="newcomer").exists()


def test_a_taken_username_or_weak_password_leaves_the_invite_unused(django_user_model):
    django_user_model.objects.create_user("taken", password=PASSWORD)
    _, token = invite_create(role="annotator")
    taken = accept(Client(), f"/invite/{token}/", username="taken")
    assert taken.status_code == 400 and "is taken" in taken.content.decode()
    weak = Client().post(f"/invite/{token}/", {"username": "fresh", "password": "123",
                                               "password_again": "123"})
    assert weak.status_code == 400 and not django_user_model.objects.filter(
        username="fresh").exists()
    differ = accept(Client(), f"/invite/{token}/", password_again="something else")
    assert differ.status_code == 400 and "the two passwords differ" in differ.content.decode()
    assert Invite.objects.get().used_at is None
    assert accept(Client(), f"/invite/{token}/").status_code == 302  # still usable once


def test_the_service_uses_a_link_once():
    _, token = invite_create(role="annotator")
    invite_accept(token=token, username="first", password=PASSWORD)
    with pytest.raises(InviteRefused) as refused:
        invite_accept(token=token, username="second", password=PASSWORD)
    assert refused.value.gone
    assert not get_user_model().objects.filter(username="second").exists()


def test_what_people_type_is_escaped(staff_client):
    Project.objects.create(slug="p2", name="<b>Bold</b> project", kind="plausibility")
    _, token = invite_create(role="annotator", projects=Project.objects.all())
    staff_page = staff_client.get("/staff/team/invites/").content.decode()
    assert "&lt;b&gt;Bold&lt;/b&gt; project" in staff_page and "<b>Bold</b>" not in staff_page
    response = accept(Client(), f"/invite/{token}/", username="<script>x</script>")
    page = response.content.decode()
    assert response.status_code == 400 and "<script>x</script>" not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page  # shown back, escaped
    assert not get_user_model().objects.filter(username__contains="script").exists()


def test_an_unknown_role_makes_no_invite(staff_client):
    response = staff_client.post("/staff/team/invites/", {"role": "superuser"})
    assert response.status_code == 200 and not Invite.objects.exists()
    assert 'id="invite-link"' not in response.content.decode()


@pytest.mark.parametrize("username", ["two words", "semi;colon", "slash/name"])
def test_a_username_the_auth_model_refuses_leaves_the_invite_unused(username):
    _, token = invite_create(role="annotator")
    response = accept(Client(), f"/invite/{token}/", username=username)
    assert response.status_code == 400
    assert "has a character other than letters, digits and @ . + - _" in (
        response.content.decode())
    assert Invite.objects.get().used_at is None and not get_user_model().objects.exists()
    with pytest.raises(ValidationError) as refused:  # the service refuses it too
        invite_accept(token=token, username=username, password=PASSWORD)
    assert list(refused.value.message_dict) == ["username"]
    assert Invite.objects.get().used_at is None


def test_a_researcher_withdraws_an_open_invite_and_its_link_answers_410(staff_client):
    invite, token = invite_create(role="reviewer")
    kept, _ = invite_create(role="annotator")
    page = staff_client.get("/staff/team/invites/").content.decode()
    assert f'action="/staff/team/invites/{invite.pk}/revoke/"' in page
    response = staff_client.post(f"/staff/team/invites/{invite.pk}/revoke/", follow=True)
    page = response.content.decode()
    assert "The reviewer invite made" in page and "is withdrawn: its link no longer works" in page
    assert f'action="/staff/team/invites/{invite.pk}/revoke/"' not in page  # no longer open
    assert f'action="/staff/team/invites/{kept.pk}/revoke/"' in page  # the other one stays
    invite.refresh_from_db()
    assert invite.revoked_at is not None and invite.revoked_by.username == "researcher"
    for link in (Client().get(f"/invite/{token}/"), accept(Client(), f"/invite/{token}/")):
        assert link.status_code == 410
        assert "has been withdrawn by the team" in link.content.decode()
    assert not get_user_model().objects.filter(username="newcomer").exists()
    with pytest.raises(InviteRefused) as refused:
        invite_accept(token=token, username="other", password=PASSWORD)
    assert refused.value.gone and "withdrawn" in str(refused.value)


def test_a_used_or_withdrawn_invite_cannot_be_withdrawn(staff_client):
    invite, token = invite_create(role="annotator")
    invite_accept(token=token, username="first", password=PASSWORD)
    response = staff_client.post(f"/staff/team/invites/{invite.pk}/revoke/", follow=True)
    assert "has been used already; the account it made stays" in response.content.decode()
    invite.refresh_from_db()
    assert invite.revoked_at is None and invite.used_by.username == "first"
    other, _ = invite_create(role="annotator")
    invite_revoke(invite_id=other.pk)
    with pytest.raises(InviteNotRevocable, match="withdrawn already"):
        invite_revoke(invite_id=other.pk)
    response = staff_client.post(f"/staff/team/invites/{other.pk}/revoke/", follow=True)
    assert "This invite was withdrawn already." in response.content.decode()


def test_withdrawing_is_post_only_and_for_the_team_managers(client, django_user_model):
    invite, _ = invite_create(role="annotator")
    reviewer = django_user_model.objects.create_user("rev", password="x", is_staff=True)
    reviewer.groups.add(Group.objects.get(name="reviewer"))
    client.force_login(reviewer)
    assert client.post(f"/staff/team/invites/{invite.pk}/revoke/").status_code == 403
    invite.refresh_from_db()
    assert invite.revoked_at is None
