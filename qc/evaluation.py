"""Per-task evaluation over plain rows, following each paper's reported measures."""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import sacrebleu
from scipy.stats import spearmanr

from qc.aggregation import (
    DECONTEXT_IMPOSSIBLE,
    decontext_human_output,
    plausibility_label,
    plausibility_labels,
)
from qc.agreement import as_table
from qc.textmetrics import (
    EditCounts,
    corpus_bleu,
    is_edited,
    length_ratio,
    normalize_for_match,
    sari_edit_counts,
    sentence_bleu,
    sentence_chrf,
    sentence_gleu,
    sentence_match,
    spacy_tokenize,
    tokenize,
)

# --- decontextualization ----------------------------------------------------------------
# The official scorer's measures (google-research/language, language/decontext/eval_util.py,
# eval.py --word_tokenizer=whitespace); the per-sentence rules and how they differ from the
# paper's wording are in qc.textmetrics ("decontextualization metrics") and
# qc.aggregation.decontext_human_output.


def _mean(values: Sequence) -> float:
    """``eval_util.get_avg``: ``sum(values) / len(values)`` (bools count 0/1)."""
    return sum(values) / len(values)


@dataclass(frozen=True)
class DecontextScores:
    """Sentence-generation measures over the scored examples; fractions in [0, 1].

    - ``length_increase``: mean len(output) / len(original), characters of the raw text;
    - ``percent_edited``: share of outputs whose normalised text differs from the
      normalised original (the scorer's "Change Ratio");
    - ``match_all``: share of outputs equal to a reference after normalisation;
    - ``match_edited``: the same over the ``n_match_edited`` examples whose normalised
      original is not among their normalised references (the scorer's "Sentence Match on
      Changed Examples", i.e. examples no reference leaves unchanged); ``nan`` when there is
      none (the scorer fails there);
    - ``sari_add`` / ``sari_delete``: the per-example counts of
      :func:`qc.textmetrics.sari_edit_counts` **averaged** over examples (what the scorer
      prints), P/R/F1 from those means.
    """

    n_examples: int
    length_increase: float
    percent_edited: float
    match_all: float
    match_edited: float
    n_match_edited: int
    sari_add: EditCounts
    sari_delete: EditCounts

    def as_dict(self) -> dict:
        """Plain JSON-able dict; SARI as ``{precision, recall, f1, tp, fp, fn}``."""
        return {
            "n_examples": self.n_examples,
            "length_increase": self.length_increase,
            "percent_edited": self.percent_edited,
            "match_all": self.match_all,
            "match_edited": self.match_edited,
            "n_match_edited": self.n_match_edited,
            "sari_add": self.sari_add.as_dict(),
            "sari_delete": self.sari_delete.as_dict(),
        }


def references_all_change(original: str, references: Sequence[str]) -> bool:
    """Whether no reference leaves the original unchanged (after normalisation): the examples
    "match on changed" (``match_edited``) is computed over.

    When no scored example of a file qualifies, the official ``eval.py`` stops with
    ``IndexError`` (``get_avg`` of an empty list); :func:`evaluate_decontext` gives ``nan``.
    """
    return normalize_for_match(original) not in {normalize_for_match(reference)
                                                 for reference in references}


def evaluate_decontext(examples: Iterable[tuple[str, str, Sequence[str]]]) -> DecontextScores:
    """Score ``(original_sentence, output, references)`` examples
    (``eval_util.compute_sentence_generation_scores``).

    Raises ``ValueError`` without examples, or for an example without references.
    """
    ratios, edited, matches, matches_edited = [], [], [], []
    additions, deletions = [], []
    for original, output, references in examples:
        ratios.append(length_ratio(original, output))
        edited.append(is_edited(original, output))
        matched = sentence_match(output, references)
        matches.append(matched)
        if references_all_change(original, references):
            matches_edited.append(matched)
        add_counts, delete_counts = sari_edit_counts(original, output, references)
        additions.append(add_counts)
        deletions.append(delete_counts)
    if not ratios:
        raise ValueError("no examples to evaluate")
    return DecontextScores(
        n_examples=len(ratios),
        length_increase=_mean(ratios),
        percent_edited=_mean(edited),
        match_all=_mean(matches),
        match_edited=_mean(matches_edited) if matches_edited else float("nan"),
        n_match_edited=len(matches_edited),
        sari_add=EditCounts.mean(additions),
        sari_delete=EditCounts.mean(deletions),
    )


def decontext_human_examples(
    examples: Iterable[tuple[str, Sequence[tuple[str, str]]]],
) -> list[tuple[str, str, tuple[str, ...]]]:
    """``(original, annotations)`` -> ``(original, human_output, references)`` examples.

    Uses :func:`qc.aggregation.decontext_human_output` (median-length annotation as the
    output); examples the official scorer skips (IMPOSSIBLE majority) are dropped. An example
    with a single feasible annotation is kept with no reference, as the scorer keeps it, and
    :func:`evaluate_decontext` then raises, as the scorer fails.
    """
    scored = []
    for original, annotation_rows in examples:
        human = decontext_human_output(original, annotation_rows)
        if human is not None:
            scored.append((original, human.output, human.references))
    return scored


