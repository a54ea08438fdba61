"""Problem reports (issue 12, point 5): "Skip / report a problem with this item" on every kind.

A report is stored instead of an answer (state ``reported``: it fills no slot, so the item stays
open for others, and enters no QC row and no export), raises an open flag by the annotator that
the review queue shows with its reason and words (escaped), and moves the annotator on. A sluice
Skip stays an answer of its own. On multi-item MTurk pages a context the items share is shown
once (point 10)."""

from __future__ import annotations

import uuid

import pytest

from annotation.models import (
    Annotation,
    ClozeFiller,
    Document,
    Flag,
    Item,
    StatusEvent,
    TargetSentence,
    Worker,
)
from annotation.payloads import validate_payload
from annotation.selectors import qc as qc_selectors
from annotation.selectors.annotate import item_context, item_for_submit
from annotation.services.annotations import annotations_confirm
from annotation.services.work_queue import work_queue_next_item
from tests.factories import (
    BUILDERS,
    XSS,
    ZINC_PARAGRAPHS,
    ZINC_TARGET,
    decontext_project,
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

REPORT = {"problem": {"reason": "broken_source", "note": f"The sentence is cut {XSS}"}}


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_every_kind_takes_a_report_that_fills_no_slot_and_reaches_the_reviewers(
        kind, annotator_client):
    project = BUILDERS[kind](f"{kind.replace('_', '-')}-report")
    project.redundancy = {"train": 1, "dev": 1, "test": 1}
    project.save()
    item = project.items.order_by("position", "id").first()
    response = submit(annotator_client, project, item.pk, REPORT)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "saved"
    report = Annotation.objects.get()
    assert (report.state, report.problem, report.problem_note) == (
        "reported", "broken_source", f"The sentence is cut {XSS}")
    assert report.payload == REPORT
    assert report.server_warnings == []
    # The annotator moves on; the item stays open for everyone else.
    assert body["next"] is None or body["next"]["item"]["item_id"] != item.pk
    other = Worker.objects.create(provider="local", external_id="other")
    assert work_queue_next_item(project=project, worker=other).pk == item.pk
    # No QC row, no export.
    assert not qc_selectors.qc_annotations(project=project).exists()
    assert not qc_selectors.exportable_annotations(project=project).exists()
    # The reviewers' flag, raised by the annotator, audited.
    flag = Flag.objects.get()
    assert (flag.raised_by, flag.status, flag.annotation_id) == ("annotator", "open", report.pk)
    assert flag.detail == f"the source text is broken: The sentence is cut {XSS}"
    assert StatusEvent.objects.filter(kind="problem_reported", annotation=report).exists()


def test_the_review_queue_shows_the_report_escaped(annotator_client, staff_client):
    project = sluice_project()
    item = project.items.get()
    submit(annotator_client, project, item.pk,
           {"problem": {"reason": "offensive", "note": f"Rude {XSS}"}})
    html = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert "annotator_report" in html
    assert "offensive content" in html
    assert "Rude &lt;script&gt;window.__xss = 1&lt;/script&gt;" in html
    assert "<script>window.__xss" not in html


@pytest.mark.parametrize("payload, field", [
    ({"problem": {"reason": "boring"}}, "problem.reason"),
    ({"problem": "broken_source"}, "problem"),
    ({"problem": {"reason": "unclear", "note": 5}}, "problem.note"),
    ({"problem": {"reason": "unclear", "note": "x" * 501}}, "problem.note"),
    ({"problem": {"reason": "unclear"}, "rating": 3}, "payload"),
])
def test_a_malformed_report_is_refused_and_stores_nothing(annotator_client, payload, field):
    project = plausibility_project()
    response = submit(annotator_client, project, project.items.get().pk, payload)
    assert response.status_code == 400 and response.json()["field"] == field
    assert not Annotation.objects.exists() and not Flag.objects.exists()


def test_a_sluice_skip_is_still_an_answer():
    project = sluice_project()
    item = item_for_submit(project=project, item_id=project.items.get().pk)
    clean = validate_payload(project.kind, {"full_question": "", "skipped": True},
                             item_context(item))
    assert clean.columns == {"text": "", "skipped": True}


def test_a_report_changed_into_an_answer_withdraws_its_flag(annotator_client):
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    report = submit(annotator_client, project, item.pk,
                    {"problem": {"reason": "unclear"}}).json()
    response = post(annotator_client, f"/annotate/{project.slug}/revise/", {
        "item_id": item.pk, "client_token": uuid.uuid4().hex, "payload": {"rating": 4},
        "replaces": report["annotation_id"]})
    assert response.status_code == 200, response.content
    assert list(Annotation.objects.order_by("id").values_list("state", "problem")) == [
        ("superseded", "unclear"), ("counted", "")]
    flag = Flag.objects.get()
    assert flag.status == "dismissed" and "withdrawn" in flag.decision_note


def test_a_report_cannot_become_an_answer_once_others_filled_the_item(annotator_client):
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    report = submit(annotator_client, project, item.pk,
                    {"problem": {"reason": "unclear"}}).json()
    other = Worker.objects.create(provider="local", external_id="other")
    Annotation.objects.create(project=project, item=item, worker=other, source="local",
                              rating=3, payload={"rating": 3})
    response = post(annotator_client, f"/annotate/{project.slug}/revise/", {
        "item_id": item.pk, "client_token": uuid.uuid4().hex, "payload": {"rating": 4},
        "replaces": report["annotation_id"]})
    assert response.status_code == 409 and response.json()["error"] == "item_full"
    assert Annotation.objects.get(pk=report["annotation_id"]).state == "reported"


def test_an_mturk_report_is_provisional_then_reported_and_round_trips(client):
    project = sluice_project(items=2)
    publish_hit(project)
    page = client.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": "ASSIGNR", "hitId": "HIT123", "workerId": "AWR",
        "turkSubmitTo": "https://workersandbox.mturk.com"})
    token = page.context["config"]["task_token"]
    response = post(client, f"/mturk/task/{project.slug}/submit/", {
        "item_id": project.items.first().pk, "client_token": uuid.uuid4().hex,
        "task_token": token, "payload": REPORT})
    assert response.status_code == 200, response.content
    report = Annotation.objects.get()
    assert report.state == "provisional"
    annotations_confirm(annotations=Annotation.objects.all())
    report.refresh_from_db()
    assert report.state == "reported"
    # The stored payload is what the page posts to MTurk; collection validates it again.
    item = item_for_submit(project=project, item_id=report.item_id)
    assert validate_payload(project.kind, report.payload, item_context(item)).columns[
        "problem"] == "broken_source"


