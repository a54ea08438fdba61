"""The annotator submit hot path (commits a5d4308, b4dcdb5): the hand-written loads of the
project and of the user with their Worker equal their ORM twins, the one-INSERT store writes
what the ORM path writes, every fallback is decided under the item's lock, the work queue goes
on after the worker's last item, and a submit's cost does not grow with the worker's past
work. Runs on SQLite and on PostgreSQL (``DATABASE_URL=postgres://…``)."""

from __future__ import annotations

import json
import re
import uuid
from datetime import timedelta
from datetime import timezone as dt_timezone

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.auth import WorkerLoadingModelBackend, user_with_worker
from annotation.models import Annotation, Item, ItemLease, Project, Worker
from annotation.selectors import annotate as annotate_selectors
from annotation.services.annotations import items_filled_refresh
from annotation.services.work_queue import SPREAD_FACTOR, _choose_sql
from tests.factories import (
    AnnotationFactory,
    local_answer,
    local_worker,
    plausibility_project,
    rewrite_project,
)

pytestmark = pytest.mark.django_db

TRANSACTION_CONTROL = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK", "BEGIN", "COMMIT")
BACKEND = "annotation.auth.WorkerLoadingModelBackend"
CLIENT_WARNINGS = [{"code": "rating_fast", "message": "You rated this very quickly."},
                   {"code": "rating_extreme", "message": ""}]
OVERRIDDEN_WARNINGS = [{"code": "rating_fast", "message": "You rated this very quickly."}]
# A minute ago, at +02:00: client times outside [now - 30 days, now + 5 min] are ignored.
STARTED_AT = (timezone.now() - timedelta(minutes=1)).astimezone(
    dt_timezone(timedelta(hours=2))).isoformat()


# --- helpers (the style of test_annotate_views.py, copied so the two files evolve apart) ------


def is_answer_insert(sql: str) -> bool:
    """The submit's INSERT … SELECT … WHERE of an answer; on PostgreSQL a counted answer's is
    wrapped in the statement that also marks the item filled (``sql.submit``)."""
    return sql.lstrip().replace('"', "").startswith(
        ("INSERT INTO annotation_annotation", "WITH stored AS (INSERT INTO annotation_annotation"))


def data_queries(captured) -> list[str]:
    """The statements that touch data (tests run inside a transaction, so atomic blocks show up
    as savepoints here; in production they are BEGIN/COMMIT)."""
    return [q["sql"] for q in captured.captured_queries
            if not q["sql"].lstrip().startswith(TRANSACTION_CONTROL)]


def submit_transaction(captured) -> list[str]:
    """The statements that decide the submit: the load of its project and item, then its own
    transaction's up to the next item's lease. On PostgreSQL the load is the first statement
    of that transaction (the item locked) and the next item is chosen and leased in it, after
    these; on SQLite the load (and the choice of the next item) come before the transaction,
    which holds the database's write lock and ends with the lease (``annotation_submit_item``)."""
    statements = [q["sql"].strip() for q in captured.captured_queries]
    load = next(i for i, sql in enumerate(statements) if sql.startswith("SELECT item."))
    if connection.vendor == "postgresql":
        start = load - 1
        if statements[start].startswith('SELECT "annotation_project"'):
            start -= 1  # the process did not know the project's kind yet: read first, by itself
    else:
        start = next(i for i in range(load + 1, len(statements))
                     if statements[i].startswith("SAVEPOINT"))
    assert statements[start].startswith("SAVEPOINT"), statements
    name = statements[start].split()[-1]
    end = next(i for i in range(start + 1, len(statements))
               if statements[i].startswith(("RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT"))
               and statements[i].split()[-1] == name)
    inside = statements[start + 1:end]
    assert not any(sql.startswith(TRANSACTION_CONTROL) for sql in inside), inside
    if connection.vendor != "postgresql":
        inside = [statements[load], *inside]
    inside = [sql for sql in inside if not sql.startswith('SELECT "annotation_project"')]
    leased = next((i for i, sql in enumerate(inside) if sql.startswith("WITH leased")
                   or sql.replace('"', "").startswith("INSERT INTO annotation_itemlease")),
                  len(inside))
    return inside[:leased]


def submit(client, project, item_id, payload, token=None, **extra):
    body = {"item_id": item_id, "client_token": token or uuid.uuid4().hex, "payload": payload,
            **extra}
    return client.post(f"/annotate/{project.slug}/submit/", json.dumps(body),
                       content_type="application/json")


def logged_in_client(username: str) -> tuple[Client, object]:
    user = get_user_model().objects.create_user(username, password="x" * 12)
    client = Client()
    client.force_login(user)
    return client, user


