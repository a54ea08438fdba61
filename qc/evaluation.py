"""Per-task evaluation over plain rows, following each paper's reported measures."""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sacrebleu
from scipy.stats import spearmanr

from qc.aggregation import decontext_human_output, plausibility_labels
from qc.agreement import as_table
from qc.textmetrics import (
    EditCounts,
    corpus_bleu,
    is_edited,
    length_ratio,
    sari_edit_counts,
    sentence_bleu,
    sentence_chrf,
    sentence_gleu,
    sentence_match,
    tokenize,
)

# --- decontextualization ----------------------------------------------------------------


@dataclass(frozen=True)
class DecontextScores:
    """Decontextualization measures (paper, section 6); fractions in [0, 1].

    ``length_increase`` is the mean of len(output) / len(original) in whitespace tokens;
    ``match_edited`` is the match rate on examples whose references all edited the
    sentence (``nan`` when there is none). SARI counts are micro-averaged.
    """

    n_examples: int
    length_increase: float
    percent_edited: float
    match_all: float
    match_edited: float
    sari_add: EditCounts
    sari_delete: EditCounts


def evaluate_decontext(examples: Iterable[tuple[str, str, Sequence[str]]]) -> DecontextScores:
    """Score ``(original_sentence, output, references)`` examples."""
    ratios, edited, matches, matches_edited = [], [], [], []
    additions, deletions = EditCounts(), EditCounts()
    for original, output, references in examples:
        ratios.append(length_ratio(original, output))
        edited.append(is_edited(original, output))
        matched = sentence_match(output, references)
        matches.append(matched)
        if all(is_edited(original, reference) for reference in references):
            matches_edited.append(matched)
        add_counts, delete_counts = sari_edit_counts(original, output, references)
        additions.add(add_counts)
        deletions.add(delete_counts)
    if not ratios:
        raise ValueError("no examples to evaluate")
    return DecontextScores(
        n_examples=len(ratios),
        length_increase=float(np.mean(ratios)),
        percent_edited=float(np.mean(edited)),
        match_all=float(np.mean(matches)),
        match_edited=float(np.mean(matches_edited)) if matches_edited else float("nan"),
        sari_add=additions,
        sari_delete=deletions,
    )


def decontext_human_examples(
    examples: Iterable[tuple[str, Sequence[tuple[str, str]]]],
) -> list[tuple[str, str, tuple[str, ...]]]:
    """``(original, annotations)`` -> ``(original, human_output, references)`` examples.

    Uses :func:`qc.aggregation.decontext_human_output` (median-length annotation as the
    output); examples the official scorer would skip are dropped.
    """
    scored = []
    for original, annotation_rows in examples:
        human = decontext_human_output(original, annotation_rows)
        if human is not None:
            scored.append((original, human.output, human.references))
    return scored


# --- CLAIRE -----------------------------------------------------------------------------


def claire_accuracy(gold: Mapping[str, str], predicted: Mapping[str, str]) -> float:
    """Share of gold ids whose predicted class equals the gold class (missing = wrong)."""
    if not gold:
        raise ValueError("no gold labels")
    return sum(predicted.get(key) == label for key, label in gold.items()) / len(gold)


def claire_spearman(gold: Mapping[str, float], predicted: Mapping[str, float]) -> float:
    """Spearman's rho between gold and predicted scores over the gold ids (all required)."""
    missing = set(gold) - set(predicted)
    if missing:
        raise ValueError(f"{len(missing)} gold ids have no predicted score")
    keys = sorted(gold)
    return float(spearmanr([gold[k] for k in keys], [predicted[k] for k in keys]).statistic)


def claire_human_upper_bound(ratings) -> float:
    """Accuracy of individual ratings against the class of the filler's mean rating.

    ``ratings``: rows ``(filler_id, worker_id, rating)``. Each rating is mapped to a class
    with the same thresholds as a mean (1-2 implausible, 3 neutral, 4-5 plausible) and
    compared with the filler's averaged class (paper: 79.4%).
    """
    table = as_table(ratings)
    values = table.label_values()
    counts = np.bincount(table.item_codes, minlength=len(table.items))
    means = np.bincount(table.item_codes, values, minlength=len(table.items)) / counts
    averaged = plausibility_labels(means)[table.item_codes]
    individual = plausibility_labels(values)
    return float(np.mean(averaged == individual))


