"""The participant's path: Prolific sends a participant's browser to
``/prolific/task/<slug>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…``; they save the study's items
one at a time in our database, then finish and are sent back to Prolific with the study's
completion code.

Studies are made in the stand-in through the provider's own ``create_hit`` (so the ids are the
ones Prolific would send) and mirrored in the database as the launch service leaves them;
participants start through the stand-in's side door, which answers the study URL with the
placeholders filled in. The first save asks the stand-in whether the session is real
(``ProlificProvider.assignment_is_live``), through the real ``requests`` client.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.core import signing
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Annotation, Assignment, Batch, Worker
from annotation.providers import ProviderThrottled, ProviderTransientError
from annotation.providers.prolific import ProlificConfig, ProlificProvider, study_url
from annotation.selectors.providers import SessionCheck, session_check
from annotation.services.batches.collect import batch_collect
from tests.factories import (
    BUILDERS,
    launch_prolific,
    prolific_study_hit,
    sluice_project,
    study_template,
)

pytestmark = pytest.mark.django_db

ANSWER = {"full_question": "Why did he leave the band?", "skipped": False}
CODE = "C1UNPACK"


def new_prolific_id() -> str:
    return uuid.uuid4().hex[:24]


@pytest.fixture
def prolific(settings, fake_prolific):
    """The app pointed at the stand-in: its API, and its completion page."""
    settings.PROLIFIC_API_URL = fake_prolific.base_url
    settings.PROLIFIC_API_TOKEN = "test-token"
    settings.PROLIFIC_COMPLETION_URL = f"{fake_prolific.base_url}/submissions/complete?cc={{code}}"
    return fake_prolific


def launch(provider: ProlificProvider, project, *, places=1, our_places=None, duration=3600):
    """A published study of ``places`` at the stand-in holding every item of ``project``, and
    its Hit (``our_places`` slots, ``places`` unless given)."""
    template = study_template(
        external_study_url=study_url(f"https://unpack.example/prolific/task/{project.slug}/"),
        completion_code=CODE, failed_check_code="C1FAILED", internal_name=project.slug)
    published = provider.with_template(template).create_hit(
        hit_type_id="", question_xml="", max_assignments=places, lifetime_seconds=3600,
        unique_request_token=uuid.uuid4().hex)
    return prolific_study_hit(project, study_id=published.hit_id,
                              max_assignments=our_places or places, completion_code=CODE,
                              assignment_duration_seconds=duration)


def start(simulator, hit) -> dict:
    """A new participant starts the study at the stand-in: the ids its link carries."""
    participant = simulator.participant(new_prolific_id())
    task_url = simulator.start(participant, hit.provider_hit_id)["task_url"]
    return dict(parse_qsl(urlsplit(task_url).query))


def open_page(client, project, ids: dict):
    return client.get(f"/prolific/task/{project.slug}/", ids)


def token_for(client, project, ids: dict) -> str:
    response = open_page(client, project, ids)
    assert response.status_code == 200, response.content
    return response.context["config"]["task_token"]


def post(client, project, path: str, body: dict):
    return client.post(f"/prolific/task/{project.slug}/{path}/", json.dumps(body),
                       content_type="application/json")


def submit(client, project, token: str, item_id: int, answer=None, client_token=None):
    return post(client, project, "submit", {
        "item_id": item_id, "client_token": client_token or uuid.uuid4().hex,
        "task_token": token, "payload": answer or ANSWER})


def finish(client, project, token: str):
    return post(client, project, "finish", {"task_token": token})


def submission_calls(simulator) -> int:
    return simulator.stats()["calls"].get("get_submission", 0)


def nothing_written() -> bool:
    return not (Worker.objects.exists() or Assignment.objects.exists()
                or Annotation.objects.exists())


# --- the link ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [
    {},
    {"PROLIFIC_PID": "5A9D64F5F6DFDD0001EAA73D"},  # upper case: Prolific sends lower case
    {"PROLIFIC_PID": "5a9d64f5f6dfdd0001eaa73"},   # 23 digits
    {"PROLIFIC_PID": "5a9d64f5f6dfdd0001eaa73d0"},  # 25 digits
    {"PROLIFIC_PID": "5a9d64f5f6dfdd0001eaa7zz"},  # not hex
    {"SESSION_ID": "{{%SESSION_ID%}}"},            # a placeholder Prolific did not fill
    {"STUDY_ID": "<script>alert(1)</script>"},
    {"SESSION_ID": "ASSIGNMENT_ID_NOT_AVAILABLE"},
])
def test_a_link_without_prolifics_ids_gets_a_polite_400_and_nothing_else(
        client, prolific, provider, simulator, bad):
    project = sluice_project()
    hit = launch(provider, project)
    ids = {**start(simulator, hit), **bad} if bad else {}
    response = open_page(client, project, ids)
    assert response.status_code == 400
    page = response.content.decode()
    assert "Please open the study from Prolific" in page
    assert "<script>alert(1)</script>" not in page
    assert nothing_written() and submission_calls(simulator) == 0


def test_an_unknown_study_or_one_of_another_provider_is_404(client, prolific, provider,
                                                           simulator):
    project = sluice_project()
    hit = launch(provider, project)
    ids = start(simulator, hit)
    unknown = open_page(client, project, {**ids, "STUDY_ID": new_prolific_id()})
    assert unknown.status_code == 404
    assert "does not match a study" in unknown.content.decode()
    # A HIT of an MTurk batch is not served through Prolific's door, whatever its id.
    Batch.objects.filter(pk=hit.batch_id).update(provider="mturk")
    assert open_page(client, project, ids).status_code == 404
    assert nothing_written()


def test_opening_the_page_writes_nothing_and_shows_no_completion_code(
        client, prolific, provider, simulator):
    project = sluice_project(items=3)
    hit = launch(provider, project)
    ids = start(simulator, hit)
    response = open_page(client, project, ids)
    assert response.status_code == 200
    config = response.context["config"]
    assert config["mode"] == "prolific" and len(config["items"]) == 3
    assert config["finish_label"] == "Finish and return to Prolific"
    assert config["saved_item_ids"] == [] and config["task_token"]
    page = response.content.decode()
    assert "Finish and return to Prolific" in page
    assert "mturk-submit-form" not in page
    # The code is the participant's proof of work at Prolific: never on the page before finish.
    assert CODE not in page
    # Dataset text arrives escaped (the builders put <script> in it).
    assert "<script>window.__xss" not in page
    # Prolific's page is never framed (no exemption, unlike MTurk's).
    assert response["X-Frame-Options"] == "DENY"
    assert nothing_written() and submission_calls(simulator) == 0


# --- saving, finishing --------------------------------------------------------------------------


def test_a_participant_saves_every_item_then_finishes_with_the_studys_code(
        client, prolific, provider, simulator):
    project = sluice_project(items=2)
    hit = launch(provider, project)
    ids = start(simulator, hit)
    token = token_for(client, project, ids)
    first, second = project.items.order_by("id")
    assert submit(client, project, token, first.pk).json()["status"] == "saved"
    # The first save made the participant and their session, vouched for by Prolific.
    worker = Worker.objects.get()
    assert (worker.provider, worker.external_id) == ("prolific", ids["PROLIFIC_PID"])
    assignment = Assignment.objects.get()
    assert assignment.provider_assignment_id == ids["SESSION_ID"]
    assert assignment.hit_id == hit.pk and assignment.worker == worker
    assert assignment.status == "accepted" and assignment.confirmed_at is not None
    assert submission_calls(simulator) == 1
    # Not all saved yet: no code.
    early = finish(client, project, token)
    assert early.status_code == 409 and early.json()["error"] == "incomplete"
    assert "redirect_url" not in early.json()
    assert submit(client, project, token, second.pk,
                  {"full_question": "", "skipped": True}).json()["status"] == "saved"
    assert submission_calls(simulator) == 1  # asked once per session
    # The page, opened again, knows which items are saved (their ids, never the answers).
    again = open_page(client, project, ids)
    assert again.context["config"]["saved_item_ids"] == [first.pk, second.pk]
    assert "Why did he leave the band?" not in again.content.decode()

    done = finish(client, project, token)
    assert done.status_code == 200
    assert done.json() == {
        "status": "submitted", "saved_items": 2,
        "redirect_url": f"{prolific.base_url}/submissions/complete?cc={CODE}"}
    assignment.refresh_from_db()
    assert assignment.status == "submitted" and assignment.submitted_at is not None
    stored = Annotation.objects.order_by("item_id")
    assert [(a.source, a.state, a.assignment_id) for a in stored] == [
        ("prolific", "provisional", assignment.pk)] * 2
    assert stored[0].provenance == {"provider": "prolific", "via": "page",
                                    "assignment_id": ids["SESSION_ID"],
                                    "hit_id": ids["STUDY_ID"]}
    assert stored[0].served_at is not None


def test_the_completion_code_is_url_encoded(client, prolific, provider, simulator):
    project = sluice_project()
    hit = launch(provider, project)
    Batch.objects.filter(pk=hit.batch_id).update(completion_code="A&B C")
    ids = start(simulator, hit)
    token = token_for(client, project, ids)
    submit(client, project, token, project.items.get().pk)
    assert finish(client, project, token).json()["redirect_url"].endswith("?cc=A%26B%20C")


def test_a_finished_session_takes_no_more_answers(client, prolific, provider, simulator):
    project = sluice_project(items=2)
    first, second = project.items.order_by("id")
    hit = launch(provider, project)
    # A one-item study of a two-item project: the second item is not part of it.
    hit.hititem_set.filter(item=second).delete()
    ids = start(simulator, hit)
    token = token_for(client, project, ids)
    assert submit(client, project, token, first.pk).status_code == 200
    assert finish(client, project, token).status_code == 200
    before = list(Annotation.objects.values_list("pk", "payload"))
    changed = submit(client, project, token, first.pk, {"full_question": "Why not?",
                                                         "skipped": False})
    # Already answered in this session: the stored answer, unchanged.
    assert changed.json()["status"] == "already_saved"
    outside = submit(client, project, token, second.pk)
    assert outside.status_code == 400 and outside.json()["error"] == "wrong_item"
    assert list(Annotation.objects.values_list("pk", "payload")) == before
    # Finishing again (a lost answer) is answered the same, and changes nothing.
    assert finish(client, project, token).json()["redirect_url"].endswith(f"cc={CODE}")
    assert Assignment.objects.get().status == "submitted"


def test_a_submitted_session_refuses_a_new_item(client, prolific, provider, simulator):
    """Submitted on our side (finished), approved, rejected: no new answer goes in."""
    project = sluice_project(items=2)
    first, second = project.items.order_by("id")
    hit = launch(provider, project)
    ids = start(simulator, hit)
    token = token_for(client, project, ids)
    assert submit(client, project, token, first.pk).status_code == 200
    for status in ("submitted", "approved", "rejected"):
        Assignment.objects.update(status=status)
        refused = submit(client, project, token, second.pk)
        assert refused.status_code == 409 and refused.json()["error"] == "assignment_closed"
        assert "session is finished or closed" in refused.json()["message"]
    assert Annotation.objects.count() == 1


def test_a_returned_or_timed_out_session_is_closed_and_gets_no_code(client, prolific, provider,
                                                                   simulator):
    project = sluice_project()
    hit = launch(provider, project)
    ids = start(simulator, hit)
    token = token_for(client, project, ids)
    assert submit(client, project, token, project.items.get().pk).status_code == 200
    for status in ("returned", "abandoned"):  # Prolific's RETURNED and TIMED-OUT
        Assignment.objects.update(status=status)
        page = open_page(client, project, ids)
        assert page.status_code == 409
        assert "returned or has timed out" in page.content.decode()
        refused = finish(client, project, token)
        assert refused.status_code == 409 and refused.json()["error"] == "assignment_closed"
        assert CODE not in refused.content.decode()
        assert Assignment.objects.get().status == status


# --- the token ---------------------------------------------------------------------------------


def test_the_token_binds_the_page_to_its_participant_and_session(client, prolific, provider,
                                                                 simulator):
    project = sluice_project()
    item = project.items.get()
    hit = launch(provider, project, places=2)
    alice = start(simulator, hit)
    token = token_for(client, project, alice)
    ids = signing.loads(token, salt="unpack.prolific.task")[:3]
    assert ids == [alice["SESSION_ID"], alice["STUDY_ID"], alice["PROLIFIC_PID"]]
    for forged in ("", "forged", token[:-2] + "xx",
                   # The same ids signed for MTurk's door: worthless here.
                   signing.dumps([*ids, int(timezone.now().timestamp())],
                                 salt="unpack.mturk.task", compress=True)):
        refused = submit(client, project, forged, item.pk)
        assert refused.status_code == 400 and refused.json()["field"] == "task_token"
        assert finish(client, project, forged).status_code == 400
    # And a Prolific token is worthless at MTurk's door.
    mturk = client.post(f"/mturk/task/{project.slug}/submit/", json.dumps(
        {"item_id": item.pk, "client_token": uuid.uuid4().hex, "task_token": token,
         "payload": ANSWER}), content_type="application/json")
    assert mturk.status_code == 400
    assert nothing_written()


def test_the_token_expires_with_the_session(client, prolific, provider, simulator):
    """Refused once the batch's assignment duration (the study's maximum allowed time) plus
    the grace has passed since the page was served, even if never used."""
    project = sluice_project()
    item = project.items.get()
    hit = launch(provider, project, duration=1200)
    ids = start(simulator, hit)
    lifetime = timedelta(seconds=1200, minutes=5)
    stale = signing.dumps(
        [ids["SESSION_ID"], ids["STUDY_ID"], ids["PROLIFIC_PID"],
         int((timezone.now() - lifetime - timedelta(minutes=1)).timestamp())],
        salt="unpack.prolific.task", compress=True)
    late = submit(client, project, stale, item.pk)
    assert late.status_code == 409 and late.json()["error"] == "assignment_closed"
    assert "time for this session is over" in late.json()["message"]
    assert finish(client, project, stale).status_code == 409
    assert nothing_written()
    assert submit(client, project, token_for(client, project, ids), item.pk).status_code == 200


def test_nobody_sees_or_writes_into_another_participants_session(client, prolific, provider,
                                                                 simulator):
    project = sluice_project(items=2)
    first, second = project.items.order_by("id")
    hit = launch(provider, project, places=2)
    alice, bob = start(simulator, hit), start(simulator, hit)
    alice_token = token_for(client, project, alice)
    assert submit(client, project, alice_token, first.pk).status_code == 200
    # Bob, with Alice's session id: refused, nothing of hers shown.
    stolen = {**bob, "SESSION_ID": alice["SESSION_ID"]}
    page = open_page(client, project, stolen)
    assert page.status_code == 403
    assert "belongs to another participant" in page.content.decode()
    assert "Why did he leave" not in page.content.decode() and "task-config" not in \
        page.content.decode()
    # A token signed for those ids (as if the page had been served) is refused all the same.
    forged = signing.dumps([alice["SESSION_ID"], bob["STUDY_ID"], bob["PROLIFIC_PID"],
                            int(timezone.now().timestamp())],
                           salt="unpack.prolific.task", compress=True)
    refused = submit(client, project, forged, second.pk)
    assert refused.status_code == 403 and refused.json()["error"] == "not_yours"
    assert finish(client, project, forged).status_code == 403
    assert Annotation.objects.count() == 1
    # Alice's session is also bound to its study.
    other_study = launch(provider, project)
    elsewhere = {**alice, "STUDY_ID": other_study.provider_hit_id}
    assert open_page(client, project, elsewhere).status_code == 403
    # Bob's own session works.
    assert submit(client, project, token_for(client, project, bob), second.pk).status_code \
        == 200


def test_a_blocked_participant_is_refused_politely(client, prolific, provider, simulator):
    project = sluice_project()
    hit = launch(provider, project)
    ids = start(simulator, hit)
    token = token_for(client, project, ids)
    Worker.objects.create(provider="prolific", external_id=ids["PROLIFIC_PID"], is_blocked=True)
    page = open_page(client, project, ids)
    assert page.status_code == 403
    assert "not able to offer you more work" in page.content.decode()
    refused = submit(client, project, token, project.items.get().pk)
    assert refused.status_code == 403 and refused.json()["error"] == "blocked"
    assert not Annotation.objects.exists() and not Assignment.objects.exists()


# --- places: only sessions Prolific vouches for hold one ---------------------------------------


def test_invented_sessions_hold_no_place_and_the_study_is_capped(client, prolific, provider,
                                                                 simulator):
    """A study's places are its HIT's slots. A session Prolific does not know (invented ids,
    well formed: Prolific answers 404) is refused and writes nothing, so invented sessions
    never lock real participants out; sessions Prolific vouches for hold one each, up to the
    HIT's ``max_assignments``."""
    project = sluice_project()
    item = project.items.get()
    # Two places at Prolific (one added there, say) but one slot recorded on our side.
    hit = launch(provider, project, places=2, our_places=1)
    for _ in range(3):
        invented = {"PROLIFIC_PID": new_prolific_id(), "STUDY_ID": hit.provider_hit_id,
                    "SESSION_ID": new_prolific_id()}
        refused = submit(client, project, token_for(client, project, invented), item.pk)
        assert refused.status_code == 403 and refused.json()["error"] == "unknown_session"
    assert not Assignment.objects.exists() and not Worker.objects.exists()
    real = start(simulator, hit)
    assert submit(client, project, token_for(client, project, real), item.pk).status_code == 200
    assert Assignment.objects.get(provider_assignment_id=real["SESSION_ID"]).confirmed_at
    # The HIT's one slot is held by a vouched-for session: a new one is refused, and its
    # Worker and Assignment are not left behind.
    late = start(simulator, hit)
    refused = submit(client, project, token_for(client, project, late), item.pk)
    assert refused.status_code == 409 and refused.json()["error"] == "hit_full"
    assert "no free place left" in refused.json()["message"]
    assert "Prolific" in refused.json()["message"]
    assert not Worker.objects.filter(external_id=late["PROLIFIC_PID"]).exists()
    assert Annotation.objects.count() == 1


