"""The data browser (issue 24): every answer of a project, keyset pages, filters, diffs."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation, Flag, Split
from annotation.selectors import answer_browser
from tests.factories import SCRIPT, annotate, canard_sample, local_worker, workers

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr data-answer="(\d+)">')
NEXT = re.compile(r'<a href="([^"]+)" data-testid="browse-next">')


def url(project, query: str = "") -> str:
    return f"/staff/projects/{project.slug}/answers/{query}"


def shown(client, address: str) -> tuple[list[int], str | None, str]:
    response = client.get(address)
    assert response.status_code == 200, response.content[:300]
    page = response.content.decode()
    found = NEXT.search(page)
    return ([int(pk) for pk in ROW.findall(page)],
            html.unescape(found.group(1)) if found else None, page)


@pytest.fixture
def rewrites():
    """A rewrite project: 3 items (dev), 4 MTurk workers answering each, a local annotator
    answering item 2, one answer superseded, one rejected, one imported, one flagged."""
    project, items = canard_sample()
    crowd = workers(4)
    answers = [annotate(item, worker, source="mturk", text=f"{item.turn.question} {k}")
               for item in items for k, worker in enumerate(crowd)]
    local = local_worker("ann-local", user=None)
    answers.append(annotate(items[1], local, source="local",
                            text=f"When did Zappa's band disband? {SCRIPT}"))
    answers[0].state = Annotation.State.SUPERSEDED
    answers[0].save(update_fields=["state"])
    answers[1].review_status = Annotation.Review.REJECTED
    answers[1].state = Annotation.State.REJECTED
    answers[1].save(update_fields=["state", "review_status"])
    answers.append(annotate(items[2], local_worker("released"), source="import",
                            text="Why did they disband?"))
    Flag.objects.create(project=project, annotation=answers[5], reason="copy_of_input",
                        fingerprint=f"copy:{answers[5].pk}")
    return project, items, answers


def test_pages_walk_every_answer_once_newest_first_without_offset(staff_client, rewrites,
                                                                   monkeypatch):
    project, _, answers = rewrites
    monkeypatch.setattr(answer_browser.answer_page, "__kwdefaults__", {"size": 4})
    seen, address = [], url(project)
    with CaptureQueriesContext(connection) as captured:
        while address is not None:
            ids, link, _ = shown(staff_client, address)
            seen.append(ids)
            address = url(project, link) if link else None
    first = staff_client.get(url(project)).content.decode()
    assert ("This page shows 4 answers, newest first; more on the next page."
            in first)
    flat = [pk for page in seen for pk in page]
    assert flat == sorted((a.pk for a in answers), reverse=True)
    assert [len(page) for page in seen] == [4, 4, 4, 2]  # 14 answers
    assert not any("OFFSET" in query["sql"].upper() for query in captured.captured_queries)


def test_each_filter_shows_exactly_its_answers(staff_client, rewrites):
    project, items, answers = rewrites
    local = answers[12]
    expected = {
        "?state=superseded": [answers[0]],
        "?state=rejected": [answers[1]],
        "?state=imported": [answers[13]],
        "?state=flagged": [answers[5]],
        "?state=counted": [a for a in answers if a.state == Annotation.State.COUNTED],
        "?state=pending": [a for a in answers[2:13]],
        "?provider=local": [local],
        "?provider=import": [answers[13]],
        f"?worker={local.worker.anonymous_id}": [local],
        f"?worker={answers[2].worker.anonymous_id}&state=counted": [answers[2], answers[6],
                                                                   answers[10]],
        "?q=disband": [a for a in answers if a.item_id in (items[0].pk, items[1].pk)],
        "?q=WHY%3F&provider=mturk": answers[8:12],
        "?split=test": [],
        f"?split={Split.DEV}&q=group": answers[0:4],
    }
    for query, wanted in expected.items():
        ids, _, _ = shown(staff_client, url(project, query))
        assert ids == sorted((a.pk for a in wanted), reverse=True), query


def test_a_local_annotator_is_found_by_username(staff_client, rewrites, django_user_model):
    project, items, _ = rewrites
    user = django_user_model.objects.create_user(username="maria", password="x")
    worker = local_worker("maria-local", user=user)
    answer = annotate(items[0], worker, source="local", text="What band disbanded?")
    ids, _, page = shown(staff_client, url(project, "?worker=maria"))
    assert ids == [answer.pk]
    assert "(maria)" in page  # the username beside the pseudonym
    ids, _, page = shown(staff_client, url(project, "?worker=nobody-of-that-name"))
    assert ids == [] and 'data-testid="browse-no-worker"' in page
    assert "No answer passes these filters." in page


def test_rows_show_the_item_the_answer_and_an_escaped_diff(staff_client, rewrites):
    project, _items, answers = rewrites
    local = answers[12]
    _, _, page = shown(staff_client, url(project, f"?worker={local.worker.anonymous_id}"))
    assert "When did they disband?" in page  # the item's text
    diff = re.search(r'<div class="diff" data-testid="answer-diff">(.*?)</div>', page).group(1)
    assert "<ins>" in diff and "Zappa&#x27;s" in diff
    assert SCRIPT not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in diff
    assert "This page shows 1 answer, newest first; no more pass these filters." in page


def test_a_flagged_answer_shows_its_open_flag(staff_client, rewrites):
    project, _, _answers = rewrites
    _, _, page = shown(staff_client, url(project, "?state=flagged"))
    assert 'data-testid="answer-flags">open flag: copy_of_input' in page


def test_the_page_runs_the_same_statements_for_1_or_14_answers(staff_client, rewrites):
    project, _, answers = rewrites
    staff_client.get(url(project))  # the session and the user, loaded once per request
    with CaptureQueriesContext(connection) as few:
        ids, _, _ = shown(staff_client, url(project, "?state=superseded"))
    assert len(ids) == 1
    with CaptureQueriesContext(connection) as many:
        ids, _, _ = shown(staff_client, url(project))
    assert len(ids) == len(answers)
    assert len(many) == len(few)
    # session, user, project, page ids, page rows, the dialogues' turns (context), open
    # flags, blocked workers, the open flags' reasons (the flag filter's choices)
    assert len(many) == 9, [q["sql"][:80] for q in many.captured_queries]


@pytest.mark.parametrize("query, field", [
    ("?split=validation", "split"), ("?state=approved", "state"), ("?provider=amt", "provider"),
    ("?after=12abc", "after"), ("?q=" + "x" * 201, "q"), ("?answer=" + "x" * 201, "answer"),
    ("?flag=Too-Fast", "flag"), ("?flag=" + "a" * 65, "flag"),
])
def test_a_bad_filter_is_refused_naming_the_field(staff_client, rewrites, query, field):
    project, _, _ = rewrites
    response = staff_client.get(url(project, query))
    assert response.status_code == 400
    assert f"Bad filter: {field}:" in response.content.decode()


def test_a_text_found_in_many_items_walks_the_answers_with_the_same_result(staff_client,
                                                                         rewrites,
                                                                         monkeypatch):
    project, _, _ = rewrites
    listed = {query: shown(staff_client, url(project, query))[0]
              for query in ("?q=did", "?q=disband&split=dev", "?q=why&state=counted")}
    monkeypatch.setattr(answer_browser, "SEARCH_ITEMS_LISTED", 0)  # every found text "common"
    for query, ids in listed.items():
        assert ids, query
        assert shown(staff_client, url(project, query))[0] == ids, query


def test_the_flag_filter_shows_the_answers_with_an_open_flag_of_that_reason(staff_client,
                                                                           rewrites):
    project, _, answers = rewrites
    Flag.objects.create(project=project, annotation=answers[7], reason="too_fast",
                        fingerprint=f"fast:{answers[7].pk}")
    Flag.objects.create(project=project, annotation=answers[9], reason="too_fast",
                        status=Flag.Status.DISMISSED, fingerprint=f"fast:{answers[9].pk}")
    ids, _, page = shown(staff_client, url(project, "?flag=too_fast"))
    assert ids == [answers[7].pk]  # the dismissed one is not open
    assert ids == shown(staff_client, url(project, "?flag=too_fast&state=flagged"))[0]
    assert shown(staff_client, url(project, "?flag=copy_of_input"))[0] == [answers[5].pk]
    assert shown(staff_client, url(project, "?flag=under_time_floor"))[0] == []
    choices = re.search(r'<select name="flag" data-testid="browse-flag">(.*?)</select>',
                        page).group(1)
    assert re.findall(r'<option value="([a-z_]+)"', choices) == ["copy_of_input", "too_fast"]
    # The download takes the same filter.
    download = staff_client.get(f"/staff/projects/{project.slug}/answers/download/"
                                "?flag=too_fast&format=jsonl")
    lines = b"".join(download.streaming_content).decode().splitlines()
    assert [json.loads(line)["answer"] for line in lines] == [answers[7].pk]


def test_the_answer_text_search_looks_in_the_answers_own_text(staff_client, rewrites):
    project, _items, answers = rewrites
    local = answers[12]
    ids, _, page = shown(staff_client, url(project, "?answer=zappa%27s+BAND"))
    assert ids == [local.pk]  # case-insensitive, in the answer, not the item
    assert 'name="answer" value="zappa&#x27;s BAND"' in page
    # The answers that say "disband", whatever their item says: the imported "Why did they
    # disband?" answers an item whose own text does not (the item search misses it).
    said = [a.pk for a in answers if "disband" in (a.text or "").lower()]
    assert shown(staff_client, url(project, "?answer=disband"))[0] == sorted(said, reverse=True)
    assert answers[13].pk in said
    assert answers[13].pk not in shown(staff_client, url(project, "?q=disband"))[0]


def test_a_rating_project_offers_no_answer_text_search(staff_client):
    from tests.factories import claire_sample

    project, items = claire_sample(slug="claire-browse")
    annotate(items[0], workers(1)[0], rating=4)
    ids, _, page = shown(staff_client, url(project))
    assert len(ids) == 1 and 'name="answer"' not in page
    assert shown(staff_client, url(project, "?answer=4"))[0] == []
