"""The upload import: preview before anything is written, then import; the importers' own
messages (file, line, field); hostile input (oversized, wrong encoding, archives, path names)
on the page and the API alike."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Count

from annotation.models import ClozeFiller, ImportRecord, Item, Project
from annotation.services.uploads import safe_name

pytestmark = pytest.mark.django_db

CLAIRE = Path(__file__).resolve().parents[2] / "annotation" / "demo_data" / "claire"


@pytest.fixture(autouse=True)
def _uploads_in_tmp(settings, tmp_path):
    settings.UNPACK_UPLOAD_DIR = tmp_path / "uploads"


def claire_project() -> Project:
    return Project.objects.create(slug="claire-up", name="CLAIRE up", kind="plausibility",
                                  redundancy={"train": 2, "dev": 4, "test": 4})


def claire_files() -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(name, (CLAIRE / name).read_bytes())
            for name in ("dev_data.tsv", "dev_labels.tsv", "dev_scores.tsv")]


def upload(client, project, files, **fields):
    return client.post(f"/staff/projects/{project.slug}/import/",
                       {"format": "claire", "files": files, **fields})


#: The two entry points of an upload import: the console's page and the API's preview.
DOORS = ["page", "api"]


def preview_through(door: str, client, project, files) -> tuple[int, str, str | None]:
    """Upload ``files`` through ``door``: (status, the error shown, the upload's token)."""
    if door == "page":
        response = upload(client, project, files)
        context = response.context or {}
        staged = context.get("staged")
        error = context.get("upload_error") or ""
        return response.status_code, error, staged.token if staged else None
    response = client.post(f"/api/projects/{project.slug}/imports/preview/",
                           {"format": "claire", "files": files})
    body = response.json()
    return response.status_code, str(body.get("detail", "")), body.get("upload")


def test_three_claire_files_preview_then_import(staff_client, settings):
    project = claire_project()
    response = upload(staff_client, project, claire_files())
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="import-preview"' in page
    fillers = sum(1 for _ in (CLAIRE / "dev_labels.tsv").open())  # one filler a line
    assert f'<td data-split="dev">{fillers}</td>' in page
    assert not Item.objects.exists() and not ImportRecord.objects.exists()  # nothing yet
    token = response.context["staged"].token
    imported = staff_client.post(f"/staff/projects/{project.slug}/import/",
                                 {"upload": token, "commit": "yes"})
    assert imported.status_code == 302
    assert Item.objects.filter(project=project, split="dev").count() == fillers
    assert not (Path(settings.UNPACK_UPLOAD_DIR) / token).exists()
    again = upload(staff_client, project, claire_files())
    assert "Already imported (skipped)" in again.content.decode()


@pytest.mark.parametrize("door", DOORS)
def test_a_broken_file_names_file_line_and_field_and_writes_nothing(staff_client, settings,
                                                                   door):
    project = claire_project()
    files = claire_files()
    lines = (CLAIRE / "dev_labels.tsv").read_text().splitlines()
    columns = lines[2].split("\t")
    columns[-1] = "MAYBE"
    lines[2] = "\t".join(columns)
    files[1] = SimpleUploadedFile("dev_labels.tsv", ("\n".join(lines) + "\n").encode())
    status, error, _ = preview_through(door, staff_client, project, files)
    assert status == 400
    assert "claire dev_labels.tsv line 3: label 'MAYBE' is not one of" in error  # import_data's
    assert "nothing was imported" in error
    assert not Item.objects.exists() and not ClozeFiller.objects.exists()
    assert not any(Path(settings.UNPACK_UPLOAD_DIR).rglob("*.tsv"))  # the files discarded


@pytest.mark.parametrize("door", DOORS)
def test_a_file_in_another_encoding_is_refused_naming_its_line(staff_client, door):
    project = claire_project()
    files = claire_files()
    text = (CLAIRE / "dev_data.tsv").read_text().replace("Cleft", "Cl\u00e9ft")
    files[0] = SimpleUploadedFile("dev_data.tsv", text.encode("cp1252", errors="replace"))
    status, error, _ = preview_through(door, staff_client, project, files)
    assert status == 400
    assert "dev_data.tsv line 2" in error
    assert "not valid UTF-8" in error
    assert not Item.objects.exists()


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("limit", [1000, 9000])  # refused up front / while streaming
def test_an_upload_over_the_limit_is_refused(staff_client, settings, door, limit):
    settings.UNPACK_UPLOAD_MAX_BYTES = limit
    project = claire_project()
    status, error, token = preview_through(door, staff_client, project, claire_files())
    assert status == 413
    assert (f"The files are larger than the upload limit of {limit:,} bytes; nothing was "
            "imported.") == error
    assert token is None
    assert not Item.objects.exists()
    assert not any(Path(settings.UNPACK_UPLOAD_DIR).glob("*/*.tsv"))


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("archive", ["zip", "gzip"])
def test_archives_are_refused_so_nothing_is_unpacked(staff_client, settings, archive, door):
    project = claire_project()
    if archive == "zip":  # a zip bomb's shape: a tiny file claiming a huge one, a path out
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
            bundle.writestr("../../etc/dev_data.tsv", b"\0" * 5_000_000)
        data = buffer.getvalue()
    else:
        data = gzip.compress(b"\0" * 5_000_000)
    status, error, token = preview_through(door, staff_client, project,
                                           [SimpleUploadedFile("dev_data.tsv", data)])
    assert status == 400
    assert f"a {archive} archive; archives are not accepted" in error
    assert token is None
    assert not Item.objects.exists()
    assert not any(Path(settings.UNPACK_UPLOAD_DIR).rglob("*.tsv"))  # nothing unpacked


def test_safe_name_keeps_the_last_component_only():
    assert safe_name("../../etc/passwd") == "passwd"
    assert safe_name("..\\..\\win.ini") == "win.ini"
    assert safe_name(".env") == "env"
    assert safe_name("") == "upload"


@pytest.mark.parametrize("door", DOORS)
def test_path_names_are_reduced_to_a_safe_file_name(staff_client, settings, door):
    project = claire_project()
    files = claire_files()
    files[0].name = "../../../tmp/dev_data.tsv"
    status, error, token = preview_through(door, staff_client, project, files)
    assert (status, error) == (200, "")
    folder = Path(settings.UNPACK_UPLOAD_DIR) / token
    assert sorted(path.name for path in folder.iterdir()) == [
        "dev_data.tsv", "dev_labels.tsv", "dev_scores.tsv", "upload.json"]
    assert [path.name for path in Path(settings.UNPACK_UPLOAD_DIR).parent.rglob("*.tsv")
            if folder not in path.parents] == []  # nothing written outside the upload's folder


def test_another_users_upload_token_is_refused(staff_client, client, django_user_model):
    project = claire_project()
    token = upload(staff_client, project, claire_files()).context["staged"].token
    other = django_user_model.objects.create_user("other", password="x", is_superuser=True)
    client.force_login(other)
    response = client.post(f"/staff/projects/{project.slug}/import/",
                           {"upload": token, "commit": "yes"})
    assert response.status_code == 400
    assert not Item.objects.exists()


def test_the_api_previews_then_commits(staff_client):
    project = claire_project()
    preview = staff_client.post(f"/api/projects/{project.slug}/imports/preview/",
                                {"format": "claire", "files": claire_files()})
    assert preview.status_code == 200, preview.content
    body = preview.json()
    assert body["dry_run"] and body["rows"] > 0 and body["new_items_per_split"]["dev"] > 0
    assert not Item.objects.exists()
    committed = staff_client.post(f"/api/projects/{project.slug}/imports/commit/",
                                  json.dumps({"upload": body["upload"]}),
                                  content_type="application/json")
    assert committed.status_code == 200
    assert Item.objects.filter(project=project).count() == body["new_items_per_split"]["dev"]
    broken = staff_client.post(f"/api/projects/{project.slug}/imports/preview/",
                               {"format": "claire",
                                "files": [SimpleUploadedFile("dev_data.tsv", b"Id\tNope\n1\n")]})
    assert broken.status_code == 400
    assert "dev_data.tsv" in broken.json()["detail"]


# Every import format through the console's upload: the files, and the project kind they load.
DEMO = Path(__file__).resolve().parents[2] / "annotation" / "demo_data"
FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"
EVERY_FORMAT = {
    "decontext": ("decontext", [FIXTURES / "decontext_dev.jsonl"]),
    "claire": ("plausibility", [CLAIRE / "dev_data.tsv", CLAIRE / "dev_labels.tsv",
                                CLAIRE / "dev_scores.tsv"]),
    "canard": ("rewrite", [DEMO / "canard" / "dev_dialogues_1_2.json",
                           DEMO / "canard" / "dev_dialogue_3.json"]),
    "quac": ("rewrite", [FIXTURES / "quac_dev.json"]),
    "coqa": ("rewrite", [FIXTURES / "coqa_train.json"]),
    "websplit": ("split_rephrase", [FIXTURES / "websplit_train.jsonl"]),
    "sluice": ("sluice", [DEMO / "sluice" / "conv_sluice_test.csv"]),
    # Answers to the items of the released CLAIRE dev set (imported first, below).
    "mturk-csv": ("plausibility", [FIXTURES / "mturk_claire_batch.csv"]),
}


def test_every_format_has_an_upload_case():
    from annotation.importers import FORMATS

    assert sorted(EVERY_FORMAT) == sorted(FORMATS)


def _row_counts() -> dict[str, int]:
    """Rows per table of the app, many-to-many tables too (``ComplexSentence.facts``)."""
    from django.apps import apps

    models = apps.get_app_config("annotation").get_models(include_auto_created=True)
    return {model.__name__.replace("_", "."): model.objects.count() for model in models}


@pytest.mark.parametrize("fmt", sorted(EVERY_FORMAT))
def test_every_format_previews_then_imports_through_the_upload(staff_client, shared_data, fmt):
    """The preview writes nothing and tells the truth: the commit creates exactly the rows
    (per table) and the items per split it announced."""
    kind, paths = EVERY_FORMAT[fmt]
    project = Project.objects.create(slug="every-format", name="Every format", kind=kind,
                                     redundancy={"train": 1, "dev": 1, "test": 1})
    if fmt == "mturk-csv":
        from annotation.services.imports import import_files

        import_files(fmt="claire", paths=[shared_data / "claire" / "dev_data.tsv"],
                    project_slug=project.slug)
    before = _row_counts()
    files = [SimpleUploadedFile(path.name, path.read_bytes()) for path in paths]
    response = staff_client.post(f"/staff/projects/{project.slug}/import/",
                                 {"format": fmt, "files": files})
    assert response.status_code == 200, response.context.get("upload_error")
    assert 'id="import-preview"' in response.content.decode()
    preview = response.context["preview"]
    assert preview.rows > 0 and any(preview.created.values())
    assert _row_counts() == before  # a preview writes nothing
    committed = staff_client.post(f"/staff/projects/{project.slug}/import/",
                                  {"upload": response.context["staged"].token, "commit": "yes"})
    assert committed.status_code == 302
    after = _row_counts()
    created = {name: after[name] - before[name] for name in after if after[name] != before[name]}
    announced = {name: count for name, count in preview.created.items() if count}
    assert {name: created.get(name, 0) for name in announced} == announced
    items = dict(Item.objects.filter(project=project).values_list("split").annotate(
        n=Count("id")).values_list("split", "n"))
    for split, new in preview.new_items_per_split.items():
        assert items.get(split, 0) == preview.existing_items_per_split.get(split, 0) + new


LICENCE = "CC BY-SA 4.0"
ATTRIBUTION = "Roth et al. (2022), SemEval-2022 Task 7 <b>CLAIRE</b>"


@pytest.mark.parametrize("door", ["cli", "page", "api"])
def test_licence_and_attribution_are_carried_from_the_import_to_the_dataset_card(
        staff_client, door, tmp_path):
    """Given with the import (CLI, upload page, upload API), they are stored on the project
    when the import commits (not by a preview) and the Hugging Face card shows them."""
    from django.core.management import call_command

    from annotation.exporters import export_project

    project = claire_project()
    if door == "cli":
        call_command("import_data", "claire", *(str(CLAIRE / name) for name in (
            "dev_data.tsv", "dev_labels.tsv", "dev_scores.tsv")), project=project.slug,
            licence=LICENCE, attribution=ATTRIBUTION, quiet=True, verbosity=0)
    else:
        fields = {"format": "claire", "files": claire_files(), "licence": LICENCE,
                  "attribution": ATTRIBUTION}
        if door == "page":
            previewed = staff_client.post(f"/staff/projects/{project.slug}/import/", fields)
            token = previewed.context["staged"].token
        else:
            previewed = staff_client.post(f"/api/projects/{project.slug}/imports/preview/",
                                          fields)
            token = previewed.json()["upload"]
        assert previewed.status_code == 200
        project.refresh_from_db()
        assert (project.licence, project.attribution) == ("", "")  # a preview writes nothing
        if door == "page":
            committed = staff_client.post(f"/staff/projects/{project.slug}/import/",
                                          {"upload": token, "commit": "yes"})
            assert committed.status_code == 302
        else:
            committed = staff_client.post(f"/api/projects/{project.slug}/imports/commit/",
                                          json.dumps({"upload": token}),
                                          content_type="application/json")
            assert committed.status_code == 200
    project.refresh_from_db()
    assert (project.licence, project.attribution) == (LICENCE, ATTRIBUTION)
    export_project(project=project, format_name="hf", out_dir=tmp_path)
    card = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert f"Licence: {LICENCE}" in card and ATTRIBUTION in card


def test_a_licence_too_long_is_refused_naming_the_field_and_imports_nothing(staff_client):
    project = claire_project()
    response = staff_client.post(f"/api/projects/{project.slug}/imports/preview/",
                                 {"format": "claire", "files": claire_files(),
                                  "licence": "x" * 201})
    assert response.status_code == 400
    assert "licence" in response.json()
    assert not Item.objects.exists()
