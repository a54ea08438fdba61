"""The task page's answers against what MTurk reports (the in-process stand-in, tasks inline).

The page cannot authenticate the worker, so what it stores is provisional until collection sees
the assignment at MTurk: verified then, or released and flagged when MTurk never reports it
(docs/annotating.md, "Trust")."""

from __future__ import annotations

import json
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Annotation, Assignment, Flag
from annotation.selectors.qc import exportable_annotations, rating_rows
from annotation.services import decisions
from annotation.services.annotations import annotations_confirm
from annotation.services.batches import collect
from annotation.services.batches.plan import LaunchOptions, batch_plan
from tests.factories import batch_plausibility_project, launched_batch, page_work

pytestmark = pytest.mark.django_db


def with_ids(task_url: str, **ids: str) -> str:
    """The same task URL with other ids, as someone who knows the (public) HIT id writes it."""
    parts = urlsplit(task_url)
    query = dict(parse_qsl(parts.query)) | ids
    return parts._replace(query=urlencode(query)).geturl()


def page_assignments(*ids: str):
    return Assignment.objects.filter(provider_assignment_id__in=ids).order_by("pk")


def test_collection_verifies_reported_work_and_releases_the_rest(
        fake, simulator, client, staff_user, settings, django_capture_on_commit_callbacks):
    settings.UNPACK_MTURK_SUBMIT_ORIGINS = (fake.base_url,)
    project = batch_plausibility_project(items=2)
    # The test client answers a page in milliseconds, which QC's absolute time floor rightly
    # flags (under_time_floor); this test is about collection's flags, so the floor is off.
    project.flag_settings = {"min_item_seconds": 0, "reading_words_per_minute": 0}
    project.save(update_fields=["flag_settings"])
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    assert hit.max_assignments == 4

    # A real worker: the page saves, then posts to MTurk (the stand-in's ids pass validation).
    simulator.register_worker("AREAL1")
    real = simulator.accept("AREAL1", hit.provider_hit_id)
    simulator.external_submit(real["assignment_id"], page_work(client, real["task_url"], 5))
    # A real worker who saved everything, then returned the HIT instead of submitting it.
    simulator.register_worker("ARETURNS1")
    gone = simulator.accept("ARETURNS1", hit.provider_hit_id)
    page_work(client, gone["task_url"], 1)
    simulator.return_assignment(gone["assignment_id"])
    # Someone who knows the HIT id and invents an assignment.
    page_work(client, with_ids(real["task_url"], assignmentId="3INVENTED0000000000000000000",
                               workerId="AINVENTOR"), 1)
    assert Annotation.objects.count() == 6
    assert not exportable_annotations(project=project).exists()
    assert rating_rows(project=project) == []

    result = collect.batch_collect(batch_id=batch.pk)
    assert (result.assignments_verified, result.assignments_created,
            result.annotations_created, result.assignments_released) == (1, 0, 0, 0)
    counted = exportable_annotations(project=project)
    assert sorted(counted.values_list("rating", flat=True)) == [5, 5]
    assert {row[2] for row in rating_rows(project=project)} == {5}
    unreported = page_assignments(gone["assignment_id"], "3INVENTED0000000000000000000")
    assert [a.status for a in unreported] == ["submitted", "submitted"]
    assert not Flag.objects.exists()

    # An hour and some later MTurk still has not reported them: it never will.
    unreported.update(accepted_at=timezone.now() - timedelta(hours=1, minutes=6))
    result = collect.batch_collect(batch_id=batch.pk)
    assert result.assignments_released == 2
    assert [a.status for a in unreported] == ["abandoned", "abandoned"]
    assert set(Flag.objects.values_list("reason", "assignment__provider_assignment_id")) == {
        ("not_reported_by_mturk", "3INVENTED0000000000000000000"),
        ("not_reported_by_mturk", gone["assignment_id"])}
    # "Run QC now" replaces only the flags QC raised itself: collection's stay open.
    staff = Client()
    staff.force_login(staff_user)
    staff.post(f"/staff/review/{project.slug}/qc/")
    assert set(Flag.objects.filter(status=Flag.Status.OPEN).values_list(
        "reason", "raised_by")) == {("not_reported_by_mturk", Flag.RaisedBy.COLLECTION)}
    assert Flag.objects.count() == 2
    assert sorted(counted.values_list("rating", flat=True)) == [5, 5]
    assert Assignment.objects.get(provider_assignment_id=real["assignment_id"]).status == \
        "submitted"
    # Released assignments do not hold a batch open once the real work is decided.
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=Assignment.objects.get(provider_assignment_id=real["assignment_id"]).pk)
    assert not Assignment.objects.filter(hit=hit, status="submitted").exists()


