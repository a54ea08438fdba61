"""The ways in: launch_batch / collect_batch / review commands, the staff API and pages, and
the exact MTurk requests (botocore Stubber through the provider)."""

from __future__ import annotations

import random
from io import StringIO

import boto3
import pytest
from botocore.stub import ANY, Stubber
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Assignment, Batch, Bonus, Hit, Worker
from annotation.providers.mturk import MTurkConfig, MTurkProvider
from annotation.services import decisions
from annotation.services.batches import plan as planning
from annotation.services.batches import publish
from tests.factories import batch_plausibility_project, page_answer_fields

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_launch_batch_shows_the_estimate_and_launches_only_with_yes(
        fake, simulator, django_capture_on_commit_callbacks):
    batch_plausibility_project(items=12)
    shown = run("launch_batch", "claire", "--split", "dev", "--reward", "0.50",
                "--title", "Rate fillers", "--min-approval", "90", "--min-approved", "500")
    # The fake fixture points MTURK_ENDPOINT_URL at the stand-in, and the command says so.
    assert f"3 HITs, 12 assignments on the MTurk endpoint {fake.base_url}" in shown
    assert "rewards $6.00 + MTurk fee $1.20 = $7.20" in shown
    assert "re-run with --yes" in shown
    assert not Batch.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        out = run("launch_batch", "claire", "--split", "dev", "--reward", "0.50",
                  "--title", "Rate fillers", "--min-approval", "90", "--min-approved", "500",
                  "--lifetime", "2d", "--duration", "30m", "--yes")
    batch = Batch.objects.get()
    assert f"batch {batch.pk} launched" in out
    assert (batch.status, batch.live, batch.lifetime_seconds,
            batch.assignment_duration_seconds) == ("published", False, 172800, 1800)
    hit = batch.hits.first()
    simulator.register_worker("ACLI1", percent_approved=95, number_approved=600)
    accepted = simulator.accept("ACLI1", hit.provider_hit_id)
    simulator.external_submit(accepted["assignment_id"], page_answer_fields(
        hit.items.order_by("hititem__order").values_list("pk", flat=True)))
    collected = run("collect_batch", str(batch.pk))
    assert "1 new, 5 annotations stored" in collected
    assert "0 new, 0 annotations stored" in run("collect_batch", "--all")
    listing = run("review", "list")
    assert accepted["assignment_id"] in listing and "1 assignment(s)" in listing
    with django_capture_on_commit_callbacks(execute=True):
        run("review", "reject", accepted["assignment_id"], "--message", "Random ratings")
        run("review", "bonus", accepted["assignment_id"], "--amount", "0.10",
            "--reason", "For your time")
        run("review", "block", "ACLI1", "--reason", "Random ratings")
    assert fake.world.assignments[accepted["assignment_id"]].status == "Rejected"
    assert Bonus.objects.get().sent_at is not None
    assert Worker.objects.get(external_id="ACLI1").is_blocked
    assert simulator.ledger()["blocks"] == {"ACLI1": "Random ratings"}
    assert "0 assignment(s)" in run("review", "list")


def test_launch_batch_errors_are_clear():
    batch_plausibility_project(items=1)
    with pytest.raises(CommandError, match="no project"):
        run("launch_batch", "nope", "--split", "dev", "--reward", "0.5", "--title", "t")
    with pytest.raises(CommandError, match="more than two decimals"):
        run("launch_batch", "claire", "--split", "dev", "--reward", "0.505", "--title", "t")
    with pytest.raises(CommandError, match="not a duration"):
        run("launch_batch", "claire", "--split", "dev", "--reward", "0.5", "--title", "t",
            "--lifetime", "soon")
    with pytest.raises(CommandError, match="no assignment"):
        run("review", "reject", "NOPE", "--message", "x")


