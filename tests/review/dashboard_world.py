"""A CLAIRE project answered by local annotators, MTurk workers and a Prolific participant,
with every kind of count (counted, rejected, imported, superseded), money spent and committed
in two currencies, a flag and a block: what the dashboard tests look at."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from annotation import models
from annotation.services.annotations import annotation_state
from tests.factories import claire_sample, local_worker, prolific_study_hit, publish_hit

DAY_ONE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _answer(item, worker, *, source, rating, seconds, day=0, assignment=None,
            review_status="pending", superseded=False):
    state = annotation_state(source=source, review_status=review_status,
                             superseded=superseded)
    return models.Annotation.objects.create(
        project=item.project, item=item, worker=worker, source=source, state=state,
        rating=rating, duration_ms=seconds * 1000, assignment=assignment,
        review_status=review_status,
        submitted_at=DAY_ONE + timedelta(days=day, minutes=item.pk % 50))


def mixed_crowd_project():
    """``(project, workers by name)``: 5 dev fillers (redundancy 4)."""
    project, items = claire_sample(slug="mixed-crowd")
    project.redundancy = {"train": 2, "dev": 4, "test": 4}
    project.save(update_fields=["redundancy"])
    ann, bob = local_worker("ann"), local_worker("bob")
    turk = models.Worker.objects.create(provider="mturk", external_id="A1TURKWORKER")
    clicker = models.Worker.objects.create(provider="mturk", external_id="A2RANDOMCLICK")
    participant = models.Worker.objects.create(provider="prolific",
                                               external_id="5f0c0ffee0c0ffee0c0ffee0")
    importer = models.Worker.objects.create(provider="local", external_id="dataset")

    hit = publish_hit(project, hit_id="HITDASH", items=items, max_assignments=2)
    models.Batch.objects.filter(pk=hit.batch_id).update(reward_cents=150)
    approved = models.Assignment.objects.create(
        hit=hit, worker=turk, provider_assignment_id="ASGTURK",
        status=models.Assignment.Status.APPROVED, submitted_at=DAY_ONE)
    clicked = models.Assignment.objects.create(
        hit=hit, worker=clicker, provider_assignment_id="ASGCLICK",
        status=models.Assignment.Status.SUBMITTED, submitted_at=DAY_ONE)
    study = prolific_study_hit(project, study_id="STUDYDASH", items=items)
    models.Batch.objects.filter(pk=study.batch_id).update(reward_cents=200)
    session = models.Assignment.objects.create(
        hit=study, worker=participant, provider_assignment_id="SESSIONDASH",
        status=models.Assignment.Status.SUBMITTED, submitted_at=DAY_ONE)
    models.Bonus.objects.create(assignment=approved, amount_cents=50, reason="Careful work",
                                unique_request_token="bonus-paid", sent_at=DAY_ONE)
    models.Bonus.objects.create(assignment=session, amount_cents=30, reason="Thanks",
                                unique_request_token="bonus-unpaid")

    good = [5, 4, 2, 1, 3]
    for k, item in enumerate(items):
        _answer(item, ann, source="local", rating=good[k], seconds=20 + k, day=0,
                review_status="approved")
        older = _answer(item, bob, source="local", rating=3, seconds=9, day=0,
                        superseded=True)
        newer = _answer(item, bob, source="local", rating=good[k], seconds=18, day=1,
                        review_status="rejected" if k == 0 else "pending")
        newer.supersedes = older
        newer.save(update_fields=["supersedes"])
        _answer(item, turk, source="mturk", rating=good[k], seconds=30, day=1,
                assignment=approved, review_status="approved")
        _answer(item, clicker, source="mturk", rating=(k * 3) % 5 + 1, seconds=2, day=2,
                assignment=clicked)
        _answer(item, participant, source="prolific", rating=good[k], seconds=40, day=2,
                assignment=session)
        _answer(item, importer, source="import", rating=float(good[k]), seconds=1, day=0)
    models.Flag.objects.create(project=project, worker=clicker, reason="too_fast", score=0.9,
                               raised_by=models.Flag.RaisedBy.REVIEWER,
                               fingerprint=f"too_fast:worker:{clicker.pk}")
    models.WorkerProjectBlock.objects.create(worker=clicker, project=project)
    return project, {"ann": ann, "bob": bob, "turk": turk, "clicker": clicker,
                     "participant": participant, "importer": importer}