def worker_of(client, project) -> Worker:
    """The client's Worker, created as a page load creates it."""
    response = client.get(f"/annotate/{project.slug}/")
    assert response.status_code == 200
    return Worker.objects.get(user=response.wsgi_request.user)


def field_values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname)
            for field in instance._meta.concrete_fields}


def page_item_id(client, project) -> int | None:
    response = client.get(f"/annotate/{project.slug}/")
    assert response.status_code == 200
    items = response.context["items"]
    return items[0]["item_id"] if items else None


def assert_recent(moment):
    assert moment is not None and timezone.is_aware(moment)
    assert abs(timezone.now() - moment) < timedelta(minutes=1)


# --- 1. the project of a task URL --------------------------------------------------------------


def test_project_by_slug_equals_the_orm_instance_field_by_field():
    project = plausibility_project("hot-claire", items=2,
                                   redundancy={"train": 3, "dev": 5, "test": 7, "extra": [1]})
    Project.objects.filter(pk=project.pk).update(
        instructions="Rate <b>how plausible</b> — “quotes” ünïcode.", reward_cents=25,
        live_check_settings={"rating_fast_ms": 800, "nested": {"a": [1, None, True]}},
        flag_settings={"min_agreement": 0.4})
    plausibility_project("hot-other", items=1)  # another row the lookup must not return
    expected = Project.objects.get(slug="hot-claire")
    with CaptureQueriesContext(connection) as queries:
        loaded = annotate_selectors.project_by_slug("hot-claire")
    assert len(queries.captured_queries) == 1
    assert type(loaded) is Project
    assert field_values(loaded) == field_values(expected)
    for name, value in field_values(expected).items():  # same types too (1 == 1.0 == True)
        assert type(getattr(loaded, name)) is type(value), name
    assert loaded.redundancy == {"train": 3, "dev": 5, "test": 7, "extra": [1]}
    assert loaded.redundancy_for("test") == 7
    assert timezone.is_aware(loaded.created_at)
    assert not loaded._state.adding and loaded._state.db == "default"
    # A loaded instance saves as an UPDATE of its row, like the ORM's.
    loaded.name = "Renamed"
    loaded.save(update_fields=["name"])
    assert Project.objects.get(pk=project.pk).name == "Renamed"


def test_project_by_slug_is_none_for_an_unknown_slug():
    plausibility_project("known", items=1)
    assert annotate_selectors.project_by_slug("unknown") is None
    assert annotate_selectors.project_by_slug("known' OR '1'='1") is None
    assert annotate_selectors.project_by_slug("KNOWN") is None
    assert annotate_selectors.project_by_slug("known").slug == "known"


# --- 2. the user of a session, with their Worker -----------------------------------------------


def test_user_with_worker_equals_the_orm_user_and_caches_the_worker(django_assert_num_queries):
    user_model = get_user_model()
    user = user_model.objects.create_user("ann", email="ann@example.org", password="x" * 12,
                                          first_name="Ann", last_name="Ötzi", is_staff=True)
    user_model.objects.filter(pk=user.pk).update(last_login=timezone.now())
    worker = local_worker("ann", user=user, is_blocked=True, blocked_reason="spam")
    local_worker("someone-else")  # a Worker of no user: must not be joined
    expected_user = user_model.objects.get(pk=user.pk)
    expected_worker = Worker.objects.get(pk=worker.pk)

    with django_assert_num_queries(1):
        loaded = user_with_worker(user.pk)
    assert type(loaded) is user_model
    assert field_values(loaded) == field_values(expected_user)
    assert loaded.last_login is not None and timezone.is_aware(loaded.last_login)
    assert not loaded._state.adding and loaded._state.db == "default"
    with django_assert_num_queries(0):
        cached = loaded.worker
        assert type(cached) is Worker
        assert field_values(cached) == field_values(expected_worker)
        assert cached.user is loaded
        assert not cached._state.adding and cached._state.db == "default"
    # The session stores the id as a string: the same user.
    assert field_values(user_with_worker(str(user.pk))) == field_values(expected_user)
    # A loaded user saves as an UPDATE of its row.
    loaded.first_name = "Anne"
    loaded.save(update_fields=["first_name"])
    assert user_model.objects.get(pk=user.pk).first_name == "Anne"


def test_user_without_worker_unknown_and_malformed_ids(django_assert_num_queries):
    user = get_user_model().objects.create_user("noworker", password="x" * 12)
    local_worker("noworker")  # same name, but not linked to the account
    loaded = user_with_worker(user.pk)
    assert loaded.pk == user.pk
    with django_assert_num_queries(0):
        assert getattr(loaded, "worker", None) is None
    assert user_with_worker(user.pk + 1000) is None
    with django_assert_num_queries(0):
        assert user_with_worker("abc") is None
        assert user_with_worker("1; DROP TABLE auth_user") is None


