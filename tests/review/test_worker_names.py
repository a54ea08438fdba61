"""Issue 24, point 6: one name everywhere staff look. Every worker ``qc_report`` names (text and
``--json``) and the dashboard's worker table carry the pseudonym (``Worker.anonymous_id``), a
local annotator's username beside it; the dashboard shows the paper's figure and the open flags
by reason."""

from __future__ import annotations

import html
import json
import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Flag, Worker
from annotation.services.qc import project_qc_run
from tests.factories import annotate, decontext_sample, workers
from tests.review.dashboard_world import mixed_crowd_project

pytestmark = pytest.mark.django_db

#: A worker in the text report: the pseudonym, a username in brackets beside it.
NAMED = r"w[0-9a-f]{12}(?: \([^)]+\))?"


def _ann_with_an_account(crowd) -> str:
    """Gives the local annotator ann a login (as an invited annotator has): her username."""
    user = get_user_model().objects.create_user(username="ann.lee", password="x")
    Worker.objects.filter(pk=crowd["ann"].pk).update(user=user)
    return user.get_username()


def _report(slug: str, *options: str) -> str:
    out = StringIO()
    call_command("qc_report", slug, *options, stdout=out)
    return out.getvalue()


def _worker_lists(report: dict) -> dict[str, list[dict]]:
    return {
        "agreement.per_worker": report["agreement"]["per_worker"],
        "worker_quality.workers": report["worker_quality"]["workers"],
        "dashboard.workers": report["dashboard"]["workers"],
    }


def test_every_worker_the_json_report_names_carries_pseudonym_and_username():
    project, crowd = mixed_crowd_project()
    username = _ann_with_an_account(crowd)
    report = json.loads(_report(project.slug, "--json"))
    expected = {worker.pk: worker.anonymous_id for worker in crowd.values()}
    for name, rows in _worker_lists(report).items():
        assert rows, name
        for row in rows:
            assert row["pseudonym"] == expected[row["worker"]], name
            assert row["username"] == (username if row["worker"] == crowd["ann"].pk else None), name
        # Local, MTurk and Prolific workers; the dashboard's table has the import worker too
        # (agreement and the worker models take the crowd's answers only).
        crowd_only = name != "dashboard.workers"
        assert {row["worker"] for row in rows} == set(expected) - (
            {crowd["importer"].pk} if crowd_only else set()
        ), name


def test_the_text_report_prints_pseudonyms_not_database_ids():
    project, crowd = mixed_crowd_project()
    username = _ann_with_an_account(crowd)
    text = _report(project.slug)
    line = next(
        line
        for line in text.splitlines()
        if line.startswith("  estimated reliability (least reliable first): ")
    )
    entries = line.split(": ", 1)[1].split(", ")
    assert len(entries) == 5  # the crowd's workers (not the import worker)
    for entry in entries:
        assert re.fullmatch(NAMED + r" \d\.\d\d", entry), entry
    assert f"{crowd['ann'].anonymous_id} ({username}) " in line
    assert f"{crowd['clicker'].anonymous_id} " in line
    # The per-worker agreement lines name the same way.
    rows = text.split("mean |dev|\n", 1)[1].split("\n  dev ", 1)[0].splitlines()
    assert rows and all(
        re.fullmatch(r"\s+" + NAMED + r"\s+\d+\s+\S+\s+\S+", row) for row in rows
    ), rows
    assert any(f"{crowd['ann'].anonymous_id} ({username})" in row for row in rows)


def _name_reads(project) -> int:
    """Statements of one QC run that read workers' names (their external ids)."""
    with CaptureQueriesContext(connection) as captured:
        project_qc_run(project=project)
    return sum(
        1
        for query in captured.captured_queries
        if '"annotation_worker"."external_id"' in query["sql"]
    )


def test_the_names_are_read_once_per_list_whatever_the_number_of_workers():
    project, _ = mixed_crowd_project()
    few = _name_reads(project)
    for worker in workers(30):
        for item in project.items.all():
            annotate(item, worker, rating=3, duration_ms=5000)
    # One statement per list: per-worker agreement, worker quality, the dashboard.
    assert _name_reads(project) == few == 3


def _dashboard(staff_client, project) -> str:
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    return staff_client.get(f"/staff/review/{project.slug}/dashboard/").content.decode()


def _worker_cell(page: str, worker: Worker) -> str:
    table = page.split('data-testid="workers"', 1)[1].split("</table>", 1)[0]
    row = table.split(f'data-worker="{worker.pk}"', 1)[1].split("</tr>", 1)[0]
    return row.split("<td>", 2)[1].split("</td>", 1)[0]


