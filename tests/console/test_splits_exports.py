"""The splits page (preview, freeze, manifests; manifests read-only in admin) and the export
page (every format, the Hugging Face dataset, warnings shown as the CLI prints them)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models import Count

from annotation.exporters import export_project, export_warnings
from annotation.models import Item, Job, Project, SplitManifest
from annotation.services import staff_jobs
from tests.factories import annotate, decontext_project, plausibility_project, workers

pytestmark = pytest.mark.django_db


def test_the_split_preview_writes_nothing_and_shows_counts_and_leakage(staff_client):
    project = plausibility_project(items=20, split="train")
    response = staff_client.post(f"/staff/projects/{project.slug}/splits/", {
        "rule": "group", "seed": "7", "train": "0.5", "dev": "0.25", "test": "0.25",
        "preview": "yes"})
    page = response.content.decode()
    assert response.status_code == 200
    assert 'id="split-preview"' in page
    assert "Leakage check: no group is in two splits." in page
    assert not SplitManifest.objects.exists()
    assert set(Item.objects.values_list("split", flat=True)) == {"train"}


def test_with_a_worker_the_preview_page_goes_to_the_job_then_shows_its_preview(
        with_broker, staff_client):
    """The preview reads every item (3.4 s at 200,000): the request starts a job and goes to
    its page; once it ran, the job page links to the splits page showing that preview, the
    form holding its choices, ready to freeze."""
    project = plausibility_project(items=20, split="train")
    response = staff_client.post(f"/staff/projects/{project.slug}/splits/", {
        "rule": "group", "seed": "7", "train": "0.5", "dev": "0.25", "test": "0.25",
        "preview": "yes"})
    job = Job.objects.get(kind="splits")
    assert response.status_code == 302 and response["Location"] == f"/staff/jobs/{job.pk}/"
    assert job.state == "queued" and job.params["preview"] is True
    staff_jobs.job_run(job_id=job.pk)
    job_page = staff_client.get(f"/staff/jobs/{job.pk}/").content.decode()
    assert "Preview ready (dev 5, test 5, train 10); 10 item(s) would move." in job_page
    link = f"/staff/projects/{project.slug}/splits/?preview={job.pk}"
    assert f'href="{link}"' in job_page
    page = staff_client.get(link)
    assert page.context["preview"]["counts"] == {"dev": 5, "test": 5, "train": 10}
    html = page.content.decode()
    assert "Leakage check: no group is in two splits." in html
    assert 'name="freeze"' in html and 'name="seed" value="7"' in html
    assert not SplitManifest.objects.exists()
    # Another project's job, or a freeze job, is no preview of this page.
    other = plausibility_project(slug="other", items=1)
    assert staff_client.get(f"/staff/projects/{other.slug}/splits/?preview={job.pk}"
                            ).context["preview"] is None


def test_freezing_makes_the_manifest_and_moves_the_items(staff_client):
    project = plausibility_project(items=20, split="train")
    response = staff_client.post(f"/staff/projects/{project.slug}/splits/", {
        "rule": "group", "seed": "7", "train": "0.5", "dev": "0.25", "test": "0.25",
        "freeze": "yes"})
    manifest = SplitManifest.objects.get()
    assert response["Location"] == f"/staff/projects/{project.slug}/splits/{manifest.pk}/"
    counts = dict(Item.objects.order_by().values("split").annotate(n=Count("id"))
                  .values_list("split", "n"))
    assert counts == manifest.counts
    page = staff_client.get(response["Location"]).content.decode()
    assert "group" in page and "seed" in page.lower()
    dump = staff_client.get(response["Location"] + "?format=json").json()
    assert dump["group_splits"] == manifest.group_splits


def test_a_rule_that_does_not_fit_the_project_is_a_form_error(staff_client):
    project = plausibility_project(items=2)
    response = staff_client.post(f"/staff/projects/{project.slug}/splits/", {
        "rule": "sluice", "seed": "1", "train": "0.8", "dev": "0.1", "test": "0.1",
        "freeze": "yes"})
    assert response.status_code == 200
    assert "the sluice rule is for sluice projects" in response.content.decode()
    assert not SplitManifest.objects.exists()


def test_manifests_cannot_be_added_or_changed_in_admin(staff_client):
    project = plausibility_project(items=2)
    assert staff_client.get("/admin/annotation/splitmanifest/add/").status_code == 403
    response = staff_client.post("/admin/annotation/splitmanifest/add/", {
        "project": project.pk, "rule": "bogus-rule", "seed": "1",
        "fractions": json.dumps({"train": 5}), "frozen": "on"})
    assert response.status_code == 403
    assert not SplitManifest.objects.exists()
    staff_client.post(f"/staff/projects/{project.slug}/splits/", {
        "rule": "group", "seed": "1", "train": "0.8", "dev": "0.1", "test": "0.1",
        "freeze": "yes"})
    manifest = SplitManifest.objects.get()
    staff_client.post(f"/admin/annotation/splitmanifest/{manifest.pk}/change/",
                      {"project": project.pk, "rule": "bogus-rule", "seed": "2"})
    manifest.refresh_from_db()
    assert manifest.rule == "group"


def test_the_api_previews_and_freezes_splits(staff_client):
    project = plausibility_project(items=10)
    started = staff_client.post(f"/api/projects/{project.slug}/splits/", json.dumps(
        {"rule": "group", "seed": 3, "preview": True}), content_type="application/json")
    assert started.status_code == 202
    preview = staff_client.get(started.json()["url"]).json()["result"]
    assert sum(preview["counts"].values()) == 10
    assert not SplitManifest.objects.exists()
    made = staff_client.post(f"/api/projects/{project.slug}/splits/", json.dumps(
        {"rule": "group", "seed": 3}), content_type="application/json")
    assert made.status_code == 202  # the split job (tests/console/test_api_jobs.py)
    assert staff_client.get(made.json()["url"]).json()["result"]["counts"] == (
        preview["counts"])


def _left_out_decontext():
    """A decontext project whose dev item has a single feasible answer: left out of the
    export, with the exporter's note."""
    project = decontext_project(items=1)
    Item.objects.filter(project=project).update(split="dev")
    item = Item.objects.get(project=project)
    annotate(item, workers(1)[0], category="DONE",
             payload={"category": "DONE", "decontextualized": "Zinc is a metal."},
             text="Zinc is a metal.")
    return project


