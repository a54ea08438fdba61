"""MTurk ExternalQuestion pages in a real browser: preview, a multi-item HIT saved in our
database first, then the assignment posted to turkSubmitTo (a local recording server)."""

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlencode

import pytest
from django.utils import timezone

from annotation.models import Annotation, Assignment, Worker
from annotation.services.batches.collect import parse_answer_payloads
from tests.browser.conftest import open_task, screenshot
from tests.factories import publish_hit, rewrite_project, sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def turk(settings):
    """A stand-in for MTurk's externalSubmit endpoint that records what the page posts."""
    posts: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            posts.append({"path": self.path,
                          "form": parse_qs(self.rfile.read(length).decode())})
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<p id='thanks'>HIT submitted</p>")

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{server.server_port}"
    settings.UNPACK_MTURK_SUBMIT_ORIGINS = [origin]
    yield origin, posts
    server.shutdown()


def task_url(live_server, project, **params):
    return f"{live_server.url}/mturk/task/{project.slug}/?{urlencode(params)}"


def test_preview_shows_the_task_with_inputs_disabled(page, live_server):
    project = sluice_project(items=2)
    publish_hit(project)
    open_task(page, task_url(live_server, project, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE",
                             hitId="HIT123"))
    assert page.locator("#preview-notice").is_visible()
    assert page.locator(".task-item").count() == 2
    assert page.locator(".full-question").first.is_disabled()
    assert page.locator(".save-item").first.is_disabled()
    screenshot(page, "mturk_preview")
    assert not Worker.objects.exists()


def test_sluice_hit_is_saved_then_posted_to_mturk(page, live_server, turk):
    origin, posts = turk
    project = sluice_project(items=2)
    publish_hit(project)
    open_task(page, task_url(live_server, project, assignmentId="ASSIGN1", hitId="HIT123",
                             workerId="AWORKER1", turkSubmitTo=origin))
    items = page.locator(".task-item")
    # One Submit for the whole set: each item is checked first, nothing is saved before.
    assert items.nth(0).locator(".save-item").is_hidden()
    page.click(".finish-hit")
    assert "2 item(s) need an answer" in page.locator(".submit-status").inner_text()
    assert page.evaluate("() => document.activeElement.classList.contains('full-question')")
    items.nth(0).locator(".full-question").type("Why did he leave the band?")
    page.keyboard.press("Enter")  # to the next item
    items.nth(1).locator(".skip-item").click()
    assert items.nth(1).locator(".item-status").inner_text() == "Skipped."
    assert not Annotation.objects.exists()
    page.click(".finish-hit")
    page.locator("#thanks").wait_for()
    assert posts[0]["path"] == "/mturk/externalSubmit"
    assert posts[0]["form"]["assignmentId"] == ["ASSIGN1"]
    assert posts[0]["form"]["summary"] == ["unpack:sluice-demo:2 items saved"]
    # MTurk receives the whole answer, in the fields the collector parses.
    form = {name: values[0] for name, values in posts[0]["form"].items()}
    item_ids = list(project.items.order_by("id").values_list("id", flat=True))
    payloads, meta = parse_answer_payloads(form, item_ids)
    assert payloads == {
        item_ids[0]: {"full_question": "Why did he leave the band?", "skipped": False},
        item_ids[1]: {"full_question": "", "skipped": True}}
    assert set(meta) == set(item_ids)
    assignment = Assignment.objects.get(provider_assignment_id="ASSIGN1")
    assert assignment.status == "submitted"
    assert assignment.worker.provider == "mturk" and assignment.worker.external_id == "AWORKER1"
    stored = Annotation.objects.filter(assignment=assignment).order_by("item_id")
    assert [(a.source, a.text, a.skipped) for a in stored] == [
        ("mturk", "Why did he leave the band?", False), ("mturk", "", True)]


def test_canard_hit_reveals_one_question_at_a_time(page, live_server, turk):
    origin, posts = turk
    project = rewrite_project()
    publish_hit(project)
    open_task(page, task_url(live_server, project, assignmentId="ASSIGN2", hitId="HIT123",
                             workerId="AWORKER2", turkSubmitTo=origin))
    items = page.locator(".task-item")
    assert [items.nth(i).is_visible() for i in range(3)] == [True, False, False]
    assert "Freak Out!" not in page.content()
    rewrites = ["What was the first album of the Mothers of Invention?",
                "When did the Mothers of Invention disband?",
                "Did Frank Zappa form any band other than the Mothers of Invention?"]
    for index, rewrite in enumerate(rewrites):
        items.nth(index).locator(".rewrite-text").type(rewrite)
        items.nth(index).locator(".save-item").click()
        items.nth(index).locator(".revealed-answer").wait_for()
    assert items.nth(0).locator(".answer-text").inner_text() == "Freak Out! in 1966."
    page.click(".finish-hit")
    page.locator("#thanks").wait_for()
    assert list(Annotation.objects.order_by("item__position").values_list("text", flat=True)) \
        == rewrites
    assert posts[0]["form"]["assignmentId"] == ["ASSIGN2"]


def test_blocked_worker_sees_a_polite_refusal(page, live_server, turk):
    origin, _ = turk
    project = sluice_project()
    publish_hit(project)
    Worker.objects.create(provider="mturk", external_id="ABLOCKED", is_blocked=True)
    page.goto(task_url(live_server, project, assignmentId="ASSIGN3", hitId="HIT123",
                       workerId="ABLOCKED", turkSubmitTo=origin))
    assert "not able to offer you more work" in page.locator("#refusal").inner_text()


def test_a_full_hit_says_so_and_stores_nothing(page, live_server, turk):
    origin, posts = turk
    project = sluice_project()
    hit = publish_hit(project, max_assignments=1)
    taken = Worker.objects.create(provider="mturk", external_id="AFIRST")
    # MTurk has vouched for it (collection saw it): it holds the HIT's only slot.
    Assignment.objects.create(hit=hit, worker=taken, provider_assignment_id="ASSIGNFIRST",
                              confirmed_at=timezone.now())
    open_task(page, task_url(live_server, project, assignmentId="ASSIGN4", hitId="HIT123",
                             workerId="ASECOND", turkSubmitTo=origin))
    item = page.locator(".task-item").first
    item.locator(".full-question").type("Why did he leave the band?")
    page.click(".finish-hit")
    status = item.locator(".item-status.error")
    status.wait_for()
    assert "no free assignment" in status.inner_text()
    assert not Annotation.objects.exists() and posts == []
    assert not Worker.objects.filter(external_id="ASECOND").exists()