def test_the_dashboard_names_workers_with_username_and_blocked_label(staff_client):
    project, crowd = mixed_crowd_project()
    username = _ann_with_an_account(crowd)
    Worker.objects.filter(pk=crowd["participant"].pk).update(is_blocked=True)  # everywhere
    page = _dashboard(staff_client, project)
    ann = _worker_cell(page, crowd["ann"])
    assert f'>{crowd["ann"].anonymous_id}</a> <span class="muted">({username})</span>' in ann
    assert f'href="/staff/workers/{crowd["ann"].pk}/"' in ann
    assert "worker-blocked" not in ann
    for blocked in ("clicker", "participant"):  # from this project; everywhere
        cell = _worker_cell(page, crowd[blocked])
        assert crowd[blocked].anonymous_id in cell
        assert (
            '<strong class="badge blocked" data-testid="worker-blocked">blocked</strong>' in cell
        ), blocked
        assert f"?by=worker&amp;worker={crowd[blocked].pk}" in cell  # still to the queue
    for other in ("bob", "turk", "importer"):  # no account, not blocked
        cell = _worker_cell(page, crowd[other])
        assert crowd[other].anonymous_id in cell
        assert "worker-blocked" not in cell and '<span class="muted">(' not in cell, other


def _table_rows(page: str, testid: str) -> list[list[str]]:
    table = page.split(f'data-testid="{testid}"', 1)[1].split("</table>", 1)[0]
    return [
        [
            html.unescape(re.sub(r"<[^>]+>", " ", cell)).split()
            for cell in re.findall(r"<td>(.*?)</td>", row, re.S)
        ]
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        if "<td>" in row
    ]


def test_the_dashboard_shows_open_flags_by_reason_live(staff_client):
    project, _ = mixed_crowd_project()
    page = _dashboard(staff_client, project)
    open_flags = Flag.objects.filter(project=project, status=Flag.Status.OPEN)
    expected = {}
    for flag in open_flags:
        expected[flag.reason] = expected.get(flag.reason, 0) + 1
    assert "too_fast" in expected and len(expected) >= 2
    shown = {reason[0]: int(n[0]) for reason, n in _table_rows(page, "flag-reasons")}
    assert shown == expected
    # Read live, not from the QC job: a flag dismissed since leaves the table at once.
    open_flags.filter(reason="too_fast").update(status=Flag.Status.DISMISSED)
    page = staff_client.get(f"/staff/review/{project.slug}/dashboard/").content.decode()
    shown = {reason[0]: int(n[0]) for reason, n in _table_rows(page, "flag-reasons")}
    assert "too_fast" not in shown and shown == {
        reason: n for reason, n in expected.items() if reason != "too_fast"
    }
    Flag.objects.filter(project=project).update(status=Flag.Status.DISMISSED)
    page = staff_client.get(f"/staff/review/{project.slug}/dashboard/").content.decode()
    assert 'data-testid="flag-reasons"' not in page


def _decontext_project():
    """Six sentences, three workers choosing categories (they disagree on some)."""
    project = None
    choices = [
        ("UNNECESSARY", "UNNECESSARY", "IMPOSSIBLE"),
        ("IMPOSSIBLE", "IMPOSSIBLE", "IMPOSSIBLE"),
        ("UNNECESSARY", "UNNECESSARY", "UNNECESSARY"),
        ("UNNECESSARY", "IMPOSSIBLE", "UNNECESSARY"),
        ("IMPOSSIBLE", "IMPOSSIBLE", "UNNECESSARY"),
        ("UNNECESSARY", "UNNECESSARY", "UNNECESSARY"),
    ]
    crowd = workers(3)
    for k, categories in enumerate(choices):
        sample_project, item = decontext_sample(slug=f"decontext-paper-{k}", split="dev")
        project = project or sample_project
        item.project = project
        item.external_id = f"sentence-{k}"
        item.save(update_fields=["project", "external_id"])
        for worker, category in zip(crowd, categories, strict=True):
            annotate(item, worker, category=category)
    return project


def test_the_dashboard_shows_the_papers_figure_beside_the_projects(staff_client):
    project = _decontext_project()
    page = _dashboard(staff_client, project)
    rows = {
        (cells[0], " ".join(cells[1])): cells
        for cells in (
            [" ".join(row[0]), row[1], row[2], row[4]] for row in _table_rows(page, "agreement")
        )
    }
    kappa = rows[("all", "Fleiss' κ")]
    assert kappa[2] != ["n/a"]
    assert " ".join(kappa[3]) == "0.3 Fleiss' κ of the crowd (0.51 between experts)"
    binary = rows[("all", "agreement, feasible or not")]
    assert " ".join(binary[3]) == "0.85 binary agreement, feasible or not"
    # A statistic the paper does not report, and a split's interval: no paper figure.
    assert rows[("all", "observed agreement")][3] == []
    assert rows[("dev", "Fleiss' κ")][3] == []


def test_no_paper_figure_for_a_kind_without_one(staff_client):
    project, _ = mixed_crowd_project()  # CLAIRE plausibility: the paper gives no agreement
    page = _dashboard(staff_client, project)
    rows = _table_rows(page, "agreement")
    assert rows and all(row[4] == [] for row in rows)
