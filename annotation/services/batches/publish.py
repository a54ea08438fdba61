"""Publish a launched batch: CreateHITType once, CreateHITWithHITType per pending Hit; resume an
interrupted or failed publish without creating anything twice; cancel a batch that cannot
publish (its items are free again)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from ... import hit_templates
from ...models import (
    Batch,
    Hit,
    Project,
    Qualification,
)
from ...providers import (
    AnnotationProvider,
    HitTypeSpec,
    ProviderError,
    ProviderPermanentError,
    QualificationRequirementSpec,
)
from ...providers.base import LocaleValue
from ..jobs import JobQueueUnavailable, check_job_queue, enqueue_after_commit
from .common import (
    REMOTE_HIT_STATUS,
    provider_for_batch,
    record_status_event,
    set_batch_status,
)

logger = logging.getLogger(__name__)


#: Batches whose publishing can be resumed or cancelled.
UNFINISHED_BATCH_STATUSES = (Batch.Status.DRAFT, Batch.Status.PUBLISHING, Batch.Status.FAILED)


def batch_resume(*, batch_id: int, actor=None) -> Batch:
    """Publish a failed or interrupted batch again: failed HITs go back to pending. HITs that
    already exist at the provider are skipped and the others reuse their tokens, so nothing
    doubles. Refused (nothing changes) while the job queue is unreachable."""
    try:
        check_job_queue()
    except JobQueueUnavailable as error:
        raise ValidationError(f"{error}; nothing was resumed, try again once it is back") \
            from error
    with transaction.atomic():
        batch = Batch.objects.select_for_update().get(pk=batch_id)
        if batch.status not in UNFINISHED_BATCH_STATUSES:
            raise ValidationError(f"batch {batch_id} is {batch.status}; only a draft, "
                                  "publishing or failed batch can be resumed")
        Hit.objects.filter(batch=batch, status=Hit.Status.FAILED,
                           provider_hit_id__isnull=True).update(status=Hit.Status.PENDING,
                                                                error="")
        record_status_event(batch=batch, kind="batch_resumed", old=batch.status,
                            new=Batch.Status.PUBLISHING, actor=actor)
        batch.status, batch.error = Batch.Status.PUBLISHING, ""
        batch.save(update_fields=["status", "error", "updated_at"])
        enqueue_after_commit("annotation.tasks.publish_batch", batch_id)
    batch.refresh_from_db()
    return batch


@transaction.atomic
def batch_cancel(*, batch_id: int, actor=None) -> Batch:
    """Stop a batch that has not finished publishing: its items count as open work no more,
    and every HIT it already published is expired at the provider (``expire_hit``), so no new
    worker takes it. Work already submitted is still collected and decided."""
    batch = Batch.objects.select_for_update().get(pk=batch_id)
    if batch.status not in UNFINISHED_BATCH_STATUSES:
        raise ValidationError(f"batch {batch_id} is {batch.status}; only a draft, publishing "
                              "or failed batch can be cancelled")
    record_status_event(batch=batch, kind="batch_cancelled", old=batch.status,
                        new=Batch.Status.CANCELLED, actor=actor)
    batch.status = Batch.Status.CANCELLED
    batch.save(update_fields=["status", "updated_at"])
    for hit_id in batch.hits.filter(provider_hit_id__isnull=False).values_list("pk", flat=True):
        enqueue_after_commit("annotation.tasks.expire_hit", hit_id)
    return batch


# --- Publish -----------------------------------------------------------------------------------


def task_page_url(project: Project) -> str:
    return f"{settings.UNPACK_PUBLIC_URL.rstrip('/')}/mturk/task/{project.slug}/"


def prolific_task_page_url(project: Project) -> str:
    """Our task page for a Prolific study of ``project``, without Prolific's placeholders."""
    page = reverse("frontend:prolific-task", args=[project.slug])
    return f"{settings.UNPACK_PUBLIC_URL.rstrip('/')}{page}"


