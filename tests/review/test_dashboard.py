"""Issue 24, points 1 and 6: the project dashboard shows the QC report's own figures (one
definition of each count, in the provider's currency), bounded in queries at any size."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import override_settings

from annotation.models import Job
from annotation.selectors.counts import answer_counts, stored_answer_count
from frontend.staff.dashboard import STATISTIC_NAMES
from tests.review.dashboard_world import mixed_crowd_project

pytestmark = pytest.mark.django_db


def qc_report_json(slug: str) -> dict:
    out = StringIO()
    call_command("qc_report", slug, "--json", stdout=out)
    return json.loads(out.getvalue())


def cell(page: str, testid: str, row_attr: str) -> list[str]:
    """The cells of the row ``row_attr`` of the table ``data-testid=testid``."""
    table = page.split(f'data-testid="{testid}"', 1)[1].split("</table>", 1)[0]
    row = table.split(row_attr, 1)[1].split("</tr>", 1)[0]
    return [re.sub(r"<[^>]+>", "", text).strip() for text in re.findall(r"<td>(.*?)</td>", row,
                                                                        re.S)]


def test_each_count_says_what_it_counts_and_the_home_page_agrees():
    project, _ = mixed_crowd_project()
    counts = answer_counts(project=project)
    # 6 workers x 5 fillers, bob's first version superseded and one answer of his rejected.
    assert counts.to_dict() == {"counted": 24, "imported": 5, "rejected": 1, "superseded": 5,
                                "provisional": 0, "reported": 0, "in_qc": 30, "stored": 35}
    assert stored_answer_count(project=project) == counts.stored  # the triggers' count


def test_the_home_page_and_api_use_the_same_counts(staff_client):
    project, _ = mixed_crowd_project()
    home = staff_client.get("/").content.decode()
    assert "Answers stored" in home
    assert '<td data-label="Answers stored">35</td>' in home
    api = staff_client.get(f"/api/projects/{project.slug}/counts/").json()
    assert api["counts"]["stored"] == 35 and api["counts"]["counted"] == 24
    assert api["labels"]["counted"].startswith("counted: answers filling")


@override_settings(PROLIFIC_CURRENCY="GBP")
def test_dashboard_figures_equal_qc_report_json(staff_client):
    """Local, MTurk and Prolific answers: every figure the dashboard shows is the report's."""
    project, crowd = mixed_crowd_project()
    qc_report_json(project.slug)  # stores the flags, so both runs below see the same ones
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    report = qc_report_json(project.slug)
    # Both runs are QC jobs (qc_report records its own); the page shows the latest.
    assert Job.objects.filter(kind="qc", project=project, state="done").count() == 3
    job = Job.objects.filter(kind="qc", project=project).latest("pk")
    assert job.result == report
    response = staff_client.get(f"/staff/review/{project.slug}/dashboard/?sort=answers")
    page = response.content.decode()
    figures = response.context["figures"]
    assert figures == job.result["dashboard"]
    for key in ("answer_counts", "progress_by_split", "answers_by_day", "ratings_by_value",
                "time_per_answer", "cost", "workers"):
        assert figures[key] == report["dashboard"][key], key
    assert report["annotations"] == report["dashboard"]["answer_counts"]["in_qc"] == 30
    # The page prints them, labelled.
    for name, n in report["dashboard"]["answer_counts"].items():
        assert cell(page, "answer-counts", f'data-count="{name}"')[1] == str(n)
    assert f"QC job {job.pk}</a>, computed" in page
    # Agreement per split with its bootstrap interval, as the report has it.
    interval = report["agreement"]["intervals_by_split"]["dev"]["fleiss_kappa"]
    shown = [row for row in response.context["agreement_rows"]
             if row["split"] == "dev" and row["name"] == "Fleiss' κ"]
    assert shown[0]["low"] == interval["low"] and shown[0]["high"] == interval["high"]
    assert f"[{interval['low']:.3f}, {interval['high']:.3f}]" in page
    # Money in each provider's currency, fees included: MTurk 150 approved + 30 fee (20%) and
    # 50 bonus paid + 10 fee; 150 undecided + 30 fee; Prolific 200 undecided + a 30 bonus not
    # paid yet + its 33.3% service fee on the 230 (77).
    assert cell(page, "cost", 'data-provider="mturk"') == ["mturk", "USD", "$2.40", "$1.80",
                                                           "$0.40 / $0.30"]
    assert cell(page, "cost", 'data-provider="prolific"') == ["prolific", "GBP", "£0.00",
                                                              "£3.07", "£0.00 / £0.77"]
    assert figures["budget"] is None and 'data-testid="budget"' not in page
    # The worker table: the report's rows, the blocked worker labelled, links to the queue.
    rows = {row["worker"]: row for row in report["dashboard"]["workers"]}
    turk = rows[crowd["turk"].pk]
    assert turk["answers"] == 5 and turk["median_seconds"] == 30.0
    assert turk["earned_cents"] == 200 and turk["hourly_cents"] == 4800.0  # 200 in 150 s
    assert turk["approval_rate"] == 1.0 and rows[crowd["bob"].pk]["approval_rate"] == 0.0
    clicker = crowd["clicker"]
    assert rows[clicker.pk]["flags"] == rows[clicker.pk]["open_flags"] >= 1
    clicker_row = cell(page, "workers", f'data-worker="{clicker.pk}"')
    assert clicker_row[0].startswith(clicker.anonymous_id)
    assert clicker_row[-1] == "blocked from this project"
    assert (f'/staff/review/{project.slug}/?by=worker&amp;worker={clicker.pk}"' in page)
    assert cell(page, "workers", f'data-worker="{crowd["turk"].pk}"')[5] == "$48.00"


