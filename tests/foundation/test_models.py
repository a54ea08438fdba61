"""Constraints the database itself enforces."""

import pytest
from django.db import IntegrityError, transaction

from annotation.models import Annotation, Item, Worker
from tests.factories import (
    AnnotationFactory,
    ClozeFillerFactory,
    ItemFactory,
    ProjectFactory,
    TargetSentenceFactory,
    WorkerFactory,
)

pytestmark = pytest.mark.django_db


def test_rating_outside_1_to_5_is_refused():
    annotation = AnnotationFactory()
    for bad in (0, 5.5, -1):
        annotation.rating = bad
        with pytest.raises(IntegrityError), transaction.atomic():
            annotation.save()


def test_one_local_annotation_per_worker_and_item():
    first = AnnotationFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotation.objects.create(project=first.project, item=first.item, worker=first.worker,
                                  source="local", rating=3)
    # another worker on the same item is fine
    Annotation.objects.create(project=first.project, item=first.item, worker=WorkerFactory(),
                              source="local", rating=3)


def test_mturk_worker_ids_are_unique_per_provider():
    WorkerFactory(external_id="A1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Worker.objects.create(provider="mturk", external_id="A1")
    Worker.objects.create(provider="local", external_id="A1")


def test_item_must_point_at_exactly_one_source():
    project = ProjectFactory()
    filler = ClozeFillerFactory(cloze__project=project)
    target = TargetSentenceFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Item.objects.create(project=project, external_id="both", group_key="g",
                            filler=filler, target_sentence=target)
    with pytest.raises(IntegrityError), transaction.atomic():
        Item.objects.create(project=project, external_id="none", group_key="g")


def test_item_external_ids_are_unique_per_project():
    item = ItemFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        ItemFactory(project=item.project, external_id=item.external_id)


def test_anonymous_worker_id_is_stable_and_hides_the_worker_id():
    worker = WorkerFactory(external_id="A2XYZSECRET")
    assert worker.anonymous_id == Worker.objects.get(pk=worker.pk).anonymous_id
    assert "A2XYZSECRET" not in worker.anonymous_id
