"""Throttled launches on the embedded default (no Redis: jobs run inline in the caller).

Every provider call is retried where it failed (annotation/providers/retry.py), so a launch
throttled on one call in three publishes everything, inline, from the command and from the
service, without repeating the reads before the write that was throttled; when the retries run
out, the command says what is true (nothing retries by itself here) and names the command that
resumes. Short waits come from the test settings (UNPACK_PROVIDER_RETRY_*)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Batch
from tests.factories import batch_plausibility_project, launch_prolific, launched_batch
from tests.prolific.conftest import (  # noqa: F401  (fixtures)
    fake_prolific,
    fake_prolific_server,
    prolific_app,
)

pytestmark = pytest.mark.django_db

HITS = 110


def launch_command(*extra: str) -> str:
    out = StringIO()
    call_command("launch_batch", "claire", "--split", "dev", "--reward", "0.50", "--title",
                 "Rate fillers", "--items-per-hit", "1", "--assignments", "1", "--yes", *extra,
                 stdout=out)
    return out.getvalue()


def test_110_hits_publish_inline_with_one_call_in_three_throttled(
        fake, simulator, django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=HITS)
    simulator.throttle_every(3)
    batch = launched_batch(project, django_capture_on_commit_callbacks, items_per_hit=1,
                           assignments=1)
    assert (batch.status, batch.error) == (Batch.Status.PUBLISHED, "")
    assert batch.hits.filter(provider_hit_id__isnull=False).count() == HITS
    assert len(fake.world.hits) == HITS  # nothing published twice
    calls = simulator.stats()["calls"]
    # Every third call was throttled and retried in place: 110 creates took ~165 calls.
    assert calls["CreateHITWithHITType"] > HITS + 30


@pytest.mark.django_db(transaction=True)
def test_the_command_shows_each_wait_and_exits_0_with_all_published(fake, simulator):
    batch_plausibility_project(items=HITS)
    simulator.throttle_every(3)
    out = launch_command()
    batch = Batch.objects.get()
    assert batch.status == Batch.Status.PUBLISHED
    assert f"published, {HITS}/{HITS} HITs published" in out
    assert "throttled (ThrottlingException), retrying in " in out
    assert "(attempt 2/8)" in out
    assert "will retry" not in out
    assert len(fake.world.hits) == HITS


@pytest.mark.django_db(transaction=True)
def test_the_command_tells_the_truth_when_the_retries_run_out(fake, simulator, settings):
    settings.UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS = 3
    batch_plausibility_project(items=4)
    simulator.inject_fault("CreateHITWithHITType", count=3)  # the second HIT: 3 throttles
    out = StringIO()
    with pytest.raises(CommandError) as stopped:
        call_command("launch_batch", "claire", "--split", "dev", "--reward", "0.50",
                     "--title", "Rate fillers", "--items-per-hit", "1", "--assignments", "1",
                     "--yes", stdout=out)
    batch = Batch.objects.get()
    message = str(stopped.value)
    assert batch.status == Batch.Status.PUBLISHING
    assert "0/4 HITs published" in message
    assert "will retry" not in message and "nothing retries it here" in message
    assert f"python manage.py launch_batch --resume {batch.pk}" in message
    assert "retrying in" in out.getvalue() and "(attempt 3/3)" in out.getvalue()
    # The command it names finishes the job (the stand-in answers again).
    resumed = StringIO()
    call_command("launch_batch", "--resume", str(batch.pk), stdout=resumed)
    assert "published, 4/4 HITs published" in resumed.getvalue()
    assert len(fake.world.hits) == 4


def test_three_prolific_studies_are_created_with_one_call_in_three_throttled(
        prolific_app, django_capture_on_commit_callbacks):  # noqa: F811
    project = batch_plausibility_project(items=15)
    prolific_app.world.throttle_every(3, retry_after=0.01)
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    assert (batch.status, batch.error) == (Batch.Status.PUBLISHED, "")
    assert len(prolific_app.world.studies) == 3
    assert sorted(prolific_app.world.studies) == sorted(
        batch.hits.values_list("provider_hit_id", flat=True))
    calls = prolific_app.world.calls
    total = sum(calls.values())
    # Only the throttled calls were repeated, each alone: the reads before the first create
    # ran once, and every call but the throttled third ones did its work once.
    assert calls["list_studies"] == 1 and calls["list_participant_groups"] == 1
    assert total - total // 3 == 1 + 1 + 1 + 3 + 3  # lists, group, 3 creates, 3 publishes


@pytest.mark.django_db(transaction=True)
def test_the_prolific_command_waits_as_asked_and_ends_published(prolific_app):  # noqa: F811
    batch_plausibility_project(items=15)
    prolific_app.world.throttle_every(3, retry_after=0.2)
    out = StringIO()
    call_command("launch_batch", "claire", "--split", "dev", "--reward", "1.50", "--title",
                 "Rate", "--provider", "prolific", "--estimated-minutes", "10", "--duration",
                 "30m", "--yes", stdout=out)
    text = out.getvalue()
    assert "throttled (429), retrying in 0.2 s (attempt 2/8)" in text  # Retry-After honoured
    assert "published, 3/3 HITs published" in text
    assert len(prolific_app.world.studies) == 3