def test_backend_refuses_inactive_users_and_is_the_only_backend():
    assert settings.AUTHENTICATION_BACKENDS == [BACKEND]
    user_model = get_user_model()
    active = user_model.objects.create_user("active", password="x" * 12)
    inactive = user_model.objects.create_user("inactive", password="x" * 12, is_active=False)
    local_worker("inactive", user=inactive)
    backend = WorkerLoadingModelBackend()
    assert backend.get_user(inactive.pk) is None
    assert backend.get_user(active.pk).pk == active.pk
    assert backend.get_user(active.pk + 1000) is None
    assert backend.get_user("abc") is None


def test_login_through_the_login_page_loads_the_worker_with_the_user(
        client, django_assert_num_queries):
    project = plausibility_project(items=2)
    user = get_user_model().objects.create_user("pagelogin", password="page-login-pass")
    assert client.post("/accounts/login/", {"username": "pagelogin",
                                            "password": "wrong-password"}).status_code == 200
    assert SESSION_KEY not in client.session
    response = client.post("/accounts/login/", {"username": "pagelogin",
                                                "password": "page-login-pass"})
    assert response.status_code == 302 and response["Location"] == settings.LOGIN_REDIRECT_URL
    assert client.session[SESSION_KEY] == str(user.pk)
    assert client.session["_auth_user_backend"] == BACKEND
    first = client.get(f"/annotate/{project.slug}/")  # creates the Worker
    assert first.status_code == 200 and first.context["items"]
    page = client.get(f"/annotate/{project.slug}/")
    assert page.status_code == 200
    request_user = page.wsgi_request.user
    with django_assert_num_queries(0):
        assert request_user.pk == user.pk
        assert request_user.worker.external_id == "pagelogin"


def test_an_inactive_user_cannot_log_in_through_the_page(client):
    get_user_model().objects.create_user("sleeper", password="sleeper-pass", is_active=False)
    response = client.post("/accounts/login/", {"username": "sleeper",
                                                "password": "sleeper-pass"})
    assert response.status_code == 200
    assert SESSION_KEY not in client.session


# --- 3. the one-INSERT store writes what the ORM path writes ------------------------------------


def raw_row(pk: int) -> dict:
    """The stored row as the database driver returns it (no ORM converters)."""
    table = Annotation._meta.db_table
    fields = Annotation._meta.concrete_fields
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(quote(f.column) for f in fields)} "  # noqa: S608
                       f"FROM {quote(table)} WHERE id = %s", [pk])
        row = cursor.fetchone()
    return {field.column: value for field, value in zip(fields, row, strict=True)}


def json_types(pk: int) -> dict:
    """The database's own type of each JSON column (object, array, …): a JSON value written as
    an encoded string would show as 'string'."""
    table = connection.ops.quote_name(Annotation._meta.db_table)
    columns = [f.column for f in Annotation._meta.concrete_fields
               if f.get_internal_type() == "JSONField"]
    function = "jsonb_typeof" if connection.vendor == "postgresql" else "json_type"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(f'{function}({c})' for c in columns)} "  # noqa: S608
                       f"FROM {table} WHERE id = %s", [pk])
        return dict(zip(columns, cursor.fetchone(), strict=True))