def test_a_multi_item_page_shows_a_shared_context_once(client):
    project = decontext_project(items=1)
    document = Document.objects.get(project=project)
    text = ZINC_PARAGRAPHS[1]["text"]
    first = TargetSentence.objects.get()
    second = TargetSentence.objects.create(
        document=document, paragraph_index=1, start_byte=0,
        end_byte=len(text[:text.index(ZINC_TARGET)].rstrip().encode()),
        text=text[:text.index(ZINC_TARGET)].rstrip())
    Item.objects.create(project=project, external_id="d-second", group_key=first.document
                        .external_id, target_sentence=second)
    publish_hit(project)
    html = client.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": "ASSIGNC", "hitId": "HIT123", "workerId": "AWC",
        "turkSubmitTo": "https://workersandbox.mturk.com"}).content.decode()
    assert html.count('class="page-text"') == 1
    assert html.count('class="paragraph"') == 2  # the page's two paragraphs, shown once
    assert "The page is shown once, with item 1 above" in html

    claire = plausibility_project("claire-shared", items=1)
    filler = ClozeFiller.objects.get(cloze__project=claire)
    other = ClozeFiller.objects.create(cloze=filler.cloze, position=2, text="the baby")
    Item.objects.create(project=claire, external_id="p-second", group_key="article-0",
                        filler=other)
    publish_hit(claire, hit_id="HIT124")
    html = client.get(f"/mturk/task/{claire.slug}/", {
        "assignmentId": "ASSIGND", "hitId": "HIT124", "workerId": "AWD",
        "turkSubmitTo": "https://workersandbox.mturk.com"}).content.decode()
    assert html.count('class="context previous"') == 1
    assert html.count('class="context followup"') == 1
    assert html.count('class="filler"') == 2
    assert "Same article and context as item 1 above" in html
