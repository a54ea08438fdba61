"""Everything from a dataset, a worker or MTurk reaches the pages escaped (server side).

The browser half (``tests/browser/test_escaping.py``) opens the same pages in chromium and
checks that nothing runs; this half checks the HTML the server sends, on every database.
"""

from __future__ import annotations

import re

import pytest

from tests.security.hostile import (
    MARKERS,
    annotator_pages,
    hostile_world,
    mturk_page,
    staff_pages,
)

pytestmark = pytest.mark.django_db


def unescaped(html: str) -> list[str]:
    return [marker for marker in MARKERS if marker in html]


def test_staff_pages_and_admin_escape_every_dataset_and_worker_text(staff_client):
    world = hostile_world()
    for url in staff_pages(world):
        response = staff_client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert unescaped(html) == [], url
        # The texts are there, as text.
        # (The flag list's only worker-typed column was the worker's id, now a pseudonym.)
        assert "&lt;img id=" in html or url.startswith(("/admin/annotation/targetsentence/",
                                                         "/admin/annotation/statusevent/")) \
            or url == "/admin/annotation/flag/", url


def test_dashboard_plots_escape_their_labels():
    """The SVG helpers escape titles and labels (only constants and pseudonyms reach them
    today, but a label is a text like any other)."""
    from frontend.review import svg_bars

    svg = str(svg_bars('</title><img id="xss-title">', ['<img id="xss-label">', "b"], [1, 2]))
    assert "<img" not in svg and "&lt;img id=&quot;xss-label&quot;&gt;" in svg


def test_task_pages_escape_dataset_text(annotator_client, client):
    world = hostile_world()
    for url in annotator_pages(world):
        response = annotator_client.get(url)
        assert response.status_code == 200, url
        assert unescaped(response.content.decode()) == [], url
    preview = client.get(mturk_page(world))
    assert preview.status_code == 200
    html = preview.content.decode()
    assert unescaped(html) == []
    # json_script escapes <, > and & inside the embedded config, so no </script> can end it.
    config = re.search(r'<script id="task-config" type="application/json">(.*?)</script>',
                       html, re.S)
    assert config and "<" not in config.group(1)
