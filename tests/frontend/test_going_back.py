"""Going back (issue 12, point 4): an annotator reopens a recent answer and changes it until it
is reviewed. A change is a NEW version: the old row is kept (state superseded, pointed to by
the new row's ``supersedes``), both changes are audited, and every reader -- the work queue,
the submit's capacity check, progress, QC, the dataset and generic exports -- sees only the
latest version. Also: the other tab's "Replace it with this answer" uses the same service."""

from __future__ import annotations

import json
import uuid

import pytest

from annotation.exporters import export_project
from annotation.models import Annotation, Assignment, ClozeItem, Flag, StatusEvent, Worker
from annotation.payloads import validate_payload
from annotation.selectors import annotate as annotate_selectors
from annotation.selectors import qc as qc_selectors
from annotation.selectors.progress import AnnotatorProgress, annotator_progress
from annotation.services import decisions
from annotation.services.annotations import SubmitRefused, annotation_submit
from annotation.services.work_queue import work_queue_next_item
from tests.factories import (
    XSS,
    plausibility_project,
    publish_hit,
    sluice_project,
)
from tests.factories import (
    local_submit as submit,
)
from tests.factories import (
    post_json as post,
)

pytestmark = pytest.mark.django_db


def revise(client, project, item_id, replaces, payload, token=None):
    return post(client, f"/annotate/{project.slug}/revise/",
                {"item_id": item_id, "client_token": token or uuid.uuid4().hex,
                 "payload": payload, "replaces": replaces})


def snapshot():
    return sorted(Annotation.objects.values_list("id", "state", "rating", "text",
                                                 "supersedes_id", "review_status"))


def test_a_change_is_a_new_audited_version_and_the_old_one_is_kept(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 2})
    item = project.items.order_by("id").first()
    first = submit(annotator_client, project, item.pk, {"rating": 2}).json()
    response = revise(annotator_client, project, item.pk, first["annotation_id"], {"rating": 5})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "saved" and body["item_id"] == item.pk and "next" not in body
    old = Annotation.objects.get(pk=first["annotation_id"])
    new = Annotation.objects.get(pk=body["annotation_id"])
    assert (old.state, old.rating) == ("superseded", 2)
    assert (new.state, new.rating, new.supersedes_id) == ("counted", 5, old.pk)
    assert new.worker_id == old.worker_id and new.item_id == old.item_id
    events = {e.kind: e for e in StatusEvent.objects.filter(annotation__in=[old, new])}
    assert events["annotation_superseded"].annotation_id == old.pk
    assert events["annotation_superseded"].detail == {"superseded_by": new.pk}
    assert (events["annotation_superseded"].old_status,
            events["annotation_superseded"].new_status) == ("counted", "superseded")
    assert events["annotation_revised"].detail == {"supersedes": old.pk}
    # Changed again: a third version, each older one superseded.
    third = revise(annotator_client, project, item.pk, new.pk, {"rating": 3}).json()
    assert list(Annotation.objects.order_by("id").values_list("state", "rating")) == [
        ("superseded", 2), ("superseded", 5), ("counted", 3)]
    assert Annotation.objects.get(pk=third["annotation_id"]).supersedes_id == new.pk


def test_every_reader_sees_only_the_latest_version(annotator_client, tmp_path):
    project = plausibility_project(items=2, redundancy={"train": 2})
    ClozeItem.objects.filter(project=project, external_id="c0").update(external_id="101")
    ClozeItem.objects.filter(project=project, external_id="c1").update(external_id="102")
    item, other_item = project.items.order_by("id")
    first = submit(annotator_client, project, item.pk, {"rating": 1}).json()
    revise(annotator_client, project, item.pk, first["annotation_id"], {"rating": 4})
    worker = Worker.objects.get(provider="local")
    latest = Annotation.objects.get(state="counted")
    # QC rows and the dataset export's reader.
    assert qc_selectors.rating_rows(project=project) == [(item.pk, worker.pk, 4.0)]
    assert list(qc_selectors.qc_annotations(project=project)) == [latest]
    assert list(qc_selectors.exportable_annotations(project=project)) == [latest]
    assert qc_selectors.progress_by_split(project=project)[0]["annotations"] == 1
    # The exports: the CLAIRE dataset and the generic JSONL.
    export_project(project=project, format_name="jsonl", out_dir=tmp_path / "jsonl")
    lines = (tmp_path / "jsonl" / "annotations.jsonl").read_text().splitlines()
    assert [json.loads(line)["rating"] for line in lines] == [4.0]
    export_project(project=project, format_name="claire", out_dir=tmp_path / "claire")
    scores = (tmp_path / "claire" / "train_scores.tsv").read_text()
    assert scores == "101_1\t4\n"  # the latest rating alone (with the old one: 2.5)
    # The annotator's progress: one done (not two), one left; the queue offers the other item.
    assert annotator_progress(project=project, worker=worker) == AnnotatorProgress(done=1,
                                                                                   left=1)
    assert work_queue_next_item(project=project, worker=worker).pk == other_item.pk
    # Capacity: the item has one counted answer; a second annotator fills its last slot, a
    # third is refused (the superseded row filled nothing).
    for name, expected in (("second", 200), ("third", 409)):
        other = Worker.objects.create(provider="local", external_id=name)
        loaded = annotate_selectors.item_for_submit(project=project, item_id=item.pk)
        context = annotate_selectors.item_context(loaded)
        clean = validate_payload(project.kind, {"rating": 3}, context)
        try:
            annotation_submit(worker=other, item=loaded, clean=clean, context=context,
                              source="local", client_token=uuid.uuid4().hex)
            status = 200
        except SubmitRefused as refused:
            status = 409 if refused.code == "item_full" else 403
        assert status == expected