def sqlite_storage(pk: int) -> dict:
    """SQLite: each column's storage class (``typeof``) and its text as stored."""
    table = connection.ops.quote_name(Annotation._meta.db_table)
    columns = [f.column for f in Annotation._meta.concrete_fields]
    selected = ", ".join(f"typeof({c}), CAST({c} AS TEXT)" for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {selected} FROM {table} WHERE id = %s", [pk])  # noqa: S608
        row = cursor.fetchone()
    return {c: (row[2 * i], row[2 * i + 1]) for i, c in enumerate(columns)}


def test_fast_insert_stores_every_column_as_the_orm_path_does(annotator_client):
    project = plausibility_project(items=3, redundancy={"train": 3})
    worker = worker_of(annotator_client, project)
    # The item that page load handed to the worker, leased with the time it was served.
    lease = ItemLease.objects.get(worker=worker)
    fast_item = lease.item
    slow_item = project.items.exclude(pk=fast_item.pk).first()
    token = "fast-token-0000001"
    with CaptureQueriesContext(connection) as queries:
        response = submit(annotator_client, project, fast_item.pk, {"rating": 4}, token=token,
                          client_warnings=CLIENT_WARNINGS,
                          overridden_warnings=OVERRIDDEN_WARNINGS,
                          duration_ms=12345, started_at=STARTED_AT)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "saved"
    # Stored by the one INSERT … SELECT … WHERE that re-checks the slots (no ORM INSERT).
    inserts = [sql for sql in data_queries(queries)
               if is_answer_insert(sql)]
    assert len(inserts) == 1 and "NOT EXISTS" in inserts[0] and "RETURNING" in inserts[0]

    fast = Annotation.objects.get(pk=body["annotation_id"])
    assert body["server_warnings"] == fast.server_warnings
    assert fast.payload == {"rating": 4}
    assert fast.rating == 4 and isinstance(fast.rating, float)
    assert (fast.category, fast.text, fast.skipped, fast.edit_operations) == ("", "", False, [])
    assert fast.source == Annotation.Source.LOCAL == "local"
    assert fast.client_token == token
    assert fast.worker_id == worker.pk and fast.worker == worker
    assert fast.item_id == fast_item.pk and fast.project_id == project.pk
    assert fast.assignment_id is None
    assert_recent(fast.created_at)
    assert_recent(fast.submitted_at)
    assert isinstance(fast.server_warnings, list)
    assert fast.review_status == Annotation.Review.PENDING
    assert fast.provenance == {}
    assert fast.client_warnings == CLIENT_WARNINGS
    assert fast.overridden_warnings == OVERRIDDEN_WARNINGS
    assert fast.duration_ms == 12345
    assert fast.started_at == parse_datetime(STARTED_AT)
    assert timezone.is_aware(fast.started_at)
    # When the page load handed the item to the worker (their lease), read by the INSERT.
    assert lease.served_at is not None and timezone.is_aware(lease.served_at)
    assert fast.served_at == lease.served_at

    # The same answer through the general path, by another worker on another item.
    other = local_worker("slow-path")
    slow = local_answer(project, slow_item, other, rating=4, client_warnings=CLIENT_WARNINGS,
                        overridden_warnings=OVERRIDDEN_WARNINGS, duration_ms=12345,
                        started_at=parse_datetime(STARTED_AT),
                        served_at=fast.served_at).annotation
    slow = Annotation.objects.get(pk=slow.pk)
    fast_values, slow_values = field_values(fast), field_values(slow)
    assert ({name for name, value in fast_values.items() if value is not None}
            == {name for name, value in slow_values.items() if value is not None})
    for name in fast_values:
        assert type(fast_values[name]) is type(slow_values[name]), name
    differ = {"id", "item_id", "worker_id", "client_token", "created_at", "submitted_at"}
    assert ({k: v for k, v in fast_values.items() if k not in differ}
            == {k: v for k, v in slow_values.items() if k not in differ})
    # And as stored, before any ORM conversion: same driver types, same JSON kinds, datetimes
    # in the same textual form on SQLite.
    fast_raw, slow_raw = raw_row(fast.pk), raw_row(slow.pk)
    for column in fast_raw:
        assert type(fast_raw[column]) is type(slow_raw[column]), column
    assert json_types(fast.pk) == json_types(slow.pk)
    assert json_types(fast.pk)["payload"] == "object"
    assert json_types(fast.pk)["client_warnings"] == "array"
    if connection.vendor == "sqlite":
        fast_stored, slow_stored = sqlite_storage(fast.pk), sqlite_storage(slow.pk)
        assert {c: t for c, (t, _) in fast_stored.items()} == {
            c: t for c, (t, _) in slow_stored.items()}
        stamp = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$")
        for column in ("created_at", "submitted_at", "started_at"):
            assert stamp.match(fast_stored[column][1]), fast_stored[column]
            assert stamp.match(slow_stored[column][1]), slow_stored[column]
        assert fast_stored["started_at"] == slow_stored["started_at"]


def test_fast_insert_without_optional_fields_stores_the_defaults(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 3})
    fast_item, slow_item = project.items.order_by("id")
    response = submit(annotator_client, project, fast_item.pk, {"rating": 1})
    assert response.status_code == 200 and response.json()["status"] == "saved"
    fast = Annotation.objects.get(pk=response.json()["annotation_id"])
    slow = Annotation.objects.get(pk=local_answer(project, slow_item, local_worker("s"), rating=1)
                                  .annotation.pk)
    assert (fast.client_warnings, fast.overridden_warnings, fast.provenance) == ([], [], {})
    assert fast.started_at is None and fast.duration_ms is None
    fast_values, slow_values = field_values(fast), field_values(slow)
    assert ({name for name, value in fast_values.items() if value is None}
            == {name for name, value in slow_values.items() if value is None})
    for name in fast_values:
        assert type(fast_values[name]) is type(slow_values[name]), name
    assert json_types(fast.pk) == json_types(slow.pk)


# --- 4. fallbacks, decided under the same lock ------------------------------------------------