def test_worker_table_sorts_each_way_and_missing_values_last(staff_client):
    project, crowd = mixed_crowd_project()
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    url = f"/staff/review/{project.slug}/dashboard/"
    ascending = staff_client.get(url + "?sort=median_seconds").context["workers"]["rows"]
    descending = staff_client.get(url + "?sort=median_seconds&order=desc"
                                  ).context["workers"]["rows"]
    assert [row["median_seconds"] for row in ascending] == [1.0, 2.0, 18.0, 22.0, 30.0, 40.0]
    assert [row["median_seconds"] for row in descending] == [40.0, 30.0, 22.0, 18.0, 2.0, 1.0]
    by_pay = staff_client.get(url + "?sort=hourly_cents&order=desc").context["workers"]["rows"]
    assert by_pay[0]["worker"] == crowd["turk"].pk and by_pay[-1]["hourly_cents"] is None
    blocked_first = staff_client.get(url + "?sort=status&order=desc").context["workers"]["rows"]
    assert blocked_first[0]["worker"] == crowd["clicker"].pk


def test_the_queue_filtered_to_one_worker(staff_client):
    project, crowd = mixed_crowd_project()
    clicker = crowd["clicker"]
    page = staff_client.get(f"/staff/review/{project.slug}/?by=worker&worker={clicker.pk}")
    text = page.content.decode()
    assert f"Only the flags of worker {clicker.anonymous_id} (blocked)" not in text  # project block
    assert f"Only the flags of worker {clicker.anonymous_id}" in text
    assert page.context["page"].flag_total == 1
    other = staff_client.get(f"/staff/review/{project.slug}/?by=worker"
                             f"&worker={crowd['ann'].pk}")
    assert other.context["page"].flag_total == 0
    assert staff_client.get(f"/staff/review/{project.slug}/?worker=x").status_code == 400


def test_dashboard_queries_stay_the_same_with_more_workers(staff_client,
                                                          django_assert_max_num_queries):
    """Bounded: the figures come from the stored report; live reads are a fixed few."""
    project, _ = mixed_crowd_project()
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    url = f"/staff/review/{project.slug}/dashboard/"
    with django_assert_max_num_queries(12) as captured:
        assert staff_client.get(url).status_code == 200
    statements = len(captured.captured_queries)
    from tests.factories import annotate, workers
    extra = workers(30)
    for worker in extra:
        for item in project.items.all():
            annotate(item, worker, rating=3, duration_ms=5000)
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    with django_assert_max_num_queries(statements):
        staff_client.get(url)


