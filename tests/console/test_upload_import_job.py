"""Big uploads are imported by a staff job (kind ``import``): the job's page shows the
progress and then the outcome, a second click on "Import" starts nothing, a bad file fails
the job naming file, line and field with nothing written; the importers read files as streams
and report how far they have read."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotation.importers.base import ImportInputError, SourceFile, read_delimited
from annotation.models import ImportRecord, Item, Job, Project
from annotation.services import staff_jobs
from annotation.services.imports import import_files

pytestmark = pytest.mark.django_db

CLAIRE = Path(__file__).resolve().parents[2] / "annotation" / "demo_data" / "claire"
NAMES = ("dev_data.tsv", "dev_labels.tsv", "dev_scores.tsv")


@pytest.fixture(autouse=True)
def _uploads_in_tmp(settings, tmp_path):
    settings.UNPACK_UPLOAD_DIR = tmp_path / "uploads"
    settings.UNPACK_UPLOAD_JOB_MIN_BYTES = 1  # every upload is "big"


def claire_project() -> Project:
    return Project.objects.create(slug="claire-job", name="CLAIRE job", kind="plausibility",
                                  redundancy={"train": 2, "dev": 4, "test": 4})


def stage(client, project, files=None) -> str:
    files = files or [SimpleUploadedFile(name, (CLAIRE / name).read_bytes())
                      for name in NAMES]
    response = client.post(f"/staff/projects/{project.slug}/import/",
                           {"format": "claire", "files": files})
    assert response.status_code == 200, response.content[:500]
    assert 'id="import-as-job"' in response.content.decode()
    return response.context["staged"].token


def test_a_big_upload_is_imported_by_a_job_whose_page_shows_the_outcome(staff_client):
    project = claire_project()
    token = stage(staff_client, project)
    response = staff_client.post(f"/staff/projects/{project.slug}/import/",
                                 {"upload": token, "commit": "yes"})
    job = Job.objects.get(kind="import")
    assert response.status_code == 302 and response.url == f"/staff/jobs/{job.pk}/"
    fillers = sum(1 for _ in (CLAIRE / "dev_labels.tsv").open())
    assert job.state == "done" and job.params == {"upload": token}
    assert job.result["files_imported"] == list(NAMES)
    assert Item.objects.filter(project=project, split="dev").count() == fillers
    # The last progress the job recorded: every writing step done.
    assert job.progress_done == job.progress_total
    page = staff_client.get(response.url).content.decode()  # a reload shows the same
    assert job.result["message"] in page
    assert f"Imported {job.result['rows']} row(s) from dev_data.tsv" in job.result["message"]
    progress = staff_client.get(f"/staff/jobs/{job.pk}/progress/").json()
    assert progress["state"] == "done" and progress["percent"] == 100


def test_a_second_click_on_import_starts_no_second_import(staff_client, monkeypatch):
    project = claire_project()
    token = stage(staff_client, project)
    # With a worker the first job stays queued until the worker takes it.
    monkeypatch.setattr(staff_jobs, "enqueue_now", lambda *args: None)
    first = staff_client.post(f"/staff/projects/{project.slug}/import/",
                              {"upload": token, "commit": "yes"})
    second = staff_client.post(f"/staff/projects/{project.slug}/import/",
                               {"upload": token, "commit": "yes"}, follow=True)
    assert Job.objects.filter(kind="import").count() == 1
    assert first.url == second.redirect_chain[-1][0]
    assert "it was not started a second time" in second.content.decode()
    assert not Item.objects.exists()


def spoil_staged_labels(settings, token: str) -> None:
    """Line 3 of the staged dev_labels.tsv gets the label MAYBE (not a CLAIRE class)."""
    labels = Path(settings.UNPACK_UPLOAD_DIR) / token / "dev_labels.tsv"
    lines = labels.read_text().splitlines()
    cells = lines[2].split("\t")
    cells[-1] = "MAYBE"
    lines[2] = "\t".join(cells)
    labels.write_text("\n".join(lines) + "\n")


def test_a_bad_file_fails_the_job_naming_file_line_and_field(staff_client, settings):
    project = claire_project()
    token = stage(staff_client, project)
    # The staged labels file goes bad between the preview and the job (what the job meets
    # is checked again, all-or-nothing).
    spoil_staged_labels(settings, token)
    staff_client.post(f"/staff/projects/{project.slug}/import/",
                      {"upload": token, "commit": "yes"})
    job = Job.objects.get(kind="import")
    assert job.state == "failed"
    assert "claire dev_labels.tsv line 3: label 'MAYBE' is not one of" in job.error
    assert job.error.endswith("nothing was imported.")
    assert not Item.objects.exists() and not ImportRecord.objects.exists()


def test_an_import_job_for_another_projects_upload_fails(staff_client, settings):
    project = claire_project()
    token = stage(staff_client, project)
    other = Project.objects.create(slug="other", name="Other", kind="plausibility")
    job = staff_jobs.job_start(kind="import", project=other, params={"upload": token}).job
    assert job.state == "failed" and "unknown or has expired" in job.error
    assert not Item.objects.exists()
    # The upload is still there for its own project.
    assert (Path(settings.UNPACK_UPLOAD_DIR) / token / "dev_data.tsv").is_file()


def api_stage(client, project, files=None) -> str:
    files = files or [SimpleUploadedFile(name, (CLAIRE / name).read_bytes())
                      for name in NAMES]
    response = client.post(f"/api/projects/{project.slug}/imports/preview/",
                           {"format": "claire", "files": files})
    assert response.status_code == 200, response.content[:500]
    return response.json()["upload"]


def api_commit(client, project, token: str):
    return client.post(f"/api/projects/{project.slug}/imports/commit/",
                       json.dumps({"upload": token}), content_type="application/json")


def test_the_api_commits_a_big_upload_as_the_import_job(staff_client):
    project = claire_project()
    response = api_commit(staff_client, project, api_stage(staff_client, project))
    job = Job.objects.get(kind="import")  # the console's job, the same kind and parameters
    body = response.json()
    assert response.status_code == 202
    assert body["url"] == f"http://testserver/api/jobs/{job.pk}/"  # api/jobs.py, as every job
    assert response["Location"] == body["url"] and body["id"] == job.pk and body["created"]
    assert body["kind"] == "import" and body["project"] == project.slug
    # Inline (no broker) the job has run when the commit answers.
    assert body["state"] == "done" and body["finished"] and body["error"] == ""
    fillers = sum(1 for _ in (CLAIRE / "dev_labels.tsv").open())
    assert Item.objects.filter(project=project, split="dev").count() == fillers
    followed = staff_client.get(body["url"]).json()
    assert followed["result"] == job.result and followed["done"] == followed["total"]
    assert f"Imported {job.result['rows']} row(s) from dev_data.tsv" in (
        followed["result"]["message"])


def test_a_small_upload_is_still_committed_in_the_request(staff_client, settings):
    settings.UNPACK_UPLOAD_JOB_MIN_BYTES = 10**9
    project = claire_project()
    response = api_commit(staff_client, project, api_stage(staff_client, project))
    assert response.status_code == 200 and response.json()["rows"] > 0
    assert not Job.objects.exists()


def test_the_api_follows_a_queued_job_and_starts_no_second_one(staff_client, monkeypatch):
    project = claire_project()
    token = api_stage(staff_client, project)
    monkeypatch.setattr(staff_jobs, "enqueue_now", lambda *args: None)  # a worker's queue
    first = api_commit(staff_client, project, token).json()
    second = api_commit(staff_client, project, token)
    assert second.status_code == 202 and not second.json()["created"] and first["created"]
    assert second.json()["id"] == first["id"] and Job.objects.count() == 1
    queued = staff_client.get(first["url"]).json()
    assert queued["state"] == "queued" and not queued["finished"] and queued["result"] is None
    assert not Item.objects.exists()


def test_a_bad_file_fails_the_api_job_naming_file_line_and_field(staff_client, settings):
    project = claire_project()
    token = api_stage(staff_client, project)
    spoil_staged_labels(settings, token)
    body = api_commit(staff_client, project, token).json()
    assert body["state"] == "failed" and body["result"] is None
    assert "claire dev_labels.tsv line 3: label 'MAYBE' is not one of" in body["error"]
    assert not Item.objects.exists() and not ImportRecord.objects.exists()


def test_an_import_job_is_seen_only_by_who_may_import(staff_client, django_user_model):
    from django.contrib.auth.models import Group
    from django.test import Client

    project = claire_project()
    body = api_commit(staff_client, project, api_stage(staff_client, project)).json()
    reviewer = django_user_model.objects.create_user(username="rev", is_staff=True)
    reviewer.groups.add(Group.objects.get(name="reviewer"))
    client = Client()
    client.force_login(reviewer)
    assert client.get(body["url"]).status_code == 403
    assert staff_client.get(body["url"]).status_code == 200


def test_the_schema_documents_the_202_and_the_job(staff_client):
    schema = staff_client.get("/api/schema/?format=json").json()
    commit = schema["paths"]["/api/projects/{slug}/imports/commit/"]["post"]["responses"]
    assert {"200", "202"} <= set(commit)
    assert "202" in commit and "/api/jobs/{job_id}/" in schema["paths"]


def test_import_files_reports_the_bytes_imported_then_written(tmp_path):
    reports: list[tuple[int, int | None, str]] = []
    import_files(fmt="claire", paths=[CLAIRE / name for name in NAMES],
                 project_slug="claire-progress",
                 progress=lambda done, total, message: reports.append((done, total, message)))
    sizes = sum((CLAIRE / name).stat().st_size for name in NAMES)
    reading = [r for r in reports if r[2].startswith("importing ")]
    assert reading and all(total == sizes for _, total, _ in reading)
    assert reading[0][2] == "importing dev_data.tsv"
    assert max(done for done, _, _ in reading) == sizes  # every byte of every file read
    assert [done for done, _, _ in reading] == sorted(done for done, _, _ in reading)
    # The one reading (checked and written as it goes), then the end.
    assert reports[-1] == (sizes, sizes, "written") and len(reading) == len(reports) - 1


def test_the_csv_reader_streams_and_still_names_the_bad_line(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 5000 + b"3,\xff\n")
    seen = []
    file = SourceFile.read("mturk-csv", path)
    file.on_read = seen.append
    with pytest.raises(ImportInputError) as error:
        for _ in read_delimited("mturk-csv", file, delimiter=",", required=["a"]):
            pass
    assert str(error.value) == ("mturk-csv rows.csv line 5002: not valid UTF-8 "
                                "(byte 0xff at column 3)")
    assert seen and seen[0] < path.stat().st_size  # told how far it read before the end
    assert not hasattr(file, "data")  # the file's bytes are not kept


def test_import_data_shows_the_services_progress(monkeypatch):
    from annotation.management.commands import import_data

    seen: list[str] = []

    class Recorder:
        def __init__(self, *args, **kwargs):
            pass

        def __call__(self, done, total=None, message=""):
            seen.append(message)

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            return None

    monkeypatch.setattr(import_data, "ProgressBar", Recorder)
    call_command("import_data", "claire", *[str(CLAIRE / name) for name in NAMES],
                 "--project", "claire-cli", stdout=io.StringIO())
    assert "importing dev_data.tsv" in seen and seen[-1] == "written"
    seen.clear()
    call_command("import_data", "claire", *[str(CLAIRE / name) for name in NAMES],
                 "--project", "claire-cli-quiet", "--quiet", stdout=io.StringIO())
    assert seen == []
