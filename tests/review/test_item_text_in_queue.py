"""Staff read an item's text, not its database id, on the review queue's rows of unflagged
work (issue 24: "ITEM 195 rating 3")."""

from __future__ import annotations

import re

import pytest

from tests.factories import canard_sample
from tests.review.test_review_pages import submitted_unflagged

pytestmark = pytest.mark.django_db


def test_unflagged_rows_show_the_items_text_beside_the_answer(staff_client):
    project, items = canard_sample()
    submitted_unflagged(2, (project, items))
    page = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    texts = re.findall(r'<span data-testid="unflagged-item-text">([^<]*)</span> → ', page)
    assert texts == ["When did they disband?"] * 2  # items[1]'s question, escaped text
    assert not re.search(r'class="label">item \d+<', page)
