"""Task views and the work queue: redundancy, concurrency, idempotency, isolation, CSRF,
escaping, MTurk identity, and query counts independent of the amount of data."""

import json
import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Annotation, Item, ItemLease, Worker
from annotation.services.annotations import SubmitRefused, annotations_confirm
from annotation.services.work_queue import work_queue_next_item
from tests.factories import (
    BUILDERS,
    AnnotationFactory,
    decontext_project,
    local_answer,
    local_worker,
    plausibility_project,
    publish_hit,
    rewrite_project,
    sluice_project,
)
from tests.factories import (
    local_submit as submit,
)

pytestmark = pytest.mark.django_db

TRANSACTION_CONTROL = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK", "BEGIN", "COMMIT")


def separate_lease() -> int:
    """1 where the next item's lease is a statement of its own (SQLite), 0 where the choosing
    statement writes it (PostgreSQL: ``sql.work_queue.chosen_and_leased``)."""
    return 0 if connection.features.has_select_for_update_skip_locked else 1


def separate_mark() -> int:
    """1 where a counted answer's "filled" mark is a statement after the INSERT (SQLite), 0
    where the INSERT's statement writes it (PostgreSQL: ``sql.submit.insert_if_open``)."""
    return 0 if connection.vendor == "postgresql" else 1


def data_queries(captured) -> list[str]:
    """The statements that touch data (tests run inside a transaction, so atomic blocks show up
    as savepoints here; in production they are BEGIN/COMMIT)."""
    return [q["sql"] for q in captured.captured_queries
            if not q["sql"].lstrip().startswith(TRANSACTION_CONTROL)]


# PostgreSQL locks the Item row at submit with SELECT ... FOR UPDATE; SQLite's IMMEDIATE
# transaction already serialises writers and needs no lock statement.


# --- work queue ------------------------------------------------------------------------------


def test_queue_respects_redundancy_per_split_and_skips_done_items():
    project = plausibility_project(items=1, split="dev", redundancy={"train": 1, "dev": 2})
    item = project.items.get()
    first, second, third = local_worker("a"), local_worker("b"), local_worker("c")
    assert work_queue_next_item(project=project, worker=first) == item
    local_answer(project, item, first)
    assert work_queue_next_item(project=project, worker=first) is None  # done it already
    assert work_queue_next_item(project=project, worker=second) == item  # dev wants 2
    local_answer(project, item, second)
    assert work_queue_next_item(project=project, worker=third) is None  # full


def test_imported_annotations_do_not_fill_slots_and_blocked_workers_get_nothing():
    project = plausibility_project(items=1)
    item = project.items.get()
    AnnotationFactory(item=item, source="import", rating=2)
    AnnotationFactory(item=item, source="import", rating=3)
    assert work_queue_next_item(project=project, worker=local_worker("a")) == item
    blocked = Worker.objects.create(provider="local", external_id="b", is_blocked=True)
    assert work_queue_next_item(project=project, worker=blocked) is None


def test_a_conversation_is_continued_in_order():
    project = rewrite_project(dialogues=2)
    worker = local_worker("a")
    first = work_queue_next_item(project=project, worker=worker)
    assert first.position == 1
    Annotation.objects.create(project=project, item=first, worker=worker, source="local",
                              text="x")
    following = work_queue_next_item(project=project, worker=worker)
    assert (following.group_key, following.position) == (first.group_key, 2)