def assert_decided_under_the_lock(queries, *, then: int = 0):
    """The submit's transaction: the item loaded (and locked, on PostgreSQL), the INSERT that
    found no open slot, the state query, and ``then`` more reads; nothing outside it."""
    inside = submit_transaction(queries)
    assert len(inside) == 3 + then, inside
    load, insert, state = inside[:3]
    assert load.startswith("SELECT item.")
    if connection.vendor == "postgresql":
        assert load.endswith("FOR UPDATE OF item")
    assert is_answer_insert(insert) and "NOT EXISTS" in insert
    assert state.startswith("SELECT MAX(CASE")


def test_retry_with_the_same_token_is_a_duplicate_and_changes_nothing(annotator_client):
    project = plausibility_project(items=3, redundancy={"train": 3})
    item = project.items.order_by("id").first()
    token = "retry-token-000001"
    first = submit(annotator_client, project, item.pk, {"rating": 5}, token=token,
                   duration_ms=1000)
    assert first.status_code == 200 and first.json()["status"] == "saved"
    stored = field_values(Annotation.objects.get())
    with CaptureQueriesContext(connection) as queries:
        again = submit(annotator_client, project, item.pk, {"rating": 5}, token=token,
                       duration_ms=99, client_warnings=CLIENT_WARNINGS)
    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    assert again.json()["annotation_id"] == first.json()["annotation_id"]
    assert again.json()["item_id"] == item.pk
    assert again.json()["next"]["item"]["item_id"] != item.pk
    assert Annotation.objects.count() == 1
    assert field_values(Annotation.objects.get()) == stored  # the retry's fields ignored
    assert_decided_under_the_lock(queries, then=1)  # + the stored annotation read
    # The same token with ANOTHER answer is no retry (issue 22): not stored, and said so.
    other = submit(annotator_client, project, item.pk, {"rating": 1}, token=token)
    assert other.json()["status"] == "already_saved"
    assert other.json()["stored"]["payload"] == {"rating": 5}
    assert field_values(Annotation.objects.get()) == stored


def test_same_worker_same_item_new_token_reports_the_stored_answer(annotator_client):
    project = plausibility_project(items=3, redundancy={"train": 3})
    item = project.items.order_by("id").first()
    first = submit(annotator_client, project, item.pk, {"rating": 2}, token="first-token-0001")
    assert first.json()["status"] == "saved"
    with CaptureQueriesContext(connection) as queries:
        again = submit(annotator_client, project, item.pk, {"rating": 3},
                       token="second-token-0001")
    assert again.status_code == 200
    assert again.json()["status"] == "already_saved"  # another tab's answer, not this one
    assert again.json()["stored"] == {"payload": {"rating": 2}, "summary": "rating 2",
                                      "annotation_id": first.json()["annotation_id"],
                                      "editable": True}
    assert again.json()["annotation_id"] == first.json()["annotation_id"]
    assert Annotation.objects.count() == 1
    assert Annotation.objects.get().rating == 2
    assert not Annotation.objects.filter(client_token="second-token-0001").exists()
    assert_decided_under_the_lock(queries, then=1)


def test_another_workers_token_on_another_item_is_refused_and_stores_nothing(annotator_client):
    project = plausibility_project(items=3, redundancy={"train": 3})
    theirs_item, my_item, _ = project.items.order_by("id")
    theirs = local_answer(project, theirs_item, local_worker("owner"), rating=5,
                          client_token="owned-token-00001").annotation
    worker_of(annotator_client, project)
    with CaptureQueriesContext(connection) as queries:
        response = submit(annotator_client, project, my_item.pk, {"rating": 1},
                          token="owned-token-00001")
    assert response.status_code == 403
    assert response.json()["error"] == "token_conflict"
    assert "next" not in response.json()
    assert str(theirs.pk) not in response.content.decode()
    assert list(Annotation.objects.values_list("pk", "item_id", "rating")) == [
        (theirs.pk, theirs_item.pk, 5.0)]
    assert_decided_under_the_lock(queries)


def test_a_full_item_is_refused_with_409_and_stores_nothing(annotator_client):
    project = plausibility_project(items=3, redundancy={"train": 2})
    full, following, _ = project.items.order_by("id")
    local_answer(project, full, local_worker("one"))
    local_answer(project, full, local_worker("two"))
    worker = worker_of(annotator_client, project)
    with CaptureQueriesContext(connection) as queries:
        response = submit(annotator_client, project, full.pk, {"rating": 4})
    assert response.status_code == 409
    assert response.json()["error"] == "item_full"
    assert response.json()["next"]["item"]["item_id"] == following.pk
    assert Annotation.objects.filter(item=full).count() == 2
    assert not Annotation.objects.filter(worker=worker).exists()
    assert_decided_under_the_lock(queries)


