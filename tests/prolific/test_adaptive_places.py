"""Prolific places follow adaptive redundancy (issue 25, point 5): a study is launched with
the policy's ``start`` places; once its answers are collected, a study whose items' answers
disagree gets the places they need now (up to the policy's ``maximum``), and one whose answers
are clear gets none -- by collection itself and by the batch page's button."""

from __future__ import annotations

import pytest

from annotation.models import Hit, Project
from annotation.services.batches.collect import batch_collect
from annotation.services.batches.plan import hits_places_needed
from annotation.services.projects import project_update
from tests.factories import batch_plausibility_project, launch_prolific, participant_works

pytestmark = pytest.mark.django_db


def adaptive_project(**policy) -> Project:
    return project_update(project=batch_plausibility_project(items=2), flag_settings={
        "adaptive_redundancy": {"start": 2, "maximum": 4, **policy}})


def places(prolific_app, hit: Hit) -> tuple[int, int]:
    """(our count, Prolific's) of the study's places."""
    hit.refresh_from_db()
    study = prolific_app.world.studies[hit.provider_hit_id]
    return hit.max_assignments, int(study.body["total_available_places"])


def collect(batch, capture) -> None:
    with capture(execute=True):  # the places jobs queued after commit run here
        batch_collect(batch_id=batch.pk)


def test_disagreeing_answers_raise_the_places_to_the_maximum_and_no_further(
        prolific_app, simulator, client, django_capture_on_commit_callbacks):
    project = adaptive_project()
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    assert places(prolific_app, hit) == (2, 2)  # start
    for _ in range(2):
        participant_works(simulator, hit, client=client, rating=4)  # 4, 4: on a boundary
    collect(batch, django_capture_on_commit_callbacks)
    assert places(prolific_app, hit) == (3, 3)
    collect(batch, django_capture_on_commit_callbacks)  # again: the places cover the need
    assert places(prolific_app, hit) == (3, 3)
    participant_works(simulator, hit, client=client, rating=4)
    collect(batch, django_capture_on_commit_callbacks)
    assert places(prolific_app, hit) == (4, 4)
    participant_works(simulator, hit, client=client, rating=4)
    collect(batch, django_capture_on_commit_callbacks)
    assert places(prolific_app, hit) == (4, 4)  # the maximum
    assert hits_places_needed(hit_ids=[hit.pk]) == {}


def test_clear_answers_add_no_place(prolific_app, simulator, client,
                                    django_capture_on_commit_callbacks):
    project = adaptive_project()
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    for _ in range(2):
        participant_works(simulator, hit, client=client, rating=5)
    collect(batch, django_capture_on_commit_callbacks)
    assert places(prolific_app, hit) == (2, 2)


def test_a_fixed_project_keeps_its_places(prolific_app, simulator, client,
                                          django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=2, redundancy={"dev": 2})
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    for _ in range(2):
        participant_works(simulator, hit, client=client, rating=4)
    collect(batch, django_capture_on_commit_callbacks)
    assert places(prolific_app, hit) == (2, 2)
    assert hits_places_needed(hit_ids=[hit.pk]) == {}


def test_the_batch_page_adds_the_places_the_answers_need(
        prolific_app, simulator, client, staff_client, django_capture_on_commit_callbacks):
    project = adaptive_project()
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    detail = staff_client.get(f"/staff/batches/{batch.pk}/").content.decode()
    assert 'data-testid="adapt-places"' in detail
    url = f"/staff/batches/{batch.pk}/manage/"
    none = staff_client.post(url, {"action": "adapt"}, follow=True).content.decode()
    assert "no study needs more places now" in none
    for _ in range(2):
        participant_works(simulator, hit, client=client, rating=4)
    with django_capture_on_commit_callbacks(execute=False):
        # collected without running the jobs collection queues: the page asks itself
        batch_collect(batch_id=batch.pk)
    with django_capture_on_commit_callbacks(execute=True):
        done = staff_client.post(url, {"action": "adapt"}, follow=True).content.decode()
    assert (f"Add the places the answers need: requested for 1 study: "
            f"{hit.provider_hit_id}.") in done
    assert places(prolific_app, hit) == (3, 3)
