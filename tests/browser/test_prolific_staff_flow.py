"""Issue 14's "Done when", as a researcher does it in a real browser: from the staff pages
alone, launch a Prolific study for each of the five task kinds, watch participants' work arrive,
review it, pay a bonus, block, and export.

Every staff action goes through the pages (the launch form, the batch page's Collect button,
the review page's forms, the export page). The only shortcut is the participants': they start
their sessions through the Prolific stand-in's side door (which answers the study URL as
Prolific sends the participant's browser), work on our task page in a browser context of their
own, and are credited there (``simulator.complete``) as Prolific would on the completion page.
Publishing and collection run inline (no broker in these tests), as the jobs would.
"""

from __future__ import annotations

import time
import uuid
import zipfile

import pytest

from annotation.fake_prolific import FakeProlific, FakeProlificSimulator, SimulatorRefused
from annotation.models import Batch
from tests.browser.conftest import login_browser, open_task, screenshot
from tests.browser.test_prolific_task import ANSWER, REWRITES
from tests.factories import BUILDERS, sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORKSPACE = "wsp0000000000000000staffflow"
REASON = ("The question you wrote does not resolve the sluice: it repeats the wh-word without "
          "the missing content, so it cannot be used for this study.")


@pytest.fixture(scope="module")
def stand_in():
    with FakeProlific() as server:
        yield server


@pytest.fixture
def prolific(stand_in, settings, live_server):
    stand_in.world.reset()
    settings.UNPACK_PUBLIC_URL = live_server.url
    settings.PROLIFIC_API_URL = stand_in.base_url
    settings.PROLIFIC_API_TOKEN = "staff-flow-token"
    settings.PROLIFIC_WORKSPACE_ID = WORKSPACE
    settings.PROLIFIC_COMPLETION_URL = f"{stand_in.base_url}/submissions/complete?cc={{code}}"
    settings.PROLIFIC_VAT_PERCENT = "20"
    return stand_in


@pytest.fixture
def staff(page, live_server, staff_user):
    login_browser(page, live_server, staff_user)
    responses: list[tuple[int, str]] = []
    page.on("response", lambda response: responses.append((response.status, response.url)))
    page.server_errors = lambda: [r for r in responses if r[0] >= 500]
    return page


