"""The Hugging Face dataset card's agreement figures: the stored QC report's when it is
current, never recomputed by the export, and a plain sentence instead when there is none."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.exporters import export_project, export_warnings
from annotation.exporters.huggingface import card_figure, hf_license
from annotation.models import Item, Job
from annotation.services import qc as qc_services
from annotation.services.qc import project_qc_run
from tests.factories import annotate, canard_sample, plausibility_project, workers

pytestmark = pytest.mark.django_db


def _rated_project():
    project = plausibility_project(items=4, split="train")
    people = workers(3)
    for item, ratings in zip(Item.objects.filter(project=project).order_by("id"),
                             ((4, 5, 4), (1, 2, 1), (3, 3, 5), (2, 2, 2)), strict=True):
        for worker, rating in zip(people, ratings, strict=True):
            annotate(item, worker, rating=rating, payload={"rating": rating})
    return project


def _card(project, out) -> tuple[str, list[str]]:
    written = export_project(project=project, format_name="hf", out_dir=out)
    return (out / "README.md").read_text(), export_warnings(written)


def _figures(card: str) -> dict[str, str]:
    agreement = card.split("## Agreement", 1)[1].split("## Licence", 1)[0]
    rows = re.findall(r"^\| (\w+) \| (\S+) \| [^|]+ \|$", agreement, flags=re.MULTILINE)
    return {key: value for key, value in rows if key != "figure"}  # not the header


def test_the_cards_figures_are_the_stored_reports_and_the_export_runs_no_qc(
        staff_client, tmp_path, monkeypatch):
    project = _rated_project()
    staff_client.post(f"/staff/review/{project.slug}/qc/")  # "Run QC now": the QC job
    job = Job.objects.get(kind="qc", project=project, state="done")

    def no_qc(**kwargs):
        raise AssertionError("the export ran QC")

    monkeypatch.setattr(qc_services, "project_qc_run", no_qc)
    card, warnings = _card(project, tmp_path)
    monkeypatch.undo()
    shown = _figures(card)
    stored = job.result["agreement"]
    assert {"krippendorff_alpha_ordinal", "fleiss_kappa", "n_ratings"} <= set(shown)
    assert shown == {key: card_figure(stored[key]) for key in shown}
    # ... and they are what QC computes from these answers now.
    fresh = project_qc_run(project=project, store_flags=False)["agreement"]
    assert shown == {key: card_figure(fresh[key]) for key in shown}
    assert f"From the project's QC report (job {job.pk}, " in card
    assert not [warning for warning in warnings if "agreement" in warning]


def test_without_a_qc_report_the_card_says_so_and_shows_no_figure(tmp_path):
    project = _rated_project()
    card, warnings = _card(project, tmp_path)
    assert _figures(card) == {}
    assert "Not included: QC has not run on this project." in card
    assert any("README.md: no agreement figures: QC has not run" in warning
               for warning in warnings)


def test_a_report_older_than_the_answers_is_not_used(staff_client, tmp_path):
    project = _rated_project()
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    job = Job.objects.get(kind="qc", project=project, state="done")
    extra = workers(1)[0]
    annotate(Item.objects.filter(project=project).first(), extra, rating=1,
             payload={"rating": 1})
    card, warnings = _card(project, tmp_path / "new-answer")
    assert _figures(card) == {}
    assert f"the latest QC report (job {job.pk}, " in card
    assert "was computed before the answers changed" in card
    assert any("was computed before the answers changed" in warning for warning in warnings)
    # QC again: current again.
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    card, _ = _card(project, tmp_path / "after-qc")
    assert _figures(card)["n_ratings"] == "13"
    # An item made gold leaves agreement: the report is stale again.
    first = Item.objects.filter(project=project).order_by("id").first()
    Item.objects.filter(pk=first.pk).update(is_gold=True)
    card, _ = _card(project, tmp_path / "gold")
    assert _figures(card) == {}


def test_a_text_projects_card_shows_its_text_agreement(staff_client, tmp_path):
    project, items = canard_sample(slug="canard-card", split="dev")
    people = workers(2)
    for item in items:
        for worker, text in zip(people, ("Why did Zappa's group disband?",
                                         "Why did the group of Zappa disband?"), strict=True):
            annotate(item, worker, text=text, payload={"rewrite": text})
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    stored = Job.objects.get(kind="qc", project=project, state="done").result["agreement"]
    shown = _figures(_card(project, tmp_path)[0])
    assert set(shown) == {"n_pairs", "bleu", "gleu", "chrf"}
    assert shown == {key: card_figure(stored[key]) for key in shown}


@pytest.mark.parametrize("make", ["decontext", "canard", "claire", "websplit"])
def test_every_rows_source_is_the_apis_and_answers_follow_their_item(make, tmp_path):
    """The export reads the items' source columns as rows (no model instance): each row's
    ``source`` is what ``/api/items/`` shows for that item, for each kind of source material,
    and each item carries its own answers, in order, however the items interleave."""
    import json

    import pyarrow.parquet as pq

    from annotation.api.serializers import ItemSerializer
    from tests.factories import claire_sample, decontext_project, split_project

    if make in ("decontext", "websplit"):
        project = {"decontext": decontext_project, "websplit": split_project}[make](items=3)
        items = list(Item.objects.filter(project=project).order_by("id"))
    else:
        project, items = {"canard": canard_sample, "claire": claire_sample}[make]()
    Item.objects.filter(project=project).update(split="dev")
    people = workers(3)
    expected = {}
    for index, item in enumerate(items):
        # The first item gets no answer (left out), the others 1-3, written out of order.
        answered = people[: index % 3 + 1] if index else []
        expected[item.external_id] = [f"answer {index} {k}" for k in range(len(answered))]
    for k in range(3):
        for item in reversed(items):
            if k < len(expected[item.external_id]):
                annotate(item, people[k], text=expected[item.external_id][k],
                         payload={"text": expected[item.external_id][k]})
    export_project(project=project, format_name="hf", out_dir=tmp_path)
    rows = pq.read_table(tmp_path / "dev.parquet").to_pylist()
    by_id = {item.external_id: item for item in items}
    assert [row["id"] for row in rows] == [item.external_id for item in items[1:]]
    for row in rows:
        item = Item.objects.get(pk=by_id[row["id"]].pk)
        assert json.loads(row["source"]) == ItemSerializer().get_source(item)
        assert [json.loads(answer["answer"])["text"] for answer in row["annotations"]] == (
            expected[row["id"]])


def test_qc_report_on_the_command_line_is_the_report_the_card_and_dashboard_show(
        staff_client, tmp_path):
    project = _rated_project()
    err = StringIO()
    call_command("qc_report", project.slug, "--json", stdout=StringIO(), stderr=err)
    job = Job.objects.get(kind="qc", project=project, state="done")
    assert f"recorded as QC job {job.pk}" in err.getvalue()
    card, warnings = _card(project, tmp_path)
    assert f"From the project's QC report (job {job.pk}, " in card
    assert not [warning for warning in warnings if "agreement" in warning]
    shown = _figures(card)
    assert shown and shown == {key: card_figure(job.result["agreement"][key]) for key in shown}
    dashboard = staff_client.get(f"/staff/review/{project.slug}/dashboard/").content.decode()
    assert f"QC job {job.pk}</a>, computed" in dashboard


@pytest.mark.parametrize(("recorded", "expected"), [
    ("CC BY-SA 4.0", ("cc-by-sa-4.0", "")), ("CC BY-NC-SA 3.0", ("cc-by-nc-sa-3.0", "")),
    ("GPL-3.0", ("gpl-3.0", "")), ("MIT", ("mit", "")), ("  ", ("unknown", "")),
    ("Wikipedia terms of use", ("other", "Wikipedia terms of use")),
])
def test_the_cards_licence_is_the_hubs_identifier(recorded, expected):
    assert hf_license(recorded) == expected


def test_a_licence_the_hub_does_not_know_is_other_with_its_name(tmp_path):
    project = _rated_project()
    project.licence = 'LDC "User Agreement"'
    project.save(update_fields=["licence"])
    card, _ = _card(project, tmp_path)
    assert card.startswith('---\nlicense: other\nlicense_name: "LDC \\"User Agreement\\""\n')
    assert 'Licence: LDC "User Agreement"' in card


def test_figures_print_counts_whole_and_the_rest_to_three_decimals():
    assert [card_figure(value) for value in (13, 0.6891413557434745, None, 1.0)] == [
        "13", "0.689", "n/a", "1.000"]
