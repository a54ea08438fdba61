"""Planning a batch: grouping into HITs, the <= 9 assignments rule, the cost estimate and an
idempotent launch. No provider is involved (the launch's publish job is not run)."""

from __future__ import annotations

import importlib
import io

import pytest
from django.apps import apps as django_apps
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotation.models import Batch, Hit, HitItem, TaskKind
from annotation.services.batches.decide import parse_duration_seconds
from annotation.services.batches.plan import (
    LaunchOptions,
    batch_launch,
    batch_plan,
    cost_estimate,
    mturk_fee_cents,
    split_assignments,
)
from tests.factories import (
    AnnotationFactory,
    ItemFactory,
    ProjectFactory,
    batch_plausibility_project,
    batch_rewrite_project,
)


def options(**overrides) -> LaunchOptions:
    values = {"title": "Rate fillers", "reward_cents": 50, "items_per_hit": 5,
              "splits": ("dev",)}
    values.update(overrides)
    return LaunchOptions(**values)


def test_mturk_fee_is_20_percent_40_from_ten_assignments_and_at_least_a_cent():
    assert mturk_fee_cents(50, 1) == 10
    assert mturk_fee_cents(50, 9) == 10
    assert mturk_fee_cents(50, 10) == 20
    assert mturk_fee_cents(3, 1) == 1  # 0.6 cent rounds to 1
    assert mturk_fee_cents(1, 1) == 1  # the minimum fee
    assert mturk_fee_cents(13, 1) == 3  # 2.6 cents rounds half up


@pytest.mark.parametrize(("count", "expected"), [
    (1, [1]), (5, [5]), (9, [9]), (10, [5, 5]), (19, [7, 6, 6]), (27, [9, 9, 9]), (0, []),
])
def test_split_assignments_never_exceeds_nine_per_hit(count, expected):
    assert split_assignments(count) == expected
    assert sum(split_assignments(count)) == count


def test_cost_estimate_adds_rewards_and_fee_only_on_mturk():
    from annotation.services.batches.plan import PlannedHit

    hits = [PlannedHit((1, 2), 4), PlannedHit((3,), 5)]
    mturk = cost_estimate(hits, reward_cents=50, provider="mturk")
    assert (mturk.assignments, mturk.reward_cents, mturk.fee_cents) == (9, 450, 90)
    assert mturk.total_cents == 540
    assert mturk.as_dict()["total_dollars"] == "5.40"
    assert cost_estimate(hits, reward_cents=50, provider="local").fee_cents == 0


@pytest.mark.django_db
def test_items_are_packed_per_hit_with_the_split_redundancy():
    project = batch_plausibility_project(items=12)  # dev redundancy 4
    plan = batch_plan(project=project, options=options())
    assert [len(hit.item_ids) for hit in plan.hits] == [5, 5, 2]
    assert {hit.max_assignments for hit in plan.hits} == {4}
    assert plan.estimate.assignments == 12
    assert plan.estimate.total_cents == 12 * 50 + 12 * 10


@pytest.mark.django_db
def test_a_redundancy_of_ten_becomes_two_hits_of_five_over_the_same_items():
    project = batch_plausibility_project(items=3, redundancy={"train": 1, "dev": 10, "test": 10})
    plan = batch_plan(project=project, options=options())
    assert [hit.max_assignments for hit in plan.hits] == [5, 5]
    assert plan.hits[0].item_ids == plan.hits[1].item_ids
    assert all(hit.max_assignments <= 9 for hit in plan.hits)
    # Without the split the 10-assignment HIT would pay 40%: the plan pays 20%.
    assert plan.estimate.fee_cents == 10 * 10


@pytest.mark.django_db
def test_a_dialogue_stays_whole_and_in_order_in_one_hit():
    project = batch_rewrite_project(dialogues=3, turns=7)
    plan = batch_plan(project=project, options=options(splits=("train",), items_per_hit=5))
    assert len(plan.hits) == 3
    for hit in plan.hits:
        items = [project.items.get(pk=item_id) for item_id in hit.item_ids]
        assert len({item.group_key for item in items}) == 1
        assert [item.position for item in items] == list(range(1, 8))


@pytest.mark.django_db
def test_items_already_annotated_or_covered_by_open_hits_are_skipped():
    project = batch_plausibility_project(items=4, redundancy={"train": 2, "dev": 2, "test": 2})
    first, second, third, _fourth = project.items.order_by("pk")
    AnnotationFactory(item=first)
    AnnotationFactory(item=first)
    AnnotationFactory(item=second)
    AnnotationFactory(item=third, review_status="rejected")  # rejected work does not count
    AnnotationFactory(item=_fourth, source="import")  # nor does a dataset's released answer
    AnnotationFactory(item=_fourth, source="import")
    plan = batch_plan(project=project, options=options())
    assert plan.skipped_item_ids == (first.pk,)
    needs = {item_id: hit.max_assignments for hit in plan.hits for item_id in hit.item_ids}
    assert needs == {second.pk: 1, third.pk: 2, _fourth.pk: 2}


@pytest.mark.django_db
def test_launching_the_same_selection_twice_creates_nothing_the_second_time():
    project = batch_plausibility_project(items=6)
    plan = batch_plan(project=project, options=options())
    batch = batch_launch(project=project, options=options(),
                         confirmed_total_cents=plan.estimate.total_cents)
    assert batch.status == Batch.Status.DRAFT
    assert Hit.objects.filter(batch=batch).count() == 2
    assert HitItem.objects.filter(hit__batch=batch).count() == 6
    assert len({hit.unique_request_token for hit in batch.hits.all()}) == 2
    assert batch_plan(project=project, options=options()).hits == ()
    with pytest.raises(ValidationError, match="nothing to launch"):
        batch_launch(project=project, options=options(), confirmed_total_cents=0)
    assert Batch.objects.count() == 1


