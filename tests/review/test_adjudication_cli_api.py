"""Adjudication from the command line and the API (issue 24): both call
``services.adjudication.item_reference_set``, the page's one writer, and both are staff only."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import ItemReference, StatusEvent
from tests.factories import SCRIPT, annotate, canard_sample, workers

pytestmark = pytest.mark.django_db


@pytest.fixture
def rewrite_answers():
    project, items = canard_sample()
    crowd = workers(3)
    answers = [annotate(items[1], crowd[0], source="mturk", text="When did the Mothers disband?"),
               annotate(items[1], crowd[1], source="mturk", text=f"When did they split? {SCRIPT}"),
               annotate(items[1], crowd[2], source="mturk", text="When did Zappa's group end?",
                        review_status="rejected")]
    return project, items, answers


def review(*args) -> str:
    out = StringIO()
    call_command("review", "adjudicate", *args, stdout=out)
    return out.getvalue()


def test_the_command_lists_an_items_answers_by_dataset_id(rewrite_answers):
    project, items, answers = rewrite_answers
    text = review(items[1].external_id, "--project", project.slug)
    lines = text.splitlines()
    assert lines[0] == (f"item {items[1].pk} ({items[1].external_id}) of {project.slug}: "
                        "3 answer(s)")
    assert lines[1].startswith(f"{answers[0].pk}\tworker {answers[0].worker.anonymous_id}\t")
    assert lines[1].endswith("(pickable)\tWhen did the Mothers disband?")
    assert "(not pickable)" in lines[3]
    assert lines[-1] == "reference: none yet"
    assert not ItemReference.objects.exists()


def test_the_command_settles_the_reference_through_the_service(rewrite_answers):
    _, items, answers = rewrite_answers
    text = review(str(items[1].pk), "--answer", str(answers[0].pk), "--note", "clearest")
    assert text == (f"item {items[1].pk} ({items[1].external_id}): reference set "
                    f"(answer {answers[0].pk}): When did the Mothers disband?\n")
    reference = ItemReference.objects.get(item=items[1])
    assert (reference.chosen_id, reference.note) == (answers[0].pk, "clearest")
    assert StatusEvent.objects.get(kind="reference_set").detail["answer"] == answers[0].pk
    assert review(str(items[1].pk)).splitlines()[-1] == (
        "reference: When did the Mothers disband?")
    written = review(str(items[1].pk), "--text", "When did the Mothers of Invention disband?")
    assert "(written)" in written
    assert ItemReference.objects.get(item=items[1]).chosen is None


def test_the_command_refuses_clearly_and_changes_nothing(rewrite_answers, django_user_model):
    project, items, answers = rewrite_answers
    with pytest.raises(CommandError, match="pick a counted or imported answer"):
        review(str(items[1].pk), "--answer", str(answers[2].pk))
    with pytest.raises(CommandError, match="no item 'nope' in canard-small"):
        review("nope", "--project", project.slug)
    with pytest.raises(CommandError, match="a dataset id needs --project"):
        review(items[1].external_id)
    django_user_model.objects.create_user("annotator", password="x")
    with pytest.raises(CommandError, match="may not do this"):
        review(str(items[1].pk), "--text", "Mine", "--actor", "annotator")
    assert not ItemReference.objects.exists() and not StatusEvent.objects.exists()


def url(project, item) -> str:
    return f"/api/projects/{project.slug}/items/{item.pk}/adjudication/"


def test_the_api_lists_answers_and_settles_the_reference(staff_client, staff_user,
                                                         rewrite_answers):
    project, items, answers = rewrite_answers
    listed = staff_client.get(url(project, items[1])).json()
    assert [row["id"] for row in listed["answers"]] == [answer.pk for answer in answers]
    assert listed["answers"][1]["text"] == f"When did they split? {SCRIPT}"  # JSON, as stored
    assert [row["pickable"] for row in listed["answers"]] == [True, True, False]
    assert listed["answers"][0]["worker"] == answers[0].worker.anonymous_id
    assert listed["reference"] is None and listed["answers_total"] == 3
    settled = staff_client.post(url(project, items[1]), {"answer": answers[1].pk,
                                                         "note": "kept"},
                                content_type="application/json")
    assert settled.status_code == 200
    assert settled.json()["chosen"] == answers[1].pk
    assert settled.json()["decided_by"] == staff_user.get_username()
    event = StatusEvent.objects.get(kind="reference_set")
    assert event.actor == staff_user
    again = staff_client.get(url(project, items[1])).json()["reference"]
    assert again["text"] == f"When did they split? {SCRIPT}" and again["note"] == "kept"


def test_the_api_refuses_with_the_field_and_changes_nothing(staff_client, rewrite_answers):
    project, items, answers = rewrite_answers
    refused = staff_client.post(url(project, items[1]), {"answer": answers[2].pk},
                                content_type="application/json")
    assert refused.status_code == 400 and "answer" in refused.json()
    other_item = staff_client.post(url(project, items[0]), {"answer": answers[0].pk},
                                   content_type="application/json")
    assert other_item.status_code == 400
    assert "is not an answer to item" in other_item.json()["answer"][0]
    assert not ItemReference.objects.exists()


def test_annotators_may_not_read_or_settle(annotator_client, rewrite_answers):
    project, items, _ = rewrite_answers
    client = annotator_client
    assert client.get(url(project, items[1])).status_code == 403
    assert client.post(url(project, items[1]), {"text": "Mine"},
                       content_type="application/json").status_code == 403
    assert not ItemReference.objects.exists()


def test_the_endpoint_is_in_the_schema(client):
    schema = client.get("/api/schema/?format=json").json()
    operations = schema["paths"]["/api/projects/{slug}/items/{item_id}/adjudication/"]
    assert set(operations) >= {"get", "post"}
