"""Collecting a Prolific batch: statuses synced from every page of submissions, returned and
timed-out sessions free their items, sessions Prolific does not know are flagged, answers are
never rebuilt from Prolific."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import tasks
from annotation.models import Annotation, Assignment, Flag, Worker
from annotation.providers.prolific import ProlificConfig, ProlificProvider
from annotation.services.annotations import live_assignments_q
from annotation.services.batches.collect import batch_collect, open_batch_ids
from tests.factories import (
    batch_plausibility_project,
    launch_prolific,
    participant_works,
    prolific_page_work,
)
from tests.prolific.conftest import WORKSPACE

pytestmark = pytest.mark.django_db


def _provider(fake, page_size: int = 100) -> ProlificProvider:
    return ProlificProvider(ProlificConfig(api_url=fake.base_url, api_token="test-token",
                                           workspace_id=WORKSPACE, page_size=page_size))


def test_submissions_past_the_first_page_are_collected(prolific_app, simulator, client,
                                                       django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=2, redundancy={"train": 7, "dev": 7, "test": 7})
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    assert hit.max_assignments == 7
    sessions = [participant_works(simulator, hit, client=client) for _ in range(7)]
    assert Annotation.objects.filter(state=Annotation.State.COUNTED).count() == 0

    provider = _provider(prolific_app, page_size=3)  # three pages of submissions
    result = batch_collect(batch_id=batch.pk, provider=provider)

    assert result.assignments_seen == 7 and result.assignments_verified == 7
    assert prolific_app.world.stats()["calls"]["list_submissions"] == 3
    for assignment in sessions:
        assignment.refresh_from_db()
        assert assignment.status == Assignment.Status.SUBMITTED
        assert assignment.confirmed_at is not None
    assert Annotation.objects.filter(state=Annotation.State.COUNTED,
                                     source=Annotation.Source.PROLIFIC).count() == 14
    assert result.annotations_created == 0  # nothing rebuilt from Prolific


def test_returned_and_timed_out_sessions_free_their_items(prolific_app, simulator, client,
                                                          django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=3, redundancy={"train": 2, "dev": 2, "test": 2})
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    returned = participant_works(simulator, hit, finish=False, items=2, client=client)
    timed_out = participant_works(simulator, hit, finish=False, items=1, client=client)
    batch_collect(batch_id=batch.pk)  # both in progress: Prolific vouches for them
    for assignment in (returned, timed_out):
        assignment.refresh_from_db()
        assert assignment.confirmed_at is not None
    assert Assignment.objects.filter(live_assignments_q(hit, now=timezone.now())).count() == 2

    simulator.return_session(returned.provider_assignment_id)
    simulator.time_out(timed_out.provider_assignment_id)
    result = batch_collect(batch_id=batch.pk)

    returned.refresh_from_db()
    timed_out.refresh_from_db()
    assert returned.status == Assignment.Status.RETURNED
    assert timed_out.status == Assignment.Status.ABANDONED
    assert result.assignments_released == 2
    # Their slots are free and their answers count for nothing.
    assert Assignment.objects.filter(live_assignments_q(hit, now=timezone.now())).count() == 0
    assert not Annotation.objects.filter(state=Annotation.State.COUNTED).exists()
    assert set(Annotation.objects.values_list("state", flat=True)) == {
        Annotation.State.PROVISIONAL}
    # Two new participants take the places Prolific gave back, and their work counts.
    for _ in range(2):
        participant_works(simulator, hit, client=client)
    batch_collect(batch_id=batch.pk)
    assert Annotation.objects.filter(state=Annotation.State.COUNTED).count() == 6
    # Collecting again changes nothing.
    again = batch_collect(batch_id=batch.pk)
    assert again.status_changes == again.assignments_released == 0


def _invented_session(client, hit, participant: str, session: str, items: int) -> Assignment:
    """Ids nobody got from Prolific, typed into our task page's URL."""
    prolific_page_work(client, f"/prolific/task/claire/?PROLIFIC_PID={participant}"
                      f"&STUDY_ID={hit.provider_hit_id}&SESSION_ID={session}",
              items=items, finish=False)
    return Assignment.objects.get(provider_assignment_id=session)


def test_a_session_prolific_does_not_report_is_released_and_flagged(
        prolific_app, simulator, client, django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=2)
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.first()
    # Saved while Prolific could not be asked (503): kept provisionally. (Prolific's 404 for an
    # invented session would refuse the save outright; tests/prolific/test_invented_sessions.)
    simulator.fault("get_submission", count=1, status=503)
    invented = _invented_session(client, hit, "5f0000000000000000000abc",
                                 "5f00000000000000000000e1", items=2)
    assert invented.confirmed_at is None  # Prolific did not vouch for it
    long_ago = timezone.now() - timedelta(seconds=batch.assignment_duration_seconds + 3600)
    Assignment.objects.filter(pk=invented.pk).update(accepted_at=long_ago)
    simulator.fault("get_submission", count=1, status=503)
    recent = _invented_session(client, hit, "5f0000000000000000000abd",
                               "5f00000000000000000000e2", items=1)

    batch_collect(batch_id=batch.pk)

    invented.refresh_from_db()
    recent.refresh_from_db()
    assert invented.status == Assignment.Status.ABANDONED
    assert recent.status == Assignment.Status.ACCEPTED
    flag = Flag.objects.get(assignment=invented)
    assert flag.reason == "not_reported_by_prolific"
    assert flag.raised_by == Flag.RaisedBy.COLLECTION
    assert "Prolific never reported" in flag.detail
    assert not Annotation.objects.filter(state=Annotation.State.COUNTED).exists()


def test_a_submission_without_saved_answers_is_collected_without_inventing_any(
        prolific_app, simulator, django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=2)
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.first()
    participant = simulator.participant()
    session = simulator.start(participant, hit.provider_hit_id)["session_id"]
    simulator.complete(session, batch.completion_code)

    result = batch_collect(batch_id=batch.pk)

    assignment = Assignment.objects.get(provider_assignment_id=session)
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.worker.provider == Worker.Provider.PROLIFIC
    assert assignment.worker.external_id == participant
    assert not assignment.annotations.exists() and result.invalid_answers == 0
    assert assignment.events.filter(kind="submission_without_answers").count() == 1


def test_periodic_collection_visits_open_prolific_batches(prolific_app, simulator, client,
                                                          django_capture_on_commit_callbacks,
                                                          settings):
    project = batch_plausibility_project(items=2)
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    assert open_batch_ids() == [batch.pk]
    participant_works(simulator, batch.hits.first(), client=client)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": "p14a-collect"}}
    assert tasks.collect_open_batches() == [batch.pk]
    assert Annotation.objects.filter(state=Annotation.State.COUNTED).count() == 2