# --- assignment_is_live: one question to Prolific -------------------------------------------


@pytest.fixture
def api(prolific) -> ProlificProvider:
    return ProlificProvider(ProlificConfig(api_url=prolific.base_url, api_token="test-token"))


def test_assignment_is_live_asks_for_the_submission_of_this_participant_and_study(
        api, provider, simulator):
    project = sluice_project()
    hit = launch(provider, project, places=2)
    ids = start(simulator, hit)
    other = start(simulator, hit)
    session, study, pid = ids["SESSION_ID"], ids["STUDY_ID"], ids["PROLIFIC_PID"]

    def live(assignment_id=session, hit_id=study, worker_id=pid):
        return api.assignment_is_live(assignment_id=assignment_id, hit_id=hit_id,
                                      worker_id=worker_id)

    assert live() is True  # ACTIVE
    assert live(worker_id=other["PROLIFIC_PID"]) is False
    assert live(hit_id=new_prolific_id()) is False
    assert live(assignment_id=new_prolific_id()) is False  # Prolific: 404
    calls = api.calls
    assert live(assignment_id="../studies/") is False  # not an id: never sent
    assert api.calls == calls
    simulator.complete(session, CODE)
    assert live() is True  # AWAITING REVIEW
    simulator.return_session(other["SESSION_ID"])
    assert live(other["SESSION_ID"], worker_id=other["PROLIFIC_PID"]) is False  # RETURNED


