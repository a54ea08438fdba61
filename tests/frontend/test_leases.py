"""Leases (issue 11, point 8): an item shown to a local annotator is reserved for them while
their page is open, so near the end of a project others are shown other items; the page is told
when an item can no longer be used."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Annotation, ItemLease
from annotation.services.work_queue import (
    LEASE_SECONDS,
    PAGE_LEASES,
    item_leases_renew,
    work_queue_next_item,
)
from tests.factories import local_answer, local_worker, plausibility_project

pytestmark = pytest.mark.django_db


def test_an_item_shown_is_leased_and_not_shown_to_others_while_the_lease_lives():
    project = plausibility_project(items=2, redundancy={"train": 1})
    first_item, second_item = project.items.order_by("id")
    first, second, third = local_worker("a"), local_worker("b"), local_worker("c")
    shown = work_queue_next_item(project=project, worker=first)
    lease = ItemLease.objects.get(worker=first)
    assert lease.item == shown
    assert LEASE_SECONDS - 5 <= (lease.expires_at - timezone.now()).total_seconds() <= LEASE_SECONDS
    other = work_queue_next_item(project=project, worker=second)
    assert other is not None and other != shown
    # Both items are leased (redundancy 1): nothing to show a third annotator.
    assert work_queue_next_item(project=project, worker=third) is None
    # The holder of the lease is shown the item again (a reload), and may answer it.
    assert work_queue_next_item(project=project, worker=first) == shown
    # An expired lease holds nothing.
    ItemLease.objects.filter(worker=first).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    assert work_queue_next_item(project=project, worker=third) == shown
    assert {first_item, second_item} == {shown, other}


def test_an_answer_replaces_its_lease():
    project = plausibility_project(items=1, redundancy={"train": 2})
    item = project.items.get()
    first, second, third = local_worker("a"), local_worker("b"), local_worker("c")
    assert work_queue_next_item(project=project, worker=first) == item
    local_answer(project, item, first)
    # One counted answer, and the lease of the worker who gave it counts no more: a slot is open.
    assert work_queue_next_item(project=project, worker=second) == item
    assert work_queue_next_item(project=project, worker=third) is None


def test_renewing_moves_the_lease_and_names_items_others_completed():
    project = plausibility_project(items=2, redundancy={"train": 1})
    kept, lost = project.items.order_by("id")
    worker, other = local_worker("a"), local_worker("b")
    past = timezone.now() - timedelta(seconds=1)
    ItemLease.objects.create(item=kept, worker=worker, expires_at=past, served_at=past)
    ItemLease.objects.create(item=lost, worker=worker, expires_at=past, served_at=past)
    local_answer(project, lost, other)  # the lease had expired: another annotator completed it
    assert item_leases_renew(project=project, worker=worker,
                             item_ids=[kept.pk, lost.pk]) == [lost.pk]
    assert ItemLease.objects.get(item=kept, worker=worker).expires_at > timezone.now()
    assert ItemLease.objects.get(item=lost, worker=worker).expires_at == past


def test_the_page_renews_its_leases_and_hears_which_items_are_gone(annotator_client):
    project = plausibility_project(items=2, redundancy={"train": 1})
    page = annotator_client.get(f"/annotate/{project.slug}/")
    config = page.context["config"]
    assert config["lease_url"] == f"/annotate/{project.slug}/lease/"
    shown = config["items"][0]["item_id"]
    other = project.items.exclude(pk=shown).get()
    # ``other`` was served to this annotator earlier (another tab); their lease ran out and
    # someone else completed it.
    past = timezone.now() - timedelta(seconds=1)
    ItemLease.objects.create(item=other, worker=ItemLease.objects.get(item_id=shown).worker,
                             expires_at=past, served_at=past)
    local_answer(project, other, local_worker("someone"))

    def renew(body):
        return annotator_client.post(config["lease_url"], json.dumps(body),
                                     content_type="application/json")

    answer = renew({"item_ids": [shown, other.pk]})
    assert answer.status_code == 200 and answer.json() == {"unusable": [other.pk]}
    for bad in ({"item_ids": "1"}, {"item_ids": [True]}, {"item_ids": [2**63]},
                {"item_ids": list(range(1, 12))}, []):
        refused = renew(bad)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid"
    assert annotator_client.get(config["lease_url"]).status_code == 405


def test_the_lease_keeps_when_the_item_was_served_and_the_answer_takes_it(annotator_client):
    """The start of the server's own measure of the work (``Annotation.served_at``, QC's timing
    flags) is the lease's ``served_at``: set each time the queue hands the item out (a page
    load, the next item of a submit's answer), kept by a renewal, read by the answer's INSERT."""
    project = plausibility_project(items=3, redundancy={"train": 2})
    page = annotator_client.get(f"/annotate/{project.slug}/")
    item_id = page.context["items"][0]["item_id"]
    lease = ItemLease.objects.get(item_id=item_id)
    assert lease.served_at is not None
    assert abs((timezone.now() - lease.served_at).total_seconds()) < 60
    # A renewal moves the lease's end, not its serving.
    served = lease.served_at - timedelta(minutes=3)
    ItemLease.objects.filter(pk=lease.pk).update(served_at=served)
    renewed = annotator_client.post(f"/annotate/{project.slug}/lease/",
                                    json.dumps({"item_ids": [item_id]}),
                                    content_type="application/json")
    assert renewed.status_code == 200
    assert ItemLease.objects.get(pk=lease.pk).served_at == served
    # The answer is stored with it; the next item's lease carries its own serving.
    saved = annotator_client.post(
        f"/annotate/{project.slug}/submit/",
        json.dumps({"item_id": item_id, "client_token": "served-at-0001",
                    "payload": {"rating": 3}}), content_type="application/json").json()
    assert saved["status"] == "saved"
    assert Annotation.objects.get(pk=saved["annotation_id"]).served_at == served
    following = ItemLease.objects.get(item_id=saved["next"]["item"]["item_id"])
    assert following.served_at > served
    # Served again (a reload): the serving moves to now.
    ItemLease.objects.filter(pk=following.pk).update(served_at=served)
    again = annotator_client.get(f"/annotate/{project.slug}/")
    assert again.context["items"][0]["item_id"] == following.item_id
    assert ItemLease.objects.get(pk=following.pk).served_at > served


def test_ids_never_served_get_no_lease(annotator_client):
    """Issue 26, point 2: a renewal of items the queue never handed to the annotator leases
    nothing (before, it created a lease for any id of the project)."""
    project = plausibility_project(items=5, redundancy={"train": 1})
    page = annotator_client.get(f"/annotate/{project.slug}/")
    shown = page.context["config"]["items"][0]["item_id"]
    never = list(project.items.exclude(pk=shown).values_list("pk", flat=True))
    answer = annotator_client.post(f"/annotate/{project.slug}/lease/",
                                   json.dumps({"item_ids": never}),
                                   content_type="application/json")
    assert answer.status_code == 200 and answer.json() == {"unusable": []}
    assert list(ItemLease.objects.values_list("item_id", flat=True)) == [shown]


def test_three_renewals_cannot_hoard_the_project(annotator_client):
    """The issue's attack: three requests of ten ids each held all 30 items of a redundancy-1
    project. Now others are still served the 29 items the annotator was never shown, and an
    annotator holds at most a page's worth even of items they were served."""
    project = plausibility_project(items=30, redundancy={"train": 1})
    page = annotator_client.get(f"/annotate/{project.slug}/")
    shown = page.context["config"]["items"][0]["item_id"]
    ids = sorted(project.items.values_list("pk", flat=True))
    for start in (0, 10, 20):
        assert annotator_client.post(f"/annotate/{project.slug}/lease/",
                                     json.dumps({"item_ids": ids[start:start + 10]}),
                                     content_type="application/json").status_code == 200
    holder = ItemLease.objects.get(item_id=shown).worker
    assert ItemLease.objects.filter(worker=holder, expires_at__gt=timezone.now()).count() == 1
    others = [local_worker(f"other{index}") for index in range(29)]
    served = {work_queue_next_item(project=project, worker=other) for other in others}
    assert None not in served and len(served) == 29
    # Served items beyond a page's worth (old leases revived by one renewal) are not renewed.
    past = timezone.now() - timedelta(seconds=1)
    ItemLease.objects.filter(worker__in=others).update(
        worker=holder, expires_at=past, served_at=past)
    annotator_client.post(f"/annotate/{project.slug}/lease/", json.dumps({"item_ids": ids[:10]}),
                          content_type="application/json")
    assert ItemLease.objects.filter(worker=holder,
                                    expires_at__gt=timezone.now()).count() <= PAGE_LEASES
