"""Launching a Prolific batch: options, cost estimate (service fee and VAT), the minimum hourly
rate, one study per HIT made from the batch, no duplicate study after a killed publish, and
every entry point (service, command, API, staff page)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotation import tasks
from annotation.models import Batch, Hit
from annotation.providers.prolific import URL_PLACEHOLDERS
from annotation.services.batches import plan as planning
from annotation.services.batches import publish
from annotation.services.batches.plan import batch_plan
from tests.factories import batch_plausibility_project, launch_prolific, prolific_options

pytestmark = pytest.mark.django_db


def test_the_estimate_adds_prolifics_service_fee_and_vat_on_it_as_separate_lines(
        prolific_app, settings):
    settings.PROLIFIC_VAT_PERCENT = "20"
    project = batch_plausibility_project(items=12)  # 3 HITs x 4 places
    estimate = batch_plan(project=project, options=prolific_options()).estimate
    assert (estimate.hits, estimate.assignments, estimate.reward_cents) == (3, 12, 1800)
    assert estimate.fee_cents == 599  # 33.3% of $18.00, to the cent
    assert estimate.vat_cents == 120  # 20% of the fee
    assert estimate.total_cents == 1800 + 599 + 120
    assert estimate.as_dict()["provider"] == "prolific"


def test_a_reward_below_the_minimum_hourly_rate_is_refused_with_the_rate_shown(prolific_app):
    project = batch_plausibility_project(items=4)
    with pytest.raises(ValidationError) as refused:
        batch_plan(project=project, options=prolific_options(reward_cents=100,
                                                              estimated_minutes=15))
    assert refused.value.message_dict["reward"] == [
        "£1.00 for 15 minutes is £4.00 an hour; Prolific's minimum is £8.00 an hour"]
    # $2.00 for 15 minutes is exactly $8.00 an hour: accepted.
    batch_plan(project=project, options=prolific_options(reward_cents=200,
                                                         estimated_minutes=15))


@pytest.mark.parametrize(("overrides", "field"), [
    ({"estimated_minutes": None}, "estimated_minutes"),
    ({"estimated_minutes": 40}, "duration"),  # above the 30-minute maximum allowed time
    ({"devices": ("desktop", "toaster")}, "devices"),
    ({"devices": ()}, "devices"),
    ({"first_languages": ("19", "en glish")}, "first_languages"),
    ({"qualification_id": 1}, "qualification"),
])
def test_prolific_options_are_checked_with_the_field_named(prolific_app, overrides, field):
    with pytest.raises(ValidationError) as refused:
        prolific_options(**overrides).validate()
    assert field in refused.value.message_dict


def test_launch_makes_one_study_per_hit_from_the_batch(prolific_app,
                                                       django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=12)
    batch = launch_prolific(project, django_capture_on_commit_callbacks,
                            devices=("desktop", "tablet"), first_languages=("19",),
                            min_hits_approved=50)
    assert batch.status == Batch.Status.PUBLISHED, batch.error
    hits = list(batch.hits.order_by("pk"))
    studies = prolific_app.world.studies
    assert sorted(studies) == sorted(hit.provider_hit_id for hit in hits)
    assert all(hit.status == Hit.Status.ASSIGNABLE for hit in hits)
    body = studies[hits[0].provider_hit_id].body
    assert studies[hits[0].provider_hit_id].status == "ACTIVE"
    assert body["total_available_places"] == hits[0].max_assignments == 4
    assert body["external_study_url"].startswith(
        "https://unpack.example.org/prolific/task/claire/?")
    assert all(placeholder in body["external_study_url"]
               for placeholder in URL_PLACEHOLDERS.values())
    assert (body["reward"], body["estimated_completion_time"],
            body["maximum_allowed_time"]) == (150, 10, 30)
    assert body["device_compatibility"] == ["desktop", "tablet"]
    codes = {code["code_type"]: code["code"] for code in body["completion_codes"]}
    assert codes == {"COMPLETED": batch.completion_code,
                     "FAILED_ATTENTION_CHECK": batch.failed_check_code}
    filters = {entry["filter_id"]: entry for entry in body["filters"]}
    assert filters["first-language"]["selected_values"] == ["19"]
    assert filters["approval_rate"]["selected_range"] == {"lower": 95, "upper": 100}
    assert filters["approval_numbers"]["selected_range"] == {"lower": 50}
    assert "participant_group_blocklist" in filters
    assert body["internal_name"] == f"unpack batch {batch.pk} [{hits[0].unique_request_token}]"


def test_completion_codes_are_two_distinct_unguessable_codes_per_batch(
        prolific_app, django_capture_on_commit_callbacks):
    first = launch_prolific(batch_plausibility_project(items=4), django_capture_on_commit_callbacks)
    second = launch_prolific(batch_plausibility_project(items=4, slug="other"),
                             django_capture_on_commit_callbacks)
    codes = [first.completion_code, first.failed_check_code, second.completion_code,
             second.failed_check_code]
    assert len(set(codes)) == 4
    assert all(len(code) == 12 and code.isalnum() for code in codes)


def test_a_publish_killed_between_study_created_and_id_stored_resumes_without_a_duplicate(
        prolific_app, django_capture_on_commit_callbacks, monkeypatch):
    project = batch_plausibility_project(items=12)  # three studies
    real_record = publish._record_published_hit
    calls = {"n": 0}

    def killed_on_the_second(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt("worker killed after the study was made")
        return real_record(*args, **kwargs)

    monkeypatch.setattr(publish, "_record_published_hit", killed_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        launch_prolific(project, django_capture_on_commit_callbacks)
    batch = Batch.objects.get()
    assert len(prolific_app.world.studies) == 2  # the second exists, its id was never stored
    assert batch.hits.filter(provider_hit_id__isnull=False).count() == 1

    tasks.publish_batch(batch.pk)  # resumed (the periodic job or "Resume publishing")

    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED
    assert len(prolific_app.world.studies) == 3
    assert sorted(prolific_app.world.studies) == sorted(
        batch.hits.values_list("provider_hit_id", flat=True))


def test_a_create_throttled_past_its_retries_leaves_the_batch_publishing_and_a_resume_finishes(
        prolific_app, simulator, django_capture_on_commit_callbacks, settings):
    settings.UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS = 2
    simulator.fault("create_study", count=2, status=429, retry_after=0.01)
    project = batch_plausibility_project(items=8)
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    assert batch.status == Batch.Status.PUBLISHING
    # Inline nothing retries later: the batch says so and names the command.
    assert "will retry" not in batch.error
    assert f"launch_batch --resume {batch.pk}" in batch.error
    tasks.publish_batch(batch.pk)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED and not batch.error
    assert len(prolific_app.world.studies) == batch.hits.count() == 2


def test_the_task_retry_waits_at_least_what_retry_after_asked(monkeypatch):
    """ProviderJob (the one retry layer) honours Retry-After on a worker."""
    from celery import Task

    from annotation.providers import ProviderThrottled

    seen = {}
    monkeypatch.setattr(Task, "retry", lambda self, *args, **kwargs: seen.update(kwargs))
    throttled = ProviderThrottled("slow down", code="429")
    throttled.retry_after_seconds = 30.0
    task = tasks.publish_batch
    task.push_request(is_eager=False)
    try:
        task.retry(exc=throttled, countdown=2)
    finally:
        task.pop_request()
    assert seen["countdown"] == 30.0


def test_launch_batch_command_launches_on_prolific(prolific_app,
                                                   django_capture_on_commit_callbacks):
    batch_plausibility_project(items=4)
    out = StringIO()
    call_command("launch_batch", "claire", "--split", "dev", "--reward", "1.50", "--title",
                 "Rate", "--provider", "prolific", "--estimated-minutes", "10",
                 "--duration", "30m", "--device", "desktop", "--first-language", "19",
                 stdout=out)
    text = out.getvalue()
    assert "1 studies, 4 places on Prolific" in text
    assert "Prolific service fee (33.3%) £2.00 + VAT on the fee (0%) £0.00 = £8.00" in text
    assert not Batch.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("launch_batch", "claire", "--split", "dev", "--reward", "1.50",
                     "--title", "Rate", "--provider", "prolific", "--estimated-minutes", "10",
                     "--duration", "30m", "--yes", stdout=out)
    batch = Batch.objects.get()
    assert batch.provider == "prolific" and batch.status == Batch.Status.PUBLISHED
    with pytest.raises(CommandError, match=r"Prolific.s minimum is £8\.00 an hour"):
        call_command("launch_batch", "claire", "--split", "dev", "--reward", "0.50",
                     "--title", "Rate", "--provider", "prolific", "--estimated-minutes", "10",
                     stdout=out)
    with pytest.raises(CommandError, match="estimated completion time"):
        call_command("launch_batch", "claire", "--split", "dev", "--reward", "1.50",
                     "--title", "Rate", "--provider", "prolific", stdout=out)


def test_api_launches_on_prolific_and_names_the_field_in_error(prolific_app, staff_client):
    client = staff_client
    batch_plausibility_project(items=4)
    body = {"project": "claire", "title": "Rate", "reward_cents": 150, "splits": ["dev"],
            "provider": "prolific", "estimated_minutes": 10,
            "assignment_duration_seconds": 1800, "devices": ["desktop", "mobile"],
            "first_languages": ["19"], "min_percent_approved": 90}
    answer = client.post("/api/batches/launch/", json.dumps(body),
                         content_type="application/json")
    assert answer.status_code == 200, answer.content
    estimate = answer.json()["estimate"]
    assert (estimate["reward_cents"], estimate["fee_cents"], estimate["vat_cents"],
            estimate["provider"]) == (600, 200, 0, "prolific")
    launched = client.post("/api/batches/launch/", json.dumps(
        {**body, "confirm": True, "confirmed_total_cents": estimate["total_cents"]}),
        content_type="application/json")
    assert launched.status_code == 201, launched.content
    batch = launched.json()["batch"]
    assert batch["provider"] == "prolific" and batch["estimated_minutes"] == 10
    assert batch["device_compatibility"] == ["desktop", "mobile"]
    refused = client.post("/api/batches/launch/", json.dumps(
        {**body, "reward_cents": 50}), content_type="application/json")
    assert refused.status_code == 400
    assert "Prolific's minimum" in refused.json()["reward"][0]
    schema = client.get("/api/schema/")
    assert b"estimated_minutes" in schema.content and b"prolific" in schema.content


def test_staff_page_shows_prolifics_fields_estimate_lines_and_errors(
        prolific_app, staff_client, settings, django_capture_on_commit_callbacks):
    client = staff_client
    settings.PROLIFIC_VAT_PERCENT = "20"
    batch_plausibility_project(items=4)
    page = client.get("/staff/batches/new/")
    assert page.status_code == 200
    assert b'name="estimated_minutes"' in page.content and b"Prolific only" in page.content
    form = {"project": "claire", "title": "Rate", "splits": ["dev"], "items_per_hit": 5,
            "reward": "1.50", "lifetime": "7d", "duration": "30m", "auto_approve": "3d",
            "locales": "", "provider": "prolific", "estimated_minutes": 10,
            "devices": ["desktop"], "first_languages": "19"}
    estimate = client.post("/staff/batches/new/", form)
    assert estimate.status_code == 200
    text = estimate.content.decode()
    assert "Prolific service fee (33.3% of rewards)" in text and "£2.00" in text
    assert "VAT on the service fee (20%)" in text and "£0.40" in text
    total = estimate.context["estimate"].total_cents
    assert total == 600 + 200 + 40
    low = client.post("/staff/batches/new/", {**form, "reward": "0.50"})
    assert low.status_code == 200
    assert "£0.50 for 10 minutes is £3.00 an hour" in low.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post("/staff/batches/new/", {**form, "confirm": "yes",
                                                   "confirmed_total_cents": total})
    batch = Batch.objects.get()
    assert done.status_code == 302 and batch.provider == "prolific"
    assert batch.status == Batch.Status.PUBLISHED
    detail = client.get(f"/staff/batches/{batch.pk}/")
    assert b"Pause every study" in detail.content and b"Prolific study id" in detail.content


def test_staff_page_pauses_resumes_stops_and_adds_places(prolific_app, staff_client,
                                                         django_capture_on_commit_callbacks):
    client = staff_client
    project = batch_plausibility_project(items=4)
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    study = prolific_app.world.studies[hit.provider_hit_id]
    url = f"/staff/batches/{batch.pk}/manage/"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "pause"})
    assert study.status == "PAUSED"
    hit.refresh_from_db()
    assert hit.status == Hit.Status.UNASSIGNABLE
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "resume"})
    assert study.status == "ACTIVE"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "add", "count": "3", "hit": str(hit.pk)})
    hit.refresh_from_db()
    assert hit.max_assignments == 7 == study.body["total_available_places"]
    # A retried add job (same job id) sets the same target, never 3 more.
    tasks.add_assignments.apply(args=[hit.pk, 3], task_id="job-1")
    tasks.add_assignments.apply(args=[hit.pk, 3], task_id="job-1")
    hit.refresh_from_db()
    assert hit.max_assignments == 10 == study.body["total_available_places"]
    bad = client.post(url, {"action": "add", "count": "x"}, follow=True)
    assert b"whole numbers" in bad.content
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "stop"})
    assert study.status in ("AWAITING REVIEW", "COMPLETED")
    assert planning.LAUNCH_PROVIDERS["prolific"] == "Prolific"


@pytest.mark.parametrize("index", range(5))
def test_every_task_kind_launches_on_prolific_from_the_staff_page(
        prolific_app, staff_client, django_capture_on_commit_callbacks, index):
    """The five kinds' shipped samples (the demo's), launched from the staff page alone."""
    from annotation.management.commands.demo import DEMO_DATA, DEMO_PROJECTS
    from annotation.models import Project
    from annotation.services.imports import import_files

    slug, name, fmt, files = DEMO_PROJECTS[index]
    splits = list(dict.fromkeys(split for split, _ in files))
    for split in splits:
        import_files(fmt=fmt, paths=[DEMO_DATA / path for file_split, path in files
                                     if file_split == split],
                     project_slug=slug, split=split, name=name, quiet=True)
    project = Project.objects.get(slug=slug)
    form = {"project": slug, "title": f"Annotate {project.kind}", "splits": splits,
            "items_per_hit": 3, "reward": "2.00", "lifetime": "7d", "duration": "40m",
            "auto_approve": "3d", "locales": "", "provider": "prolific",
            "estimated_minutes": 15, "devices": ["desktop"], "first_languages": ""}
    estimate = staff_client.post("/staff/batches/new/", form)
    assert estimate.status_code == 200 and estimate.context.get("estimate"), \
        estimate.content.decode()[:3000]
    total = estimate.context["estimate"].total_cents
    with django_capture_on_commit_callbacks(execute=True):
        done = staff_client.post("/staff/batches/new/", {**form, "confirm": "yes",
                                                         "confirmed_total_cents": total})
    assert done.status_code == 302
    batch = Batch.objects.get(project=project)
    assert batch.status == Batch.Status.PUBLISHED, batch.error
    assert len(prolific_app.world.studies) == batch.hits.count() > 0
    study = next(iter(prolific_app.world.studies.values()))
    assert f"/prolific/task/{slug}/?" in study.body["external_study_url"]


def test_a_batch_prolific_would_refuse_fails_with_the_reason(prolific_app,
                                                             django_capture_on_commit_callbacks,
                                                             monkeypatch):
    project = batch_plausibility_project(items=4)
    monkeypatch.setattr(planning, "enqueue_after_commit", lambda *args: None)
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    Batch.objects.filter(pk=batch.pk).update(failed_check_code=batch.completion_code)
    tasks.publish_batch(batch.pk)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.FAILED
    assert "study_template" in batch.error and "codes must differ" in batch.error
    assert not prolific_app.world.studies
