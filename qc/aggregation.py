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


def decontext_sentence(category: str, original_sentence: str,
                       decontextualized_sentence: str) -> str:
    """The sentence an annotation or prediction stands for (``eval_util.get_sent``).

    The edited sentence for DONE (even when empty); the original sentence for any other
    category (UNNECESSARY; IMPOSSIBLE ones are not used as sentences).
    """
    if category == DECONTEXT_DONE:
        return decontextualized_sentence
    return original_sentence


@dataclass(frozen=True)
class HumanReference:
    """One example's median-length annotation (the "human output") and the rest (references).

    ``references`` is empty when only one annotation is feasible: the official scorer keeps
    such an example and then fails on it, so it cannot be scored (``scorable`` is False).
    """

    output: str
    output_category: str
    references: tuple[str, ...]

    @property
    def scorable(self) -> bool:
        return bool(self.references)


def decontext_human_output(
    original_sentence: str, annotations: Sequence[tuple[str, str]]
) -> HumanReference | None:
    """Pick the human output among ``(category, decontextualized_sentence)`` annotations.

    Implements the official scorer's ``eval_util.process_annotation`` (every annotation of an
    example shares ``original_sentence``, as in our export):

    - ``None`` (the example is skipped by the generation scores) when IMPOSSIBLE is the strict
      majority, i.e. ``2 * feasible < total``; exactly half IMPOSSIBLE is kept;
    - the feasible annotations (not IMPOSSIBLE) become sentences with
      :func:`decontext_sentence` (an UNNECESSARY one stands for the original sentence), are
      sorted by length in **characters** (stable: ties stay in annotation order), and the
      lower median, index ``(n - 1) // 2``, is the human output; the others, in that sorted
      order, are the references (none when only one annotation is feasible: see
      :attr:`HumanReference.scorable`).

    The paper says "the median-length annotation" without a unit; an earlier version of this
    function used UTF-8 bytes, which picks a different sentence when non-ASCII letters make
    the difference.
    """
    if not annotations:
        raise ValueError("an example needs at least one annotation")
    feasible = [
        (category, decontext_sentence(category, original_sentence, text))
        for category, text in annotations
        if category != DECONTEXT_IMPOSSIBLE
    ]
    if 2 * len(feasible) < len(annotations):
        return None
    by_length = sorted(feasible, key=lambda annotation: len(annotation[1]))
    category, output = by_length.pop((len(by_length) - 1) // 2)
    return HumanReference(output, category, tuple(text for _, text in by_length))