def test_export_warnings_match_the_cli_on_the_page_and_in_the_manifest(staff_client, tmp_path):
    project = _left_out_decontext()
    warnings = export_warnings(export_project(project=project, format_name="decontext",
                                              out_dir=tmp_path / "direct"))
    assert warnings and "left out 1 example(s)" in warnings[0]
    out = io.StringIO()
    call_command("export_data", project.slug, "--format", "decontext", "--out",
                 str(tmp_path / "cli"), stdout=out)
    assert f"note: {warnings[0]}" in out.getvalue()
    # The console's export page starts the export as a job (inline here) and lists its
    # warnings; the job's zip carries them in its MANIFEST.json.
    started = staff_client.post(f"/staff/projects/{project.slug}/export/",
                                {"format": "decontext"})
    assert started.status_code == 302
    page = staff_client.get(f"/staff/projects/{project.slug}/export/")
    assert f"note: {warnings[0]}" in page.content.decode()
    job = Job.objects.get(kind="export")
    assert job.state == "done" and job.result["warnings"] == warnings
    # The review page starts the same job: done and unchanged, the same job is the result.
    again = staff_client.post(f"/staff/review/{project.slug}/export/",
                              {"format": "decontext"})
    assert again.status_code == 302
    job = Job.objects.filter(kind="export").latest("id")
    assert job.state == "done" and job.result["warnings"] == warnings
    job_zip = staff_client.get(f"/staff/jobs/{job.pk}/download/")
    with zipfile.ZipFile(io.BytesIO(b"".join(job_zip.streaming_content))) as bundle:
        assert json.loads(bundle.read("MANIFEST.json"))["warnings"] == warnings


def test_the_hugging_face_export_loads_with_datasets(staff_client, tmp_path):
    datasets = pytest.importorskip("datasets")
    project = plausibility_project(items=4, split="train")
    Project.objects.filter(pk=project.pk).update(
        licence="CC BY-SA 4.0", attribution="Roth et al. (2022), CLAIRE.")
    items = list(Item.objects.filter(project=project).order_by("id"))
    Item.objects.filter(pk=items[3].pk).update(split="test")
    people = workers(2)
    for item in items[:3]:
        for worker, rating in zip(people, (4, 5), strict=True):
            annotate(item, worker, rating=rating, payload={"rating": rating})
    annotate(items[3], people[0], rating=2, payload={"rating": 2})
    # "Run QC now": the card takes its agreement figures from this report (test_hf_card.py).
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    started = staff_client.post(f"/api/projects/{project.slug}/export/",
                                json.dumps({"export_format": "hf"}),
                                content_type="application/json")
    assert started.status_code == 202
    download = staff_client.get(staff_client.get(started.json()["url"]).json()["download"])
    assert download.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))) as bundle:
        bundle.extractall(tmp_path / "hf")
        manifest = json.loads(bundle.read("MANIFEST.json"))
    assert {file["name"] for file in manifest["files"]} == {"train.parquet", "test.parquet",
                                                            "README.md"}
    loaded = datasets.load_dataset("parquet", data_dir=str(tmp_path / "hf"),
                                   cache_dir=str(tmp_path / "cache"))
    assert loaded["train"].num_rows == 3 and loaded["test"].num_rows == 1
    row = loaded["train"][0]
    assert row["n_annotations"] == 2
    assert {json.loads(a["answer"])["rating"] for a in row["annotations"]} == {4, 5}
    assert json.loads(row["source"])["type"] == "filler"
    card = (tmp_path / "hf" / "README.md").read_text()
    assert "CC BY-SA 4.0" in card and "Roth et al. (2022), CLAIRE." in card
    assert "| train (`train.parquet`) | 3 |" in card
    assert "2 annotators gave the exported answers" in card
    assert card.startswith("---\nlicense: cc-by-sa-4.0\n")  # the Hub's identifier
    assert "krippendorff_alpha_ordinal" in card
    assert "Data statement" in card


def test_hf_is_a_format_of_export_data(tmp_path):
    project = plausibility_project(items=2)
    out = io.StringIO()
    call_command("export_data", project.slug, "--format", "hf", "--out", str(tmp_path),
                 stdout=out)
    assert (Path(tmp_path) / "README.md").exists()
    assert "note: train.parquet: left out 2 item(s) without an exported answer" in (
        out.getvalue())
