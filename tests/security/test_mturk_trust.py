"""Trust boundaries of the MTurk ExternalQuestion endpoints (``/mturk/task/<slug>/…``).

The page's query string (assignmentId, hitId, workerId, turkSubmitTo) comes from whoever opens
the URL; the submit and finish endpoints are CSRF-exempt and trust a token the page signs for
that (assignment, HIT, worker). What holds is tested plainly; what does not is an
``xfail(strict=True)`` naming the gap, for whoever owns ``frontend/annotate_views.py`` and
``annotation/services/annotations.py`` (the annotate hot path) to fix: the test then passes,
strict xfail turns that into a failure, and the marker comes off.
"""

from __future__ import annotations

import json
import uuid

import pytest

from annotation.models import Annotation, Assignment, Worker
from tests.frontend.builders import publish_hit, sluice_project

pytestmark = pytest.mark.django_db

SANDBOX = "https://workersandbox.mturk.com"
ANSWER = {"full_question": "Why did he leave the band?", "skipped": False}


def open_page(client, project, *, assignment, worker, hit="HIT123", submit_to=SANDBOX):
    return client.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": assignment, "hitId": hit, "workerId": worker, "turkSubmitTo": submit_to})


def token_for(client, project, **ids) -> str:
    response = open_page(client, project, **ids)
    assert response.status_code == 200
    return response.context["config"]["task_token"]


def submit(client, project, token, item_id):
    body = {"item_id": item_id, "client_token": uuid.uuid4().hex, "task_token": token,
            "payload": ANSWER}
    return client.post(f"/mturk/task/{project.slug}/submit/", json.dumps(body),
                       content_type="application/json")


@pytest.fixture
def hit_project():
    project = sluice_project(slug="trust-demo", items=2)
    hit = publish_hit(project, max_assignments=1)
    return project, hit


# --- what holds -----------------------------------------------------------------------------


@pytest.mark.parametrize("submit_to", [
    "https://www.mturk.com@evil.example",
    "https://www.mturk.com.evil.example",
    "https://evil.example/https://www.mturk.com",
    "javascript:alert(1)//www.mturk.com",
    "//evil.example",
    "http://www.mturk.com",
    " https://evil.example",
    "",
])
def test_the_page_posts_only_to_mturk(client, hit_project, submit_to):
    project, _ = hit_project
    response = open_page(client, project, assignment="A1", worker="AW1", submit_to=submit_to)
    assert response.status_code == 400
    assert Assignment.objects.count() == 0


def test_a_token_is_bound_to_its_hit_and_project(client, hit_project):
    project, _ = hit_project
    other_items = list(project.items.order_by("id"))
    publish_hit(project, hit_id="HIT999", items=other_items[1:])
    token = token_for(client, project, assignment="A1", worker="AW1", hit="HIT999")
    # An item of another HIT of the same project: refused.
    refused = submit(client, project, token, other_items[0].pk)
    assert refused.status_code == 400 and refused.json()["error"] == "wrong_item"
    # The same token on another project's endpoint: no such HIT there.
    elsewhere = sluice_project(slug="elsewhere")
    publish_hit(elsewhere, hit_id="HIT777")
    assert submit(client, elsewhere, token, elsewhere.items.get().pk).status_code == 400
    assert Annotation.objects.count() == 0


def test_another_workers_assignment_cannot_be_written(client, hit_project):
    project, _ = hit_project
    item = project.items.order_by("id").first()
    own = token_for(client, project, assignment="A1", worker="AW1")
    assert submit(client, project, own, item.pk).status_code == 200
    intruder = token_for(client, project, assignment="A1", worker="AW2")
    response = submit(client, project, intruder, item.pk)
    assert response.status_code == 403 and response.json()["error"] == "not_yours"
    finish = client.post(f"/mturk/task/{project.slug}/finish/",
                         json.dumps({"task_token": intruder}), content_type="application/json")
    assert finish.status_code == 403
    assert Annotation.objects.get().worker.external_id == "AW1"


def test_a_forged_or_tampered_token_is_refused(client, hit_project):
    project, _ = hit_project
    from django.core import signing

    forged = signing.dumps(["A1", "HIT123", "AW1"], salt="another.salt", compress=True)
    item = project.items.order_by("id").first()
    assert submit(client, project, forged, item.pk).status_code == 400
    assert submit(client, project, "", item.pk).status_code == 400
    assert Annotation.objects.count() == 0