def test_assignment_is_live_tries_once_and_lets_the_caller_decide(api, provider, simulator):
    project = sluice_project()
    hit = launch(provider, project)
    ids = start(simulator, hit)
    kwargs = {"assignment_id": ids["SESSION_ID"], "hit_id": ids["STUDY_ID"],
              "worker_id": ids["PROLIFIC_PID"]}
    simulator.fault("get_submission", count=1, status=429, retry_after=30)
    with pytest.raises(ProviderThrottled):
        api.assignment_is_live(**kwargs)
    simulator.fault("get_submission", count=1, status=503)
    with pytest.raises(ProviderTransientError):
        api.assignment_is_live(**kwargs)
    assert submission_calls(simulator) == 2  # one attempt each, no retry
    # Through the cached selector an unreachable Prolific confirms nothing, and is asked again
    # next time (errors are not cached); a yes is cached.
    simulator.fault("get_submission", count=1, status=503)
    check = {"hit": hit, "assignment_id": ids["SESSION_ID"], "worker_id": ids["PROLIFIC_PID"]}
    assert session_check(**check) is SessionCheck.UNREACHABLE
    assert session_check(**check) is SessionCheck.CONFIRMED
    assert session_check(**check) is SessionCheck.CONFIRMED
    assert submission_calls(simulator) == 4


