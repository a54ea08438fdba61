"""make_splits: leakage-free, reproducible, frozen, careful with annotated items."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Fact, Item, SplitManifest
from tests.factories import (
    ComplexSentenceFactory,
    DialogueFactory,
    DialogueTurnFactory,
    ItemFactory,
    ProjectFactory,
    annotate,
    workers,
)

pytestmark = pytest.mark.django_db


def grouped_project(n_groups=30, per_group=4):
    project = ProjectFactory(slug="grouped", kind="plausibility")
    for group in range(n_groups):
        for k in range(per_group):
            ItemFactory(project=project, group_key=f"article-{group}",
                        external_id=f"{group}_{k}")
    return project


def splits_by_group(project):
    seen = {}
    for group_key, split in Item.objects.filter(project=project).values_list("group_key",
                                                                             "split"):
        seen.setdefault(group_key, set()).add(split)
    return seen


def test_group_split_never_cuts_a_group_and_is_reproducible(capsys):
    project = grouped_project()
    call_command("make_splits", project.slug, "--rule", "group", "--seed", "7")
    first = dict(Item.objects.values_list("id", "split"))
    assert all(len(splits) == 1 for splits in splits_by_group(project).values())
    assert set(first.values()) == {"train", "dev", "test"}
    manifest = SplitManifest.objects.get(project=project)
    assert manifest.frozen and manifest.seed == 7 and sum(manifest.counts.values()) == 120
    call_command("make_splits", project.slug, "--rule", "group", "--seed", "7")
    assert "unchanged" in capsys.readouterr().out
    assert dict(Item.objects.values_list("id", "split")) == first
    assert SplitManifest.objects.filter(project=project).count() == 1


def test_frozen_manifest_is_respected_unless_forced():
    project = grouped_project()
    call_command("make_splits", project.slug, "--rule", "group", "--seed", "7")
    before = dict(Item.objects.values_list("id", "split"))
    with pytest.raises(CommandError, match="frozen"):
        call_command("make_splits", project.slug, "--rule", "group", "--seed", "8")
    assert dict(Item.objects.values_list("id", "split")) == before
    call_command("make_splits", project.slug, "--rule", "group", "--seed", "8", "--force")
    assert dict(Item.objects.values_list("id", "split")) != before
    assert SplitManifest.objects.get(project=project, frozen=True).seed == 8


def test_annotated_items_are_not_moved_without_force():
    project = grouped_project()
    item = Item.objects.filter(project=project).first()
    annotate(item, workers(1)[0], rating=3)
    # With seed 7 every item lands somewhere; make sure the annotated one would move.
    Item.objects.filter(pk=item.pk).update(split="test" if item.split != "test" else "dev")
    with pytest.raises(CommandError, match="with annotations would move"):
        call_command("make_splits", project.slug, "--rule", "group", "--seed", "1",
                     "--fractions", "1,0,0")
    assert not SplitManifest.objects.filter(project=project).exists()


def test_websplit_rule_keeps_every_triple_in_one_split_and_relations_in_train():
    project = ProjectFactory(slug="websplit", kind="split_rephrase")
    relations = ["birthPlace", "occupation", "almaMater", "nationality"]
    for k in range(40):
        sentence = ComplexSentenceFactory(project=project, external_id=f"s{k}")
        facts = [Fact.objects.get_or_create(project=project, subject=f"E{k % 15}",
                                            property=relations[k % 4],
                                            object=f"O{k % 15}")[0],
                 Fact.objects.get_or_create(project=project, subject=f"F{k}",
                                            property=relations[(k + 1) % 4], object="x")[0]]
        sentence.facts.set(facts)
        ItemFactory(project=project, complex_sentence=sentence, filler=None,
                    external_id=f"s{k}", group_key=f"s{k}")
    call_command("make_splits", project.slug, "--rule", "websplit", "--seed", "3")
    fact_splits = {}
    for split, fact_id in Item.objects.filter(project=project).values_list(
            "split", "complex_sentence__facts"):
        fact_splits.setdefault(fact_id, set()).add(split)
    assert all(len(splits) == 1 for splits in fact_splits.values())
    train_relations = set(Fact.objects.filter(sentences__items__split="train")
                          .values_list("property", flat=True))
    assert train_relations == set(relations)


def test_canard_rule_maps_quac_dev_to_test_and_splits_by_dialogue():
    project = ProjectFactory(slug="quac", kind="rewrite")
    for k in range(30):
        dialogue = DialogueFactory(project=project, external_id=f"C_{k}", source="quac",
                                   source_split="dev" if k < 5 else "train")
        for order in (1, 2, 3):
            turn = DialogueTurnFactory(dialogue=dialogue, order=order)
            ItemFactory(project=project, turn=turn, filler=None, external_id=f"C_{k}#{order}",
                        group_key=f"C_{k}", position=order)
    call_command("make_splits", project.slug, "--rule", "canard", "--seed", "0")
    splits = {}
    for external_id, split in Item.objects.filter(project=project).values_list(
            "turn__dialogue__external_id", "split"):
        splits.setdefault(external_id, set()).add(split)
    assert all(len(s) == 1 for s in splits.values())
    assert {next(iter(splits[f"C_{k}"])) for k in range(5)} == {"test"}
    train_side = [next(iter(splits[f"C_{k}"])) for k in range(5, 30)]
    assert train_side.count("dev") == 2 and train_side.count("test") == 0  # round(0.1 * 25)
