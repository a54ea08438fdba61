"""``Item.filled`` (issue 15): the work queue walks only the items not marked filled, so the mark
may say "filled" only when counted answers fill every slot of the item's split. One test per
local writer of what fills an item (answers, their review, versions, deletions, splits,
redundancy); the crowd's writers (collection, confirmation, release) are in
tests/batches/test_filled_marks_crowd.py, and every database test ends with the check that no
item is marked filled with a slot open (tests/conftest.py)."""

from __future__ import annotations

import importlib
import json
import uuid

import pytest
from django.apps import apps
from django.contrib import admin
from django.db.transaction import TransactionManagementError
from django.test import RequestFactory

from annotation.models import Annotation, Item, Project
from annotation.services import decisions
from annotation.services.annotations import (
    annotation_revise,
    annotations_set_review_status,
    item_filled_marks_kept,
)
from annotation.services.projects import project_update
from annotation.services.splits import project_split
from annotation.services.work_queue import work_queue_next_item
from tests.factories import (
    AnnotationFactory,
    local_answer,
    local_submit,
    local_worker,
    plausibility_project,
    wrongly_filled_items,
)

pytestmark = pytest.mark.django_db

REPORT = {"problem": {"reason": "unclear"}}


def is_filled(item: Item) -> bool:
    return Item.objects.values_list("filled", flat=True).get(pk=item.pk)


def test_the_answer_that_takes_the_last_slot_marks_the_item(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 2})
    first, second = project.items.order_by("id")
    # The page's submit (one INSERT … SELECT … WHERE) and the general path (annotation_submit).
    saved = local_submit(annotator_client, project, first.pk, {"rating": 3})
    assert saved.json()["status"] == "saved"
    local_answer(project, second, local_worker("one"))
    assert not is_filled(first) and not is_filled(second)
    local_answer(project, first, local_worker("two"))
    saved = local_submit(annotator_client, project, second.pk, {"rating": 4})
    assert saved.json()["status"] == "saved"
    assert is_filled(first) and is_filled(second)


def test_a_problem_report_fills_no_slot_and_marks_nothing(annotator_client):
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    assert local_submit(annotator_client, project, item.pk, REPORT).json()["status"] == "saved"
    assert Annotation.objects.get().state == Annotation.State.REPORTED
    assert not is_filled(item)


def test_a_rejection_reopens_the_item_and_the_queue_offers_it_again(staff_user):
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    answer = local_answer(project, item, local_worker("one")).annotation
    assert is_filled(item)
    decisions.annotation_approve(annotation_id=answer.pk, actor=staff_user)
    assert is_filled(item)
    decisions.annotation_reject(annotation_id=answer.pk, message="off topic", actor=staff_user)
    assert not is_filled(item)
    assert work_queue_next_item(project=project, worker=local_worker("next")).pk == item.pk
    # A reversal of the decision fills it again.
    annotations_set_review_status(annotations=Annotation.objects.filter(pk=answer.pk),
                                  review_status=Annotation.Review.APPROVED)
    assert is_filled(item)


def test_changing_an_answer_into_a_report_reopens_the_item_and_back_fills_it():
    project = plausibility_project(items=1, redundancy={"train": 1})
    item = project.items.get()
    worker = local_worker("one")
    answer = local_answer(project, item, worker).annotation
    assert is_filled(item)
    report = annotation_revise(project=project, worker=worker, annotation_id=answer.pk,
                               payload=REPORT, client_token=uuid.uuid4().hex).annotation
    assert report.state == Annotation.State.REPORTED and not is_filled(item)
    again = annotation_revise(project=project, worker=worker, annotation_id=report.pk,
                              payload={"rating": 2}, client_token=uuid.uuid4().hex).annotation
    assert again.state == Annotation.State.COUNTED and is_filled(item)


def test_a_deleted_answer_reopens_its_item():
    project = plausibility_project(items=2, redundancy={"train": 1})
    first, second = project.items.order_by("id")
    local_answer(project, first, local_worker("one")).annotation.delete()
    assert not is_filled(first)
    # A cascade too: the newer version goes with the old one it replaces.
    worker = local_worker("two")
    old = local_answer(project, second, worker).annotation
    annotation_revise(project=project, worker=worker, annotation_id=old.pk,
                      payload={"rating": 5}, client_token=uuid.uuid4().hex)
    assert is_filled(second)
    Annotation.objects.filter(pk=old.pk).delete()
    assert not Annotation.objects.filter(item=second).exists() and not is_filled(second)