def test_two_workers_one_slot_only_the_first_submit_fills_it():
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    first, second = local_worker("a"), local_worker("b")
    # Both are shown the last open slot (the first one's lease expired meanwhile)...
    assert work_queue_next_item(project=project, worker=first) == item
    assert work_queue_next_item(project=project, worker=second) is None
    ItemLease.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert work_queue_next_item(project=project, worker=second) == item
    local_answer(project, item, first)
    # ...but the capacity re-check under the item's row lock refuses the second.
    with pytest.raises(SubmitRefused) as refused:
        local_answer(project, item, second)
    assert refused.value.code == "item_full"
    assert Annotation.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_submits_for_the_last_slot_store_one(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers (IMMEDIATE transactions); the sequential test "
                    "covers it. Run with DATABASE_URL=postgres://… for real row-lock races.")
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    workers = [local_worker(f"w{i}") for i in range(8)]
    barrier = threading.Barrier(len(workers))
    outcomes = []

    def race(worker):
        barrier.wait()
        try:
            local_answer(project, item, worker)
            outcomes.append("stored")
        except SubmitRefused as refused:
            outcomes.append(refused.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=race, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["item_full"] * 7 + ["stored"]
    assert Annotation.objects.filter(item=item).count() == 1


# --- local views -----------------------------------------------------------------------------


def test_double_submit_stores_one_annotation(annotator_client):
    project = sluice_project()
    item = project.items.get()
    payload = {"full_question": "Why did he leave the band?", "skipped": False}
    first = submit(annotator_client, project, item.pk, payload, token="token-0000000001")
    again = submit(annotator_client, project, item.pk, payload, token="token-0000000001")
    assert first.status_code == again.status_code == 200
    assert first.json()["status"] == "saved" and again.json()["status"] == "duplicate"
    assert first.json()["annotation_id"] == again.json()["annotation_id"]
    assert Annotation.objects.count() == 1


def test_a_worker_cannot_reuse_another_workers_token(annotator_client, django_user_model):
    project = plausibility_project(redundancy={"train": 2})
    item = project.items.get()
    submit(annotator_client, project, item.pk, {"rating": 5}, token="shared-token-123")
    other = Client()
    other.force_login(django_user_model.objects.create_user("other", password="x" * 10))
    response = submit(other, project, item.pk, {"rating": 1}, token="shared-token-123")
    assert response.status_code == 403 and response.json()["error"] == "token_conflict"
    assert "rating" not in response.content.decode()
    assert list(Annotation.objects.values_list("rating", flat=True)) == [5]


def test_submit_refuses_a_full_item_with_409(annotator_client):
    project = plausibility_project(redundancy={"train": 1})
    item = project.items.get()
    local_answer(project, item, local_worker("first"))
    response = submit(annotator_client, project, item.pk, {"rating": 4})
    assert response.status_code == 409 and response.json()["error"] == "item_full"


def test_invalid_payload_names_the_field(annotator_client):
    project = decontext_project()
    item = project.items.get()
    response = submit(annotator_client, project, item.pk, {
        "category": "DONE", "decontextualized_sentence": "Something else entirely.",
        "operations": []})
    assert response.status_code == 400
    assert response.json()["field"] == "decontextualized_sentence"


def test_submit_needs_csrf(annotator_user):
    project = plausibility_project()
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator_user)
    response = submit(client, project, project.items.get().pk, {"rating": 3})
    assert response.status_code == 403
    assert not Annotation.objects.exists()


def test_blocked_local_worker_gets_no_work(annotator_client, annotator_user):
    project = plausibility_project()
    Worker.objects.create(provider="local", external_id="annotator", user=annotator_user,
                          is_blocked=True)
    assert annotator_client.get(f"/annotate/{project.slug}/").status_code == 403
    response = submit(annotator_client, project, project.items.get().pk, {"rating": 3})
    assert response.status_code == 403 and not Annotation.objects.exists()


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_pages_escape_dataset_strings(annotator_client, kind):
    project = BUILDERS[kind]()
    content = annotator_client.get(f"/annotate/{project.slug}/").content.decode()
    assert "<script>window.__xss" not in content


def test_annotate_page_query_count_does_not_grow_with_data(annotator_client):
    small = plausibility_project("small", items=1)
    big = plausibility_project("big", items=30, redundancy={"train": 5})
    for index, item in enumerate(big.items.all()[:20]):
        for w in range(3):
            local_answer(big, item, local_worker(f"w{index}-{w}"))
    annotator_client.get(f"/annotate/{small.slug}/")  # creates the annotator's Worker
    with CaptureQueriesContext(connection) as small_queries:
        assert annotator_client.get(f"/annotate/{small.slug}/").status_code == 200
    with CaptureQueriesContext(connection) as big_queries:
        assert annotator_client.get(f"/annotate/{big.slug}/").status_code == 200
    # session, user with worker, project, whether the worker is blocked from this project
    # (selectors/blocks.py), the item chosen AND loaded by one statement, and its lease (on
    # PostgreSQL written by that same statement).
    assert len(data_queries(small_queries)) == len(data_queries(big_queries)) == (
        5 + separate_lease()), data_queries(big_queries)
    chooser = data_queries(big_queries)[-1 - separate_lease()]
    # Branch A (done-by-me, counted, leases of workers who did not answer, the group of my last
    # item), then B1 and B2 from after my last item (the same three and my last item each): all
    # in the one statement, evaluated lazily; the pivot (for a worker with no last item)
    # likewise. Three COALESCEs choose between the branches and the pivot; each of the three
    # branches compares an item's counted answers with its target (``COALESCE(target_answers,
    # the split's redundancy)``: adaptive redundancy, sql/work_queue.py).
    assert chooser.count("annotation_annotation") == 12
    assert chooser.count("annotation_itemlease") == 4 - separate_lease()
    assert chooser.count("COALESCE(") == 3 + 3
    assert chooser.count("COALESCE(i.target_answers") == 3