def test_api_estimates_then_launches_with_confirm(staff_client, fake,
                                                  django_capture_on_commit_callbacks):
    batch_plausibility_project(items=6)
    body = {"project": "claire", "title": "Rate", "reward_cents": 50, "splits": ["dev"]}
    estimate = staff_client.post("/api/batches/launch/", body, content_type="application/json")
    assert estimate.status_code == 200, estimate.content
    assert estimate.json()["launched"] is False
    # 2 HITs x 4 assignments x (50c reward + 10c fee)
    assert estimate.json()["estimate"]["total_cents"] == 2 * 4 * 60
    assert not Batch.objects.exists()
    wrong = staff_client.post("/api/batches/launch/", {**body, "confirm": True,
                                                       "confirmed_total_cents": 1},
                              content_type="application/json")
    assert wrong.status_code == 400 and "confirm" in wrong.json()
    with django_capture_on_commit_callbacks(execute=True):
        launched = staff_client.post("/api/batches/launch/", {
            **body, "confirm": True, "confirmed_total_cents": 480},
            content_type="application/json")
    assert launched.status_code == 201, launched.content
    batch_id = launched.json()["batch"]["id"]
    listing = staff_client.get("/api/batches/").json()
    assert [row["id"] for row in listing] == [batch_id]
    detail = staff_client.get(f"/api/batches/{batch_id}/").json()
    assert detail["status"] == "published" and detail["published_hit_count"] == 2
    assert detail["hit_statuses"] == {"assignable": 2}
    assert "batch_published" in [event["kind"] for event in detail["events"]]


def test_api_is_staff_only(annotator_client):
    assert annotator_client.get("/api/batches/").status_code == 403
    assert annotator_client.post("/api/batches/launch/", {}).status_code == 403


def test_staff_page_form_estimate_confirm_and_detail(staff_client, fake, simulator,
                                                     django_capture_on_commit_callbacks):
    batch_plausibility_project(items=6)
    form = {"project": "claire", "title": "Rate <fillers>", "splits": ["dev"],
            "items_per_hit": "5", "reward": "0.50", "lifetime": "7d", "duration": "1h",
            "auto_approve": "3d", "locales": "US,GB", "provider": "mturk"}
    assert staff_client.get("/staff/batches/new/").status_code == 200
    estimate = staff_client.post("/staff/batches/new/", form)
    page = estimate.content.decode()
    assert "Cost estimate" in page and "$4.80" in page
    assert 'name="confirmed_total_cents" value="480"' in page
    assert not Batch.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        launched = staff_client.post("/staff/batches/new/", {
            **form, "confirm": "yes", "confirmed_total_cents": "480"})
    batch = Batch.objects.get()
    assert launched.status_code == 302 and launched.url == f"/staff/batches/{batch.pk}/"
    detail = staff_client.get(launched.url).content.decode()
    # Events written for people (issue 24): words, never a Python dict.
    assert "Rate &lt;fillers&gt;" in detail and "batch published" in detail
    assert "estimate: 2 HITs, 8 assignments, $4.80 in all" in detail
    assert "{&#x27;" not in detail and "{'" not in detail
    assert batch.hits.first().provider_hit_id in detail
    assert "sandbox" in detail
    assert str(batch.pk) in staff_client.get("/staff/batches/").content.decode()


def test_staff_page_shows_a_permanent_error_and_resumes(staff_client, fake, simulator,
                                                        django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=5)
    simulator.inject_fault("CreateHITWithHITType", error="RequestError",
                           message="Insufficient funds")
    options = planning.LaunchOptions(title="Rate", reward_cents=50, splits=("dev",))
    plan = planning.batch_plan(project=project, options=options)
    with django_capture_on_commit_callbacks(execute=True):
        batch = planning.batch_launch(project=project, options=options,
                                     confirmed_total_cents=plan.estimate.total_cents)
    page = staff_client.get(f"/staff/batches/{batch.pk}/").content.decode()
    assert "Insufficient funds" in page and "Resume publishing" in page
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/batches/{batch.pk}/resume/")
    assert Batch.objects.get(pk=batch.pk).status == "published"


def test_staff_pages_need_staff(annotator_client):
    assert annotator_client.get("/staff/batches/").status_code == 403  # logged in, no role
    anonymous = Client().get("/staff/batches/")
    assert anonymous.status_code == 302 and "login" in anonymous.url