@dataclass(frozen=True)
class DecontextClassification:
    """``eval_util.score_classification``: the feasibility decision, over every example.

    ``impossible_ratio``: share of examples predicted IMPOSSIBLE; ``binary_agreement``:
    share of (example, annotation) pairs where "predicted IMPOSSIBLE" equals "annotated
    IMPOSSIBLE" (the scorer's "Annotation Match Score").
    """

    impossible_ratio: float
    binary_agreement: float

    def as_dict(self) -> dict:
        return {"impossible_ratio": self.impossible_ratio,
                "binary_agreement": self.binary_agreement}


def decontext_classification_scores(
    rows: Iterable[tuple[str, Sequence[str]]],
) -> DecontextClassification:
    """Rows ``(predicted_category, annotation_categories)``, one per example."""
    matches, predicted_impossible = [], []
    for predicted_category, categories in rows:
        impossible = predicted_category == DECONTEXT_IMPOSSIBLE
        predicted_impossible.append(impossible)
        matches.extend(impossible == (category == DECONTEXT_IMPOSSIBLE)
                       for category in categories)
    if not predicted_impossible or not matches:
        raise ValueError("no annotated examples to evaluate")
    return DecontextClassification(_mean(predicted_impossible), _mean(matches))


class DecontextExample(NamedTuple):
    """One example of a split with a system's prediction for it.

    ``annotations`` are ``(category, decontextualized_sentence)``; ``predicted_sentence`` is
    the sentence the prediction stands for (:func:`qc.aggregation.decontext_sentence` of
    the prediction's own category, original and edited sentence).
    """

    example_id: object
    original_sentence: str
    annotations: Sequence[tuple[str, str]]
    predicted_category: str
    predicted_sentence: str


@dataclass(frozen=True)
class DecontextEvaluation:
    """What ``eval.py`` reports: the system's and the median human's generation scores over
    the examples without an IMPOSSIBLE majority, and the classification over all
    ``n_examples``."""

    n_examples: int
    system: DecontextScores
    human: DecontextScores
    classification: DecontextClassification

    def as_dict(self) -> dict:
        return {"n_examples": self.n_examples, "system": self.system.as_dict(),
                "human": self.human.as_dict(),
                "classification": self.classification.as_dict()}


def evaluate_decontext_predictions(examples: Sequence[DecontextExample]) -> DecontextEvaluation:
    """The official scorer's whole report for a split and one prediction per example.

    Raises ``ValueError`` for an example with a single feasible annotation (the scorer
    cannot score it: no reference is left; our export keeps such examples out of dev/test)
    and when no example is left to score.
    """
    if not examples:
        raise ValueError("no annotated example to evaluate")
    system_examples, human_examples = [], []
    for example in examples:
        human = decontext_human_output(example.original_sentence, example.annotations)
        if human is None:
            continue  # IMPOSSIBLE majority: skipped by the official scorer too
        if not human.scorable:
            raise ValueError(f"example {example.example_id!r} has a single feasible annotation: "
                             f"the official scorer cannot score it (no reference is left)")
        system_examples.append(
            (example.original_sentence, example.predicted_sentence, human.references))
        human_examples.append((example.original_sentence, human.output, human.references))
    if not system_examples:
        raise ValueError("no example has enough feasible annotations to be scored")
    classification = decontext_classification_scores(
        (example.predicted_category, [category for category, _ in example.annotations])
        for example in examples)
    return DecontextEvaluation(
        n_examples=len(examples),
        system=evaluate_decontext(system_examples),
        human=evaluate_decontext(human_examples),
        classification=classification,
    )


# --- CLAIRE -----------------------------------------------------------------------------


def claire_check_ids(gold: Mapping[str, object], predicted: Mapping[str, object], *,
                     missing_as_wrong: bool = False) -> None:
    """Refuse predictions that do not cover exactly the gold filler ids, as the official
    ``scorer.py`` refuses a file of another size: ``ValueError`` naming how many ids are
    missing (unless ``missing_as_wrong``) or foreign, and one of them."""
    missing = sorted(set(gold) - set(predicted))
    if missing and not missing_as_wrong:
        raise ValueError(f"no prediction for {len(missing)} filler(s), e.g. {missing[0]}")
    unknown = sorted(set(predicted) - set(gold))
    if unknown:
        raise ValueError(f"{len(unknown)} id(s) are not gold fillers, e.g. {unknown[0]}")