def test_imported_and_provisional_answers_leave_the_slot_open_for_the_insert(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 2})
    item = project.items.order_by("id").first()
    local_answer(project, item, local_worker("local-one"))
    AnnotationFactory(item=item, worker=local_worker("imp"), source="import", rating=2)
    AnnotationFactory(item=item, worker=local_worker("turker"), source="mturk", rating=2,
                      provisional=True)
    with CaptureQueriesContext(connection) as queries:
        response = submit(annotator_client, project, item.pk, {"rating": 4})
    assert response.status_code == 200 and response.json()["status"] == "saved"
    # Stored by the INSERT's own slot check: no state query was needed. It took the last slot:
    # the item is marked filled (by the INSERT's statement on PostgreSQL, one after on SQLite).
    load, insert, *mark = submit_transaction(queries)
    assert load.startswith("SELECT item.") and insert.startswith(
        "WITH stored AS (INSERT INTO" if connection.vendor == "postgresql" else "INSERT INTO")
    assert [statement.replace('"', "").split(" SET ")[0] for statement in mark] == (
        [] if connection.vendor == "postgresql" else ["UPDATE annotation_item"])
    item.refresh_from_db()
    assert item.filled
    # Now two local answers: the slots are full for the next local annotator.
    late, _ = logged_in_client("late")
    refused = submit(late, project, item.pk, {"rating": 4})
    assert refused.status_code == 409 and refused.json()["error"] == "item_full"
    assert Annotation.objects.filter(item=item).count() == 4


def test_unknown_or_foreign_item_is_404_and_stores_nothing(annotator_client):
    project = plausibility_project(items=1)
    foreign = plausibility_project("foreign", items=1).items.get()
    missing = Item.objects.order_by("-id").first().pk + 100
    for item_id in (missing, foreign.pk):
        response = submit(annotator_client, project, item_id, {"rating": 3})
        assert response.status_code == 404, item_id
        assert response.json()["error"] == "no_item"
        assert response.json()["field"] == "item_id"
        assert "next" not in response.json()
    assert not Annotation.objects.exists()
    assert annotator_client.post("/annotate/no-such-project/submit/", json.dumps(
        {"item_id": foreign.pk, "client_token": uuid.uuid4().hex, "payload": {"rating": 3}}),
        content_type="application/json").status_code == 404
    assert not Annotation.objects.exists()


def test_invalid_payload_is_400_stores_nothing_and_does_not_use_up_the_token(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 3})
    item = project.items.order_by("id").first()
    token = "invalid-token-0001"
    response = submit(annotator_client, project, item.pk, {"rating": 9}, token=token)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid" and response.json()["field"] == "rating"
    assert not Annotation.objects.exists()
    fixed = submit(annotator_client, project, item.pk, {"rating": 5}, token=token)
    assert fixed.status_code == 200 and fixed.json()["status"] == "saved"
    assert list(Annotation.objects.values_list("rating", "client_token")) == [(5.0, token)]


def test_a_blocked_worker_is_refused_but_a_retry_of_stored_work_is_answered(annotator_client):
    project = plausibility_project(items=3, redundancy={"train": 3})
    done, new, _ = project.items.order_by("id")
    saved = submit(annotator_client, project, done.pk, {"rating": 3}, token="before-block-01")
    assert saved.json()["status"] == "saved"
    Worker.objects.filter(user__username="annotator").update(is_blocked=True,
                                                              blocked_reason="test")
    with CaptureQueriesContext(connection) as queries:
        refused = submit(annotator_client, project, new.pk, {"rating": 3})
    assert refused.status_code == 403 and refused.json()["error"] == "blocked"
    assert "next" not in refused.json()
    assert not Annotation.objects.filter(item=new).exists()
    # Blocked: no INSERT tried, the state query decides.
    inside = submit_transaction(queries)
    assert [sql.split()[0] for sql in inside] == ["SELECT", "SELECT"], inside
    assert inside[1].startswith("SELECT MAX(CASE")
    # A retry of the answer stored before the block: the stored answer, nothing more.
    retry = submit(annotator_client, project, done.pk, {"rating": 3}, token="before-block-01")
    assert retry.status_code == 200 and retry.json()["status"] == "duplicate"
    assert retry.json()["annotation_id"] == saved.json()["annotation_id"]
    assert retry.json()["next"] is None
    assert Annotation.objects.count() == 1


# --- 5. the work queue goes on after the worker's last item -------------------------------------


