"""Train/dev/test splits that never cut a group, reproducible from a seed.

All functions are deterministic for a given seed and input *set*: inputs are sorted before
the seeded shuffle, so the order rows arrive in never changes the result. Group keys must be
mutually sortable (all str, or all int, ...).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence

DEFAULT_FRACTIONS: dict[str, float] = {"train": 0.8, "dev": 0.1, "test": 0.1}
TRAIN, DEV, TEST = "train", "dev", "test"


def _check_fractions(fractions: Mapping[str, float]) -> list[tuple[str, float]]:
    if not fractions or any(value < 0 for value in fractions.values()):
        raise ValueError("fractions must be a non-empty mapping of non-negative numbers")
    total = sum(fractions.values())
    if total <= 0:
        raise ValueError("fractions must not all be zero")
    return [(name, value / total) for name, value in fractions.items()]


def group_split(
    rows: Iterable[tuple[Hashable, Hashable]],
    *,
    seed: int,
    fractions: Mapping[str, float] = DEFAULT_FRACTIONS,
) -> dict[Hashable, str]:
    """Assign every item to a split without cutting a group.

    ``rows``: ``(item_id, group_key)``. Distinct group keys are sorted, shuffled with
    ``random.Random(seed)``, and laid end to end; a group goes to the split whose share of
    the cumulative item count contains the group's midpoint, so split sizes (in items)
    approach ``fractions`` (normalised to sum to 1) as closely as whole groups allow.
    Returns ``{item_id: split_name}``.
    """
    shares = _check_fractions(fractions)
    members: dict[Hashable, list] = defaultdict(list)
    for item_id, group_key in rows:
        members[group_key].append(item_id)
    groups = sorted(members)
    random.Random(seed).shuffle(groups)
    total = sum(len(items) for items in members.values())
    boundaries = []
    cumulative = 0.0
    for name, share in shares:
        cumulative += share
        boundaries.append((cumulative, name))
    assignment: dict[Hashable, str] = {}
    placed = 0
    for group in groups:
        size = len(members[group])
        midpoint = (placed + size / 2) / total
        split = next((name for bound, name in boundaries if midpoint < bound), shares[-1][0])
        for item_id in members[group]:
            assignment[item_id] = split
        placed += size
    return assignment


class UnionFind:
    """Disjoint sets over hashable elements with path halving and union by size."""

    def __init__(self) -> None:
        self._parent: dict[Hashable, Hashable] = {}
        self._size: dict[Hashable, int] = {}

    def add(self, element: Hashable) -> None:
        if element not in self._parent:
            self._parent[element] = element
            self._size[element] = 1

    def find(self, element: Hashable) -> Hashable:
        self.add(element)
        parent = self._parent
        while parent[element] != element:
            parent[element] = parent[parent[element]]
            element = parent[element]
        return element

    def union(self, first: Hashable, second: Hashable) -> None:
        root_a, root_b = self.find(first), self.find(second)
        if root_a == root_b:
            return
        if self._size[root_a] < self._size[root_b]:
            root_a, root_b = root_b, root_a
        self._parent[root_b] = root_a
        self._size[root_a] += self._size[root_b]


Triple = tuple[str, str, str]


def triple_components(sentences: Mapping[Hashable, Sequence[Triple]]) -> list[list[Hashable]]:
    """Connected components of complex sentences linked by a shared RDF triple.

    Each component is a sorted list of sentence ids; components are sorted by first id.
    """
    union_find = UnionFind()
    first_sentence_of_triple: dict[Triple, Hashable] = {}
    for sentence_id in sorted(sentences):
        union_find.add(sentence_id)
        for triple in sentences[sentence_id]:
            triple = tuple(triple)
            if triple in first_sentence_of_triple:
                union_find.union(sentence_id, first_sentence_of_triple[triple])
            else:
                first_sentence_of_triple[triple] = sentence_id
    components: dict[Hashable, list] = defaultdict(list)
    for sentence_id in sorted(sentences):
        components[union_find.find(sentence_id)].append(sentence_id)
    return sorted(components.values(), key=lambda members: members[0])


def websplit_split(
    sentences: Mapping[Hashable, Sequence[Triple]],
    *,
    seed: int,
    fractions: Mapping[str, float] = DEFAULT_FRACTIONS,
) -> dict[Hashable, str]:
    """The WebSplit rule: split complex sentences so that no fact leaks across splits.

    ``sentences``: ``{complex_sentence_id: [(subject, property, object), ...]}``; the
    property is the RDF relation. Guarantees:

    1. sentences sharing a triple form one component (union-find) and stay together, so
       every triple appears in exactly one split;
    2. every relation appears in ``train`` (this wins over the target fractions): for each
       relation in sorted order not yet in train, the first component in seeded shuffled
       order that has it goes to train;
    3. the remaining components, in the same shuffled order, each go to the split furthest
       below its target number of sentences (ties: order of ``fractions``).

    ``fractions`` must include ``"train"``. Returns ``{complex_sentence_id: split_name}``.
    """
    shares = _check_fractions(fractions)
    if TRAIN not in fractions:
        raise ValueError("fractions must include 'train'")
    components = triple_components(sentences)
    random.Random(seed).shuffle(components)
    relations_of = [
        {triple[1] for sentence_id in members for triple in sentences[sentence_id]}
        for members in components
    ]
    chosen: dict[int, str] = {}
    relations_in_train: set[str] = set()
    for relation in sorted(set().union(*relations_of)):
        if relation in relations_in_train:
            continue
        index = next(k for k, relations in enumerate(relations_of) if relation in relations)
        chosen[index] = TRAIN
        relations_in_train |= relations_of[index]
    total = sum(len(members) for members in components)
    assigned = dict.fromkeys(fractions, 0)
    for index, split in chosen.items():
        assigned[split] += len(components[index])
    for index, members in enumerate(components):
        if index in chosen:
            continue
        split = max(shares, key=lambda share: share[1] * total - assigned[share[0]])[0]
        chosen[index] = split
        assigned[split] += len(members)
    return {
        sentence_id: chosen[index]
        for index, members in enumerate(components)
        for sentence_id in members
    }


def websplit_split_violations(
    sentences: Mapping[Hashable, Sequence[Triple]], splits: Mapping[Hashable, str],
) -> dict[str, list]:
    """What breaks Aharoni & Goldberg's rules in a given split of complex sentences.

    ``sentences`` as for :func:`websplit_split`, ``splits``: ``{complex_sentence_id: split}``.
    Returns ``{"relations_not_in_train": [...], "triples_in_several_splits": [...]}``
    (sorted; both empty for a split that :func:`websplit_split` could have made).
    """
    relations: dict[str, set[str]] = {}
    triples: dict[tuple, set[str]] = {}
    for sentence_id, sentence_triples in sentences.items():
        for triple in sentence_triples:
            relations.setdefault(triple[1], set()).add(splits[sentence_id])
            triples.setdefault(tuple(triple), set()).add(splits[sentence_id])
    return {
        "relations_not_in_train": sorted(relation for relation, found in relations.items()
                                         if TRAIN not in found),
        "triples_in_several_splits": sorted(triple for triple, found in triples.items()
                                            if len(found) > 1),
    }


def canard_splits(
    quac_train_dialogue_ids: Iterable[str],
    quac_dev_dialogue_ids: Iterable[str],
    *,
    seed: int,
    dev_fraction: float = 0.1,
) -> dict[str, str]:
    """CANARD's mapping from QuAC dialogues to splits (split by dialogue, never by question).

    QuAC dev dialogues -> ``test``; a seeded sample of ``round(dev_fraction * n)`` of the
    (sorted) QuAC train dialogues -> ``dev``; the other train dialogues -> ``train``.
    """
    train_ids = sorted(set(quac_train_dialogue_ids))
    dev_ids = sorted(set(quac_dev_dialogue_ids))
    overlap = set(train_ids) & set(dev_ids)
    if overlap:
        raise ValueError(f"dialogues in both QuAC train and dev: {sorted(overlap)[:5]}")
    sampled = set(random.Random(seed).sample(train_ids, round(dev_fraction * len(train_ids))))
    mapping = {dialogue_id: TEST for dialogue_id in dev_ids}
    for dialogue_id in train_ids:
        mapping[dialogue_id] = DEV if dialogue_id in sampled else TRAIN
    return mapping