def test_without_a_qc_run_the_dashboard_says_so_and_reads_no_answers(
        staff_client, django_assert_max_num_queries):
    project, _ = mixed_crowd_project()
    with django_assert_max_num_queries(9):
        page = staff_client.get(f"/staff/review/{project.slug}/dashboard/").content.decode()
    assert "No QC run with dashboard figures has finished" in page
    assert "Answers stored now: 35" in page


def _text_answers(project, items_by_split: dict, texts: list[tuple[str, str]], **fields):
    """Two workers answer every item with the given pair of texts, in order."""
    from tests.factories import annotate, workers

    first, second = workers(2)
    k = 0
    for items in items_by_split.values():
        for item in items:
            one, two = texts[k % len(texts)]
            annotate(item, first, text=one, **fields)
            annotate(item, second, text=two, **fields)
            k += 1


REWRITES = [("When did the Mothers of Invention disband?", "When did the Mothers disband?"),
            ("Why did Zappa disband the band?", "Why did Frank Zappa disband the Mothers?"),
            ("What group disbanded in 1969?", "Which group disbanded in 1969?")]


def _text_rows_shown(staff_client, project, report: dict, statistics: tuple[str, ...]):
    response = staff_client.get(f"/staff/review/{project.slug}/dashboard/")
    page = response.content.decode()
    for split in ("dev", "test"):
        intervals = report["agreement"]["intervals_by_split"][split]
        for key in statistics:
            interval = intervals[key]
            assert interval["n_resamples"] == 1000 and interval["n_items"] == 3
            assert interval["low"] <= interval["estimate"] <= interval["high"]
            shown = [row for row in response.context["agreement_rows"]
                     if row["split"] == split and row["name"] == STATISTIC_NAMES[key]]
            assert [(row["estimate"], row["low"], row["high"]) for row in shown] == [
                (interval["estimate"], interval["low"], interval["high"])]
            assert f"[{interval['low']:.3f}, {interval['high']:.3f}]" in page


def test_text_agreement_intervals_per_split_equal_qc_report_json(staff_client):
    """A rewrite project: BLEU, GLEU and chrF between two annotators with a bootstrap interval
    per split, the same on the dashboard as in ``qc_report --json``."""
    from tests.factories import canard_sample

    project, dev = canard_sample(slug="canard-intervals", split="dev")
    test_items = list(canard_sample(slug="canard-other", split="test")[1])
    for item in test_items:  # the second dialogue joins the first project, split test
        item.project = project
        item.external_id += "-t"
        item.save(update_fields=["project", "external_id"])
    _text_answers(project, {"dev": dev, "test": test_items}, REWRITES)
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    page_job = Job.objects.get(kind="qc", project=project)
    report = qc_report_json(project.slug)
    assert page_job.result["agreement"] == report["agreement"]
    assert report["agreement"]["n_pairs"] == 6
    _text_rows_shown(staff_client, project, report, ("bleu", "gleu", "chrf"))


def test_decontext_edit_agreement_intervals_equal_qc_report_json(staff_client):
    """Decontext: the categories' agreement and, beside it, the text agreement of the edited
    sentences (category DONE) with its intervals per split."""
    from tests.factories import decontext_sample

    items = {}
    project = None
    for k, split in enumerate(("dev", "dev", "dev", "test", "test", "test")):
        sample_project, item = decontext_sample(slug=f"decontext-intervals-{k}", split=split)
        if project is None:
            project = sample_project
        item.project = project
        item.external_id = f"sentence-{k}"
        item.save(update_fields=["project", "external_id"])
        items.setdefault(split, []).append(item)
    _text_answers(project, items, REWRITES, category="DONE")
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    report = qc_report_json(project.slug)
    assert report["agreement"]["edit_n_pairs"] == 6
    assert "fleiss_kappa" in report["agreement"]["intervals_by_split"]["dev"]
    _text_rows_shown(staff_client, project, report, ("edit_bleu", "edit_gleu", "edit_chrf"))
