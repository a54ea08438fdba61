"""A Prolific participant's whole path in a real browser, for each of the five task kinds.

The study is made in the Prolific stand-in through the provider's ``create_hit``, its study URL
pointing at the live server; a participant starts it through the stand-in's side door, which
answers the study URL with PROLIFIC_PID, STUDY_ID and SESSION_ID filled in, as Prolific sends the
participant's browser. The browser follows that URL to our page, saves every item of the study,
finishes, and lands on the stand-in's completion page with the study's completion code (which
the stand-in's ledger records, as Prolific would credit the submission).
"""

import uuid
from urllib.parse import urlsplit

import pytest

from annotation.fake_prolific import FakeProlific, FakeProlificSimulator
from annotation.models import Annotation, Assignment, Worker
from annotation.providers.prolific import (
    ProlificConfig,
    ProlificProvider,
    StudyTemplate,
    study_url,
)
from tests.browser.conftest import open_task, screenshot
from tests.factories import BUILDERS, prolific_study_hit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CODE = "C3BROWSER"


@pytest.fixture(scope="module")
def stand_in():
    with FakeProlific() as server:
        yield server


@pytest.fixture
def prolific(stand_in, settings, live_server):
    """The app (the live server) pointed at the stand-in, and the stand-in's completion page
    as Prolific's completion URL."""
    stand_in.world.reset()
    settings.UNPACK_PUBLIC_URL = live_server.url
    settings.PROLIFIC_API_URL = stand_in.base_url
    settings.PROLIFIC_API_TOKEN = "browser-token"
    settings.PROLIFIC_COMPLETION_URL = f"{stand_in.base_url}/submissions/complete?cc={{code}}"
    return stand_in


def launch(stand_in, live_server, project):
    """The project's study at the stand-in, published, and its HIT in the database."""
    template = StudyTemplate(
        name=f"{project.name}", description="Annotate a few items.",
        external_study_url=study_url(f"{live_server.url}/prolific/task/{project.slug}/"),
        reward_cents=150, estimated_completion_minutes=5, maximum_allowed_minutes=20,
        completion_code=CODE, failed_check_code="C3FAILED", internal_name=project.slug)
    provider = ProlificProvider(ProlificConfig(api_url=stand_in.base_url,
                                               api_token="browser-token"), template=template)
    published = provider.create_hit(hit_type_id="", question_xml="", max_assignments=1,
                                    lifetime_seconds=3600, unique_request_token=uuid.uuid4().hex)
    return prolific_study_hit(project, study_id=published.hit_id, completion_code=CODE,
                              assignment_duration_seconds=20 * 60)


def answer_sluice(item):
    item.locator(".full-question").fill("Why did he leave the band?")


def answer_plausibility(item):
    item.locator(".rating-stop[data-value='4']").click()


def answer_decontext(item):
    item.locator("input[value=infeasible]").check()


def answer_split(item):
    rows = item.locator(".simple-sentence")
    rows.nth(0).fill("Alan Bean was born in Wheeler, Texas.")
    rows.nth(1).fill("Alan Bean was a test pilot.")


ANSWER = {"sluice": answer_sluice, "plausibility": answer_plausibility,
          "decontext": answer_decontext, "split_rephrase": answer_split}
REWRITES = ["What was the first album of the Mothers of Invention?",
            "When did the Mothers of Invention disband?",
            "Did Frank Zappa form any band other than the Mothers of Invention?"]


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_a_participant_goes_from_prolific_through_every_item_and_back(page, live_server,
                                                                      prolific, kind):
    builder = BUILDERS[kind]
    project = builder() if kind == "rewrite" else builder(items=2)
    hit = launch(prolific, live_server, project)
    simulator = FakeProlificSimulator(prolific.base_url)
    participant = simulator.participant(uuid.uuid4().hex[:24])
    session = simulator.start(participant, hit.provider_hit_id)
    assert urlsplit(session["task_url"]).netloc == urlsplit(live_server.url).netloc

    open_task(page, session["task_url"])
    items = page.locator(".task-item")
    count = items.count()
    assert count == project.items.count()
    progress = page.locator("#progress")
    assert progress.inner_text() == f"0 of {count} saved in this task"
    finish = page.locator(".finish-hit")
    if kind == "rewrite":
        # A Save per question (each reveals the answer the next builds on), then Finish.
        for index, rewrite in enumerate(REWRITES):
            items.nth(index).locator(".rewrite-text").fill(rewrite)
            items.nth(index).locator(".save-item").click()
            items.nth(index).locator(".revealed-answer").wait_for()
            assert progress.inner_text() == f"{index + 1} of {count} saved in this task"
    else:
        for index in range(count):
            ANSWER[kind](items.nth(index))
        assert not Annotation.objects.exists()  # nothing saved before the participant submits
    assert finish.inner_text() == "Finish and return to Prolific"
    screenshot(page, f"prolific_{kind}")
    finish.click()

    page.wait_for_url(f"{prolific.base_url}/submissions/complete?cc={CODE}")
    assert page.locator("#code").inner_text() == CODE
    assert simulator.ledger()["completions"] == [CODE]
    assignment = Assignment.objects.get()
    assert assignment.provider_assignment_id == session["session_id"]
    assert assignment.status == "submitted" and assignment.confirmed_at is not None
    assert (assignment.worker.provider, assignment.worker.external_id) == ("prolific",
                                                                          participant)
    stored = Annotation.objects.filter(assignment=assignment)
    assert stored.count() == count
    assert set(stored.values_list("source", flat=True)) == {"prolific"}
    assert Worker.objects.count() == 1
    assert page.evaluate("window.__xss") is None