def claire_accuracy(gold: Mapping[str, str], predicted: Mapping[str, str], *,
                    missing_as_wrong: bool = False) -> float:
    """Share of gold ids whose predicted class equals the gold class.

    Every gold id needs a prediction and no other id may occur (:func:`claire_check_ids`);
    ``missing_as_wrong=True`` scores a missing one as wrong instead.
    """
    if not gold:
        raise ValueError("no gold labels")
    claire_check_ids(gold, predicted, missing_as_wrong=missing_as_wrong)
    return sum(predicted.get(key) == label for key, label in gold.items()) / len(gold)


def claire_spearman(gold: Mapping[str, float], predicted: Mapping[str, float]) -> float:
    """Spearman's rho between gold and predicted scores over the gold ids (all required)."""
    missing = set(gold) - set(predicted)
    if missing:
        raise ValueError(f"{len(missing)} gold ids have no predicted score")
    keys = sorted(gold)
    return float(spearmanr([gold[k] for k in keys], [predicted[k] for k in keys]).statistic)


@dataclass(frozen=True)
class ClaireScores:
    """Accuracy of the predicted classes, and Spearman's rho when scores were predicted."""

    n_fillers: int
    accuracy: float
    spearman: float | None = None

    def as_dict(self) -> dict:
        """``{n_fillers, accuracy}`` plus ``spearman`` only when scores were predicted."""
        result = {"n_fillers": self.n_fillers, "accuracy": self.accuracy}
        if self.spearman is not None:
            result["spearman"] = self.spearman
        return result


def evaluate_claire(
    gold_labels: Mapping[str, str],
    gold_scores: Mapping[str, float],
    *,
    predicted_scores: Mapping[str, float] | None = None,
    predicted_labels: Mapping[str, str] | None = None,
    missing_as_wrong: bool = False,
) -> ClaireScores:
    """SemEval-2022 Task 7 measures of one prediction file, by filler id ``<Id>_<n>``.

    Give either ``predicted_scores`` (ranking subtask: Spearman against ``gold_scores``;
    the classes then follow from the thresholds of
    :func:`qc.aggregation.plausibility_label`, so accuracy is reported too) or
    ``predicted_labels`` (classification subtask: accuracy only). Accuracy is over the gold
    ids; a prediction file that misses gold ids or has others is refused, as the official
    scorer refuses it (:func:`claire_check_ids`), unless ``missing_as_wrong`` (labels only).
    """
    if (predicted_scores is None) == (predicted_labels is None):
        raise ValueError("give predicted_scores or predicted_labels")
    spearman = None
    if predicted_scores is not None:
        claire_check_ids(gold_labels, predicted_scores)
        spearman = claire_spearman(gold_scores, predicted_scores)
        predicted_labels = {key: plausibility_label(value)
                            for key, value in predicted_scores.items()}
    return ClaireScores(len(gold_labels), claire_accuracy(gold_labels, predicted_labels,
                                                          missing_as_wrong=missing_as_wrong),
                        spearman)


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


# How CANARD's rewrites are tokenised before BLEU: "spacy" is the official set-up
# (FormatSeq2Seq.py, then multi-bleu-detok.perl, whose tokenisation is sacrebleu's 13a); "13a"
# is sacrebleu's 13a alone on the raw text.
REWRITE_TOKENIZATIONS = ("spacy", "13a")


@dataclass(frozen=True)
class RewriteScores:
    """Corpus BLEU (0-100) of question rewrites over ``n_questions``."""

    n_questions: int
    bleu: float
    tokenization: str = "spacy"


def evaluate_rewrites(
    predictions: Sequence[str], references_per_item: Sequence[Sequence[str]], *,
    tokenization: str = "spacy",
) -> RewriteScores:
    """Corpus BLEU (sacrebleu 13a, case-sensitive, as ``multi-bleu-detok.perl``) of each
    rewrite against **every** reference rewrite of its question (the multi-reference export:
    one CANARD record per worker rewrite of the same ``QuAC_dialog_id`` + ``Question_no``).

    ``tokenization="spacy"`` (CANARD's official set-up) first tokenises predictions and
    references with :func:`qc.textmetrics.spacy_tokenize`; ``"13a"`` scores the raw text.
    References may vary in number per question (:func:`qc.textmetrics.corpus_bleu` pads).
    Raises ``ValueError`` without questions.
    """
    if tokenization not in REWRITE_TOKENIZATIONS:
        raise ValueError(f"unknown tokenization {tokenization!r}; choose from "
                         f"{', '.join(REWRITE_TOKENIZATIONS)}")
    if any(isinstance(references, str) for references in references_per_item):
        raise TypeError("references_per_item[i] must be a list of strings, not a string")
    if not predictions:
        raise ValueError("no questions to score")
    if tokenization == "spacy":
        predictions = [spacy_tokenize(prediction) for prediction in predictions]
        references_per_item = [[spacy_tokenize(reference) for reference in references]
                               for references in references_per_item]
    return RewriteScores(len(predictions), corpus_bleu(predictions, references_per_item),
                         tokenization)