def test_moving_items_to_a_split_that_needs_more_answers_reopens_them():
    project = plausibility_project(items=4, redundancy={"train": 1, "dev": 3, "test": 3})
    items = list(project.items.order_by("id"))
    for item in items:
        local_answer(project, item, local_worker(f"w{item.pk}"))
    assert all(is_filled(item) for item in items)
    everything_dev = {"train": 0.0, "dev": 1.0, "test": 0.0}
    project_split(project=project, rule="group", seed=1, fractions=everything_dev, force=True)
    assert set(project.items.values_list("split", flat=True)) == {"dev"}
    assert not any(is_filled(item) for item in items)
    project_split(project=project, rule="group", seed=1,
                  fractions={"train": 1.0, "dev": 0.0, "test": 0.0}, force=True)
    assert all(is_filled(item) for item in items)


def test_the_admin_moving_an_item_to_another_split_keeps_its_mark(staff_user):
    project = plausibility_project(items=1, redundancy={"train": 1, "dev": 2})
    item = project.items.get()
    local_answer(project, item, local_worker("one"))
    assert is_filled(item)
    request = RequestFactory().post("/admin/")
    request.user = staff_user
    item_admin = admin.site._registry[Item]
    item.split = "dev"
    item_admin.save_model(request, item, form=None, change=True)
    assert not is_filled(item)
    assert "filled" in item_admin.get_readonly_fields(request, item)


def test_a_new_redundancy_reopens_or_fills_the_items(staff_user):
    project = plausibility_project(items=2, redundancy={"train": 1})
    first, second = project.items.order_by("id")
    local_answer(project, first, local_worker("one"))
    AnnotationFactory(item=second, worker=local_worker("imported"), source="import")
    project = project_update(project=project, redundancy={"train": 2})
    assert not is_filled(first)
    project = project_update(project=project, redundancy={"train": 1})
    assert is_filled(first) and not is_filled(second)  # an imported answer fills no slot
    # The admin's change form goes through the same service.
    project_admin = admin.site._registry[Project]
    request = RequestFactory().post("/admin/")
    request.user = staff_user
    form_class = project_admin.get_form(request, project, change=True)
    many = ("allowed_users", "allowed_groups")  # the team's choices: none chosen
    data = {field: getattr(project, field) for field in form_class.base_fields
            if field != "redundancy" and field not in many}
    data.update({field: [] for field in many if field in form_class.base_fields})
    form = form_class(data={**data, "redundancy": json.dumps({"train": 3}),
                            "flag_settings": json.dumps(project.flag_settings),
                            "live_check_settings": json.dumps(project.live_check_settings)},
                      instance=Project.objects.get(pk=project.pk))
    assert form.is_valid(), form.errors
    project_admin.save_model(request, form.save(commit=False), form, change=True)
    assert Project.objects.get(pk=project.pk).redundancy == {"train": 3}
    assert not is_filled(first)


def test_the_queue_skips_filled_items_and_never_offers_them():
    project = plausibility_project(items=30, redundancy={"train": 1})
    items = list(project.items.order_by("id"))
    for item in items[:25]:
        local_answer(project, item, local_worker(f"w{item.pk}"))
    # Five newcomers, their pivots all over the id range, most of them among the filled items:
    # each is leased one of the five open items, and a sixth finds nothing (leases hold them).
    offered = {work_queue_next_item(project=project, worker=local_worker(f"new{number}")).pk
               for number in range(5)}
    assert offered == {item.pk for item in items[25:]}
    assert work_queue_next_item(project=project, worker=local_worker("sixth")) is None


def test_the_migration_marks_the_items_already_filled():
    project = plausibility_project(items=3, redundancy={"train": 2})
    first, second, third = project.items.order_by("id")
    for name in ("a", "b"):
        AnnotationFactory(item=first, worker=local_worker(name), source="local")
    AnnotationFactory(item=second, worker=local_worker("c"), source="local")
    AnnotationFactory(item=third, worker=local_worker("d"), source="local")
    AnnotationFactory(item=third, worker=local_worker("e"), source="import")
    Item.objects.update(filled=False)
    migration = importlib.import_module("annotation.migrations.0015_item_filled")
    migration.mark_filled_items(apps, schema_editor=None)
    assert [is_filled(item) for item in (first, second, third)] == [True, False, False]
    assert wrongly_filled_items() == []


@pytest.mark.django_db(transaction=True)
def test_the_marks_are_kept_only_inside_the_change_s_transaction():
    project = plausibility_project(items=1)
    with pytest.raises(TransactionManagementError), \
            item_filled_marks_kept(project.items.values_list("pk", flat=True)):
        pass