@pytest.fixture
def participant_browser(browser):
    """A browser context of the participants' own (no staff session), opened per participant."""
    contexts = []
    errors: list[str] = []

    def open_context():
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(8000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        return page

    yield open_context
    for context in contexts:
        context.close()
    assert not errors, f"JavaScript errors on the participant's page: {errors}"


def launch_from_page(page, live_server, *, project_slug: str, title: str,
                     assignments: int = 1, shoot: str = "") -> int:
    """Launch a Prolific batch from the staff launch page; the batch's id."""
    page.goto(f"{live_server.url}/staff/batches/new/")
    page.select_option("select[name=project]", project_slug)
    page.fill("input[name=title]", title)
    for split in ("train", "dev", "test"):
        page.check(f"input[name=splits][value={split}]")
    page.fill("input[name=items_per_hit]", "10")
    page.fill("input[name=assignments]", str(assignments))
    page.select_option("select[name=provider]", "prolific")
    page.fill("input[name=estimated_minutes]", "10")
    page.fill("input[name=duration]", "30m")
    # Too little for ten minutes: refused, with the effective hourly rate.
    page.fill("input[name=reward]", "0.50")
    page.click("button:has-text('Estimate the cost')")
    refusal = page.locator("form.launch").inner_text()
    assert "£3.00 an hour" in refusal and "minimum is £8.00 an hour" in refusal, refusal
    assert page.locator("button:has-text('Confirm and launch')").count() == 0
    page.fill("input[name=reward]", "2.00")
    page.click("button:has-text('Estimate the cost')")
    estimate = page.locator("section.estimate")
    assert "Prolific service fee (33.3% of rewards)" in estimate.inner_text()
    assert "VAT on the service fee (20%)" in estimate.inner_text()
    rewards_cents = 200 * assignments
    fee = round(rewards_cents * 0.333)
    assert page.locator("[data-testid=estimate-fee]").inner_text() == f"£{fee / 100:.2f}"
    assert page.locator("[data-testid=estimate-vat]").inner_text() == (
        f"£{round(fee * 0.2) / 100:.2f}")
    if shoot:
        screenshot(page, shoot)
    page.click("button:has-text('Confirm and launch')")
    page.locator("[data-testid=batch-status]:has-text('published')").wait_for()
    assert "its studies are being published" in page.locator("p.message").inner_text()
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def work_through_the_session(participant_page, session: dict, kind: str, answer) -> str:
    """The participant's browser: open the study URL, answer every item, finish; the code
    shown on the stand-in's completion page."""
    open_task(participant_page, session["task_url"])
    items = participant_page.locator(".task-item")
    if kind == "rewrite":
        for index, rewrite in enumerate(REWRITES):
            items.nth(index).locator(".rewrite-text").fill(rewrite)
            items.nth(index).locator(".save-item").click()
            items.nth(index).locator(".revealed-answer").wait_for()
    else:
        for index in range(items.count()):
            answer(items.nth(index))
    assert participant_page.locator(".finish-hit").inner_text() == "Finish and return to Prolific"
    participant_page.click(".finish-hit")
    participant_page.wait_for_url("**/submissions/complete?cc=*")
    return participant_page.locator("#code").inner_text()


def participants_work(prolific, participant_browser, study_id: str, kind: str, answers) -> list:
    """Each participant starts through the side door, works in the browser, and is credited
    with the completion code the page sent them to."""
    simulator = FakeProlificSimulator(prolific.base_url)
    done = []
    for answer in answers:
        pid = simulator.participant(uuid.uuid4().hex[:24])
        session = simulator.start(pid, study_id)
        code = work_through_the_session(participant_browser(), session, kind, answer)
        simulator.complete(session["session_id"], code)
        done.append((pid, session["session_id"], code))
    return done


def collect_from_page(page, live_server, batch_id: int) -> None:
    page.goto(f"{live_server.url}/staff/batches/{batch_id}/")
    page.click("button:has-text('Collect submitted work now')")
    assert "Collection requested" in page.locator("p.message").inner_text()


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_launch_work_and_collect_every_kind_from_the_staff_pages(staff, live_server, prolific,
                                                                 participant_browser, kind):
    started = time.monotonic()
    builder = BUILDERS[kind]
    project = builder() if kind == "rewrite" else builder(items=2)
    batch_id = launch_from_page(staff, live_server, project_slug=project.slug,
                                title=f"{kind} on Prolific")
    batch = Batch.objects.get(pk=batch_id)
    (study_id,) = batch.hits.values_list("provider_hit_id", flat=True)
    study = prolific.world.studies[study_id]
    assert study.status == "ACTIVE"  # published
    assert study.body["external_study_url"].startswith(
        f"{live_server.url}/prolific/task/{project.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}")
    assert {"filter_id": "participant_group_blocklist"}.items() <= next(
        f for f in study.body["filters"]
        if f["filter_id"] == "participant_group_blocklist").items()

    ((_, _, code),) = participants_work(prolific, participant_browser, study_id, kind,
                                        [ANSWER.get(kind)])
    assert code == batch.completion_code

    collect_from_page(staff, live_server, batch_id)
    statuses = staff.locator("h2:has-text('Session statuses') + ul").inner_text()
    assert "submitted: 1" in statuses
    assert "1 / 1" in staff.locator("table").first.inner_text()
    assert not staff.server_errors()
    print(f"\n[timing] {kind}: {time.monotonic() - started:.1f} s")


def sluice_answer(text: str):
    return lambda item: item.locator(".full-question").fill(text)


GOOD = "Why did the band break up in 1975?"
BAD = "Why why why?"


def test_review_bonus_block_and_export_from_the_staff_pages(staff, live_server, prolific,
                                                           participant_browser, tmp_path):
    started = time.monotonic()
    project = sluice_project(items=1)
    later = sluice_project(slug="sluice-later", items=1)
    batch_id = launch_from_page(staff, live_server, project_slug=project.slug,
                                title="Resolve a sluice", assignments=2,
                                shoot="prolific_launch_estimate")
    batch = Batch.objects.get(pk=batch_id)
    (study_id,) = batch.hits.values_list("provider_hit_id", flat=True)
    (good_pid, good_session, _), (bad_pid, bad_session, _) = participants_work(
        prolific, participant_browser, study_id, "sluice",
        [sluice_answer(GOOD), sluice_answer(BAD)])

    # Watch the work arrive on the batch page.
    collect_from_page(staff, live_server, batch_id)
    assert "submitted: 2" in staff.locator("h2:has-text('Session statuses') + ul").inner_text()
    screenshot(staff, "prolific_batch_page")

    # Review: both sessions are listed with their answers and decisions.
    staff.goto(f"{live_server.url}/staff/review/{project.slug}/")
    listed = staff.locator("[data-testid=unflagged-work]")
    good = listed.locator(f".unflagged-assignment:has-text('{good_session}')")
    bad = listed.locator(f".unflagged-assignment:has-text('{bad_session}')")
    assert GOOD in good.inner_text() and BAD in bad.inner_text()
    assert good_pid not in listed.inner_text()  # participants under pseudonyms only
    screenshot(staff, "prolific_review_page")

    # A bonus, submitted twice: paid once.
    for _ in range(2):
        bonus_form = good.locator("[data-testid=bonus-form]")
        bonus_form.locator("input[name=amount_cents]").fill("25")
        bonus_form.locator("input[aria-label='Bonus reason']").fill("A careful question")
        bonus_form.locator("button:has-text('Bonus')").click()
        staff.locator(".review-messages").wait_for()
    assert [payment["cents"] for payment in prolific.world.payments] == [25]
    setups = FakeProlificSimulator(prolific.base_url).ledger()["bonus_setups"]
    assert [setup["payments"] for setup in setups.values()] == [1]

    # Block the careless participant: the page asks where and what to do with their pending
    # work (left for review here); the stand-in's blocklist group holds them.
    bad.locator("a:has-text('Block worker')").click()
    staff.locator("input[name=scope][value=everywhere]").check()
    staff.locator("textarea[name=reason]").fill("Nonsense questions")
    staff.locator("input[name=pending][value=leave]").check()
    staff.locator("button:has-text('Block worker')").click()
    assert "blocked everywhere" in staff.locator(".message").inner_text()
    assert "1 pending assignment(s)/answer(s) left for review" in staff.locator(
        ".message").inner_text()
    groups = FakeProlificSimulator(prolific.base_url).ledger()["groups"]
    assert list(groups.values()) == [[bad_pid]]
    # Their session is held back from bulk approval, shown apart, and decided there.
    staff.goto(f"{live_server.url}/staff/review/{project.slug}/")
    good = listed.locator(f".unflagged-assignment:has-text('{good_session}')")
    assert bad_session not in listed.inner_text()
    staff.goto(f"{live_server.url}/staff/projects/{project.slug}/held/")
    bad = staff.locator(f"[data-testid=held-assignment]:has-text('{bad_session}')")
    assert "blocked" in bad.locator("[data-testid=worker-blocked]").inner_text()

    # Reject: a message under 100 characters is refused (by the form, and by the server when
    # the form's check is bypassed), and nothing changes.
    reject_form = bad.locator("form:has(button:has-text('Reject whole assignment'))")
    reject_form.locator("select[name=rejection_category]").select_option("LOW_EFFORT")
    message = reject_form.locator("input[name=message]")
    message.fill("Too short.")
    assert not message.evaluate("(input) => input.checkValidity()")
    message.evaluate("(input) => input.removeAttribute('minlength')")
    reject_form.locator("button").click()
    assert "100" in staff.locator(".review-messages li.error").inner_text()
    assert prolific.world.submissions[bad_session].status == "AWAITING REVIEW"
    reject_form.locator("select[name=rejection_category]").select_option("LOW_EFFORT")
    reject_form.locator("input[name=message]").fill(REASON)
    reject_form.locator("button").click()
    assert "rejected" in staff.locator(".review-messages").inner_text()
    staff.goto(f"{live_server.url}/staff/review/{project.slug}/")
    good.locator("button:has-text('Approve assignment')").click()
    assert "approved" in staff.locator(".review-messages").inner_text()
    assert prolific.world.submissions[bad_session].status == "REJECTED"
    assert prolific.world.submissions[good_session].status == "APPROVED"
    assert [payment["cents"] for payment in prolific.world.payments] == [25]

    # The blocked participant cannot take a later study.
    later_batch = launch_from_page(staff, live_server, project_slug=later.slug,
                                   title="Resolve another sluice")
    (later_study,) = Batch.objects.get(pk=later_batch).hits.values_list("provider_hit_id",
                                                                         flat=True)
    simulator = FakeProlificSimulator(prolific.base_url)
    with pytest.raises(SimulatorRefused) as refused:
        simulator.start(bad_pid, later_study)
    assert refused.value.code == "blocked"
    simulator.start(good_pid, later_study)  # the others still can

    # Export from the staff export page: the approved answer, not the rejected one, and no
    # raw participant id.
    # The export runs as a job (inline here: no broker, so it is done when the page comes
    # back); the export page offers the zip.
    staff.goto(f"{live_server.url}/staff/projects/{project.slug}/export/")
    staff.click("button[data-format=sluice]")
    with staff.expect_download() as download:
        staff.click("a[download][data-format=sluice]")
    with zipfile.ZipFile(download.value.path()) as archive:
        assert archive.namelist()
        exported = "".join(archive.read(name).decode() for name in archive.namelist())
    assert GOOD in exported
    assert BAD not in exported
    assert good_pid not in exported and bad_pid not in exported
    assert not staff.server_errors()
    print(f"\n[timing] full flow (sluice): {time.monotonic() - started:.1f} s")