def test_a_reviewed_answer_cannot_be_changed(annotator_client, staff_user):
    project = plausibility_project(items=1)
    item = project.items.get()
    first = submit(annotator_client, project, item.pk, {"rating": 2}).json()
    decisions.annotation_approve(annotation_id=first["annotation_id"], actor=staff_user)
    before = snapshot()
    response = revise(annotator_client, project, item.pk, first["annotation_id"], {"rating": 5})
    assert response.status_code == 409
    assert response.json()["error"] == "reviewed"
    assert "reviewed" in response.json()["message"]
    assert snapshot() == before
    page = annotator_client.get(f"/annotate/{project.slug}/answers/{first['annotation_id']}/")
    assert page.status_code == 200
    config = page.context["config"]
    assert config["stored"]["editable"] is False
    assert "has been reviewed (approved)" in page.content.decode()


def test_workers_see_and_change_only_their_own_answers(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 3})
    item = project.items.order_by("id").first()
    stranger = Worker.objects.create(provider="local", external_id="stranger")
    theirs = Annotation.objects.create(project=project, item=item, worker=stranger,
                                       source="local", rating=1, payload={"rating": 1})
    before = snapshot()
    response = revise(annotator_client, project, item.pk, theirs.pk, {"rating": 5})
    assert response.status_code == 404 and response.json()["error"] == "no_answer"
    assert snapshot() == before
    assert annotator_client.get(
        f"/annotate/{project.slug}/answers/{theirs.pk}/").status_code == 404
    listing = annotator_client.get(f"/annotate/{project.slug}/answers/").content.decode()
    assert f'data-annotation-id="{theirs.pk}"' not in listing
    # An MTurk answer (inside an assignment) is not changed here, even the worker's own.
    hit = publish_hit(project, items=[item])
    assignment = Assignment.objects.create(hit=hit, worker=stranger,
                                           provider_assignment_id="A1")
    in_hit = Annotation.objects.create(project=project, item=item, worker=stranger,
                                       assignment=assignment, source="mturk", rating=2,
                                       payload={"rating": 2})
    assert revise(annotator_client, project, item.pk, in_hit.pk,
                  {"rating": 5}).status_code == 404


def test_an_older_version_or_a_wrong_item_is_refused_and_a_retry_is_one_version(
        annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 2})
    item, other_item = project.items.order_by("id")
    first = submit(annotator_client, project, item.pk, {"rating": 2}).json()
    token = uuid.uuid4().hex
    changed = revise(annotator_client, project, item.pk, first["annotation_id"], {"rating": 4},
                     token=token).json()
    again = revise(annotator_client, project, item.pk, first["annotation_id"], {"rating": 4},
                   token=token)
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert again.json()["annotation_id"] == changed["annotation_id"]
    before = snapshot()
    stale = revise(annotator_client, project, item.pk, first["annotation_id"], {"rating": 1})
    assert stale.status_code == 409 and stale.json()["error"] == "changed_meanwhile"
    wrong = revise(annotator_client, project, other_item.pk, changed["annotation_id"],
                   {"rating": 1})
    assert wrong.status_code == 404
    invalid = revise(annotator_client, project, item.pk, changed["annotation_id"],
                     {"rating": 9})
    assert invalid.status_code == 400 and invalid.json()["field"] == "rating"
    missing = post(annotator_client, f"/annotate/{project.slug}/revise/",
                   {"item_id": item.pk, "client_token": uuid.uuid4().hex,
                    "payload": {"rating": 3}})
    assert missing.status_code == 400 and missing.json()["field"] == "replaces"
    assert snapshot() == before
    # An older version's page opens the live one.
    old_page = annotator_client.get(f"/annotate/{project.slug}/answers/{first['annotation_id']}/")
    assert old_page.status_code == 302
    assert old_page.url.endswith(f"/answers/{changed['annotation_id']}/")


