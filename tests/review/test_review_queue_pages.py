"""The review queue shows a page of flag groups with totals, keyset-paginated (issue 21)."""

from __future__ import annotations

import html
import re

import pytest
from django.db import connection

from annotation.models import Flag
from annotation.selectors import review_queue
from tests.factories import canard_sample, flagged_rewrites

pytestmark = pytest.mark.django_db

GROUP = re.compile(r'<section class="review-group" data-group="(-?\d+)">')


def next_link(page: str) -> str | None:
    found = re.search(r'<a href="(\?by=[a-z]+&amp;after=[^"]+)" data-testid="queue-next">', page)
    return html.unescape(found.group(1)) if found else None


def walk(client, url: str) -> list[list[str]]:
    """The group keys of every page, following the Next links from ``url``."""
    pages = []
    while url is not None:
        response = client.get(url)
        assert response.status_code == 200
        page = response.content.decode()
        pages.append(GROUP.findall(page))
        link = next_link(page)
        url = (url.split("?")[0] + link) if link else None
    return pages


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(review_queue, "PAGE_GROUPS", 2)
    monkeypatch.setattr(review_queue.open_flag_page, "__kwdefaults__",
                        {"after": None, "size": 2, "per_group": 1})


def test_every_grouping_pages_through_each_group_once_with_totals(staff_client, small_pages):
    project, rows = flagged_rewrites(3)
    # a second flag on the first answer: one row, both flags, under the answer grouping
    _, annotation, _, _ = rows[0]
    Flag.objects.create(project=project, annotation=annotation, worker=annotation.worker,
                        reason="copy_of_input", score=0.5, detail="copied",
                        fingerprint=f"copy_of_input:annotation:{annotation.pk}")
    base = f"/staff/review/{project.slug}/"
    expected = {
        # 3 assignments (their answer flags) + the worker-level flags outside any HIT (key 0)
        "hit": 4,
        "worker": 3,  # each worker's answer flags and worker flag together
        "answer": 3 + 3,  # 3 flagged answers + 3 worker-level flags, each a group
    }
    for by, groups in expected.items():
        pages = walk(staff_client, f"{base}?by={by}")
        keys = [key for page in pages for key in page]
        assert len(keys) == len(set(keys)) == groups, (by, pages)
        assert all(len(page) <= 2 for page in pages) and len(pages) == (groups + 1) // 2
        first = staff_client.get(f"{base}?by={by}").content.decode()
        assert f"7 open flags in {groups} groups" in first
    by_answer = staff_client.get(f"{base}?by=answer").content.decode()
    section = by_answer.split(f'data-group="{annotation.pk}"')[1].split("</section>")[0]
    assert "2 open flags on 1 answer; the 1 highest shown here" in section


def test_one_row_per_answer_lists_all_its_flags(staff_client):
    project, rows = flagged_rewrites(1)
    _, annotation, flag, _ = rows[0]
    second = Flag.objects.create(project=project, annotation=annotation,
                                 worker=annotation.worker, reason="copy_of_input", score=0.5,
                                 fingerprint=f"copy_of_input:annotation:{annotation.pk}")
    page = staff_client.get(f"/staff/review/{project.slug}/?by=answer").content.decode()
    section = page.split(f'data-group="{annotation.pk}"')[1].split("</section>")[0]
    assert section.count("<tr>") == 2  # the header row and one row for the answer
    assert "rewrite_pronoun_left" in section and "copy_of_input" in section
    for each in (flag, second):
        assert f"/flags/{each.pk}/dismiss/" in section
    assert "2 open flags on 1 answer." in section


def test_decisions_from_a_later_page_go_back_to_it(staff_client, small_pages):
    project, _ = flagged_rewrites(3)
    first = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    later = f"/staff/review/{project.slug}/" + next_link(first)
    page = staff_client.get(later).content.decode()
    flag_id = int(re.search(r"/flags/(\d+)/dismiss/", page).group(1))
    response = staff_client.post(f"/staff/review/{project.slug}/flags/{flag_id}/dismiss/",
                                 {"next": later})
    assert response.status_code == 302 and response["Location"] == later
    assert Flag.objects.get(pk=flag_id).status == Flag.Status.DISMISSED


def test_a_bad_page_marker_is_refused_plainly(staff_client):
    project, _ = flagged_rewrites(1)
    for marker in ("x", "1.0", "nan:3", "1.0:y", "inf:1"):
        response = staff_client.get(f"/staff/review/{project.slug}/?after={marker}")
        assert response.status_code == 400
        assert "is not a page of the queue" in response.content.decode()


