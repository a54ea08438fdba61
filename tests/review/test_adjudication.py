"""Adjudication (issue 24): compare an item's answers, settle its reference through the one
service, with its audit row, and find it in every export beside the dataset's files."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError

from annotation.exporters import export_project
from annotation.models import Annotation, ItemReference, StatusEvent
from annotation.services.adjudication import item_reference_set
from tests.factories import SCRIPT, annotate, canard_sample, claire_sample, workers

pytestmark = pytest.mark.django_db


@pytest.fixture
def rewrite_answers():
    project, items = canard_sample()
    crowd = workers(3)
    answers = [annotate(items[1], crowd[0], source="mturk", text="When did the Mothers disband?"),
               annotate(items[1], crowd[1], source="mturk", text=f"When did they split? {SCRIPT}"),
               annotate(items[1], crowd[2], source="mturk", text="When did Zappa's group end?")]
    return project, items, answers


def page(project, item) -> str:
    return f"/staff/projects/{project.slug}/items/{item.pk}/adjudicate/"


def test_the_page_shows_every_answer_with_its_diff_escaped(staff_client, rewrite_answers):
    project, items, _answers = rewrite_answers
    body = staff_client.get(page(project, items[1])).content.decode()
    assert "3 answers to this item" in body
    assert body.count('class="answer-card"') == 3
    assert body.count('class="diff"') == 3 and "<ins>" in body
    assert SCRIPT not in body and "&lt;script&gt;" in body
    assert "When did they disband?" in body  # the item's own text
    assert "No reference settled yet" in body


def test_picking_an_answer_settles_the_reference_with_its_audit_row(staff_client, staff_user,
                                                                    rewrite_answers):
    project, items, answers = rewrite_answers
    response = staff_client.post(page(project, items[1]) + "decide/",
                                 {"answer": str(answers[2].pk), "note": "the clearest"})
    assert response.status_code == 302
    reference = ItemReference.objects.get(item=items[1])
    assert (reference.chosen, reference.text, reference.decided_by) == (
        answers[2], "When did Zappa's group end?", staff_user)
    event = StatusEvent.objects.get(kind="reference_set")
    assert event.actor == staff_user and event.annotation == answers[2]
    assert event.detail["new"] == "When did Zappa's group end?" and not event.detail["written"]
    body = staff_client.get(page(project, items[1])).content.decode()
    assert f"answer {answers[2].pk} picked by researcher" in body


def test_a_written_reference_replaces_the_picked_one_and_both_are_audited(staff_user,
                                                                          rewrite_answers):
    _, items, answers = rewrite_answers
    item_reference_set(item_id=items[1].pk, actor=staff_user, answer_id=answers[0].pk)
    item_reference_set(item_id=items[1].pk, actor=staff_user,
                       text="  When did the Mothers of Invention disband?  ")
    reference = ItemReference.objects.get(item=items[1])
    assert reference.chosen is None and reference.text == (
        "When did the Mothers of Invention disband?")
    events = list(StatusEvent.objects.filter(kind="reference_set").order_by("id"))
    assert [e.detail["written"] for e in events] == [False, True]
    assert events[1].detail["old"] == "When did the Mothers disband?"


@pytest.mark.parametrize("arguments, field", [
    ({"answer_id": 0}, "answer"),  # not an answer to this item (replaced below)
    ({"text": "   "}, "text"),
    ({"text": "x" * 5001}, "text"),
])
def test_bad_input_is_refused_and_changes_nothing(staff_user, rewrite_answers, arguments,
                                                  field):
    _, items, answers = rewrite_answers
    if "answer_id" in arguments:
        other = annotate(items[0], answers[0].worker, source="mturk", text="What band?")
        arguments = {"answer_id": other.pk}
    with pytest.raises(ValidationError) as refused:
        item_reference_set(item_id=items[1].pk, actor=staff_user, **arguments)
    assert field in refused.value.message_dict
    assert not ItemReference.objects.exists() and not StatusEvent.objects.exists()


def test_a_superseded_answer_cannot_be_picked(staff_user, rewrite_answers):
    _, items, answers = rewrite_answers
    answers[0].state = Annotation.State.SUPERSEDED
    answers[0].save(update_fields=["state"])
    with pytest.raises(ValidationError, match="counted or imported"):
        item_reference_set(item_id=items[1].pk, actor=staff_user, answer_id=answers[0].pk)


def test_a_plausibility_reference_is_a_rating_from_1_to_5(staff_user):
    _project, items = claire_sample()
    with pytest.raises(ValidationError, match="a rating from 1 to 5"):
        item_reference_set(item_id=items[0].pk, actor=staff_user, rating="7")
    with pytest.raises(ValidationError, match="a rating from 1 to 5"):
        item_reference_set(item_id=items[0].pk, actor=staff_user, rating="nan")
    item_reference_set(item_id=items[0].pk, actor=staff_user, rating="4.5")
    assert ItemReference.objects.get(item=items[0]).rating == 4.5


def test_a_refused_form_says_why_and_saves_nothing(staff_client, rewrite_answers):
    project, items, _ = rewrite_answers
    response = staff_client.post(page(project, items[1]) + "decide/", {"answer": "", "text": ""},
                                 follow=True)
    assert "text: write the reference, or pick one of the answers" in response.content.decode()
    assert not ItemReference.objects.exists()


def test_exports_write_the_references_beside_unchanged_dataset_files(staff_user, tmp_path,
                                                                     rewrite_answers):
    project, items, answers = rewrite_answers
    before = export_project(project=project, format_name="canard", out_dir=tmp_path / "before")
    assert not (tmp_path / "before" / "adjudicated.jsonl").exists()
    item_reference_set(item_id=items[1].pk, actor=staff_user, answer_id=answers[1].pk)
    after = export_project(project=project, format_name="canard", out_dir=tmp_path / "after")
    for file in before:  # the released format's files are byte-identical
        assert (tmp_path / "after" / file.path.name).read_bytes() == file.path.read_bytes()
    assert len(after) == len(before) + 1
    lines = (tmp_path / "after" / "adjudicated.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    assert len(lines) == 1
    assert {k: record[k] for k in ("item", "split", "reference", "from", "worker")} == {
        "item": items[1].external_id, "split": "dev", "reference": answers[1].text,
        "from": "answer", "worker": answers[1].worker.anonymous_id}