def test_provisional_answers_fill_no_slot_when_planning_more_work(
        fake, simulator, client, settings, django_capture_on_commit_callbacks):
    settings.UNPACK_MTURK_SUBMIT_ORIGINS = (fake.base_url,)
    project = batch_plausibility_project(items=1, redundancy={"train": 1, "dev": 1, "test": 1})
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    simulator.register_worker("AREAL2")
    real = simulator.accept("AREAL2", hit.provider_hit_id)
    page_work(client, with_ids(real["task_url"], assignmentId="3FAKE", workerId="AFAKE"))
    options = LaunchOptions(title="More", reward_cents=50, splits=("dev",))
    batch.status = batch.Status.CANCELLED  # the HIT's slots no longer count as coming work
    batch.save(update_fields=["status"])
    # The invented answer is stored but fills no slot: the item still needs its one answer.
    assert batch_plan(project=project, options=options).estimate.assignments == 1
    # Once verified (collection saw it at MTurk), the same answer fills the slot.
    annotations_confirm(annotations=Annotation.objects.all())
    assert batch_plan(project=project, options=options).estimate.assignments == 0


def test_an_assignment_mturk_has_but_the_page_never_finished_is_closed_and_completed(
        fake, simulator, client, settings, django_capture_on_commit_callbacks):
    """The page saved one of two items and never finished; the worker submitted on MTurk
    anyway (the whole answer in the fields). MTurk's status wins: the assignment is submitted
    (no more answers go into it), the page's answer is verified and kept, the missing item is
    stored from MTurk's answer, and the assignment can be reviewed."""
    settings.UNPACK_MTURK_SUBMIT_ORIGINS = (fake.base_url,)
    project = batch_plausibility_project(items=2)
    batch = launched_batch(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    simulator.register_worker("AHALF1")
    accepted = simulator.accept("AHALF1", hit.provider_hit_id)
    parts = urlsplit(accepted["task_url"])
    config = client.get(parts.path, dict(parse_qsl(parts.query))).context["config"]
    first, second = (item["item_id"] for item in config["items"])

    def save(item_id, rating):
        body = {"item_id": item_id, "client_token": f"token-{item_id}-{rating}",
                "task_token": config["task_token"], "payload": {"rating": rating}}
        return client.post(config["submit_url"], json.dumps(body),
                           content_type="application/json")

    assert save(first, 2).status_code == 200
    simulator.external_submit(accepted["assignment_id"], {"unpack_payload": json.dumps(
        {str(first): {"rating": 2}, str(second): {"rating": 3}})})
    result = collect.batch_collect(batch_id=batch.pk)
    assert (result.assignments_verified, result.annotations_created) == (1, 1)
    assignment = Assignment.objects.get()
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.submitted_at
    assert sorted(exportable_annotations(project=project).values_list("rating", flat=True)) \
        == [2, 3]
    # The page's late save of the second item gets MTurk's answer back; nothing changes.
    late = save(second, 5)
    assert late.status_code == 200 and late.json()["status"] == "already_saved"
    assert late.json()["stored"]["summary"] == "rating 3"
    assert sorted(Annotation.objects.values_list("rating", flat=True)) == [2, 3]
    with django_capture_on_commit_callbacks(execute=True):
        decisions.assignment_approve(assignment_id=assignment.pk)
    assert fake.world.assignments[accepted["assignment_id"]].status == "Approved"