@pytest.mark.django_db
def test_a_failed_batch_frees_its_items_for_a_new_launch():
    project = batch_plausibility_project(items=2)
    plan = batch_plan(project=project, options=options())
    batch = batch_launch(project=project, options=options(),
                         confirmed_total_cents=plan.estimate.total_cents)
    Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.FAILED)
    assert batch_plan(project=project, options=options()).estimate == plan.estimate


@pytest.mark.django_db
def test_launch_refuses_an_estimate_that_is_not_the_one_confirmed():
    project = batch_plausibility_project(items=2)
    with pytest.raises(ValidationError, match="confirm again"):
        batch_launch(project=project, options=options(), confirmed_total_cents=1)
    assert not Batch.objects.exists()


@pytest.mark.django_db
def test_launch_records_qualifications_live_flag_and_selection():
    from annotation.models import Qualification

    project = batch_plausibility_project(items=2)
    qualification = Qualification.objects.create(
        project=project, name="Plausibility test", passing_score=4,
        questions=[{"id": f"q{n}", "text": "?", "options": ["1", "5"], "answer": "5"}
                   for n in range(4)])
    chosen = options(min_percent_approved=90, min_hits_approved=500,
                     qualification_id=qualification.pk, live=True)
    plan = batch_plan(project=project, options=chosen)
    batch = batch_launch(project=project, options=chosen,
                         confirmed_total_cents=plan.estimate.total_cents)
    assert batch.live is True
    assert batch.qualification_requirements == [
        {"QualificationTypeId": "00000000000000000071", "Comparator": "In",
         "LocaleValues": [{"Country": "US"}, {"Country": "GB"}]},
        {"QualificationTypeId": "000000000000000000L0", "Comparator": "GreaterThanOrEqualTo",
         "IntegerValues": [90]},
        {"QualificationTypeId": "00000000000000000040", "Comparator": "GreaterThanOrEqualTo",
         "IntegerValues": [500]},
        {"unpack_qualification_id": qualification.pk, "min_score": 4},
    ]
    assert batch.selection["estimate"]["total_cents"] == plan.estimate.total_cents
    assert batch.events.get().kind == "batch_launched"


@pytest.mark.django_db
def test_explicit_item_ids_must_belong_to_the_project():
    project = batch_plausibility_project(items=2)
    other = ItemFactory(project=ProjectFactory(kind=TaskKind.PLAUSIBILITY))
    with pytest.raises(ValidationError, match="not items of"):
        batch_plan(project=project, options=options(splits=(), item_ids=(other.pk,)))


@pytest.mark.parametrize(("field", "value"), [
    ("reward_cents", 0), ("items_per_hit", 0), ("splits", ()), ("locales", ("USA",)),
    ("min_percent_approved", 101), ("title", " "),
])
def test_invalid_launch_options_are_refused_with_the_field_named(field, value):
    with pytest.raises(ValidationError):
        options(**{field: value}).validate()


def test_local_batches_cannot_be_live():
    with pytest.raises(ValidationError, match="live"):
        options(provider="local", live=True).validate()


@pytest.mark.parametrize(("text", "seconds"), [("7d", 604800), ("1h", 3600), ("30m", 1800),
                                                ("90", 90), ("2w", 1209600)])
def test_durations(text, seconds):
    assert parse_duration_seconds(text) == seconds


def test_bad_duration():
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration_seconds("soon")


@pytest.mark.django_db
def test_local_batches_are_refused_and_old_ones_stop_blocking_mturk_planning():
    """Finding 4: a ``--provider local`` batch published HITs no page serves, stayed
    "published" forever and its slots hid its items from MTurk planning. Local annotators
    need no batch (the local queue serves every item), so the option is gone, and the
    migration cancels the local batches launched before."""
    project = batch_plausibility_project(items=2)
    with pytest.raises(CommandError, match="local annotators need no batch"):
        call_command("launch_batch", project.slug, "--split", "dev", "--reward", "0.10",
                     "--title", "Local", "--provider", "local", "--yes", stdout=io.StringIO())
    with pytest.raises(ValidationError, match="local annotators need no batch"):
        options(provider="local").validate()
    assert not Batch.objects.exists()
    # A local batch launched before: published, its HITs served by nothing.
    stale = Batch.objects.create(project=project, provider="local", title="Local",
                                 status=Batch.Status.PUBLISHED)
    hit = Hit.objects.create(batch=stale, unique_request_token="local-1", max_assignments=4,
                             provider_hit_id="LOCALH1", status=Hit.Status.ASSIGNABLE)
    HitItem.objects.bulk_create(HitItem(hit=hit, item=item) for item in project.items.all())
    assert batch_plan(project=project, options=options()).estimate.assignments == 0
    migration = importlib.import_module("annotation.migrations.0004_i10b_counted_work")
    migration.fill(django_apps, None)
    stale.refresh_from_db()
    assert stale.status == Batch.Status.CANCELLED and "docs/batches.md" in stale.error
    plan = batch_plan(project=project, options=options())
    assert not plan.skipped_item_ids and plan.hits[0].max_assignments == 4
