"""Turn several annotations of one item into one answer (labels, consensus, human output)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from qc.agreement import as_table

IMPLAUSIBLE = "IMPLAUSIBLE"
NEUTRAL = "NEUTRAL"
PLAUSIBLE = "PLAUSIBLE"
# CLAIRE / SemEval-2022 Task 7: mean <= 2.5 implausible, mean >= 4 plausible, else neutral.
IMPLAUSIBLE_MAX_MEAN = 2.5
PLAUSIBLE_MIN_MEAN = 4.0


def plausibility_label(mean_rating: float) -> str:
    """Class of a filler from its mean 1-5 rating (thresholds inclusive as in the paper)."""
    if mean_rating <= IMPLAUSIBLE_MAX_MEAN:
        return IMPLAUSIBLE
    if mean_rating >= PLAUSIBLE_MIN_MEAN:
        return PLAUSIBLE
    return NEUTRAL


def plausibility_labels(mean_ratings) -> np.ndarray:
    """Vectorised :func:`plausibility_label` over an array of means (object array of str)."""
    means = np.asarray(mean_ratings, dtype=np.float64)
    labels = np.full(means.shape, NEUTRAL, dtype=object)
    labels[means <= IMPLAUSIBLE_MAX_MEAN] = IMPLAUSIBLE
    labels[means >= PLAUSIBLE_MIN_MEAN] = PLAUSIBLE
    return labels


@dataclass(frozen=True)
class PlausibilityAggregate:
    """Per filler (aligned arrays): id, number of ratings, mean rating and class."""

    filler_ids: np.ndarray
    n_ratings: np.ndarray
    mean_rating: np.ndarray
    label: np.ndarray


def aggregate_plausibility(ratings) -> PlausibilityAggregate:
    """Mean rating and class per filler from rows ``(filler_id, worker_id, rating)``."""
    table = as_table(ratings)
    values = table.label_values()
    n_fillers = len(table.items)
    counts = np.bincount(table.item_codes, minlength=n_fillers)
    means = np.bincount(table.item_codes, values, minlength=n_fillers) / np.maximum(counts, 1)
    return PlausibilityAggregate(table.items, counts, means, plausibility_labels(means))


def plausible_fillers_per_sentence(rows: Iterable[tuple[object, str]]) -> dict:
    """Number of PLAUSIBLE fillers per sentence from rows ``(sentence_id, label)``.

    Every sentence that appears gets an entry, including those with zero plausible fillers;
    the paper's figure (1.84 / 1.87 / 1.84) is the mean of these values.
    """
    per_sentence: dict = {}
    for sentence_id, label in rows:
        per_sentence[sentence_id] = per_sentence.get(sentence_id, 0) + (label == PLAUSIBLE)
    return per_sentence


def claire_sentence_id(filler_id: str) -> str:
    """Sentence part of a CLAIRE filler id ``<Id>_<1..5>``."""
    sentence_id, separator, filler_number = filler_id.rpartition("_")
    if not separator or not filler_number.isdigit():
        raise ValueError(f"not a CLAIRE filler id: {filler_id!r}")
    return sentence_id


def majority_labels(ratings, preference: Sequence | None = None) -> dict:
    """Most frequent label per item from rows ``(item_id, worker_id, label)``.

    Ties are broken deterministically: the tied label that comes first in ``preference``
    wins (labels absent from ``preference`` come after, in sorted order); without a
    ``preference`` the smallest label in sorted order wins.
    """
    table = as_table(ratings)
    labels = list(table.labels.tolist())
    if preference is not None:
        rank = {label: position for position, label in enumerate(preference)}
        order = sorted(range(len(labels)), key=lambda k: (rank.get(labels[k], len(rank)), k))
    else:
        order = list(range(len(labels)))
    column_of_label = np.empty(len(labels), dtype=np.int64)
    column_of_label[order] = np.arange(len(labels))
    n_columns = max(len(labels), 1)
    cell = table.item_codes * n_columns + column_of_label[table.label_codes]
    counts = np.bincount(cell, minlength=len(table.items) * n_columns)
    # argmax returns the first maximum, i.e. the most preferred of the tied labels.
    winners = np.asarray(order)[counts.reshape(len(table.items), n_columns).argmax(axis=1)]
    items = table.items.tolist()
    return {item: labels[winner] for item, winner in zip(items, winners.tolist(), strict=True)}


def majority_label(labels: Sequence, preference: Sequence | None = None):
    """Majority of one item's labels with the tie-break of :func:`majority_labels`."""
    if not labels:
        raise ValueError("majority_label needs at least one label")
    ratings = [(0, worker, label) for worker, label in enumerate(labels)]
    return majority_labels(ratings, preference)[0]


# --- decontextualization ----------------------------------------------------------------

DECONTEXT_DONE = "DONE"
DECONTEXT_IMPOSSIBLE = "IMPOSSIBLE"
DECONTEXT_UNNECESSARY = "UNNECESSARY"


@dataclass(frozen=True)
class HumanReference:
    """One example's median-length annotation (the "human output") and the rest (references)."""

    output: str
    output_category: str
    references: tuple[str, ...]


def decontext_human_output(
    original_sentence: str, annotations: Sequence[tuple[str, str]]
) -> HumanReference | None:
    """Pick the human output among ``(category, decontextualized_sentence)`` annotations.

    Follows the decontextualization paper and its scorer: the example is skipped (``None``)
    when a strict majority says IMPOSSIBLE or fewer than two annotations are feasible.
    Feasible annotations (DONE or UNNECESSARY; an UNNECESSARY one stands for the original
    sentence) are sorted by UTF-8 byte length of their output, ties kept in input order, and
    the median one (the lower median for an even count) is the human output; the other
    feasible annotations are the references.
    """
    impossible = sum(category == DECONTEXT_IMPOSSIBLE for category, _ in annotations)
    feasible = [
        (category, original_sentence if category == DECONTEXT_UNNECESSARY else text)
        for category, text in annotations
        if category != DECONTEXT_IMPOSSIBLE
    ]
    if impossible * 2 > len(annotations) or len(feasible) < 2:
        return None
    by_length = sorted(range(len(feasible)), key=lambda k: (len(feasible[k][1].encode()), k))
    median = by_length[(len(feasible) - 1) // 2]
    references = tuple(text for k, (_, text) in enumerate(feasible) if k != median)
    return HumanReference(feasible[median][1], feasible[median][0], references)
