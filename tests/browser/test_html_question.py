"""The HTMLQuestion page (hit_templates/html_task_form.html) in chromium: it posts the answer
only to MTurk's own externalSubmit, whatever turkSubmitTo a crafted link carries."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from annotation.hit_templates import render_html_task_form

pytestmark = pytest.mark.browser

DEFAULT = "https://www.mturk.com/mturk/externalSubmit"


@pytest.mark.parametrize(("submit_to", "action"), [
    ("https://workersandbox.mturk.com", "https://workersandbox.mturk.com/mturk/externalSubmit"),
    ("https://www.mturk.com/", DEFAULT),
    ("https://evil.example", DEFAULT),
    ("https://www.mturk.com.evil.example", DEFAULT),
    ("https://www.mturk.com@evil.example", DEFAULT),
    ("javascript:alert(1)//", DEFAULT),
])
def test_the_form_posts_only_to_mturk(page, tmp_path, submit_to, action):
    html = render_html_task_form(title="t", instructions="i", item_text="x", question="q",
                                 field_name="answer")
    path = tmp_path / "task.html"
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri() + "?" + urlencode({"assignmentId": "A1",
                                               "turkSubmitTo": submit_to}))
    assert page.evaluate("document.getElementById('mturk_form').action") == action
    assert page.locator("#assignmentId").input_value() == "A1"