def test_next_item_is_the_first_open_one_after_the_submitted_item(annotator_client):
    project = plausibility_project(items=20, redundancy={"train": 3})
    items = list(project.items.order_by("id"))
    worker = worker_of(annotator_client, project)
    for index in (0, 1, 2, 3, 11):
        local_answer(project, items[index], worker)
    for name in ("f1", "f2", "f3"):  # item 12 is full
        local_answer(project, items[12], local_worker(name))
    # Items 1 and 3 open again for this worker: earlier open items they have not done.
    Annotation.objects.filter(worker=worker, item__in=[items[1], items[3]]).delete()

    response = submit(annotator_client, project, items[10].pk, {"rating": 4})
    assert response.status_code == 200 and response.json()["status"] == "saved"
    # Not 1, 3 (earlier), 11 (done) nor 12 (full): 13.
    assert response.json()["next"]["item"]["item_id"] == items[13].pk
    assert page_item_id(annotator_client, project) == items[13].pk

    response = submit(annotator_client, project, items[13].pk, {"rating": 4})
    assert response.json()["next"]["item"]["item_id"] == items[14].pk
    assert page_item_id(annotator_client, project) == items[14].pk

    # After the last id: back to the lowest open item the worker has not done.
    response = submit(annotator_client, project, items[19].pk, {"rating": 4})
    assert response.json()["next"]["item"]["item_id"] == items[1].pk
    assert page_item_id(annotator_client, project) == items[1].pk


def test_a_worker_without_annotations_is_offered_an_item_from_their_pivot(annotator_client):
    project = plausibility_project(items=20, redundancy={"train": 3})
    offered = page_item_id(annotator_client, project)
    assert offered in set(project.items.values_list("id", flat=True))
    assert not Annotation.objects.exists()


def test_after_turn_one_of_a_conversation_comes_its_turn_two(annotator_client):
    project = rewrite_project(dialogues=3)
    middle = list(project.items.filter(group_key="C_1").order_by("position"))
    payload = {"rewrite": "What was the first album of the Mothers of Invention?"}
    response = submit(annotator_client, project, middle[0].pk, payload)
    assert response.status_code == 200 and response.json()["status"] == "saved"
    following = response.json()["next"]["item"]["item_id"]
    assert following == middle[1].pk
    assert page_item_id(annotator_client, project) == middle[1].pk
    response = submit(annotator_client, project, middle[1].pk,
                      {"rewrite": "When did the Mothers of Invention disband?"})
    assert response.json()["next"]["item"]["item_id"] == middle[2].pk
    assert page_item_id(annotator_client, project) == middle[2].pk


# --- 6. the cost of a submit does not grow with the worker's past work ------------------------


def test_submit_cost_does_not_grow_with_the_workers_past_work():
    project = plausibility_project(items=60, redundancy={"train": 5})
    items = list(project.items.order_by("id"))
    veteran_client, _ = logged_in_client("veteran")
    novice_client, _ = logged_in_client("novice")
    veteran = worker_of(veteran_client, project)
    novice = worker_of(novice_client, project)
    Annotation.objects.bulk_create(
        Annotation(project=project, item=item, worker=veteran, source="local", rating=3,
                   payload={"rating": 3}) for item in items[:40])
    Annotation.objects.create(project=project, item=items[45], worker=novice, source="local",
                              rating=3, payload={"rating": 3})
    runs = {}
    for name, client, item in (("veteran", veteran_client, items[40]),
                               ("novice", novice_client, items[46])):
        with CaptureQueriesContext(connection) as queries:
            response = submit(client, project, item.pk, {"rating": 2})
        assert response.status_code == 200 and response.json()["status"] == "saved"
        runs[name] = (data_queries(queries), response.json()["next"]["item"]["item_id"])
    assert runs["veteran"][1] == items[41].pk and runs["novice"][1] == items[47].pk
    veteran_sql, novice_sql = runs["veteran"][0], runs["novice"][0]
    # session, user with worker, the project and the item (locked) loaded by one statement,
    # the INSERT, and the next item chosen and loaded by ONE statement, and its lease (on
    # PostgreSQL written by that same statement: ``sql.work_queue.chosen_and_leased``).
    separate_lease = 0 if connection.features.has_select_for_update_skip_locked else 1
    # The filled mark: in the INSERT's statement on PostgreSQL, a statement after it on SQLite.
    separate_mark = 0 if connection.vendor == "postgresql" else 1
    assert len(veteran_sql) == len(novice_sql) == 5 + separate_mark + separate_lease, \
        veteran_sql
    for statements in (veteran_sql, novice_sql):
        # (the answer's INSERT has a COALESCE too: the item's adaptive target or its default)
        [chooser] = [sql for sql in statements if "COALESCE(" in sql
                     and 'INSERT INTO "annotation_annotation"' not in sql]
        assert chooser.lstrip().startswith("WITH leased AS (" if not separate_lease
                                           else "SELECT item.")


def _rows_read(plan: dict, table: str) -> float:
    """Rows the plan's nodes over ``table`` read (returned or filtered out), over all loops."""
    total = 0.0
    if plan.get("Relation Name") == table:
        total += (plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)
                  ) * plan.get("Actual Loops", 0)
    for child in plan.get("Plans", []):
        total += _rows_read(child, table)
    return total