def evaluate_canard(predictions: Sequence[str], references: Sequence[str], *,
                    tokenization: str = "spacy") -> float:
    """Corpus BLEU (0-100) of rewrites against the reference rewrites (one per question)."""
    return evaluate_rewrites(predictions, [[reference] for reference in references],
                             tokenization=tokenization).bleu


def rewrite_human_agreement(
    rewrites_per_question: Sequence[Sequence[str]], *, tokenization: str = "spacy",
) -> RewriteScores:
    """CANARD's human figure: each question's first rewrite scored as a system against its
    other rewrites (``multiple_refs.json``: the first worker's against the second's; the
    paper's 59.92). Questions with a single rewrite are left out; raises ``ValueError``
    when none has two."""
    pairs = [rewrites for rewrites in rewrites_per_question if len(rewrites) >= 2]
    if not pairs:
        raise ValueError("no question has two rewrites: the human figure needs questions "
                         "rewritten by two workers (e.g. CANARD's multiple_refs.json)")
    return evaluate_rewrites([rewrites[0] for rewrites in pairs],
                             [list(rewrites[1:]) for rewrites in pairs],
                             tokenization=tokenization)


# --- WebSplit ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WebSplitScores:
    """Average multi-reference BLEU (0-100) by two rules, and the paper's two size measures.

    ``bleu``: sacrebleu's sentence BLEU (13a tokens, exponential smoothing);
    ``bleu_multi_bleu``: Aharoni & Goldberg's rule (``src/evaluate.py`` of their repository):
    Moses ``multi-bleu.perl`` per complex sentence on whitespace tokens, case-sensitive, no
    smoothing (a sentence without a matching 4-gram scores 0), each score as the script
    prints it (two decimals) before the average.
    """

    n_complex: int
    bleu: float
    bleu_multi_bleu: float
    simple_per_complex: float
    tokens_per_simple: float


def multi_bleu_sentence(hypothesis: str, references: Sequence[str]) -> float:
    """BLEU (0-100) of one line against its references as Moses ``multi-bleu.perl`` computes
    and prints it: whitespace tokens, n-gram counts clipped by their largest count in any
    reference, the closest reference length (ties: the shorter), no smoothing (a precision
    of 0, or no n-gram of some order, gives 0), two decimals."""
    words = hypothesis.split()
    reference_words = [reference.split() for reference in references]
    if not reference_words:
        raise ValueError("multi_bleu_sentence needs at least one reference")
    reference_length = min((abs(len(ref) - len(words)), len(ref)) for ref in reference_words)[1]
    log_precision = 0.0
    for n in range(1, 5):
        counts = Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
        most: Counter = Counter()
        for ref in reference_words:
            most |= Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
        correct = sum(min(count, most[gram]) for gram, count in counts.items())
        if not correct:
            return 0.0
        log_precision += math.log(correct / sum(counts.values())) / 4
    if not reference_length:
        return 0.0
    brevity = 1.0 if len(words) >= reference_length else math.exp(
        1 - reference_length / len(words))
    return float(f"{100 * brevity * math.exp(log_precision):.2f}")


def evaluate_websplit(
    examples: Iterable[tuple[Sequence[str], Sequence[Sequence[str]]]],
) -> WebSplitScores:
    """Score ``(predicted_simple_sentences, reference_sequences)`` per complex sentence.

    Each prediction and reference sequence is joined with spaces; BLEU is the sentence BLEU
    of the joined prediction against all joined references, averaged over complex sentences,
    by sacrebleu (``bleu``) and by Aharoni & Goldberg's ``multi-bleu.perl`` rule
    (``bleu_multi_bleu``, :func:`multi_bleu_sentence`). Sizes count the predicted simple
    sentences and their 13a tokens.
    """
    scores, moses_scores, n_simple, n_tokens = [], [], 0, 0
    for prediction, references in examples:
        if not references:
            raise ValueError("every complex sentence needs at least one reference")
        joined_prediction = " ".join(prediction)
        joined_references = [" ".join(reference) for reference in references]
        scores.append(sacrebleu.sentence_bleu(joined_prediction, joined_references).score)
        moses_scores.append(multi_bleu_sentence(joined_prediction, joined_references))
        n_simple += len(prediction)
        n_tokens += sum(len(tokenize(sentence)) for sentence in prediction)
    if not scores:
        raise ValueError("no examples to evaluate")
    return WebSplitScores(
        n_complex=len(scores),
        bleu=float(np.mean(scores)),
        bleu_multi_bleu=float(np.mean(moses_scores)),
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
    if not predictions:
        raise ValueError("no items to evaluate")
    if len(predictions) != len(references_per_item):
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