def study_template(batch: Batch):
    """The ``StudyTemplate`` every study of a Prolific batch is made from: our task page with
    Prolific's three placeholders, the reward, the estimated and maximum allowed times (the
    batch's assignment duration), the batch's two completion codes, devices and filters."""
    from ...providers.prolific import StudyTemplate, study_url

    return StudyTemplate(
        name=batch.title,
        description=batch.description or batch.title,
        external_study_url=study_url(prolific_task_page_url(batch.project)),
        reward_cents=batch.reward_cents,
        estimated_completion_minutes=batch.estimated_minutes or 1,
        maximum_allowed_minutes=max(batch.estimated_minutes or 1,
                                    batch.assignment_duration_seconds // 60),
        completion_code=batch.completion_code,
        failed_check_code=batch.failed_check_code,
        internal_name=f"unpack batch {batch.pk}",
        device_compatibility=tuple(batch.device_compatibility or ("desktop",)),
        filters=tuple(batch.participant_filters or ()),
    )


def _qualification_type_id(qualification: Qualification, provider: AnnotationProvider) -> str:
    """The provider's QualificationType for ``qualification``, created (test + AnswerKey) once.

    MTurk has no request token for CreateQualificationType; the type name carries the row id so
    a create whose answer was lost fails loudly on retry ("already created") rather than making
    a second type.
    """
    if qualification.provider_qualification_type_id:
        return qualification.provider_qualification_type_id
    questions = [
        hit_templates.QualificationQuestion(
            identifier=str(question["id"]), text=str(question["text"]),
            options=tuple((str(option), str(option)) for option in question["options"]),
            accepted_answer=str(question["answer"]))
        for question in qualification.questions
    ]
    test = hit_templates.render_qualification_test(
        title=qualification.name, instructions=qualification.description or qualification.name,
        questions=questions, passing_score=qualification.passing_score)
    type_id = provider.create_qualification_type(
        name=f"{qualification.name} (unpack #{qualification.pk})",
        description=qualification.description or qualification.name,
        test_xml=test.test_xml, answer_key_xml=test.answer_key_xml,
        test_duration_seconds=20 * 60)
    Qualification.objects.filter(pk=qualification.pk,
                                 provider_qualification_type_id__isnull=True).update(
        provider_qualification_type_id=type_id)
    return type_id


def _requirement_specs(batch: Batch, provider: AnnotationProvider
                       ) -> tuple[QualificationRequirementSpec, ...]:
    specs = []
    for stored in batch.qualification_requirements:
        if "unpack_qualification_id" in stored:
            qualification = Qualification.objects.get(pk=stored["unpack_qualification_id"])
            type_id = _qualification_type_id(qualification, provider)
            specs.append(QualificationRequirementSpec.score_at_least(type_id,
                                                                     stored["min_score"]))
            continue
        specs.append(QualificationRequirementSpec(
            qualification_type_id=stored["QualificationTypeId"],
            comparator=stored["Comparator"],
            integer_values=tuple(stored.get("IntegerValues", ())),
            locale_values=tuple(LocaleValue(locale["Country"], locale.get("Subdivision"))
                                for locale in stored.get("LocaleValues", ())),
        ))
    return tuple(specs)


def hit_type_spec(batch: Batch, provider: AnnotationProvider) -> HitTypeSpec:
    return HitTypeSpec(
        title=batch.title,
        description=batch.description or batch.title,
        reward=Decimal(batch.reward_cents) / 100,
        assignment_duration_seconds=batch.assignment_duration_seconds,
        auto_approval_delay_seconds=batch.auto_approval_delay_seconds,
        keywords=tuple(word.strip() for word in batch.keywords.split(",") if word.strip()),
        qualification_requirements=_requirement_specs(batch, provider),
    )


def requester_annotation_for(hit: Hit) -> str:
    """The HIT's RequesterAnnotation: unique to it (the token is), so the provider can find
    the HIT again when the answer to its create was lost."""
    return f"unpack batch {hit.batch_id} {hit.unique_request_token}"


def resume_command(batch_id: int) -> str:
    """The command that resumes publishing batch ``batch_id``."""
    return f"python manage.py launch_batch --resume {batch_id}"


def _record_retryable_error(batch: Batch, error: ProviderError) -> None:
    """Say on the batch why publishing stopped and what happens next; it stays publishing.

    The provider has already retried the call where it failed (``providers/retry.py``), so
    the error means those retries ran out. With a worker, the job retries later (and the
    periodic resume job after that). Inline (no broker: the embedded default) nothing runs
    later by itself, so the message names the command and the button that resume it."""
    from celery import current_app

    published = Hit.objects.filter(batch_id=batch.pk, provider_hit_id__isnull=False).count()
    total = Hit.objects.filter(batch_id=batch.pk).count()
    what = (f"publishing paused at {published}/{total} HITs published: "
            f"{error.operation or 'provider'}: {error}")
    if current_app.conf.task_always_eager:
        text = (f"{what}; the provider's retries ran out and nothing retries it here (jobs "
                f"run inline, with no worker): resume with `{resume_command(batch.pk)}` or "
                "Resume publishing on the batch page")
    else:
        text = (f"{what}; the provider's retries ran out: the job tries again with backoff, "
                "then the periodic resume job")
    Batch.objects.filter(pk=batch.pk, status=Batch.Status.PUBLISHING).update(
        error=text, updated_at=timezone.now())


def _fail_publish(batch: Batch, hit: Hit | None, error: ProviderPermanentError) -> None:
    reason = f"{error.operation or 'provider'}: {error}"
    with transaction.atomic():
        if hit is not None:
            Hit.objects.filter(pk=hit.pk, provider_hit_id__isnull=True).update(
                status=Hit.Status.FAILED, error=reason)
            record_status_event(batch=batch, hit=hit, kind="hit_failed", old=Hit.Status.PENDING,
                                new=Hit.Status.FAILED, detail={"error": reason})
        set_batch_status(batch.pk, old=(Batch.Status.DRAFT, Batch.Status.PUBLISHING),
                          new=Batch.Status.FAILED, kind="batch_failed", error=reason)


def batch_publish(*, batch_id: int, provider: AnnotationProvider | None = None) -> Batch:
    """Create the batch's HIT type (once) and every pending HIT at the provider.

    Safe to call again at any point, even twice at once: a Hit holding ``provider_hit_id`` is
    skipped, and a HIT whose create answer was lost is recovered by its UniqueRequestToken (the
    provider resolves MTurk's duplicate-token error to the existing HIT). Throttled/transient
    provider errors are retried by the provider where they failed; once its retries run out
    they are noted on the batch and propagate (a worker's job retries with backoff); a
    permanent one marks the HIT and the batch failed with the reason in ``.error``. A batch
    cancelled meanwhile stops at the next HIT.
    """
    batch = Batch.objects.select_related("project").get(pk=batch_id)
    if batch.status not in (Batch.Status.DRAFT, Batch.Status.PUBLISHING):
        return batch
    set_batch_status(batch_id, old=(Batch.Status.DRAFT,), new=Batch.Status.PUBLISHING,
                      kind="batch_publishing")
    try:
        provider = provider or provider_for_batch(batch)
        _publish_pending(batch, provider)
    except ProviderPermanentError as error:  # the HIT type (a HIT's own error is handled there)
        _fail_publish(batch, None, error)
    except ProviderError as error:
        _record_retryable_error(batch, error)
        raise
    batch.refresh_from_db()
    return batch


def _publish_pending(batch: Batch, provider: AnnotationProvider) -> None:
    batch_id = batch.pk
    if batch.provider == "prolific":
        # A study per HIT, each made from the batch's template (places = max_assignments).
        try:
            template = study_template(batch)
        except ValueError as error:  # a batch Prolific would refuse: say why, fail it
            raise ProviderPermanentError(str(error), code="BadStudy",
                                         operation="study_template") from error
        provider = provider.with_template(template)
    if not batch.provider_hit_type_id:
        hit_type_id = provider.create_hit_type(hit_type_spec(batch, provider))
        Batch.objects.filter(pk=batch_id).update(provider_hit_type_id=hit_type_id)
        batch.provider_hit_type_id = hit_type_id
    question_xml = hit_templates.render_external_question(url=task_page_url(batch.project))
    pending = Hit.objects.filter(batch_id=batch_id, status=Hit.Status.PENDING,
                                 provider_hit_id__isnull=True).order_by("pk")
    for hit in pending.iterator():
        if not Batch.objects.filter(pk=batch_id, status=Batch.Status.PUBLISHING).exists():
            return  # cancelled (or failed) meanwhile
        try:
            published = provider.create_hit(
                hit_type_id=batch.provider_hit_type_id,
                question_xml=question_xml,
                max_assignments=hit.max_assignments,
                lifetime_seconds=batch.lifetime_seconds,
                unique_request_token=hit.unique_request_token,
                requester_annotation=requester_annotation_for(hit),
            )
        except ProviderPermanentError as error:
            _fail_publish(batch, hit, error)
            return
        _record_published_hit(batch, hit, published.hit_id, published.status,
                              published.expiration)
    if not Hit.objects.filter(batch_id=batch_id, provider_hit_id__isnull=True).exists():
        set_batch_status(batch_id, old=(Batch.Status.PUBLISHING,), new=Batch.Status.PUBLISHED,
                          kind="batch_published",
                          detail={"hits": Hit.objects.filter(batch_id=batch_id).count()})


def _record_published_hit(batch: Batch, hit: Hit, provider_hit_id: str, remote_status: str,
                          expiration: datetime | None) -> None:
    new_status = REMOTE_HIT_STATUS.get(remote_status, Hit.Status.ASSIGNABLE)
    expires_at = expiration or timezone.now() + timedelta(seconds=batch.lifetime_seconds)
    with transaction.atomic():
        updated = Hit.objects.filter(pk=hit.pk, provider_hit_id__isnull=True).update(
            provider_hit_id=provider_hit_id, status=new_status, expires_at=expires_at, error="")
        if updated:
            record_status_event(batch=batch, hit=hit, kind="hit_published", old=Hit.Status.PENDING,
                                new=new_status, detail={"provider_hit_id": provider_hit_id})
        # A publish that makes progress is not "unfinished" for resume_unfinished_work.
        Batch.objects.filter(pk=batch.pk).update(updated_at=timezone.now(), error="")


