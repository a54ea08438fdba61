"""Prolific end to end: a real Celery worker on Redis publishes studies to and collects from the
Prolific stand-in; simulated participants start sessions through its side door and save work
on our side; returned and timed-out sessions free their items; review, a bonus paid once under
retries and a 429, a block through the blocklist group, and the export."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from annotation import tasks
from annotation.exporters import export_project
from annotation.fake_prolific import FakeProlific, FakeProlificSimulator, SimulatorRefused
from annotation.models import Annotation, Assignment, Batch, Bonus, Worker
from annotation.selectors.qc import exportable_annotations
from annotation.services import decisions
from annotation.services.batches.plan import batch_launch, batch_plan
from tests.factories import batch_plausibility_project, prolific_options, prolific_page_work
from tests.integration.conftest import (
    running_worker,
    service_environment,
    wait_for,
    wait_for_idle_worker,
)

pytestmark = pytest.mark.integration

TOKEN = "e2e-token"
WORKSPACE = "wsp00000000000000000000e2e"
REASON = ("Every rating in this session was the same and the attention item was answered "
          "wrongly, so the ratings cannot be used for the study.")


@pytest.fixture(scope="module")
def fake_prolific_server() -> Iterator[FakeProlific]:
    with FakeProlific() as server:
        yield server


@pytest.fixture(scope="module")
def prolific_worker(integration_services, django_db_setup, django_db_blocker,
                    fake_mturk_server, fake_prolific_server) -> Iterator[subprocess.Popen]:
    """A Celery worker whose PROLIFIC_* settings point at the stand-in in this process."""
    redis_url = integration_services
    env = {**service_environment(redis_url, django_db_blocker, fake_mturk_server),
           "PROLIFIC_API_URL": fake_prolific_server.base_url,
           "PROLIFIC_API_TOKEN": TOKEN, "PROLIFIC_WORKSPACE_ID": WORKSPACE}
    with running_worker(env, redis_url) as worker:
        yield worker


@pytest.fixture
def prolific(prolific_worker, fake_prolific_server, transactional_db,
             monkeypatch) -> FakeProlific:
    fake_prolific_server.world.reset()
    for name, value in (("PROLIFIC_API_URL", fake_prolific_server.base_url),
                        ("PROLIFIC_API_TOKEN", TOKEN), ("PROLIFIC_WORKSPACE_ID", WORKSPACE),
                        ("UNPACK_PUBLIC_URL", "https://unpack.example.org")):
        monkeypatch.setattr(settings, name, value)
    return fake_prolific_server


def published(batch: Batch):
    def check():
        batch.refresh_from_db()
        return batch.status == Batch.Status.PUBLISHED
    return check


def participant_session(sim, client, hit, **page) -> tuple[Assignment, str | None]:
    """A participant starts the study at the stand-in and works on our real task page."""
    started = sim.start(sim.participant(), hit.provider_hit_id)
    code = prolific_page_work(client, started["task_url"], **page)
    return Assignment.objects.get(provider_assignment_id=started["session_id"]), code


def test_prolific_from_launch_to_export(prolific, client, tmp_path):
    sim = FakeProlificSimulator(prolific.base_url)
    # Throttled twice while creating studies: the task retry layer waits and carries on.
    sim.fault("create_study", count=2, status=429, retry_after=1)
    project = batch_plausibility_project(items=6, redundancy={"train": 3, "dev": 3, "test": 3})
    options = prolific_options(items_per_hit=3)  # 2 studies x 3 places
    plan = batch_launch(project=project, options=options,
                        confirmed_total_cents=batch_plan(project=project,
                                                         options=options).estimate.total_cents)
    batch = plan
    wait_for(published(batch), timeout=90, what="the studies to be published")
    hits = list(batch.hits.order_by("pk"))
    assert sorted(prolific.world.studies) == sorted(hit.provider_hit_id for hit in hits)
    assert sim.stats()["calls"]["create_study"] == 2 + 2  # two refused, two made

    # Participants work; on the first study one returns and one times out part-way.
    sessions = {}
    for hit in hits:
        for n in range(3):
            last = hit is hits[0] and n in (1, 2)
            assignment, code = participant_session(sim, client, hit, rating=1 + n,
                                                   items=1 if last else None,
                                                   finish=not last)
            sessions[(hit.pk, n)] = assignment
            if not last:
                assert code == batch.completion_code
                sim.complete(assignment.provider_assignment_id, code)
    sim.return_session(sessions[(hits[0].pk, 1)].provider_assignment_id)
    sim.time_out(sessions[(hits[0].pk, 2)].provider_assignment_id)
    tasks.collect_open_batches.delay()
    wait_for(lambda: Assignment.objects.filter(status=Assignment.Status.SUBMITTED).count() == 4,
             timeout=60, what="the finished sessions to be collected")
    wait_for(lambda: Assignment.objects.filter(status__in=("returned", "abandoned")).count()
             == 2, timeout=60, what="the given-back sessions to be released")
    wait_for_idle_worker()
    assert exportable_annotations(project=project).count() == 4 * 3
    # Their items are free: two new participants take the places back and finish.
    for _ in range(2):
        assignment, code = participant_session(sim, client, hits[0])
        sim.complete(assignment.provider_assignment_id, code)
    tasks.collect_batch.delay(batch.pk)
    wait_for(lambda: exportable_annotations(project=project).count() == 6 * 3, timeout=60,
             what="the replacements' work to count")
    wait_for_idle_worker()

    # Review: bulk approve all but one, reject that one, bonus, block.
    bad = sessions[(hits[1].pk, 0)]
    good = sessions[(hits[0].pk, 0)]
    others = Assignment.objects.filter(status=Assignment.Status.SUBMITTED).exclude(pk=bad.pk)
    decisions.assignments_approve(assignment_ids=list(others.values_list("pk", flat=True)))
    decisions.assignment_reject(assignment_id=bad.pk, message=REASON,
                                rejection_category="LOW_EFFORT")
    sim.fault("pay_bonus", count=1, status=429, retry_after=1)
    bonus = decisions.bonus_create(assignment_id=good.pk, amount_cents=40,
                                   reason="Thank you").bonus
    decisions.worker_block(worker_id=bad.worker_id, reason="Random ratings")
    wait_for(lambda: not Assignment.objects.filter(decision_synced=False).exists(),
             what="the decisions to reach Prolific")
    wait_for(lambda: Bonus.objects.get(pk=bonus.pk).sent_at, timeout=60,
             what="the bonus to be paid after the 429")
    wait_for(lambda: Worker.objects.get(pk=bad.worker_id).block_synced, what="the block")
    wait_for_idle_worker()
    world = prolific.world
    assert world.submissions[bad.provider_assignment_id].status == "REJECTED"
    assert world.submissions[good.provider_assignment_id].status == "APPROVED"
    assert sim.stats()["calls"]["bulk_approve"] == 1
    assert [payment["cents"] for payment in world.payments] == [40]
    # A replayed bonus job (redelivered after a crash) pays nothing twice: Prolific's list of
    # the submission's payments shows it paid, so it is marked paid without a second pay.
    Bonus.objects.filter(pk=bonus.pk).update(sent_at=None)
    tasks.send_bonus.delay(bonus.pk)
    wait_for(lambda: Bonus.objects.get(pk=bonus.pk).sent_at, what="the replayed bonus job")
    wait_for_idle_worker()
    assert [payment["cents"] for payment in world.payments] == [40]
    assert good.events.filter(kind="bonus_found_paid").exists()
    # The blocked participant cannot take a later study.
    later = batch_plausibility_project(items=1, slug="later")
    options = prolific_options()
    batch2 = batch_launch(project=later, options=options, confirmed_total_cents=batch_plan(
        project=later, options=options).estimate.total_cents)
    wait_for(published(batch2), what="the later study")
    with pytest.raises(SimulatorRefused) as refused:
        sim.start(bad.worker.external_id, batch2.hits.get().provider_hit_id)
    assert refused.value.code == "blocked"

    # Export: counted work is the approved sessions'; the audit export (jsonl) also keeps the
    # rejected session, with its status, and never the answers of released sessions.
    assert exportable_annotations(project=project).count() == 5 * 3
    written = export_project(project=project, format_name="jsonl", out_dir=tmp_path)
    rows = [json.loads(line) for file in written for line in
            Path(file.path).read_text().splitlines() if line.strip()]
    assert len(rows) == 6 * 3
    assert sum(row["review_status"] == "rejected" for row in rows) == 3
    released = {sessions[(hits[0].pk, n)].provider_assignment_id for n in (1, 2)}
    assert not released & {row["assignment_id"] for row in rows}
    participants = set(Worker.objects.filter(provider="prolific")
                       .values_list("external_id", flat=True))
    assert not participants & {row["worker_id"] for row in rows}
    assert Annotation.objects.filter(source=Annotation.Source.PROLIFIC).count() == 6 * 3 + 1 + 1


def test_three_studies_publish_on_the_worker_with_one_call_in_three_throttled(
        prolific):
    FakeProlificSimulator(prolific.base_url).throttle_every(3, retry_after=0.05)
    project = batch_plausibility_project(items=15)
    options = prolific_options()
    batch = batch_launch(project=project, options=options,
                         confirmed_total_cents=batch_plan(project=project,
                                                          options=options).estimate.total_cents)
    wait_for(published(batch), timeout=120, what="3 studies published through throttling")
    wait_for_idle_worker()
    assert len(prolific.world.studies) == 3
    calls = prolific.world.calls
    assert calls["list_studies"] == 1 and calls["list_participant_groups"] == 1
    total = sum(calls.values())
    assert total - total // 3 == 1 + 1 + 1 + 3 + 3
    assert Batch.objects.get(pk=batch.pk).error == ""