def test_the_chooser_reads_no_more_for_a_worker_with_more_past_work():
    """docs: "the cost grows neither with the project's size nor with the number of items the
    worker has done". Measured at a size where PostgreSQL's planner uses indexes: 3000 items,
    ~11000 annotations; a veteran who has done 2000 items and a novice who has done 50, each
    asking for the item after their last one."""
    if connection.vendor != "postgresql":
        pytest.skip("EXPLAIN (ANALYZE, FORMAT JSON): PostgreSQL only (DATABASE_URL=postgres://…)")
    project = plausibility_project("scale", items=0, redundancy={"train": 40})
    filler = plausibility_project("scale-source", items=1).items.get().filler
    Item.objects.bulk_create(Item(project=project, external_id=str(n), group_key=str(n),
                                  filler=filler) for n in range(3000))
    items = list(project.items.order_by("id"))
    veteran, novice = local_worker("veteran"), local_worker("novice")
    others = [local_worker(f"other{n}") for n in range(30)]
    rows = [Annotation(project=project, item=item, worker=veteran, source="local", rating=3)
            for item in items[:2000]]
    rows += [Annotation(project=project, item=item, worker=novice, source="local", rating=3)
             for item in items[2500:2550]]
    for n, other in enumerate(others):
        rows += [Annotation(project=project, item=items[(n * 97 + k) % 3000], worker=other,
                            source="local", rating=3) for k in range(300)]
    Annotation.objects.bulk_create(rows, batch_size=2000)
    table = Annotation._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {table}")
        cursor.execute(f"ANALYZE {Item._meta.db_table}")
    read = {}
    for name, worker, last in (("veteran", veteran, 1999), ("novice", novice, 2549)):
        sql, params = _choose_sql(project, worker, lock=True, after_item_id=items[last].pk)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {sql}", params)
            assert cursor.fetchone()[0] == items[last + 1].pk
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) SELECT {sql}", params)
            explained = cursor.fetchone()[0]
        if isinstance(explained, str):
            explained = json.loads(explained)
        read[name] = _rows_read(explained[0]["Plan"], table)
    # Starting after the last item, the veteran's 2000 past answers are not walked over: the
    # same few index probes as the novice's (others' answers on the candidate may differ).
    assert read["veteran"] <= read["novice"] + 20, read


def test_a_first_visit_among_filled_items_reads_none_of_them():
    """docs/annotating.md, "Filled items": a newcomer whose pivot falls among 2,500 filled items
    of 3,000 gets the first open item after it without reading the filled ones (the partial
    index ``item_unfilled``); unmarked, the same choice walks them."""
    project = plausibility_project("scale", items=0, redundancy={"train": 1})
    filler = plausibility_project("scale-source", items=1).items.get().filler
    Item.objects.bulk_create(Item(project=project, external_id=str(n), group_key=str(n),
                                  filler=filler) for n in range(3000))
    items = list(project.items.order_by("id"))
    earlier = local_worker("earlier")
    Annotation.objects.bulk_create(
        (Annotation(project=project, item=item, worker=earlier, source="local", rating=3)
         for item in items[:2500]), batch_size=2000)
    items_filled_refresh(item.pk for item in items[:2500])
    newcomer = next(worker for worker in (local_worker(f"new{n}") for n in range(50))
                    if 0.2 < (worker.pk * SPREAD_FACTOR) % 1.0 < 0.6)
    sql, params = _choose_sql(project, newcomer, lock=connection.vendor == "postgresql")
    table = Item._meta.db_table
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {sql}", params)
            assert cursor.fetchone()[0] == items[2500].pk
            cursor.execute(f"EXPLAIN QUERY PLAN SELECT {sql}", params)
            plan = " | ".join(str(row[-1]) for row in cursor.fetchall())
        assert "INDEX item_unfilled" in plan, plan
        return
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {table}")
        cursor.execute(f"ANALYZE {Annotation._meta.db_table}")

    def rows_read() -> float:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {sql}", params)
            assert cursor.fetchone()[0] == items[2500].pk
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) SELECT {sql}", params)
            explained = cursor.fetchone()[0]
        if isinstance(explained, str):
            explained = json.loads(explained)
        return _rows_read(explained[0]["Plan"], table)

    marked = rows_read()
    Item.objects.filter(project=project).update(filled=False)
    unmarked = rows_read()
    assert marked <= 10 and unmarked >= 500, (marked, unmarked)


def test_postgresql_connections_compile_nothing_just_in_time():
    """The next-item choice on a big project passes PostgreSQL's default ``jit_above_cost``, and
    compiling it cost 430 ms for a statement that runs in 0.3 ms (bench_next_item.py at
    1,000,000 items): the app's connections turn JIT off (settings, ``DATABASE_JIT``)."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only")
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == "off"