def test_submit_query_count_does_not_grow_with_data(annotator_client):
    small = rewrite_project("small", dialogues=1)
    big = rewrite_project("big", dialogues=6, redundancy={"train": 3})
    for item in big.items.all()[:12]:
        Annotation.objects.create(project=big, item=item, worker=local_worker(f"x{item.pk}"),
                                  source="local", text="x")
    annotator_client.get(f"/annotate/{small.slug}/")  # creates the annotator's Worker
    annotator_client.get(f"/annotate/{big.slug}/")  # as pages do: the process learns the kinds
    counts = []
    for project in (small, big):
        item = project.items.order_by("position", "id").last()
        with CaptureQueriesContext(connection) as queries:
            response = submit(annotator_client, project, item.pk,
                              {"rewrite": "Did Frank Zappa form another band?"})
        assert response.status_code == 200, response.content
        counts.append(len(data_queries(queries)))
    # session, user with worker, the project and the item (locked) loaded by one statement,
    # its dialogue turns, the INSERT that re-checks the slots (and marks the item filled: on
    # SQLite a statement of its own); then the next item (chosen and loaded by one statement)
    # and its dialogue turns, and its lease (on PostgreSQL written by the choosing statement).
    assert counts[0] == counts[1] == 7 + separate_mark() + separate_lease()


def test_plausibility_submit_takes_five_queries(annotator_client):
    project = plausibility_project(items=3, redundancy={"train": 3})
    for item in project.items.all():
        local_answer(project, item, local_worker(f"o{item.pk}"))
    annotator_client.get(f"/annotate/{project.slug}/")  # creates the annotator's Worker
    item = project.items.last()
    with CaptureQueriesContext(connection) as queries:
        response = submit(annotator_client, project, item.pk, {"rating": 2})
    assert response.status_code == 200 and response.json()["status"] == "saved"
    assert response.json()["next"]["item"]["item_id"] != item.pk
    # session, user with worker, the project and the item (+ cloze; the item locked) loaded
    # by one statement, the INSERT that re-checks the slots (and marks the item filled: on
    # SQLite a statement of its own), the next item chosen and loaded by one statement, and
    # its lease (on PostgreSQL written by that same statement).
    assert len(data_queries(queries)) == 5 + separate_mark() + separate_lease(), \
        data_queries(queries)
    if connection.vendor == "postgresql":
        assert data_queries(queries)[2].rstrip().endswith("FOR UPDATE OF item")


def test_local_submit_answer_carries_the_next_item_as_the_page_would_show_it(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 1})
    first = annotator_client.get(f"/annotate/{project.slug}/").context["items"][0]
    saved = submit(annotator_client, project, first["item_id"], {"rating": 4},
                   token="token-first-0001").json()
    assert saved["status"] == "saved"
    following = saved["next"]["item"]
    assert following["item_id"] != first["item_id"]
    # The same data and the same (escaped) section the full page renders for that item.
    page = annotator_client.get(f"/annotate/{project.slug}/")
    assert page.context["items"] == [following]
    html = saved["next"]["html"]
    assert html.strip().startswith(
        f'<section class="task-item" data-item-id="{following["item_id"]}"')
    assert html.strip() in page.content.decode()
    assert "<script>" not in html and "&lt;script&gt;window.__xss" in html
    # A double submit is answered with the next item too; the last item leaves none.
    again = submit(annotator_client, project, first["item_id"], {"rating": 4},
                   token="token-first-0001").json()
    assert again["status"] == "duplicate" and again["next"]["item"] == following
    last = submit(annotator_client, project, following["item_id"], {"rating": 2}).json()
    assert last["status"] == "saved" and last["next"] is None
    assert annotator_client.get(f"/annotate/{project.slug}/").templates[0].name == (
        "frontend/annotate/done.html")