def test_a_decision_on_an_older_version_leaves_it_superseded(annotator_client, staff_user):
    project = plausibility_project(items=1)
    item = project.items.get()
    first = submit(annotator_client, project, item.pk, {"rating": 2}).json()
    revise(annotator_client, project, item.pk, first["annotation_id"], {"rating": 4})
    decisions.annotation_reject(annotation_id=first["annotation_id"], message="too low",
                                actor=staff_user)
    assert list(Annotation.objects.order_by("id").values_list("state", "review_status")) == [
        ("superseded", "rejected"), ("counted", "pending")]


def test_recent_answers_previous_and_the_answer_page(annotator_client):
    project = sluice_project(items=3)
    first, second, _ = project.items.order_by("id")
    a = submit(annotator_client, project, first.pk,
               {"full_question": f"Why did he leave {XSS}?", "skipped": False}).json()
    b = submit(annotator_client, project, second.pk,
               {"full_question": "", "skipped": True}).json()
    listing = annotator_client.get(f"/annotate/{project.slug}/answers/")
    html = listing.content.decode()
    assert listing.status_code == 200
    assert html.index(f'data-annotation-id="{b["annotation_id"]}"') < html.index(
        f'data-annotation-id="{a["annotation_id"]}"')  # newest first
    assert "<script>window.__xss" not in html and "&lt;script&gt;" in html
    assert "(skipped)" in html
    # Previous: the latest answer, then the one before it, then the list.
    previous = annotator_client.get(f"/annotate/{project.slug}/answers/previous/")
    assert previous.url.endswith(f"/answers/{b['annotation_id']}/")
    before_b = annotator_client.get(
        f"/annotate/{project.slug}/answers/previous/?before={b['annotation_id']}")
    assert before_b.url.endswith(f"/answers/{a['annotation_id']}/")
    before_a = annotator_client.get(
        f"/annotate/{project.slug}/answers/previous/?before={a['annotation_id']}")
    assert before_a.url.endswith("/answers/")
    page = annotator_client.get(f"/annotate/{project.slug}/answers/{a['annotation_id']}/")
    config = page.context["config"]
    assert config["mode"] == "edit" and config["stored"]["editable"] is True
    assert config["stored"]["payload"]["full_question"] == f"Why did he leave {XSS}?"
    assert config["submit_url"] == f"/annotate/{project.slug}/revise/"
    assert [item["item_id"] for item in config["items"]] == [first.pk]
    # The home page and the task page link to the list.
    assert f"/annotate/{project.slug}/answers/" in annotator_client.get("/").content.decode()
    task = annotator_client.get(f"/annotate/{project.slug}/").content.decode()
    assert "Your recent answers" in task and "answers/previous/" in task


def test_a_flag_on_a_changed_answer_says_so_in_the_review_queue(annotator_client,
                                                                 staff_client):
    project = sluice_project(items=1)
    item = project.items.get()
    first = submit(annotator_client, project, item.pk,
                   {"full_question": "Why?", "skipped": False}).json()
    old = Annotation.objects.get(pk=first["annotation_id"])
    Flag.objects.create(project=project, annotation=old, worker=old.worker, reason="too_short",
                        fingerprint=f"too_short:annotation:{old.pk}")
    queue = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert "changed this answer after it was flagged" not in queue
    assert f"/annotations/{old.pk}/decide/" in queue  # Reject is offered for the live answer
    changed = revise(annotator_client, project, item.pk, old.pk,
                     {"full_question": f"Why did he leave the band {XSS}?", "skipped": False})
    queue = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert "changed this answer after it was flagged" in queue
    assert f"answer {changed.json()['annotation_id']}" in queue
    assert "&lt;script&gt;" in queue and "<script>window.__xss" not in queue
    assert f"/annotations/{old.pk}/decide/" not in queue  # no Reject for the older version
