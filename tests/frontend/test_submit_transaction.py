"""The local submit's one transaction: the project and item read by one statement, the answer
stored, and the worker's next item chosen and leased before the one COMMIT; and what the
submit answers for a project or item that does not exist."""

import json
import uuid

import pytest
from django.db import connection

from annotation.models import Annotation, ItemLease
from tests.factories import (
    local_submit,
    plausibility_project,
    post_json,
    rewrite_project,
    sluice_project,
)


@pytest.mark.django_db
def test_unknown_projects_and_items_get_404s(annotator_client):
    project = plausibility_project(items=1)
    item = project.items.get()
    saved = local_submit(annotator_client, project, item.pk, {"rating": 3})
    assert saved.status_code == 200  # the real project first: it saves
    gone = post_json(annotator_client, "/annotate/no-such-project/submit/",
                     {"item_id": item.pk, "client_token": uuid.uuid4().hex,
                      "payload": {"rating": 3}})
    assert gone.status_code == 404
    # A body that is not even valid does not reveal more about a project that does not exist.
    broken = annotator_client.post("/annotate/no-such-project/submit/", "{",
                                   content_type="application/json")
    assert broken.status_code == 404
    other = sluice_project("elsewhere").items.get()
    foreign = local_submit(annotator_client, project, other.pk, {"rating": 3})
    assert foreign.status_code == 404 and foreign.json()["error"] == "no_item"
    assert foreign.json()["field"] == "item_id"
    assert Annotation.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_answer_and_the_next_items_lease_are_one_transaction(annotator_client):
    """On PostgreSQL the rows' ``xmin`` (the transaction that wrote them) shows it: the answer
    and the lease of the next item it offers commit together, with one COMMIT (before, choosing
    the next item was a transaction of its own: two WAL flushes per submit)."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only (xmin)")
    project = plausibility_project("one-commit", items=3, redundancy={"train": 2})
    first = annotator_client.get(f"/annotate/{project.slug}/").context["items"][0]
    answer = local_submit(annotator_client, project, first["item_id"], {"rating": 4}).json()
    assert answer["status"] == "saved"
    following = answer["next"]["item"]["item_id"]
    lease = ItemLease.objects.get(item_id=following,
                                  worker__user__username="annotator")
    with connection.cursor() as cursor:
        cursor.execute("SELECT xmin::text FROM annotation_annotation WHERE id = %s",
                       [answer["annotation_id"]])
        answer_xmin = cursor.fetchone()[0]
        cursor.execute("SELECT xmin::text FROM annotation_itemlease WHERE id = %s", [lease.pk])
        lease_xmin = cursor.fetchone()[0]
    assert answer_xmin == lease_xmin


@pytest.mark.django_db
def test_a_failure_choosing_the_next_item_keeps_no_half_saved_answer(annotator_client,
                                                                      monkeypatch):
    """The next item is chosen in the submit's transaction (PostgreSQL) or before it (SQLite):
    if choosing fails, nothing of the submit stays, and the page's retry (same token) saves it
    once."""
    from annotation.services import annotations

    project = plausibility_project(items=2)
    item = project.items.order_by("id").first()

    def broken(**kwargs):
        raise RuntimeError("the chooser failed")

    monkeypatch.setattr(annotations, "work_queue_next_item", broken)
    monkeypatch.setattr(annotations, "work_queue_next_item_before_answer", broken)
    annotator_client.raise_request_exception = False
    token = uuid.uuid4().hex
    failed = local_submit(annotator_client, project, item.pk, {"rating": 4}, token=token)
    assert failed.status_code == 500
    assert not Annotation.objects.filter(client_token=token).exists()
    assert not ItemLease.objects.filter(worker__user__username="annotator").exclude(
        item=item).exists()
    monkeypatch.undo()
    retried = local_submit(annotator_client, project, item.pk, {"rating": 4}, token=token)
    assert retried.status_code == 200 and retried.json()["status"] == "saved"
    assert Annotation.objects.filter(client_token=token).count() == 1
    following = json.loads(retried.content)["next"]["item"]["item_id"]
    assert following != item.pk
    assert ItemLease.objects.filter(worker__user__username="annotator",
                                    item_id=following).exists()


@pytest.mark.django_db
def test_the_next_item_chosen_before_the_answer_is_the_one_chosen_after(annotator_client):
    """SQLite chooses the next item before storing the answer, the answered item excluded:
    the same item the choice after the answer finds, in every branch (the rest of the
    answered item's group, then after it, then before it)."""
    from annotation.services.work_queue import (
        work_queue_next_item,
        work_queue_next_item_before_answer,
    )
    from tests.factories import local_answer, local_worker

    plausibility = plausibility_project(items=6, redundancy={"train": 1})
    items = list(plausibility.items.order_by("id"))
    conversations = rewrite_project("chooser-rewrite", dialogues=2)
    turns = list(conversations.items.order_by("group_key", "position", "id"))
    for project, order in ((plausibility, (items[5], items[0], items[3])),
                           (conversations, (turns[1], turns[-1], turns[0]))):
        worker = local_worker(f"chooser-{project.slug}")
        for answered in order:
            before = work_queue_next_item_before_answer(project=project, worker=worker,
                                                        answered_item_id=answered.pk)
            if project is plausibility:
                local_answer(project, answered, worker)
            else:
                Annotation.objects.create(project=project, item=answered, worker=worker,
                                          source="local", text="Who founded it?")
            after = work_queue_next_item(project=project, worker=worker,
                                         after_item_id=answered.pk)
            assert before is not None and before == after and before != answered