def test_a_full_item_answer_offers_the_next_item(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 1})
    full, other = project.items.order_by("id")
    local_answer(project, full, local_worker("first"))
    response = submit(annotator_client, project, full.pk, {"rating": 4})
    assert response.status_code == 409 and response.json()["error"] == "item_full"
    assert response.json()["next"]["item"]["item_id"] == other.pk


def test_refused_and_mturk_submit_answers_carry_no_next_item(annotator_client, client):
    project = plausibility_project(items=2)
    item = project.items.first()
    invalid = submit(annotator_client, project, item.pk, {"rating": 9})
    assert invalid.status_code == 400 and "next" not in invalid.json()
    mturk = sluice_project("sluice-hit", items=2)
    publish_hit(mturk)
    token = mturk_token(client, mturk, "ASSIGN9", "AW9")
    response = mturk_post(client, mturk, "submit", {
        "item_id": mturk.items.first().pk, "client_token": uuid.uuid4().hex,
        "task_token": token, "payload": {"full_question": "Why did he leave?", "skipped": False}})
    assert response.status_code == 200 and "next" not in response.json()


def test_concurrent_annotators_start_on_different_items():
    project = plausibility_project(items=40, redundancy={"train": 5})
    firsts = {work_queue_next_item(project=project, worker=local_worker(f"s{n}")).pk
              for n in range(8)}
    assert len(firsts) >= 6  # the per-worker spread scatters them (not all on the first item)


def test_queue_prefers_the_group_the_worker_started_then_skips_done_and_full_items():
    project = plausibility_project(items=6, redundancy={"train": 1})
    items = list(project.items.order_by("id"))
    worker, other = local_worker("me"), local_worker("other")
    # Put two items in one group; the worker answers one of them.
    Item.objects.filter(pk__in=[items[2].pk, items[4].pk]).update(group_key="shared")
    local_answer(project, items[2], worker)
    assert work_queue_next_item(project=project, worker=worker) == items[4]
    local_answer(project, items[4], other)  # now full (redundancy 1)
    chosen = work_queue_next_item(project=project, worker=worker)
    assert chosen is not None and chosen.pk not in (items[2].pk, items[4].pk)


# --- MTurk -----------------------------------------------------------------------------------


def mturk_post(client, project, path, body):
    return client.post(f"/mturk/task/{project.slug}/{path}/", json.dumps(body),
                       content_type="application/json")


def mturk_token(client, project, assignment, worker):
    response = client.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": assignment, "hitId": "HIT123", "workerId": worker,
        "turkSubmitTo": "https://workersandbox.mturk.com"})
    assert response.status_code == 200
    assert response["X-Frame-Options"] if response.has_header("X-Frame-Options") else True
    return response.context["config"]["task_token"]


def test_mturk_submit_is_bound_to_the_signed_assignment(client):
    project = sluice_project(items=2)
    publish_hit(project)
    item = project.items.first()
    # Another worker opened a page for the same AssignmentId before its owner saved anything
    # (afterwards the page itself is refused).
    stolen = mturk_token(client, project, "ASSIGN1", "AW2")
    token = mturk_token(client, project, "ASSIGN1", "AW1")
    body = {"item_id": item.pk, "client_token": uuid.uuid4().hex, "task_token": token,
            "payload": {"full_question": "Why did he leave?", "skipped": False}}
    assert mturk_post(client, project, "submit", body).status_code == 200
    tampered = dict(body, task_token=token[:-2] + "xx", client_token=uuid.uuid4().hex)
    assert mturk_post(client, project, "submit", tampered).status_code == 400
    # ... and cannot write into it.
    response = mturk_post(client, project, "submit",
                          dict(body, task_token=stolen, client_token=uuid.uuid4().hex))
    assert response.status_code == 403 and response.json()["error"] == "not_yours"
    # Finishing before every item is saved is refused; the assignment stays accepted.
    assert mturk_post(client, project, "finish", {"task_token": token}).status_code == 409
    annotation = Annotation.objects.get()
    assert (annotation.source, annotation.worker.external_id) == ("mturk", "AW1")
    assert annotation.assignment.status == "accepted"