def test_past_the_last_group_the_totals_stay_true(staff_client):
    project, _ = flagged_rewrites(2)
    page = staff_client.get(f"/staff/review/{project.slug}/?after=-1000:0").content.decode()
    assert "4 open flags in 3 groups" in page and "no group after this page" in page
    assert "No open flags" not in page


@pytest.mark.parametrize("by", ["hit", "worker", "answer"])
def test_the_queue_runs_the_same_queries_for_2_or_40_flagged_assignments(
        by, staff_client, django_assert_num_queries):
    project, items = canard_sample()
    flagged_rewrites(1, (project, items))
    url = f"/staff/review/{project.slug}/?by={by}"
    staff_client.get(url)  # the session and caches settle
    # (7, and one for the workers blocked from the project: the "blocked" badge of
    # _worker_name.html and the block form; by HIT and by answer one more for the review
    # rules of selectors/blocks.py (unconfirmed work) of their assignment actions; the
    # unflagged assignments are one statement, and none is listed here)
    with django_assert_num_queries(8 if by == "worker" else 9) as small:
        staff_client.get(url)
    flagged_rewrites(40, (project, items), first=1)
    with django_assert_num_queries(len(small.captured_queries)):
        page = staff_client.get(url).content.decode()
    assert len(GROUP.findall(page)) == review_queue.PAGE_GROUPS


def test_the_unflagged_work_is_counted_to_a_bound_and_says_so(staff_client, monkeypatch):
    from frontend import review
    from tests.review.test_review_pages import submitted_unflagged

    project, _ = submitted_unflagged(3)
    monkeypatch.setattr(review, "UNFLAGGED_COUNTED", 2)
    page = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert "Approve all the submitted assignments without an open flag (more than 2)" in page
    assert "Approve the 3" not in page
    monkeypatch.setattr(review, "UNFLAGGED_COUNTED", 3)
    page = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert "Approve the 3 submitted assignments without an open flag" in page


def test_the_unflagged_work_is_read_by_one_statement(staff_client):
    """The count of the unflagged submitted assignments and the ones listed come from one
    statement (their ids up to the count's bound): the open-flag anti-join runs once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.review.test_review_pages import submitted_unflagged

    project, _ = submitted_unflagged(3)
    with CaptureQueriesContext(connection) as queries:
        page = staff_client.get(f"/staff/review/{project.slug}/").content.decode()
    assert "Approve the 3 submitted assignments without an open flag" in page
    anti_joins = [query["sql"] for query in queries.captured_queries
                  if 'NOT ("annotation_assignment"."id" IN (SELECT' in query["sql"]]
    assert len(anti_joins) == 1, anti_joins
    assert not [query for query in queries.captured_queries
                if query["sql"].startswith("SELECT COUNT(*)")]


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="the ordered-array statement is PostgreSQL's; SQLite runs the other")
@pytest.mark.parametrize("by", ["hit", "worker", "answer"])
def test_both_page_statements_give_the_same_pages(by, monkeypatch):
    """PostgreSQL takes the shown flags from the grouping pass (``ARRAY_AGG``); the portable
    statement ranks them in a second pass. Every page, every group's totals and shown flags
    (several per group, ties on the score broken by id) agree."""
    project, rows = flagged_rewrites(4)
    for _, annotation, _, _ in rows[:3]:  # more flags per group than a group shows, tied scores
        for reason in ("copy_of_input", "too_fast"):
            Flag.objects.create(project=project, annotation=annotation,
                                worker=annotation.worker, reason=reason, score=0.5,
                                fingerprint=f"{reason}:annotation:{annotation.pk}")

    def pages(vendor: str) -> list:
        monkeypatch.setattr(connection, "vendor", vendor)
        walked, after = [], None
        while True:
            page = review_queue.open_flag_page(project=project, by=by, after=after, size=2,
                                               per_group=2)
            walked.append((page.group_total, page.flag_total, [
                (g.key, g.top_score, g.flag_total, g.answer_total, [f.pk for f in g.flags])
                for g in page.groups]))
            if page.next_cursor is None:
                return walked
            after = page.next_cursor

    portable, ordered_arrays = pages("sqlite"), pages("postgresql")
    assert ordered_arrays == portable
    assert len(portable) > 1 and any(len(g[4]) == 2 for page in portable for g in page[2])
