"""The API's split and export start the console's staff jobs (issue 21): 202 with the job,
its URL gives progress and the result, its download the zip; two identical requests while
one runs make one job; the schema documents it; who may see a job is who may start it."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import Group

from annotation.models import Item, Job, SplitManifest
from annotation.services import staff_jobs
from qc import splits as qc_splits
from tests.factories import annotate, plausibility_project, workers

pytestmark = pytest.mark.django_db


def post_json(client, url: str, body: dict):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_the_api_export_is_the_console_job_and_its_zip_downloads(staff_client):
    project = plausibility_project(items=2, split="train")
    for item in Item.objects.filter(project=project):
        annotate(item, workers(1)[0], rating=4, payload={"rating": 4})
    started = post_json(staff_client, f"/api/projects/{project.slug}/export/",
                        {"export_format": "jsonl"})
    assert started.status_code == 202
    body = started.json()
    job = Job.objects.get(pk=body["id"])
    assert job.kind == "export" and job.params == {"format": "jsonl"}
    assert started.headers["Location"] == body["url"] and body["url"].endswith(
        f"/api/jobs/{job.pk}/")
    assert body["created"] is True
    # Inline on the embedded default: the job has already run.
    polled = staff_client.get(body["url"]).json()
    assert polled["state"] == "done" and polled["finished"] is True
    assert polled["result"]["files"][0] == {"name": "annotations.jsonl", "records": 2,
                                            "bytes": polled["result"]["files"][0]["bytes"],
                                            "notes": []}
    download = staff_client.get(polled["download"])
    assert download.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))) as bundle:
        assert len(bundle.read("annotations.jsonl").splitlines()) == 2
        assert json.loads(bundle.read("MANIFEST.json"))["format"] == "jsonl"


def test_two_identical_api_exports_while_one_runs_are_one_job(with_broker, staff_client):
    project = plausibility_project(items=1)
    url = f"/api/projects/{project.slug}/export/"
    first = post_json(staff_client, url, {"export_format": "claire"})
    second = post_json(staff_client, url, {"export_format": "claire"})
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"]
    assert (first.json()["created"], second.json()["created"]) == (True, False)
    assert Job.objects.filter(kind="export").count() == 1
    running = staff_client.get(first.json()["url"]).json()
    assert running["state"] == "queued" and running["finished"] is False
    assert running["download"] is None and running["result"] is None
    assert staff_client.get(f"/api/jobs/{running['id']}/download/").status_code == 404


def test_an_export_in_a_format_of_another_task_starts_nothing(staff_client):
    project = plausibility_project(items=1)
    refused = post_json(staff_client, f"/api/projects/{project.slug}/export/",
                        {"export_format": "canard"})
    assert refused.status_code == 400 and "no export format 'canard'" in refused.json()["detail"]
    unknown = post_json(staff_client, f"/api/projects/{project.slug}/export/",
                        {"export_format": "nope"})
    assert unknown.status_code == 400 and "export_format" in unknown.json()
    assert not Job.objects.exists()


def test_the_api_split_is_the_console_job(staff_client):
    project = plausibility_project(items=10)
    url = f"/api/projects/{project.slug}/splits/"
    preview = post_json(staff_client, url, {"rule": "group", "seed": 3, "preview": True})
    assert preview.status_code == 202  # a job too: it reads every item
    previewed = staff_client.get(preview.json()["url"]).json()["result"]
    assert previewed["preview"] is True and not SplitManifest.objects.exists()
    made = post_json(staff_client, url, {"rule": "group", "seed": 3})
    assert made.status_code == 202
    job = Job.objects.get(pk=made.json()["id"])
    assert job.kind == "splits" and job.state == "done"
    assert job.params["fractions"] == {name: float(value) for name, value
                                       in qc_splits.DEFAULT_FRACTIONS.items()}
    result = staff_client.get(made.json()["url"]).json()["result"]
    manifest = SplitManifest.objects.get()
    assert result["manifest"] == manifest.pk and result["counts"] == previewed["counts"]


def test_the_api_split_preview_is_a_job_that_answers_at_once(with_broker, staff_client):
    """With a worker the request only queues the preview (issue 21: 3.4 s at 200,000 items);
    a second identical request is the same job; the worker's run gives the preview."""
    project = plausibility_project(items=10)
    url = f"/api/projects/{project.slug}/splits/"
    body = {"rule": "group", "seed": 3, "preview": True}
    first, second = post_json(staff_client, url, body), post_json(staff_client, url, body)
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"] and second.json()["created"] is False
    job = Job.objects.get()
    assert job.state == "queued" and job.params["preview"] is True and "force" not in job.params
    assert staff_jobs.job_run(job_id=job.pk) == "done"
    result = staff_client.get(first.json()["url"]).json()["result"]
    assert result["preview"] is True and sum(result["counts"].values()) == 10
    assert result["leaks"] == {} and result["frozen"] is None
    assert not SplitManifest.objects.exists()


def test_a_rule_that_does_not_fit_the_project_is_refused_before_any_job(staff_client):
    project = plausibility_project(items=2)
    for preview in (True, False):
        refused = post_json(staff_client, f"/api/projects/{project.slug}/splits/",
                            {"rule": "sluice", "seed": 1, "preview": preview})
        assert refused.status_code == 400
        assert "the sluice rule is for sluice projects" in refused.json()["detail"]
    assert not Job.objects.exists()


def test_a_partial_split_fraction_leaves_the_others_at_zero(staff_client):
    project = plausibility_project(items=10)
    made = post_json(staff_client, f"/api/projects/{project.slug}/splits/",
                     {"rule": "group", "seed": 3, "fractions": {"train": 1}})
    assert made.status_code == 202
    assert Job.objects.get().params["fractions"] == {"train": 1.0, "dev": 0.0, "test": 0.0}
    assert set(Item.objects.filter(project=project).values_list("split", flat=True)) == {
        "train"}


def test_a_refused_split_is_a_failed_job_saying_why(staff_client):
    project = plausibility_project(items=10)
    url = f"/api/projects/{project.slug}/splits/"
    assert post_json(staff_client, url, {"rule": "group", "seed": 3}).status_code == 202
    again = post_json(staff_client, url, {"rule": "group", "seed": 4})
    polled = staff_client.get(again.json()["url"]).json()
    assert polled["state"] == "failed" and polled["result"] is None
    assert "force" in polled["error"]
    assert SplitManifest.objects.count() == 1


def test_a_job_is_seen_only_by_who_may_start_it(client, staff_client, django_user_model):
    project = plausibility_project(items=10)
    made = post_json(staff_client, f"/api/projects/{project.slug}/splits/",
                     {"rule": "group", "seed": 3})
    reviewer = django_user_model.objects.create_user(username="rev", is_staff=True)
    reviewer.groups.add(Group.objects.get(name="reviewer"))
    client.force_login(reviewer)
    assert client.get(made.json()["url"]).status_code == 403  # a split is change_projects'
    assert staff_jobs.KIND_ACTION[Job.Kind.SPLITS] == "change_projects"


def test_the_schema_documents_the_jobs(staff_client):
    schema = staff_client.get("/api/schema/?format=json").json()
    export = schema["paths"]["/api/projects/{slug}/export/"]
    assert set(export) == {"post"} and "202" in export["post"]["responses"]
    assert "202" in schema["paths"]["/api/projects/{slug}/splits/"]["post"]["responses"]
    job = schema["paths"]["/api/jobs/{job_id}/"]["get"]["responses"]["200"]
    assert "Job" in json.dumps(job)
    assert "/api/jobs/{job_id}/download/" in schema["paths"]
