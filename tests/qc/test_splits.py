"""Split invariants, property-based: groups never cut, facts never leak, seeds reproduce."""

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qc.splits import (
    canard_splits,
    group_split,
    triple_components,
    websplit_split,
    websplit_split_violations,
)

item_rows = st.lists(
    st.tuples(st.integers(0, 10_000), st.sampled_from([f"g{k}" for k in range(40)])),
    min_size=1,
    max_size=300,
    unique_by=lambda row: row[0],
)


@settings(max_examples=80, deadline=None)
@given(item_rows, st.integers(0, 2**32 - 1))
def test_group_split_never_cuts_a_group_and_is_deterministic(rows, seed):
    assignment = group_split(rows, seed=seed)
    assert set(assignment) == {item for item, _ in rows}
    split_of_group = {}
    for item, group in rows:
        assert split_of_group.setdefault(group, assignment[item]) == assignment[item]
    shuffled = rows[:]
    random.Random(seed).shuffle(shuffled)
    assert group_split(shuffled, seed=seed) == assignment


def test_group_split_fractions_with_many_small_groups():
    rows = [(item, item // 3) for item in range(30_000)]
    assignment = group_split(rows, seed=1)
    counts = {name: list(assignment.values()).count(name) for name in ("train", "dev", "test")}
    assert counts["train"] == pytest.approx(24_000, abs=6)
    assert counts["dev"] == pytest.approx(3_000, abs=6)
    assert group_split(rows, seed=2) != assignment


def test_group_split_rejects_bad_fractions():
    with pytest.raises(ValueError):
        group_split([(1, "a")], seed=0, fractions={"train": 0})


relations = [f"r{k}" for k in range(8)]
entities = [f"e{k}" for k in range(15)]
triples = st.tuples(
    st.sampled_from(entities), st.sampled_from(relations), st.sampled_from(entities)
)
corpora = st.dictionaries(
    st.integers(0, 500), st.lists(triples, min_size=1, max_size=4), min_size=1, max_size=80
)


@settings(max_examples=80, deadline=None)
@given(corpora, st.integers(0, 2**32 - 1))
def test_websplit_invariants(sentences, seed):
    assignment = websplit_split(sentences, seed=seed)
    assert set(assignment) == set(sentences)
    split_of_triple = {}
    for sentence_id, sentence_triples in sentences.items():
        for triple in sentence_triples:
            # Every triple appears in exactly one split.
            assert split_of_triple.setdefault(triple, assignment[sentence_id]) == assignment[
                sentence_id
            ]
    train_relations = {
        triple[1]
        for sentence_id, sentence_triples in sentences.items()
        if assignment[sentence_id] == "train"
        for triple in sentence_triples
    }
    all_relations = {triple[1] for ts in sentences.values() for triple in ts}
    assert train_relations == all_relations
    assert websplit_split(dict(reversed(list(sentences.items()))), seed=seed) == assignment


def test_websplit_reaches_fractions_when_facts_are_separable():
    sentences = {k: [(f"s{k}", f"rel{k % 5}", f"o{k}")] for k in range(1000)}
    assignment = websplit_split(sentences, seed=0)
    values = list(assignment.values())
    assert values.count("train") == 800 and values.count("dev") == 100
    assert values.count("test") == 100


def test_triple_components_link_shared_triples():
    sentences = {
        1: [("a", "p", "b")],
        2: [("a", "p", "b"), ("c", "q", "d")],
        3: [("c", "q", "d")],
        4: [("x", "p", "y")],
    }
    assert triple_components(sentences) == [[1, 2, 3], [4]]


@settings(max_examples=40, deadline=None)
@given(
    st.sets(st.text("abc123", min_size=1, max_size=6), max_size=120),
    st.integers(0, 1000),
)
def test_canard_mapping(train_and_dev, seed):
    ids = sorted(train_and_dev)
    train_ids, dev_ids = ids[: len(ids) * 3 // 4], ids[len(ids) * 3 // 4 :]
    mapping = canard_splits(train_ids, dev_ids, seed=seed)
    assert all(mapping[d] == "test" for d in dev_ids)
    assert sum(mapping[t] == "dev" for t in train_ids) == round(0.1 * len(train_ids))
    assert canard_splits(list(reversed(train_ids)), dev_ids, seed=seed) == mapping


def test_canard_rejects_overlap():
    with pytest.raises(ValueError):
        canard_splits(["a", "b"], ["b"], seed=0)


def test_websplit_split_violations():
    sentences = {1: [("a", "r1", "b")], 2: [("a", "r1", "b"), ("c", "r2", "d")]}
    assert websplit_split_violations(sentences, {1: "train", 2: "test"}) == {
        "relations_not_in_train": ["r2"], "triples_in_several_splits": [("a", "r1", "b")]}
    assert websplit_split_violations(sentences, {1: "train", 2: "train"}) == {
        "relations_not_in_train": [], "triples_in_several_splits": []}


def test_the_shipped_websplit_demo_split_follows_aharoni_and_goldberg():
    """Every test relation is also in train, and no triple is in both (their rules)."""
    folder = Path(__file__).resolve().parents[2] / "annotation" / "demo_data" / "websplit"
    sentences, splits = {}, {}
    for split in ("train", "test"):
        for line in (folder / f"handmade_{split}.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            sentences[record["id"]] = [tuple(triple) for triple in record["triples"]]
            splits[record["id"]] = split
    assert set(splits.values()) == {"train", "test"}
    assert websplit_split_violations(sentences, splits) == {
        "relations_not_in_train": [], "triples_in_several_splits": []}
