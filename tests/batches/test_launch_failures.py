"""Launching when something is missing: no AWS credentials, an unreachable endpoint, the job
queue down. No 500 anywhere; the batch says why, and can be resumed or cancelled."""

from __future__ import annotations

import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.celery import app as celery_app
from annotation.models import Assignment, Batch, Bonus, Hit, StatusEvent
from annotation.selectors.outbox import unfinished_work
from tests.factories import batch_plausibility_project

pytestmark = pytest.mark.django_db

FORM = {"project": "claire", "title": "Rate fillers", "splits": ["dev"], "items_per_hit": "5",
        "reward": "0.50", "lifetime": "7d", "duration": "1h", "auto_approve": "3d",
        "locales": "US,GB", "provider": "mturk"}


@pytest.fixture
def no_credentials(fake, monkeypatch):
    """The stand-in's endpoint, but no AWS credentials anywhere boto3 looks."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return fake


def confirm_launch(client, capture):
    estimate = client.post("/staff/batches/new/", FORM)
    assert estimate.status_code == 200
    total = estimate.context["estimate"].total_cents
    with capture(execute=True):
        return client.post("/staff/batches/new/", {**FORM, "confirm": "yes",
                                                   "confirmed_total_cents": str(total)})


def test_launching_without_credentials_says_why_and_the_batch_resumes_or_cancels(
        no_credentials, staff_client, django_capture_on_commit_callbacks):
    """Finding 6: this answered 500 and left the batch "publishing" at 0/1, covering its
    items, with no error and no way out."""
    batch_plausibility_project(items=5)
    launched = confirm_launch(staff_client, django_capture_on_commit_callbacks)
    batch = Batch.objects.get()
    assert launched.status_code == 302
    page = staff_client.get(launched.url).content.decode()
    assert batch.status == Batch.Status.FAILED
    assert "AWS credentials for MTurk are not configured" in page
    assert "Resume publishing" in page and "Cancel batch" in page
    with django_capture_on_commit_callbacks(execute=True):
        resumed = staff_client.post(f"/staff/batches/{batch.pk}/resume/")
    assert resumed.status_code == 302
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.FAILED
    assert "AWS credentials" in staff_client.get(resumed.url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/batches/{batch.pk}/cancel/")
    assert Batch.objects.get(pk=batch.pk).status == Batch.Status.CANCELLED
    assert StatusEvent.objects.filter(batch=batch, kind="batch_cancelled").exists()
    # The items are free: a new estimate offers them again, not "$0.00 of nothing".
    again = staff_client.post("/staff/batches/new/", FORM)
    assert again.context["estimate"].hits == 1 and again.context["estimate"].total_cents > 0


def test_a_fault_that_outlasts_the_call_retries_pauses_publishing_and_says_how_to_resume(
        fake, simulator, staff_client, django_capture_on_commit_callbacks, settings):
    batch_plausibility_project(items=5)
    settings.UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS = 3
    simulator.inject_fault("CreateHITWithHITType", error="ServiceFault", count=3)
    started = time.monotonic()
    launched = confirm_launch(staff_client, django_capture_on_commit_callbacks)
    assert time.monotonic() - started < 5  # bounded, short waits (settings)
    batch = Batch.objects.get()
    assert launched.status_code == 302
    # Retried where it failed, up to the bound; then the batch says what is true inline.
    assert simulator.stats()["calls"]["CreateHITWithHITType"] == 3
    assert batch.status == Batch.Status.PUBLISHING and "publishing paused" in batch.error
    assert "will retry" not in batch.error and "nothing retries it here" in batch.error
    assert f"launch_batch --resume {batch.pk}" in batch.error
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/batches/{batch.pk}/resume/")
    batch.refresh_from_db()
    assert (batch.status, batch.error) == (Batch.Status.PUBLISHED, "")


def test_a_passing_fault_is_retried_in_place(fake, simulator, staff_client,
                                             django_capture_on_commit_callbacks):
    batch_plausibility_project(items=5)
    simulator.inject_fault("CreateHITWithHITType", error="ServiceFault", count=2)
    confirm_launch(staff_client, django_capture_on_commit_callbacks)
    batch = Batch.objects.get()
    assert (batch.status, batch.error) == (Batch.Status.PUBLISHED, "")
    assert simulator.stats()["calls"]["CreateHITWithHITType"] == 3


@pytest.fixture
def broker_down():
    """Tasks go to a broker nobody listens on (as with Redis down)."""
    # The app reads Django settings under the CELERY_ namespace, so override those keys.
    saved = {key: celery_app.conf.get(key) for key in
             ("CELERY_TASK_ALWAYS_EAGER", "CELERY_BROKER_URL")}
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=False,
                           CELERY_BROKER_URL="redis://127.0.0.1:9/0")
    celery_app._pool = None
    celery_app.amqp._producer_pool = None
    yield
    celery_app.conf.update(saved)
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


def test_a_launch_with_the_job_queue_down_is_refused_and_writes_nothing(
        fake, broker_down, staff_client, django_capture_on_commit_callbacks):
    """Issue 11, point 3: this answered 500 after 19 s and left a draft covering the items."""
    batch_plausibility_project(items=5)
    started = time.monotonic()
    answer = confirm_launch(staff_client, django_capture_on_commit_callbacks)
    assert time.monotonic() - started < 10
    assert answer.status_code == 200
    assert "cannot be reached" in answer.content.decode()
    assert "nothing was launched" in answer.content.decode()
    assert not Batch.objects.exists() and not Hit.objects.exists()
    with pytest.raises(CommandError, match="nothing was launched"):
        call_command("launch_batch", "claire", "--split", "dev", "--reward", "0.50",
                     "--title", "Rate", "--yes", stdout=StringIO())
    assert not Batch.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_launch_batch_resume_reports_the_outcome_and_fails_loudly(no_credentials, monkeypatch):
    """Finding 8: ``--resume`` printed the status from before publishing and exited 0.
    (Committed transactions, as in real use: the inline job runs when the launch commits.)"""
    batch_plausibility_project(items=5)
    with pytest.raises(CommandError, match="AWS credentials"):
        call_command("launch_batch", "claire", "--split", "dev", "--reward", "0.50",
                     "--title", "Rate", "--yes", stdout=StringIO())
    batch = Batch.objects.get()
    with pytest.raises(CommandError, match="AWS credentials"):
        call_command("launch_batch", "--resume", str(batch.pk), stdout=StringIO())
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    out = StringIO()
    call_command("launch_batch", "--resume", str(batch.pk), stdout=out)
    assert "published, 1/1 HITs published" in out.getvalue()
    with pytest.raises(CommandError, match="no batch"):
        call_command("launch_batch", "--resume", "999999", stdout=StringIO())


def test_unfinished_work_is_what_a_lost_job_left(django_capture_on_commit_callbacks):
    """What the periodic resume_unfinished_work job sends again."""
    project = batch_plausibility_project(items=1)
    quiet = Batch.objects.create(project=project, provider="mturk", title="t",
                                 status=Batch.Status.PUBLISHING)
    busy = Batch.objects.create(project=project, provider="mturk", title="t",
                                status=Batch.Status.PUBLISHING)
    Batch.objects.filter(pk=quiet.pk).update(updated_at="2026-01-01T00:00:00Z")
    Batch.objects.create(project=project, provider="mturk", title="t",
                         status=Batch.Status.FAILED)
    work = unfinished_work(quiet_for_seconds=60)
    assert work.batch_ids == [quiet.pk] and busy.pk not in work.batch_ids
    assert not (work.assignment_ids or work.bonus_ids or work.worker_ids)
    assert Assignment.objects.count() == Bonus.objects.count() == 0
