"""factory_boy factories for the core models. Each factory builds a valid, minimal row."""

from __future__ import annotations

import factory

from annotation import models
from annotation.services.annotations import annotation_state


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Project
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda project: project.slug.title())
    kind = models.TaskKind.PLAUSIBILITY


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Document

    project = factory.SubFactory(ProjectFactory, kind=models.TaskKind.DECONTEXT)
    external_id = factory.Sequence(lambda n: f"doc-{n}")
    title = "Zinc"
    url = "https://en.wikipedia.org/wiki/Zinc"
    paragraphs = factory.LazyFunction(
        lambda: [{"section": ["Zinc", "Properties"],
                  "text": "Zinc is a chemical element. It is brittle at room temperature."}]
    )


class TargetSentenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.TargetSentence

    document = factory.SubFactory(DocumentFactory)
    paragraph_index = 0
    start_byte = 28
    end_byte = 62
    text = "It is brittle at room temperature."


class DialogueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Dialogue

    project = factory.SubFactory(ProjectFactory, kind=models.TaskKind.REWRITE)
    external_id = factory.Sequence(lambda n: f"C_dialogue_{n}")
    source = "quac"
    title = "Frank Zappa"
    section_title = "Disbandment"


class DialogueTurnFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.DialogueTurn

    dialogue = factory.SubFactory(DialogueFactory)
    order = factory.Sequence(lambda n: n + 1)
    question = "When did they disband?"
    answer = "In 1969."


class ClozeItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.ClozeItem

    project = factory.SubFactory(ProjectFactory, kind=models.TaskKind.PLAUSIBILITY)
    external_id = factory.Sequence(str)
    resolved_pattern = "IMPLICIT REFERENCE"
    article_title = "How to Detect Cleft Lip Early in Pregnancy"
    section_header = "Treating Cleft Lip"
    previous_context = "1. Care for a newborn with a cleft lip."
    sentence = "2. Get surgery for ______ at 3 to 6 months old."
    followup_context = "A pediatric surgeon will move the skin."


class ClozeFillerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.ClozeFiller

    cloze = factory.SubFactory(ClozeItemFactory)
    position = 1
    text = "the split"


class ComplexSentenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.ComplexSentence

    project = factory.SubFactory(ProjectFactory, kind=models.TaskKind.SPLIT_REPHRASE)
    external_id = factory.Sequence(lambda n: f"complex-{n}")
    text = "Alan Bean, born in Wheeler, Texas, was a test pilot."


class ItemFactory(factory.django.DjangoModelFactory):
    """An item pointing at a cloze filler unless another source is given."""

    class Meta:
        model = models.Item

    project = factory.SubFactory(ProjectFactory)
    external_id = factory.Sequence(lambda n: f"item-{n}")
    split = models.Split.TRAIN
    group_key = factory.Sequence(lambda n: f"group-{n}")
    filler = factory.SubFactory(
        ClozeFillerFactory, cloze__project=factory.SelfAttribute("...project")
    )


class WorkerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Worker

    provider = models.Worker.Provider.MTURK
    external_id = factory.Sequence(lambda n: f"A{n:013d}")


class AnnotationFactory(factory.django.DjangoModelFactory):
    """An annotation whose ``state`` follows the one rule (``annotation_state``) from its
    source, review status and ``provisional`` (an MTurk page's unconfirmed answer)."""

    class Meta:
        model = models.Annotation

    class Params:
        provisional = False

    item = factory.SubFactory(ItemFactory)
    project = factory.SelfAttribute("item.project")
    worker = factory.SubFactory(WorkerFactory)
    source = models.Annotation.Source.LOCAL
    rating = 4
    state = factory.LazyAttribute(lambda annotation: annotation_state(
        source=annotation.source, review_status=annotation.review_status,
        confirmed=not annotation.provisional))
    review_status = models.Annotation.Review.PENDING


# --- task-page projects and published crowd work --------------------------------------------
# The five kinds' small projects live in tests/frontend/builders.py (being merged into this
# module); re-exported here so tests import builders from one place.
from tests.frontend.builders import BUILDERS as KIND_BUILDERS  # noqa: E402, F401
from tests.frontend.builders import sluice_project  # noqa: E402, F401


def prolific_study_hit(project: models.Project, *, study_id: str, items=None,
                       max_assignments: int = 1, completion_code: str = "C7UNPACK",
                       assignment_duration_seconds: int = 3600) -> models.Hit:
    """A published Prolific batch whose one study (``study_id``, one HIT) holds ``items``
    (default: all of the project's, in order), as the launch service leaves it: the batch
    carries the study's completion codes and its maximum allowed time as the assignment
    duration."""
    batch = models.Batch.objects.create(
        project=project, provider="prolific", title="Prolific study",
        status=models.Batch.Status.PUBLISHED, completion_code=completion_code,
        failed_check_code=f"{completion_code}X", estimated_minutes=5,
        assignment_duration_seconds=assignment_duration_seconds)
    hit = models.Hit.objects.create(
        batch=batch, provider_hit_id=study_id, unique_request_token=f"token-{study_id}",
        max_assignments=max_assignments, status=models.Hit.Status.ASSIGNABLE)
    for order, item in enumerate(items if items is not None
                                 else project.items.order_by("id")):
        models.HitItem.objects.create(hit=hit, item=item, order=order)
    return hit
