"""Smaller trust boundaries: redirects stay on this site, a local worker is one account."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Annotation, Flag, Worker
from annotation.services.workers import worker_for_user
from tests.factories import sluice_project

pytestmark = pytest.mark.django_db

OFFSITE = ["https://evil.example/", "//evil.example/", "/\\evil.example/", "\\\\evil.example",
           "javascript:alert(1)", "http://testserver.evil.example/", " https://evil.example/"]


@pytest.mark.parametrize("target", OFFSITE)
def test_review_forms_redirect_only_within_the_site(staff_client, target):
    project = sluice_project(slug="redirects")
    flag = Flag.objects.create(project=project, reason="too_fast", score=1.0,
                               fingerprint="too_fast:x")
    response = staff_client.post(f"/staff/review/{project.slug}/flags/{flag.pk}/dismiss/",
                                 {"next": target})
    assert response.status_code == 302
    assert response["Location"] == f"/staff/review/{project.slug}/"
    kept = staff_client.post(f"/staff/review/{project.slug}/qc/",
                             {"next": f"/staff/review/{project.slug}/?by=worker"})
    assert kept["Location"] == f"/staff/review/{project.slug}/?by=worker"


@pytest.mark.parametrize("target", OFFSITE)
def test_login_redirects_only_within_the_site(django_user_model, target):
    user = django_user_model(username="someone")
    user.set_password("a-long-password")
    user.save()
    response = Client().post("/accounts/login/", {"username": "someone",
                                                  "password": "a-long-password",
                                                  "next": target})
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_a_new_account_never_inherits_a_renamed_accounts_worker(django_user_model):
    """Local workers are found by username; a renamed account keeps its Worker row, so a new
    account taking the old name must get its own worker, not the other person's work."""
    project = sluice_project(slug="renames", redundancy={"train": 2, "dev": 2, "test": 2})
    first = django_user_model.objects.create(username="alice")
    old_worker = worker_for_user(user=first)
    Annotation.objects.create(project=project, item=project.items.get(), worker=old_worker,
                              source="local", text="Why did he leave?")
    first.username = "alice-2019"
    first.save()
    newcomer = django_user_model.objects.create(username="alice")
    worker = worker_for_user(user=newcomer)
    assert worker.pk != old_worker.pk and worker.user_id == newcomer.pk
    assert worker_for_user(user=django_user_model.objects.get(pk=newcomer.pk)).pk == worker.pk
    assert Worker.objects.get(pk=old_worker.pk).user_id == first.pk
    client = Client()
    client.force_login(newcomer)
    # The newcomer has the item to do, not "nothing left" because of alice-2019's answer.
    assert client.get(f"/annotate/{project.slug}/").templates[0].name == (
        "frontend/annotate/page.html")


def test_a_recreated_account_never_inherits_the_deleted_accounts_worker(django_user_model):
    """Deleting an account keeps its Worker (and work) without an owner; a new account with
    the same username gets a Worker of its own, not the old person's answers."""
    project = sluice_project(slug="recreated", redundancy={"train": 2, "dev": 2, "test": 2})
    first = django_user_model.objects.create(username="bob")
    old_worker = worker_for_user(user=first)
    Annotation.objects.create(project=project, item=project.items.get(), worker=old_worker,
                              source="local", text="Why did he leave?")
    first.delete()
    assert Worker.objects.get(pk=old_worker.pk).user_id is None
    again = django_user_model.objects.create(username="bob")
    worker = worker_for_user(user=again)
    assert worker.pk != old_worker.pk and worker.user_id == again.pk
    assert not worker.annotations.exists()
    assert Worker.objects.get(pk=old_worker.pk).user_id is None
    assert worker_for_user(user=django_user_model.objects.get(pk=again.pk)).pk == worker.pk