# --- CANARD -----------------------------------------------------------------------------


def evaluate_canard(predictions: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (0-100) of rewrites against the reference rewrites (one per question)."""
    return corpus_bleu(predictions, [[reference] for reference in references])


def canard_human_agreement(pairs: Sequence[Sequence[str]]) -> float:
    """BLEU of the first worker's rewrite against the second's (``multiple_refs.json``)."""
    return corpus_bleu([pair[0] for pair in pairs], [[pair[1]] for pair in pairs])


# --- WebSplit ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WebSplitScores:
    """Average multi-reference BLEU (0-100) and the paper's two size measures."""

    n_complex: int
    bleu: float
    simple_per_complex: float
    tokens_per_simple: float


def evaluate_websplit(
    examples: Iterable[tuple[Sequence[str], Sequence[Sequence[str]]]],
) -> WebSplitScores:
    """Score ``(predicted_simple_sentences, reference_sequences)`` per complex sentence.

    Each prediction and reference sequence is joined with spaces; BLEU is sacrebleu's
    sentence BLEU of the joined prediction against all joined references, averaged over
    complex sentences. Sizes count the predicted simple sentences and their 13a tokens.
    """
    scores, n_simple, n_tokens = [], 0, 0
    for prediction, references in examples:
        if not references:
            raise ValueError("every complex sentence needs at least one reference")
        joined_references = [" ".join(reference) for reference in references]
        scores.append(sacrebleu.sentence_bleu(" ".join(prediction), joined_references).score)
        n_simple += len(prediction)
        n_tokens += sum(len(tokenize(sentence)) for sentence in prediction)
    if not scores:
        raise ValueError("no examples to evaluate")
    return WebSplitScores(
        n_complex=len(scores),
        bleu=float(np.mean(scores)),
        simple_per_complex=n_simple / len(scores),
        tokens_per_simple=n_tokens / n_simple if n_simple else 0.0,
    )


# --- conversational sluices -------------------------------------------------------------


@dataclass(frozen=True)
class SluiceScores:
    """Sentence-level means in [0, 1], as the sluice paper's Table 2 reports them."""

    n_items: int
    gleu: float
    bleu: float
    chrf: float
    chrf_precision: float
    chrf_recall: float


def evaluate_sluice(
    predictions: Sequence[str], references_per_item: Sequence[Sequence[str]]
) -> SluiceScores:
    """Mean sentence GLEU, BLEU (add-one smoothing) and chrF/P/R over the items.

    Every item is scored against all of its references (each unique test annotation is a
    reference); see :mod:`qc.textmetrics` for each metric's multi-reference rule.
    """
    if len(predictions) != len(references_per_item) or not predictions:
        raise ValueError("need one non-empty list of references per prediction")
    gleu, bleu, chrf = [], [], []
    for prediction, references in zip(predictions, references_per_item, strict=True):
        gleu.append(sentence_gleu(prediction, references))
        bleu.append(sentence_bleu(prediction, references))
        chrf.append(sentence_chrf(prediction, references))
    return SluiceScores(
        n_items=len(predictions),
        gleu=statistics.fmean(gleu),
        bleu=statistics.fmean(bleu),
        chrf=statistics.fmean(score.f_score for score in chrf),
        chrf_precision=statistics.fmean(score.precision for score in chrf),
        chrf_recall=statistics.fmean(score.recall for score in chrf),
    )


def sluice_annotator_agreement(
    answers_by_context: Mapping[tuple, Sequence[str]], *, seed: int
) -> SluiceScores:
    """The paper's ANN AGREE: two annotations sampled per item, one scored against the other.

    Contexts are visited in sorted order; for each with at least two annotations,
    ``random.Random(seed).sample(answers, 2)`` gives (hypothesis, reference).
    """
    rng = random.Random(seed)
    hypotheses, references = [], []
    for context in sorted(answers_by_context):
        answers = list(answers_by_context[context])
        if len(answers) < 2:
            continue
        hypothesis, reference = rng.sample(answers, 2)
        hypotheses.append(hypothesis)
        references.append([reference])
    return evaluate_sluice(hypotheses, references)