def test_exact_create_hit_requests_through_the_provider(django_capture_on_commit_callbacks,
                                                        settings, monkeypatch):
    settings.UNPACK_PUBLIC_URL = "https://unpack.example.org"
    project = batch_plausibility_project(items=2)
    monkeypatch.setattr(planning, "enqueue_after_commit", lambda *args: None)
    options = planning.LaunchOptions(title="Rate", reward_cents=50, splits=("dev",),
                                    min_percent_approved=90, keywords="wikihow, rating")
    plan = planning.batch_plan(project=project, options=options)
    batch = planning.batch_launch(project=project, options=options,
                                 confirmed_total_cents=plan.estimate.total_cents)
    hit = batch.hits.get()
    client = boto3.client("mturk", region_name="us-east-1", aws_access_key_id="AKIDFAKE",
                          aws_secret_access_key="fake")
    provider = MTurkProvider(MTurkConfig(), client=client, sleep=lambda _s: None,
                             rng=random.Random(1))
    with Stubber(client) as stubber:
        stubber.add_response("create_hit_type", {"HITTypeId": "HTYPE1"}, {
            "AutoApprovalDelayInSeconds": 3 * 24 * 3600,
            "AssignmentDurationInSeconds": 3600,
            "Reward": "0.50",
            "Title": "Rate",
            "Description": "Rate",
            "Keywords": "wikihow, rating",
            "QualificationRequirements": [
                {"QualificationTypeId": "00000000000000000071", "Comparator": "In",
                 "LocaleValues": [{"Country": "US"}, {"Country": "GB"}]},
                {"QualificationTypeId": "000000000000000000L0",
                 "Comparator": "GreaterThanOrEqualTo", "IntegerValues": [90]},
            ],
        })
        stubber.add_response("create_hit_with_hit_type", {"HIT": {
            "HITId": "HIT1", "HITTypeId": "HTYPE1", "HITStatus": "Assignable",
            "MaxAssignments": 4}}, {
            "HITTypeId": "HTYPE1", "MaxAssignments": 4, "LifetimeInSeconds": 7 * 24 * 3600,
            "Question": ANY, "UniqueRequestToken": hit.unique_request_token,
            "RequesterAnnotation": f"unpack batch {batch.pk} {hit.unique_request_token}",
        })
        publish.batch_publish(batch_id=batch.pk, provider=provider)
        stubber.assert_no_pending_responses()
    hit.refresh_from_db()
    assert hit.provider_hit_id == "HIT1"
    assert Batch.objects.get(pk=batch.pk).status == "published"


def test_exact_decision_requests(django_capture_on_commit_callbacks, monkeypatch):
    project = batch_plausibility_project(items=1)
    batch = Batch.objects.create(project=project, provider="mturk", title="t", status="published")
    hit = Hit.objects.create(batch=batch, unique_request_token="t1", provider_hit_id="HIT9")
    worker = Worker.objects.create(provider="mturk", external_id="AW9")
    assignment = Assignment.objects.create(hit=hit, worker=worker, provider_assignment_id="AS9",
                                           status="submitted")
    monkeypatch.setattr(decisions, "enqueue_after_commit", lambda *args: None)
    decisions.assignment_reject(assignment_id=assignment.pk, message="Too short")
    bonus = decisions.bonus_create(assignment_id=assignment.pk, amount_cents=5,
                                   reason="Thanks").bonus
    client = boto3.client("mturk", region_name="us-east-1", aws_access_key_id="AKIDFAKE",
                          aws_secret_access_key="fake")
    provider = MTurkProvider(MTurkConfig(), client=client, sleep=lambda _s: None)
    with Stubber(client) as stubber:
        stubber.add_response("reject_assignment", {},
                             {"AssignmentId": "AS9", "RequesterFeedback": "Too short"})
        stubber.add_response("send_bonus", {}, {
            "WorkerId": "AW9", "AssignmentId": "AS9", "BonusAmount": "0.05",
            "Reason": "Thanks", "UniqueRequestToken": bonus.unique_request_token})
        assert decisions.assignment_sync_decision(assignment_id=assignment.pk, provider=provider)
        assert decisions.bonus_send(bonus_id=bonus.pk, provider=provider).sent_at is not None
        # Already synced and sent: a retried job makes no call at all.
        assert decisions.assignment_sync_decision(assignment_id=assignment.pk, provider=provider)
        decisions.bonus_send(bonus_id=bonus.pk, provider=provider)
        stubber.assert_no_pending_responses()


@pytest.mark.django_db
def test_launch_batch_names_the_sandbox_when_no_endpoint_is_set(settings):
    settings.MTURK_ENDPOINT_URL = None
    batch_plausibility_project(items=2)
    shown = run("launch_batch", "claire", "--split", "dev", "--reward", "0.50",
                "--title", "Rate fillers")
    assert "assignments on MTurk sandbox" in shown
    assert not Batch.objects.exists()