def test_mturk_page_refuses_unknown_submit_hosts_and_hits(client):
    project = sluice_project()
    publish_hit(project)
    evil = client.get(f"/mturk/task/{project.slug}/", {
        "assignmentId": "A1", "hitId": "HIT123", "workerId": "AW1",
        "turkSubmitTo": "https://evil.example"})
    assert evil.status_code == 400
    unknown = client.get(f"/mturk/task/{project.slug}/", {"hitId": "NOPE"})
    assert unknown.status_code == 404
    assert Item.objects.count() == 1


def test_provisional_mturk_answers_fill_no_local_slot_until_verified():
    """An MTurk page's answer counts once collection saw its assignment at MTurk (as in
    exports, QC and batch planning); until then a local annotator may still take the slot."""
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    provisional = AnnotationFactory(item=item, source="mturk", rating=4, provisional=True)
    local = local_worker("local")
    assert work_queue_next_item(project=project, worker=local) == item
    annotations_confirm(annotations=Annotation.objects.filter(pk=provisional.pk))
    assert work_queue_next_item(project=project, worker=local) is None
    with pytest.raises(SubmitRefused) as refused:
        local_answer(project, item, local)
    assert refused.value.code == "item_full"
    Annotation.objects.filter(pk=provisional.pk).update(state=Annotation.State.PROVISIONAL)
    assert local_answer(project, item, local).annotation.worker == local


def test_submit_without_a_session_answers_401_json_with_the_login_page(client):
    """A fetch must never be redirected to the login form (it would follow it to a 200)."""
    project = sluice_project()
    response = submit(client, project, project.items.get().pk,
                      {"full_question": "Why did he leave?", "skipped": False})
    assert response.status_code == 401
    body = response.json()
    assert body["error"] == "login_required"
    assert body["login_url"] == f"/accounts/login/?next=%2Fannotate%2F{project.slug}%2F"
    assert not Annotation.objects.exists()


def test_stale_csrf_token_answers_a_fetch_with_json(annotator_user):
    project = plausibility_project()
    client = Client(enforce_csrf_checks=True, headers={"X-Requested-With": "fetch"})
    client.force_login(annotator_user)
    response = submit(client, project, project.items.get().pk, {"rating": 3})
    assert response.status_code == 403 and response.json()["error"] == "csrf_failed"
    assert response.json()["login_url"].startswith("/accounts/login/?next=")


def test_a_different_answer_from_another_tab_is_reported_with_the_stored_one(annotator_client):
    project = sluice_project()
    item = project.items.get()
    first = {"full_question": "Why did he leave the band?", "skipped": False}
    submit(annotator_client, project, item.pk, first, token="tab-a-000000001")
    other = submit(annotator_client, project, item.pk,
                   {"full_question": "Why did he go?", "skipped": False}, token="tab-b-000000001")
    body = other.json()
    assert body["status"] == "already_saved"
    stored = Annotation.objects.get()
    assert body["stored"] == {"payload": first, "summary": "Why did he leave the band?",
                              "annotation_id": stored.pk, "editable": True}
    assert list(Annotation.objects.values_list("text", flat=True)) == [first["full_question"]]


def test_progress_counts_what_the_work_queue_could_still_give(annotator_client, annotator_user):
    project = plausibility_project(items=4, redundancy={"train": 1})
    items = list(project.items.order_by("id"))
    local_answer(project, items[0], local_worker("someone"))  # full: not left for anyone
    assert annotator_client.get(f"/annotate/{project.slug}/progress/").json() == {
        "done": 0, "left": 3}
    submit(annotator_client, project, items[1].pk, {"rating": 4})
    assert annotator_client.get(f"/annotate/{project.slug}/progress/").json() == {
        "done": 1, "left": 2}
    Worker.objects.filter(user=annotator_user).update(is_blocked=True)
    assert annotator_client.get(f"/annotate/{project.slug}/progress/").json()["left"] == 0