# --- launched, worked, collected -----------------------------------------------------------


def test_a_study_from_the_launch_service_is_worked_on_this_page_and_collected(
        client, prolific_app, simulator, settings, django_capture_on_commit_callbacks):
    """The whole chain through the real services: the launch publishes a study whose URL is
    this page; a participant Prolific sends there saves every item and finishes; the code the
    page sends them back with is the one Prolific accepts (the stand-in completes the session
    with it), and collection then counts the page's answers."""
    settings.PROLIFIC_COMPLETION_URL = (f"{prolific_app.base_url}/submissions/complete"
                                        "?cc={code}")
    project = sluice_project(items=2, split="dev", redundancy={"train": 1, "dev": 1,
                                                              "test": 1})
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    study = prolific_app.world.studies[hit.provider_hit_id].body
    assert study["external_study_url"] == study_url(
        f"https://unpack.example.org/prolific/task/{project.slug}/")

    participant = simulator.participant(new_prolific_id())
    session = simulator.start(participant, hit.provider_hit_id)
    link = urlsplit(session["task_url"])
    page = client.get(f"{link.path}?{link.query}")
    assert page.status_code == 200
    token = page.context["config"]["task_token"]
    for item in project.items.order_by("id"):
        assert submit(client, project, token, item.pk).json()["status"] == "saved"
    redirect = finish(client, project, token).json()["redirect_url"]
    code = dict(parse_qsl(urlsplit(redirect).query))["cc"]
    assert code == batch.completion_code
    simulator.complete(session["session_id"], code)  # what Prolific does at that URL

    result = batch_collect(batch_id=batch.pk)
    assert result.assignments_seen == 1 and result.annotations_created == 0
    assignment = Assignment.objects.get()
    assert assignment.status == "submitted" and assignment.confirmed_at is not None
    assert set(Annotation.objects.values_list("state", "source")) == {("counted", "prolific")}
    assert Annotation.objects.count() == 2


