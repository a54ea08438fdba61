"""Issue 23's "Done when": a new researcher, in a real browser and without the CLI or the
admin, goes from logging in to a first annotated item and a Hugging Face export: create a
project, add an annotator (and withdraw an invite link), upload files (a broken one first:
the error names the file, line and field, and nothing is written), preview, import, split,
annotate as the annotator (local annotators need no batch: an open project is their launch),
export and load the dataset."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotation.models import Annotation, ClozeFiller, Item, Project, SplitManifest
from annotation.selectors.qc import AnonymousIds

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def role_groups_as_migrated() -> None:
    """The role groups as the migrations make them (0007, 0013, 0018): a live-server test
    before this one may have flushed the database, groups included."""
    from importlib import import_module

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    historical = MigrationExecutor(connection).loader.project_state(
        ("annotation", "0018_h23_console")).apps
    import_module("annotation.migrations.0007_i11a_staff_groups").create_groups(historical, None)
    import_module("annotation.migrations.0013_h11_reviewers_block").grant(historical, None)
    import_module("annotation.migrations.0018_h23_console").grant(historical, None)

CLAIRE = Path(__file__).resolve().parents[2] / "annotation" / "demo_data" / "claire"
PASSWORD = "walk-Through-2026"


def log_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form.login button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_a_new_researcher_goes_from_login_to_an_annotated_item_and_an_hf_export(
        page, browser, live_server, tmp_path, settings):
    datasets = pytest.importorskip("datasets")
    page.context.set_default_timeout(30000)  # imports, splits and exports run in the request
    settings.UNPACK_UPLOAD_DIR = tmp_path / "uploads"
    researcher = get_user_model().objects.create_user("rita", password=PASSWORD, is_staff=True)
    role_groups_as_migrated()
    researcher.groups.add(Group.objects.get(name="researcher"))
    log_in(page, live_server, "rita", PASSWORD)

    # A project, from the home page's link.
    page.click("text=Create one")
    page.fill("#id_name", "Cloze plausibility")
    page.fill("#id_slug", "cloze-walk")
    page.select_option("#id_kind", "plausibility")
    page.fill("#id_instructions", "Rate **how plausible** the filler is.")
    page.fill("#id_reward_cents", "40")
    page.fill("#id_licence", "CC BY-NC-SA 3.0")
    page.click("button[name=preview]")
    assert page.locator(".instructions-preview strong").inner_text() == "how plausible"
    page.click("button[name=save]")
    page.wait_for_url(f"{live_server.url}/staff/projects/cloze-walk/settings/")
    project = Project.objects.get(slug="cloze-walk")

    # An annotator account.
    page.goto(f"{live_server.url}/staff/team/")
    page.fill(".account-form #id_username", "anna")
    page.fill(".account-form #id_password", PASSWORD)
    page.select_option(".account-form #id_role", "annotator")
    page.click("button[name=create]")
    assert "Account anna created (annotator)." in page.inner_text("main")
    page.goto(f"{live_server.url}/staff/projects/{project.slug}/team/")
    assert "anna" in page.inner_text("main")  # every annotator may work here (the default)

    # An invite link made by mistake, withdrawn before anyone used it: the link then says so.
    page.goto(f"{live_server.url}/staff/team/invites/")
    page.select_option("#id_role", "reviewer")
    page.click("text=Make an invite link")
    link = page.locator("#invite-link input").input_value()
    page.click("#open-invites button:has-text('Withdraw')")
    assert "is withdrawn: its link no longer works" in page.inner_text("main")
    assert "none" in page.locator("#open-invites").inner_text()
    visitor = browser.new_context()
    refused = visitor.new_page().goto(link)
    assert refused.status == 410 and "withdrawn by the team" in refused.text()
    visitor.close()
    page.goto(f"{live_server.url}/staff/projects/{project.slug}/team/")

    # A broken upload first: the importer's message, nothing written.
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("dev_data.tsv", "dev_scores.tsv"):
        (broken / name).write_bytes((CLAIRE / name).read_bytes())
    lines = (CLAIRE / "dev_labels.tsv").read_text().splitlines()
    lines[4] = lines[4].split("\t")[0] + "\tMAYBE"
    (broken / "dev_labels.tsv").write_text("\n".join(lines) + "\n")
    page.click("nav.console-nav >> text=Import")
    page.select_option("#id_format", "claire")
    page.set_input_files("#id_files", [str(broken / name) for name in
                                       ("dev_data.tsv", "dev_labels.tsv", "dev_scores.tsv")])
    page.click("button[name=preview]")
    error = page.locator("#upload-error").inner_text()
    assert "dev_labels.tsv line 5" in error and "label 'MAYBE'" in error
    assert "nothing was imported" in error
    assert not ClozeFiller.objects.exists()

    # The real files: a preview, then the import.
    page.select_option("#id_format", "claire")
    page.set_input_files("#id_files", [str(CLAIRE / name) for name in
                                       ("dev_data.tsv", "dev_labels.tsv", "dev_scores.tsv")])
    page.click("button[name=preview]")
    assert page.locator('#import-preview td[data-split="dev"]').inner_text() == "100"
    assert not Item.objects.exists()
    page.click("button[name=commit]")
    assert "Imported" in page.inner_text("main")
    assert Item.objects.filter(project=project).count() == 100

    # Splits: preview with the leakage check, then freeze.
    page.click("nav.console-nav >> text=Splits")
    page.check("input[name=rule][value=group]")
    page.fill("#id_seed", "23")
    page.click("button[name=preview]")
    assert "no group is in two splits" in page.inner_text("#leakage")
    # CLAIRE's files carry its released ratings (imported annotations): moving those items is
    # an explicit choice, which the preview says.
    assert "with annotations (freezing needs the box above ticked)" in page.inner_text(
        "#split-preview")
    page.check("#id_force")
    page.click("button[name=freeze]")
    assert "Split frozen" in page.inner_text("main")
    manifest = SplitManifest.objects.get(project=project)
    assert sum(manifest.counts.values()) == 100

    # The annotator, in a browser of their own.
    annotator = browser.new_context(viewport={"width": 1280, "height": 900})
    annotator.set_default_timeout(30000)
    work = annotator.new_page()
    log_in(work, live_server, "anna", PASSWORD)
    work.click(f"a[href='/annotate/{project.slug}/']")
    work.wait_for_selector("#task-page[data-ready=true]")
    if work.locator("dialog#instructions[open]").count():
        assert "how plausible" in work.locator(".project-instructions").inner_text()
        work.click("#close-instructions")
    work.click(".rating-stop[data-value='4']")
    work.click(".save-item")
    work.locator(".item-status.ok").wait_for()
    annotator.close()
    answer = Annotation.objects.get(project=project, worker__user__username="anna")
    assert answer.rating == 4

    # The Hugging Face export, started from the export page as a job (inline here: done when
    # the page comes back), downloaded and loaded.
    page.click("nav.console-nav >> text=Export")
    page.click("button[data-format=hf]")
    page.wait_for_selector("a[data-format=hf]")
    with page.expect_download() as download_info:
        page.click("a[data-format=hf]")
    archive = tmp_path / "hf.zip"
    download_info.value.save_as(archive)
    with zipfile.ZipFile(archive) as bundle:
        bundle.extractall(tmp_path / "hf")
        manifest_json = json.loads(bundle.read("MANIFEST.json"))
    assert manifest_json["format"] == "hf"
    loaded = datasets.load_dataset("parquet", data_dir=str(tmp_path / "hf"),
                                   cache_dir=str(tmp_path / "cache"))
    # Every item has CLAIRE's imported ratings; anna's answer is among its item's.
    assert sum(loaded[split].num_rows for split in loaded) == 100
    anna = AnonymousIds().get(answer.worker.pk, answer.worker.provider,
                              answer.worker.external_id)
    theirs = [json.loads(entry["answer"]) for split in loaded for row in loaded[split]
              for entry in row["annotations"] if entry["worker"] == anna]
    assert theirs == [{"rating": 4}]
    assert "CC BY-NC-SA 3.0" in (tmp_path / "hf" / "README.md").read_text()
