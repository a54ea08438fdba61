"""A repeated client token is a retry only with the same answer (issue 22, point 1): sent with
another answer, the submit answers ``already_saved`` with the stored answer (never
``duplicate``), a change (revise) is refused, and nothing is written either way."""

import uuid

import pytest

from annotation.models import Annotation
from tests.factories import local_submit, plausibility_project, post_json

pytestmark = pytest.mark.django_db


def test_same_token_same_answer_is_a_duplicate_another_answer_is_not(annotator_client):
    project = plausibility_project(items=2)
    first, second = project.items.order_by("id")
    token = uuid.uuid4().hex
    assert local_submit(annotator_client, project, first.pk, {"rating": 4},
                        token=token).json()["status"] == "saved"
    again = local_submit(annotator_client, project, first.pk, {"rating": 4}, token=token).json()
    assert again["status"] == "duplicate"
    other = local_submit(annotator_client, project, first.pk, {"rating": 1}, token=token)
    assert other.status_code == 200
    body = other.json()
    assert body["status"] == "already_saved"
    assert body["stored"]["payload"] == {"rating": 4}
    # The token of an answer to another item: refused, nothing written.
    elsewhere = local_submit(annotator_client, project, second.pk, {"rating": 2}, token=token)
    assert elsewhere.status_code == 409 and elsewhere.json()["error"] == "token_reused"
    assert list(Annotation.objects.values_list("item_id", "rating")) == [(first.pk, 4)]


def test_a_change_sent_again_with_its_token_and_another_answer_is_refused(annotator_client):
    project = plausibility_project()
    item = project.items.get()
    stored = local_submit(annotator_client, project, item.pk, {"rating": 4}).json()
    token = uuid.uuid4().hex

    def revise(rating):
        return post_json(annotator_client, f"/annotate/{project.slug}/revise/",
                         {"item_id": item.pk, "client_token": token, "payload": {"rating": rating},
                          "replaces": stored["annotation_id"]})

    changed = revise(5).json()
    assert changed["status"] == "saved"
    assert revise(5).json()["status"] == "duplicate"
    refused = revise(2)
    assert refused.status_code == 409 and refused.json()["error"] == "changed_meanwhile"
    assert "not stored" in refused.json()["message"]
    assert list(Annotation.objects.order_by("id").values_list("rating", "state")) == [
        (4, "superseded"), (5, "counted")]