# --- every kind, and what it costs -------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_every_kind_is_served_and_saved_through_prolific(client, prolific, provider, simulator,
                                                         kind):
    project = BUILDERS[kind]()
    hit = launch(provider, project)
    ids = start(simulator, hit)
    response = open_page(client, project, ids)
    assert response.status_code == 200
    assert response.context["config"]["kind"] == kind
    assert f'kind-{kind}' in response.content.decode()


def statements(queries: CaptureQueriesContext) -> list[str]:
    """The statements run, without the savepoints of the test's own transaction."""
    return [query["sql"] for query in queries.captured_queries
            if not query["sql"].lstrip().startswith(("SAVEPOINT", "RELEASE SAVEPOINT",
                                                     "ROLLBACK", "BEGIN", "COMMIT"))]


def page_queries(client, project, ids) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        assert open_page(client, project, ids).status_code == 200
    return statements(queries)


def test_page_and_submit_queries_do_not_grow_with_the_study(client, prolific, provider,
                                                            simulator):
    """Opening the page: the project, the study's HIT with its batch, the session (with its
    participant) or else the participant, the HIT's item ids, the items and their source
    material (sluice: the dialogue turns) — 7, whatever the number of items, also once items
    are saved. A later save: those reads but the participant's (6: the token names the HIT,
    its items are checked and loaded), then the item's row lock (PostgreSQL), the state
    query, the session's status (share lock) and the INSERT (10). The first save also locks
    the HIT row, reads the session and the participant again under that lock, counts the held
    places and INSERTs the participant and the session (17); the question to Prolific is no
    query."""
    small, large = sluice_project("one-item"), sluice_project("ten-items", items=10)
    small_hit, large_hit = launch(provider, small), launch(provider, large)
    small_ids, large_ids = start(simulator, small_hit), start(simulator, large_hit)
    assert len(page_queries(client, small, small_ids)) == len(
        page_queries(client, large, large_ids)) == PAGE_QUERIES

    token = token_for(client, large, large_ids)
    items = list(large.items.order_by("id"))
    with CaptureQueriesContext(connection) as first:
        assert submit(client, large, token, items[0].pk).status_code == 200
    with CaptureQueriesContext(connection) as later:
        assert submit(client, large, token, items[1].pk).status_code == 200
    # PostgreSQL locks the item row with its own statement; SQLite's IMMEDIATE transaction
    # already serialises writers.
    item_lock = 1 if connection.vendor == "postgresql" else 0
    assert len(statements(first)) == FIRST_SUBMIT_QUERIES + item_lock, statements(first)
    assert len(statements(later)) == SUBMIT_QUERIES + item_lock, statements(later)
    # A resumed page (items saved) costs one more: the participant exists now, so whether they
    # are blocked from this project alone is asked (selectors/blocks.py).
    assert len(page_queries(client, large, large_ids)) == PAGE_QUERIES + 1


PAGE_QUERIES = 7
FIRST_SUBMIT_QUERIES = 16  # plus the item's row lock on PostgreSQL
# Each counts the check of a block from this project alone (selectors/blocks.py).
SUBMIT_QUERIES = 10
