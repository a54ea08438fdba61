"""The effort summary a text answer's page sends (issue 25, point 4): checked strictly and
stored with the answer on every door (local page, going back, MTurk), refused cleanly when
it is not the page's, and read by QC into flags the review queue shows with their evidence."""

import json
import uuid

import pytest

from annotation.exporters import export_project
from annotation.models import Annotation, Flag
from annotation.services.qc import project_qc_run
from tests.factories import local_submit as submit
from tests.factories import publish_hit, rewrite_project, sluice_project
from tests.frontend.test_annotate_views import mturk_post, mturk_token

pytestmark = pytest.mark.django_db

TYPED = {"pastes": 0, "pasted_chars": 0, "pasted_from_page_chars": 0, "typed_chars": 31,
         "typing_ms": 9_000, "focus_losses": 0, "first_input_ms": 2_500}
QUESTION = "Why did Frank Zappa leave the band?"
PASTED = dict(TYPED, pastes=1, pasted_chars=len(QUESTION), typed_chars=0, typing_ms=0)


def sluice_answer(text=QUESTION):
    return {"full_question": text, "skipped": False}


def test_a_local_answer_stores_the_summary_it_was_sent_with(annotator_client):
    project = sluice_project(items=2)
    first, second = project.items.order_by("id")
    assert submit(annotator_client, project, first.pk, sluice_answer(),
                  effort=TYPED).status_code == 200
    assert submit(annotator_client, project, second.pk, sluice_answer()).status_code == 200
    stored = dict(Annotation.objects.values_list("item_id", "effort"))
    assert stored == {first.pk: TYPED, second.pk: None}  # an older page sends none


@pytest.mark.parametrize(("effort", "field"), [
    ("typed quickly", "effort"),
    (dict(TYPED, keystrokes="W h y"), "effort.keystrokes"),
    (dict(TYPED, typed_chars=-5), "effort.typed_chars"),
    (dict(TYPED, pastes=10**9), "effort.pastes"),
    (dict(TYPED, typing_ms="9000"), "effort.typing_ms"),
    (dict(TYPED, pasted_from_page_chars=3), "effort.pasted_from_page_chars"),
])
def test_a_summary_the_page_never_sends_is_refused_and_nothing_stored(annotator_client, effort,
                                                                      field):
    project = sluice_project()
    response = submit(annotator_client, project, project.items.get().pk, sluice_answer(),
                      effort=effort)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid" and body["field"] == field
    assert body["message"].startswith(f"This answer was not accepted ({field}: ")
    assert body["message"].endswith("Reload the page and save again.")
    assert not Annotation.objects.exists()


def test_a_changed_answer_stores_the_summary_of_its_own_writing(annotator_client):
    project = sluice_project()
    item = project.items.get()
    first = submit(annotator_client, project, item.pk, sluice_answer(), effort=TYPED).json()
    changed = dict(TYPED, typed_chars=4, typing_ms=1_200)
    response = annotator_client.post(
        f"/annotate/{project.slug}/revise/",
        {"item_id": item.pk, "client_token": uuid.uuid4().hex, "replaces": first["annotation_id"],
         "payload": sluice_answer("Why did Frank Zappa leave the band first?"),
         "effort": changed}, content_type="application/json")
    assert response.status_code == 200
    latest = Annotation.objects.exclude(state=Annotation.State.SUPERSEDED).get()
    assert latest.effort == changed


def test_an_mturk_answer_stores_its_summary_and_refuses_a_forged_one(client):
    project = sluice_project(items=2)
    publish_hit(project)
    first, second = project.items.order_by("id")
    token = mturk_token(client, project, "ASSIGNEFFORT", "AWEFFORT")
    body = {"item_id": first.pk, "client_token": uuid.uuid4().hex, "task_token": token,
            "payload": sluice_answer(), "effort": PASTED}
    assert mturk_post(client, project, "submit", body).status_code == 200
    forged = dict(body, item_id=second.pk, client_token=uuid.uuid4().hex,
                  effort=dict(PASTED, pasted_chars=2**40))
    response = mturk_post(client, project, "submit", forged)
    assert response.status_code == 400 and response.json()["field"] == "effort.pasted_chars"
    assert list(Annotation.objects.values_list("item_id", "effort")) == [(first.pk, PASTED)]


def test_qc_flags_a_pasted_answer_and_review_shows_the_evidence(client, staff_client):
    project = rewrite_project()
    publish_hit(project)
    items = list(project.items.order_by("position"))
    token = mturk_token(client, project, "ASSIGNPASTE", "AWPASTE")
    rewrites = ["What was the first album of the Mothers of Invention?",
                "Sure! Here is the rewritten question: when did the Mothers disband?",
                "Did Frank Zappa form any band other than the Mothers of Invention?"]
    efforts = [dict(TYPED, typed_chars=len(rewrites[0])), dict(TYPED),
               dict(PASTED, pasted_chars=len(rewrites[2]))]
    for item, rewrite, effort in zip(items, rewrites, efforts, strict=True):
        response = mturk_post(client, project, "submit", {
            "item_id": item.pk, "client_token": uuid.uuid4().hex, "task_token": token,
            "payload": {"rewrite": rewrite}, "effort": effort})
        assert response.status_code == 200, response.json()
    Annotation.objects.update(state=Annotation.State.COUNTED)  # as collection confirms them
    project_qc_run(project=project)
    found = {(flag.annotation.item_id, flag.reason): flag for flag in
             Flag.objects.filter(reason__in=["pasted_answer", "machine_like_text",
                                             "implausible_typing"]).select_related("annotation")}
    assert set(found) == {(items[1].pk, "machine_like_text"), (items[2].pk, "pasted_answer")}
    pasted = found[(items[2].pk, "pasted_answer")]
    assert pasted.detail == (f"{len(rewrites[2])} characters pasted from outside the page in "
                             f"1 paste for a {len(rewrites[2])}-character answer; "
                             f"0 characters typed; the page never lost the focus; first "
                             f"keystroke 2.5s after the item was shown")
    page = staff_client.get(f"/staff/review/{project.slug}/?by=answer").content.decode()
    assert "pasted_answer" in page and pasted.detail in page
    assert "machine_like_text" in page
    assert "chatbot phrases “here is the rewritten”, “rewritten question:”, “sure!”" in page


def test_the_summary_is_in_no_export_nor_the_api_but_a_flags_evidence_is(annotator_client,
                                                                          staff_client,
                                                                          tmp_path):
    project = sluice_project()
    submit(annotator_client, project, project.items.get().pk, sluice_answer(), effort=PASTED)
    annotation = Annotation.objects.get()
    annotation.state = Annotation.State.COUNTED
    annotation.save(update_fields=["state"])
    project_qc_run(project=project)
    flag = Flag.objects.get(reason="pasted_answer")
    for format_name in ("sluice", "jsonl"):
        out = tmp_path / format_name
        export_project(project=project, format_name=format_name, out_dir=out)
        written = "".join(path.read_text() for path in out.rglob("*") if path.is_file())
        assert "typed_chars" not in written and "first_input_ms" not in written
    jsonl = (tmp_path / "jsonl" / "annotations.jsonl").read_text()
    assert json.loads(jsonl)["flags"][0]["detail"] == flag.detail
    listed = staff_client.get(f"/api/annotations/{annotation.pk}/").json()
    assert listed["id"] == annotation.pk and "effort" not in listed
