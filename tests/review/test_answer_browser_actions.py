"""The data browser's sorts, bulk actions and download (issue 24): keyset sorts by a few
indexed orders, approve / reject / dismiss on the ticked answers through
``services.decisions.answers_decide`` (blocked and unconfirmed work held back, counted), and a
streamed CSV / JSONL of the filtered answers, safe against spreadsheet formulas."""

from __future__ import annotations

import csv
import html
import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation, Assignment, Flag
from annotation.selectors import answer_browser
from tests.factories import annotate, canard_sample, submitted_hit_answers, workers
from tests.review.test_answer_browser import rewrites, shown, url  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("sort", "key"), [
    ("oldest", lambda a: a.pk), ("worker", lambda a: (a.worker_id, a.pk)),
    ("item", lambda a: (a.item_id, a.pk))])
def test_each_sort_walks_every_answer_once_in_its_order_without_offset(
        staff_client, rewrites, monkeypatch, sort, key):  # noqa: F811
    project, _, answers = rewrites
    monkeypatch.setattr(answer_browser.answer_page, "__kwdefaults__", {"size": 4})
    seen, address = [], url(project, f"?sort={sort}")
    with CaptureQueriesContext(connection) as captured:
        while address is not None:
            ids, link, _ = shown(staff_client, address)
            seen.extend(ids)
            address = url(project, link) if link else None
    assert seen == [answer.pk for answer in sorted(answers, key=key)]
    assert not any("OFFSET" in query["sql"].upper() for query in captured.captured_queries)
    assert f"answers, {answer_browser.SORTS[sort][0]}" in html.unescape(staff_client.get(
        url(project, f"?sort={sort}")).content.decode())


def test_a_bad_sort_or_cursor_is_refused_naming_the_field(staff_client, rewrites):  # noqa: F811
    project, _, _ = rewrites
    assert b"sort: one of newest, oldest, worker, item" in staff_client.get(
        url(project, "?sort=duration")).content
    refused = staff_client.get(url(project, "?sort=worker&after=12"))
    assert refused.status_code == 400 and b"after:" in refused.content


@pytest.fixture
def hits_world():
    """Three MTurk workers' assignments on one HIT of a rewrite project (one of them blocked
    from the project, one not confirmed by collection yet), and a local annotator's answer."""
    project, answers = submitted_hit_answers()
    Flag.objects.create(project=project, annotation=answers["good"], reason="too_fast",
                        fingerprint="f1")
    Flag.objects.create(project=project, annotation=answers["local"], reason="copy_of_input",
                        fingerprint="f2")
    return project, answers


def decide(client, project, answers, action, **extra):
    return client.post(f"/staff/projects/{project.slug}/answers/decide/", {
        "answers": [answer.pk for answer in answers], "action": action,
        "next": f"/staff/projects/{project.slug}/answers/", **extra}, follow=True)


def test_bulk_approve_holds_back_blocked_and_unconfirmed_work_and_says_so(staff_client,
                                                                          hits_world):
    project, answers = hits_world
    response = decide(staff_client, project, answers.values(), "approve")
    said = [str(m) for m in response.context["messages"]]
    assert said == ["Approved 1 whole HIT (holding 1 answer of those chosen; a HIT is decided "
                    "whole) and 1 answer outside a HIT. Held back: 1 answer of a worker "
                    "blocked for this project (decide each on its own); 1 answer not "
                    "confirmed by the provider yet (collect the batch first)."]
    status = dict(Assignment.objects.values_list("provider_assignment_id", "status"))
    assert status == {"ASG-good": "approved", "ASG-blocked": "submitted",
                      "ASG-waiting": "submitted"}
    assert Annotation.objects.get(pk=answers["local"].pk).review_status == "approved"
    # The same again: nothing left to approve, and the page says why.
    again = decide(staff_client, project, answers.values(), "approve")
    assert [str(m) for m in again.context["messages"]] == [
        "nothing was decided. Held back: 1 answer of a worker blocked for this project "
        "(decide each on its own); 1 answer not confirmed by the provider yet (collect the "
        "batch first). Not decided: 2 answers (superseded or imported, already decided so, "
        "or never submitted)."]


def test_bulk_reject_needs_one_message_and_rejects_the_blocked_workers_work(staff_client,
                                                                            hits_world):
    project, answers = hits_world
    chosen = [answers["good"], answers["blocked"]]
    refused = decide(staff_client, project, chosen, "reject", message="  ")
    assert "a rejection needs a message" in str(next(iter(refused.context["messages"])))
    assert not Assignment.objects.filter(status="rejected").exists()
    decide(staff_client, project, chosen, "reject", message="Not a rewrite.")
    rejected = Assignment.objects.filter(status="rejected")
    assert sorted(rejected.values_list("review_message", flat=True)) == ["Not a rewrite."] * 2


def test_bulk_dismiss_closes_the_chosen_answers_open_flags(staff_client, hits_world):
    project, answers = hits_world
    response = decide(staff_client, project, [answers["good"], answers["local"]], "dismiss")
    assert [str(m) for m in response.context["messages"]] == [
        "Dismissed 2 open flags on 2 answers."]
    assert not Flag.objects.filter(status="open").exists()


def test_an_answer_of_another_project_changes_nothing(staff_client, hits_world):
    project, answers = hits_world
    _, other_items = canard_sample(slug="other-project")
    stranger = annotate(other_items[0], workers(1)[0], source="local", text="x")
    response = decide(staff_client, project, [answers["local"], stranger], "approve")
    assert "in project" in str(next(iter(response.context["messages"])))
    assert not Annotation.objects.filter(review_status="approved").exists()


def test_annotators_may_neither_decide_nor_download(annotator_client, hits_world):
    project, answers = hits_world
    assert annotator_client.post(f"/staff/projects/{project.slug}/answers/decide/", {
        "answers": [answers["local"].pk], "action": "approve"}).status_code == 403
    assert annotator_client.get(
        f"/staff/projects/{project.slug}/answers/download/").status_code == 403
    assert not Annotation.objects.filter(review_status="approved").exists()


def download(client, project, query: str) -> str:
    response = client.get(f"/staff/projects/{project.slug}/answers/download/{query}")
    assert response.status_code == 200 and response.streaming
    return b"".join(response.streaming_content).decode()


def test_the_download_is_the_filtered_selection_in_its_sort_and_formula_safe(
        staff_client, rewrites, monkeypatch):  # noqa: F811
    project, _, answers = rewrites
    Annotation.objects.filter(pk=answers[2].pk).update(text="=HYPERLINK(\"http://x\")")
    monkeypatch.setattr(answer_browser, "DOWNLOAD_CHUNK", 3)  # several chunks
    text = download(staff_client, project, "?sort=worker&format=csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [int(row["answer"]) for row in rows] == [
        answer.pk for answer in sorted(answers, key=lambda a: (a.worker_id, a.pk))]
    cell = next(row["text"] for row in rows if int(row["answer"]) == answers[2].pk)
    assert cell == "'=HYPERLINK(\"http://x\")"
    assert {row["worker"] for row in rows} == {a.worker.anonymous_id for a in answers}
    lines = download(staff_client, project, "?state=counted&format=jsonl").splitlines()
    counted = [a.pk for a in answers if Annotation.objects.get(pk=a.pk).state == "counted"]
    assert [json.loads(line)["answer"] for line in lines] == sorted(counted, reverse=True)
    assert json.loads(lines[0])["text"] == Annotation.objects.get(pk=max(counted)).text
    assert staff_client.get(f"/staff/projects/{project.slug}/answers/download/?format=xls"
                            ).status_code == 400
