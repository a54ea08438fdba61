"""Decisions and launches made from the command line name who made them (issue 11): the
``--actor`` account (checked by the same rule as pages and API, ``annotation/roles.py``) as the
audit row's actor, and always the operating-system login as ``command_line_user``."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from annotation.management.actor import os_login
from annotation.models import Assignment, Batch, Hit, StatusEvent, Worker
from tests.factories import ItemFactory, ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def submitted():
    project = ProjectFactory(slug="cli-actor")
    ItemFactory(project=project)
    batch = Batch.objects.create(project=project, provider="mturk", title="b",
                                 status=Batch.Status.PUBLISHED)
    hit = Hit.objects.create(batch=batch, provider_hit_id="HITCLI1", unique_request_token="t-cli",
                             max_assignments=1)
    worker = Worker.objects.create(provider="mturk", external_id="ACLIACTOR1")
    return Assignment.objects.create(hit=hit, worker=worker, provider_assignment_id="ASGCLI1",
                                     status=Assignment.Status.SUBMITTED)


def account(django_user_model, username: str, group: str | None):
    user = django_user_model.objects.create_user(username=username, is_staff=group is not None)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


def test_the_actor_and_the_os_login_are_on_the_audit_row(submitted, django_user_model):
    rita = account(django_user_model, "rita", "reviewer")
    call_command("review", "approve", "ASGCLI1", "--actor", "rita", stdout=StringIO())
    event = StatusEvent.objects.get(assignment=submitted, kind="assignment_decided")
    assert event.actor == rita
    assert event.detail["command_line_user"] == os_login() != ""


def test_without_actor_the_os_login_still_names_someone(submitted):
    out = StringIO()
    call_command("review", "block", "ACLIACTOR1", "--reason", "spam", stdout=out)
    event = StatusEvent.objects.get(worker=submitted.worker, kind="worker_blocked")
    assert event.actor is None and event.detail["command_line_user"] == os_login()
    assert "ACLIACTOR1" not in out.getvalue()  # the answer names the pseudonym
    # …which the command takes back, as staff read it everywhere.
    call_command("review", "unblock", submitted.worker.anonymous_id, stdout=StringIO())
    assert not Worker.objects.get(pk=submitted.worker.pk).is_blocked


def test_the_actor_must_exist_and_may_do_it(submitted, django_user_model, monkeypatch):
    account(django_user_model, "annie", None)
    account(django_user_model, "rita", "reviewer")
    events = StatusEvent.objects.count()
    with pytest.raises(CommandError, match="no active account"):
        call_command("review", "approve", "ASGCLI1", "--actor", "nobody", stdout=StringIO())
    with pytest.raises(CommandError, match="may not"):
        call_command("review", "reject", "ASGCLI1", "--message", "no", "--actor", "annie",
                     stdout=StringIO())
    monkeypatch.setenv("UNPACK_ACTOR", "annie")
    with pytest.raises(CommandError, match="may not"):
        call_command("review", "approve", "ASGCLI1", stdout=StringIO())
    # Reviewers review but do not run batches (money): refused before anything is looked up.
    with pytest.raises(CommandError, match="may not"):
        call_command("launch_batch", "--resume", str(submitted.hit.batch_id), "--actor", "rita",
                     stdout=StringIO())
    assert StatusEvent.objects.count() == events
    assert Assignment.objects.get(pk=submitted.pk).status == Assignment.Status.SUBMITTED