# --- open: for the owner of the annotate hot path -------------------------------------------


@pytest.mark.xfail(strict=True, reason=(
    "mturk_task signs a token for whatever assignmentId/workerId the URL carries: anyone who "
    "knows a HIT id (HIT ids are public on the marketplace) can invent an assignment and store "
    "answers for it. Fix: on first save, confirm the assignment with the provider "
    "(GetAssignment: this worker, this HIT) or keep such answers out of QC/export until "
    "collection matched them."))
def test_an_invented_assignment_cannot_store_answers(client, hit_project):
    project, _ = hit_project
    token = token_for(client, project, assignment="INVENTED-ASSIGNMENT", worker="ANYONE")
    response = submit(client, project, token, project.items.order_by("id").first().pk)
    assert response.status_code == 403
    assert Annotation.objects.count() == 0


@pytest.mark.xfail(strict=True, reason=(
    "A HIT accepts any number of distinct assignments: with invented assignment and worker ids "
    "one person stores many answers per item, beyond the HIT's MaxAssignments, and skews "
    "aggregation. Fix in assignment_get_or_create_mturk: refuse a new assignment once the HIT "
    "has max_assignments of them."))
def test_a_hit_takes_no_more_assignments_than_it_has(client, hit_project):
    project, hit = hit_project
    item = project.items.order_by("id").first()
    statuses = [submit(client, project,
                       token_for(client, project, assignment=f"ASG{k}", worker=f"AW{k}"),
                       item.pk).status_code for k in range(3)]
    assert statuses[0] == 200
    assert statuses[1:] == [409, 409]
    assert Assignment.objects.filter(hit=hit).count() == hit.max_assignments


@pytest.mark.xfail(strict=True, reason=(
    "Opening the page with an unknown workerId creates a Worker row: an unauthenticated GET "
    "writes to the database for any string. Fix: look the worker up (for the blocked check) "
    "and create it on first save only."))
def test_opening_the_page_writes_nothing(client, hit_project):
    project, _ = hit_project
    assert open_page(client, project, assignment="A1", worker="ANEWWORKER").status_code == 200
    assert Worker.objects.count() == 0


@pytest.mark.xfail(strict=True, reason=(
    "Ids are not validated: a workerId longer than Worker.external_id (100) or an assignmentId "
    "longer than Assignment.provider_assignment_id (64) is stored truncated-or-not on SQLite "
    "and is a 500 (DataError) on PostgreSQL. Fix: check length and alphabet ([A-Z0-9]+) of "
    "assignmentId/hitId/workerId in mturk_task and answer 400 bad_link."))
def test_overlong_ids_are_a_clear_error(client, hit_project):
    project, _ = hit_project
    page = open_page(client, project, assignment="A" * 200, worker="W" * 200)
    assert page.status_code == 400
    assert Worker.objects.count() == 0 and Assignment.objects.count() == 0


@pytest.mark.xfail(strict=True, reason=(
    "Task tokens never expire and are accepted whatever the assignment's state: after an "
    "assignment was approved, rejected or returned, its page still stores new answers into it. "
    "Fix: refuse saves unless the assignment is accepted (and give the token a max_age of the "
    "batch's assignment duration)."))
def test_a_decided_assignment_takes_no_more_answers(client, hit_project):
    project, _ = hit_project
    first, second = project.items.order_by("id")
    token = token_for(client, project, assignment="A1", worker="AW1")
    assert submit(client, project, token, first.pk).status_code == 200
    Assignment.objects.filter(provider_assignment_id="A1").update(
        status=Assignment.Status.APPROVED)
    assert submit(client, project, token, second.pk).status_code in (403, 409)
    assert Annotation.objects.count() == 1


@pytest.mark.xfail(strict=True, reason=(
    "The page lists the saved items of the assignment id in the URL whoever the worker is "
    "(selectors_annotate.assignment_annotations filters by assignment id only): opening "
    "another worker's assignment id shows which items they have done. Fix: refuse the page "
    "(not_yours) when the assignment belongs to another worker."))
def test_another_workers_assignment_page_is_refused(client, hit_project):
    project, _ = hit_project
    item = project.items.order_by("id").first()
    assert submit(client, project, token_for(client, project, assignment="A1", worker="AW1"),
                  item.pk).status_code == 200
    page = open_page(client, project, assignment="A1", worker="AW2")
    assert page.status_code == 403
