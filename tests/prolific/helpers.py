"""Launching a Prolific batch in tests, through the one launch service."""

from __future__ import annotations

from annotation.models import Batch
from annotation.services.batches.plan import LaunchOptions, batch_launch, batch_plan


def prolific_options(**overrides) -> LaunchOptions:
    values = {"title": "Rate fillers", "reward_cents": 150, "items_per_hit": 5,
              "splits": ("dev",), "provider": "prolific", "estimated_minutes": 10,
              "assignment_duration_seconds": 30 * 60, "min_percent_approved": 95}
    values.update(overrides)
    return LaunchOptions(**values)


def launch_prolific(project, capture, **overrides) -> Batch:
    """Plan, confirm and launch; the publish job runs inline when ``capture`` executes it."""
    options = prolific_options(**overrides)
    plan = batch_plan(project=project, options=options)
    with capture(execute=True):
        batch = batch_launch(project=project, options=options,
                             confirmed_total_cents=plan.estimate.total_cents)
    batch.refresh_from_db()
    return batch


def page_saves(hit, participant: str, session_id: str, *, rating: int = 4,
               items: int | None = None, finish: bool = False):
    """What the participant's task page stores for a Prolific session, through the services
    it uses: the participant's Worker and the session's Assignment (created on the first
    save), one answer per item (``items`` of them; all by default), and, with ``finish``, the
    session marked submitted."""
    import uuid

    from django.utils import timezone

    from annotation.models import Annotation, Assignment, Item, Worker
    from annotation.payloads import validate_payload
    from annotation.selectors.annotate import item_context
    from annotation.services.annotations import annotation_submit, assignment_mark_submitted

    worker, _ = Worker.objects.get_or_create(provider=Worker.Provider.PROLIFIC,
                                             external_id=participant)
    assignment, _ = Assignment.objects.get_or_create(
        provider_assignment_id=session_id,
        defaults={"hit": hit, "worker": worker, "status": Assignment.Status.ACCEPTED,
                  "accepted_at": timezone.now()})
    chosen = list(Item.objects.filter(hititem__hit=hit).order_by("hititem__order"))
    for item in chosen[:items]:
        context = item_context(item)
        annotation_submit(worker=worker, item=item,
                          clean=validate_payload(item.project.kind, {"rating": rating}, context),
                          context=context, source=Annotation.Source.PROLIFIC,
                          client_token=uuid.uuid4().hex, assignment=assignment,
                          provenance={"provider": "prolific", "session_id": session_id})
    if finish:
        assignment_mark_submitted(assignment=assignment)
    return assignment


def participant_works(simulator, hit, *, finish: bool = True, code: str | None = None,
                      items: int | None = None, rating: int = 4):
    """A participant starts the study at Prolific (the stand-in's side door), saves work on
    our task page and, with ``finish``, completes with the batch's completion code."""
    participant = simulator.participant()
    session = simulator.start(participant, hit.provider_hit_id)["session_id"]
    assignment = page_saves(hit, participant, session, items=items, rating=rating,
                            finish=finish)
    if finish:
        simulator.complete(session, code or hit.batch.completion_code)
    return assignment
