"""Staff see workers by pseudonym everywhere (issue 11, point 9): rows stored before the fix,
which hold raw MTurk WorkerIds, are rewritten by migration 0014, and every reader of batch
events and flags — the API, the staff batch page, the review queue, the admin, the JSONL export
and ``manage.py review list`` — shows ``Worker.anonymous_id``, never the WorkerId."""

from __future__ import annotations

import importlib
import json
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command

from annotation.exporters import export_project
from annotation.models import (
    Annotation,
    Assignment,
    Batch,
    Bonus,
    Flag,
    Hit,
    StatusEvent,
    Worker,
)
from annotation.selectors.qc import anonymous_worker_id
from tests.factories import ItemFactory, ProjectFactory

pytestmark = pytest.mark.django_db

RAW = "A1B2C3D4E5F6G7"  # the worker's MTurk WorkerId
REPORTED = "AZYXWVUTSRQP99"  # a WorkerId MTurk reported for someone else's assignment
MIGRATION = importlib.import_module("annotation.migrations.0014_h11_pseudonyms_in_details")


@pytest.fixture
def old_rows():
    """Rows as collection and the bonus job wrote them before pseudonyms (raw WorkerIds)."""
    project = ProjectFactory(slug="pseudo", kind="plausibility")
    item = ItemFactory(project=project)
    batch = Batch.objects.create(project=project, provider="mturk", title="b",
                                 status=Batch.Status.PUBLISHED)
    hit = Hit.objects.create(batch=batch, provider_hit_id="HITPSEUDO1",
                             unique_request_token="token-pseudo", max_assignments=1)
    worker = Worker.objects.create(provider="mturk", external_id=RAW)
    assignment = Assignment.objects.create(hit=hit, worker=worker, provider_assignment_id="ASG9",
                                           status=Assignment.Status.SUBMITTED)
    annotation = Annotation.objects.create(project=project, item=item, worker=worker,
                                           assignment=assignment, source="mturk",
                                           payload={"rating": 3}, rating=3)
    StatusEvent.objects.create(batch=batch, hit=hit, assignment=assignment,
                               kind="assignment_collected", new_status="submitted",
                               detail={"worker": RAW})
    StatusEvent.objects.create(batch=batch, hit=hit, assignment=assignment,
                               kind="assignment_mismatch",
                               detail={"reported_worker": REPORTED, "reported_hit": "HITX"})
    StatusEvent.objects.create(batch=batch, assignment=assignment, kind="bonus_failed",
                               detail={"bonus_id": 1, "error": f"Assignment ASG9 does not "
                                                               f"belong to worker {RAW}."})
    Bonus.objects.create(assignment=assignment, amount_cents=10, reason="r",
                         unique_request_token="bonus-pseudo",
                         error=f"Assignment ASG9 does not belong to worker {RAW}.")
    Flag.objects.create(project=project, assignment=assignment, worker=worker,
                        annotation=annotation, reason="assignment_mismatch", score=1.0,
                        raised_by=Flag.RaisedBy.COLLECTION, fingerprint="m:1",
                        detail=f"MTurk reports assignment ASG9 for worker {REPORTED} on HIT "
                               "HITX; the task page stored it for another worker or HIT.")
    Flag.objects.create(project=project, assignment=assignment, worker=worker,
                        annotation=annotation, reason="not_reported_by_mturk", score=1.0,
                        raised_by=Flag.RaisedBy.COLLECTION, fingerprint="n:1",
                        detail=f"The task page stored 1 answer(s) for assignment ASG9 (worker "
                               f"{RAW}), which MTurk never reported: an invented id.")
    return {"project": project, "batch": batch, "worker": worker}


def stored_text() -> str:
    return json.dumps([list(StatusEvent.objects.values_list("detail", flat=True)),
                       list(Flag.objects.values_list("detail", flat=True)),
                       list(Bonus.objects.values_list("error", flat=True))])


def test_the_migration_rewrites_old_rows_to_pseudonyms_and_can_run_twice(old_rows):
    assert RAW in stored_text() and REPORTED in stored_text()
    MIGRATION.rewrite(apps, None)
    text = stored_text()
    assert RAW not in text and REPORTED not in text
    named, reported = old_rows["worker"].anonymous_id, anonymous_worker_id("mturk", REPORTED)
    assert StatusEvent.objects.get(kind="assignment_collected").detail == {"worker": named}
    assert StatusEvent.objects.get(kind="assignment_mismatch").detail == {
        "reported_worker": reported, "reported_hit": "HITX"}
    assert f"for worker {reported} on HIT" in Flag.objects.get(reason="assignment_mismatch").detail
    assert f"(worker {named})" in Flag.objects.get(reason="not_reported_by_mturk").detail
    assert named in Bonus.objects.get().error
    MIGRATION.rewrite(apps, None)  # pseudonyms stay as they are
    assert stored_text() == text


def test_every_staff_reader_shows_pseudonyms(old_rows, staff_client, tmp_path):
    MIGRATION.rewrite(apps, None)
    batch, project = old_rows["batch"], old_rows["project"]
    named = old_rows["worker"].anonymous_id
    events = StatusEvent.objects.order_by("pk")
    flag = Flag.objects.get(reason="not_reported_by_mturk")
    pages = {
        "API batch detail": f"/api/batches/{batch.pk}/",
        "staff batch page": f"/staff/batches/{batch.pk}/",
        "review queue": f"/staff/review/{project.slug}/",
        "review queue by worker": f"/staff/review/{project.slug}/?by=worker",
        "admin events": "/admin/annotation/statusevent/",
        "admin event": f"/admin/annotation/statusevent/{events[0].pk}/change/",
        "admin flags": "/admin/annotation/flag/",
        "admin flag": f"/admin/annotation/flag/{flag.pk}/change/",
        "admin assignments": "/admin/annotation/assignment/",
        "admin bonus": f"/admin/annotation/bonus/{Bonus.objects.get().pk}/change/",
    }
    for name, url in pages.items():
        response = staff_client.get(url)
        assert response.status_code == 200, name
        body = response.content.decode()
        assert RAW not in body and REPORTED not in body, name
    assert named in staff_client.get(pages["review queue by worker"]).content.decode()
    assert named in staff_client.get(pages["admin assignments"]).content.decode()

    export_project(project=project, format_name="jsonl", out_dir=tmp_path)
    exported = (tmp_path / "annotations.jsonl").read_text()
    assert RAW not in exported and named in exported

    listing = StringIO()
    call_command("review", "list", stdout=listing)
    assert RAW not in listing.getvalue() and named in listing.getvalue()
