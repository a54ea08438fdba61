"""Long answers (issue 22, points 3 and 4): warnings never decide whether an answer is stored
(a 700-character honest rewrite with ~45 words not in the conversation makes a warning longer
than the 500 characters kept of one, and is saved with "Save anyway"), and text boxes stop at
the server's 2000 characters while showing a counter."""

import pytest

from annotation.models import Annotation
from annotation.payloads import MAX_TEXT, MAX_WARNING_MESSAGE
from tests.browser.conftest import login_browser, open_task
from tests.factories import rewrite_project, sluice_project, split_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEW_WORDS = [
    "extraordinary", "experimental", "orchestration", "improvisational", "counterculture",
    "psychedelic", "satirical", "arrangements", "instrumentation", "collaborators",
    "underground", "recordings", "compositions", "guitarists", "percussionists",
    "saxophonists", "keyboardists", "microphones", "amplifiers", "synthesizers",
    "distribution", "controversial", "censorship", "interviews", "documentaries",
    "biographies", "retrospectives", "anthologies", "compilations", "reissues", "remasters",
    "soundtracks", "orchestras", "conductors", "symphonic", "avantgarde", "unconventional",
    "influential", "reviewers", "journalists", "broadcasters", "television", "appearances",
    "performances", "audiences", "festivals", "magazines", "photographers",
]


def test_a_long_honest_rewrite_is_saved_with_save_anyway(page, live_server, annotator_user):
    assert len(set(NEW_WORDS)) >= 45
    rewrite = ("What was the first album of the Mothers of Invention, the band of Frank Zappa "
               "known for "
               + " ".join(NEW_WORDS) + "?")
    assert 650 <= len(rewrite) <= 800
    project = rewrite_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    box = page.locator(".rewrite-text")
    box.fill(rewrite)
    box.press("Enter")
    page.get_by_role("button", name="Save anyway").wait_for()
    shown = page.locator(".warnings .warning[data-code=rewrite_new_words]").inner_text()
    assert len(shown) > MAX_WARNING_MESSAGE  # the warning the page shows is that long
    box.press("Enter")
    page.locator(".item-status.ok").wait_for()
    assert page.locator(".item-status").inner_text() == "Saved."
    annotation = Annotation.objects.get()
    assert annotation.text == rewrite
    [kept] = [w for w in annotation.overridden_warnings if w["code"] == "rewrite_new_words"]
    assert kept["truncated"] is True and len(kept["message"]) == MAX_WARNING_MESSAGE
    assert shown.startswith(kept["message"][:-1])
    # The server's own check keeps the whole list.
    [server] = [w for w in annotation.server_warnings if w["code"] == "rewrite_new_words"]
    assert server["message"] == shown


@pytest.mark.parametrize("kind", ["rewrite", "sluice", "split"])
def test_text_boxes_stop_at_the_server_limit_and_count(page, live_server, annotator_user, kind):
    build, box = {"rewrite": (rewrite_project, ".rewrite-text"),
                  "sluice": (sluice_project, ".full-question"),
                  "split": (split_project, ".simple-sentence")}[kind]
    project = build()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    field = page.locator(box).first
    assert field.get_attribute("maxlength") == str(MAX_TEXT)
    counter = page.locator(".char-count").first
    assert counter.is_visible() and counter.inner_text() == f"0 / {MAX_TEXT} characters"
    field.focus()
    page.keyboard.insert_text("Why " * 625)  # 2,500 characters, as a paste
    assert len(field.input_value()) == MAX_TEXT
    assert counter.inner_text() == f"{MAX_TEXT} / {MAX_TEXT} characters"
