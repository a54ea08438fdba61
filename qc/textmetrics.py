"""Text-overlap metrics used to evaluate rewrites and to measure agreement between workers.

Scales: BLEU is on 0-100 as sacrebleu reports it; chrF, GLEU, SARI and match rates are
fractions in [0, 1] (the sluice paper reports chrF and GLEU that way).

References are always given per item as a sequence of strings, and items may have
different numbers of references (``references_per_item[i]`` is the list for item ``i``).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import sacrebleu
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

CHRF_CHAR_ORDER = 4
CHRF_BETA = 3.0
GLEU_MAX_ORDER = 4
BLEU_MAX_ORDER = 4

_tokenize_13a = Tokenizer13a()


def tokenize(text: str) -> list[str]:
    """Tokens as BLEU sees them: sacrebleu's ``13a`` tokenizer (mteval-v13a), split on spaces."""
    return _tokenize_13a(text.strip()).split()


@lru_cache(maxsize=1)
def _spacy_english():
    """spaCy's blank English pipeline: its rule-based tokenizer only, no model to download.
    Imported on first use (spaCy takes about a second to import)."""
    import spacy

    return spacy.blank("en")


def spacy_tokenize(text: str) -> str:
    """CANARD's official tokenisation: the text's spaCy tokens joined by single spaces.

    ``FormatSeq2Seq.py`` of the CANARD repository runs every source and rewrite through
    ``spacy.lang.en.English()`` (what ``spacy.blank("en")`` builds) before
    ``multi-bleu-detok.perl`` scores them; "Yeltsin's" becomes "Yeltsin 's", "U.S.?" "U.S. ?".
    """
    return " ".join(token.text for token in _spacy_english()(text))


def _pad_references(references_per_item: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """Turn per-item reference lists into sacrebleu's reference streams, padding with None."""
    if any(len(refs) == 0 for refs in references_per_item):
        raise ValueError("every item needs at least one reference")
    width = max((len(refs) for refs in references_per_item), default=0)
    return [
        [refs[k] if k < len(refs) else None for refs in references_per_item]
        for k in range(width)
    ]


def corpus_bleu(
    hypotheses: Sequence[str],
    references_per_item: Sequence[Sequence[str]],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
) -> float:
    """Corpus BLEU (0-100) with a variable number of references per hypothesis.

    Thin wrapper over ``sacrebleu.corpus_bleu`` (default 13a tokenisation, case-sensitive,
    the same as Moses ``multi-bleu-detok.perl`` that CANARD used).
    """
    if len(hypotheses) != len(references_per_item):
        raise ValueError("one list of references is needed per hypothesis")
    if not hypotheses:
        return 0.0
    streams = _pad_references(references_per_item)
    return sacrebleu.corpus_bleu(
        list(hypotheses), streams, tokenize=tokenize, lowercase=lowercase
    ).score


def bleu_statistics(hypothesis: str, references: Sequence[str]) -> list[int]:
    """``[hyp_len, ref_len, correct_1..4, total_1..4]`` of one hypothesis: what corpus BLEU
    sums over items (:func:`bleu_from_statistics`), as sacrebleu counts them (13a tokens,
    n-gram matches clipped by the most any reference has, the closest reference length with
    ties to the shorter)."""
    if not references:
        raise ValueError("BLEU needs at least one reference")
    hyp_tokens = tokenize(hypothesis)
    ref_tokens = [tokenize(reference) for reference in references]
    hyp_len = len(hyp_tokens)
    ref_len = min((len(tokens) for tokens in ref_tokens),
                  key=lambda length: (abs(length - hyp_len), length))
    correct, total = [], []
    for n in range(1, BLEU_MAX_ORDER + 1):
        hyp_grams = Counter(tuple(hyp_tokens[i : i + n]) for i in range(hyp_len - n + 1))
        most: Counter = Counter()
        for tokens in ref_tokens:
            most |= Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
        correct.append(sum((hyp_grams & most).values()))
        total.append(max(hyp_len - n + 1, 0))
    return [hyp_len, ref_len, *correct, *total]


def bleu_from_statistics(stats: Sequence[float]) -> float:
    """Corpus BLEU (0-100) from summed :func:`bleu_statistics`, with sacrebleu's defaults
    (exponential smoothing), so it equals :func:`corpus_bleu` of the same items."""
    hyp_len, ref_len = int(stats[0]), int(stats[1])
    correct = [int(value) for value in stats[2 : 2 + BLEU_MAX_ORDER]]
    total = [int(value) for value in stats[2 + BLEU_MAX_ORDER : 2 + 2 * BLEU_MAX_ORDER]]
    return BLEU.compute_bleu(correct, total, hyp_len, ref_len, smooth_method="exp").score


def sentence_bleu(hypothesis: str, references: Sequence[str]) -> float:
    """Sentence BLEU in [0, 1] with Lin & Och (2004) add-one smoothing for n > 1.

    This is what the sluice paper used (NLTK ``sentence_bleu`` with ``method2``); sacrebleu's
    ``add-k`` smoothing with k = 1 is the same rule, so sacrebleu does the work.
    """
    if not references:
        raise ValueError("sentence_bleu needs at least one reference")
    score = sacrebleu.sentence_bleu(
        hypothesis, list(references), smooth_method="add-k", smooth_value=1
    )
    return score.score / 100.0


# --- chrF -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChrF:
    """Character n-gram precision, recall and F-beta, each in [0, 1]."""

    precision: float
    recall: float
    f_score: float


def _char_ngrams(text: str, order: int) -> list[Counter]:
    """Counters of character n-grams (n = 1..order) with all whitespace removed (as chrF)."""
    squeezed = "".join(text.split())
    return [
        Counter(squeezed[i : i + n] for i in range(len(squeezed) - n + 1))
        for n in range(1, order + 1)
    ]


def chrf_statistics(hypothesis: str, reference: str, order: int = CHRF_CHAR_ORDER) -> list:
    """Per n-gram order ``[hyp_count, ref_count, matches]`` — sacrebleu's CHRF statistics.

    As in sacrebleu, hypothesis n-grams of an order the reference is too short to have are
    not counted (so they do not lower the corpus precision).
    """
    stats = []
    for hyp_grams, ref_grams in zip(
        _char_ngrams(hypothesis, order), _char_ngrams(reference, order), strict=True
    ):
        matches = sum((hyp_grams & ref_grams).values())
        hyp_count = sum(hyp_grams.values()) if ref_grams else 0
        stats.append([hyp_count, sum(ref_grams.values()), matches])
    return stats


def chrf_from_statistics(stats: Sequence[Sequence[float]], beta: float = CHRF_BETA) -> ChrF:
    """chrF as sacrebleu 2.x computes it (no eps smoothing).

    Precision and recall are averaged over the n-gram orders where both hypothesis and
    reference have n-grams; F-beta is computed from those averages. Reporting these same
    averages as P and R keeps P, R and F consistent with each other and with sacrebleu.
    """
    total_precision = total_recall = 0.0
    effective_order = 0
    for n_hyp, n_ref, n_match in stats:
        if n_hyp > 0 and n_ref > 0:
            total_precision += n_match / n_hyp
            total_recall += n_match / n_ref
            effective_order += 1
    if effective_order == 0:
        return ChrF(0.0, 0.0, 0.0)
    precision = total_precision / effective_order
    recall = total_recall / effective_order
    if precision + recall == 0:
        return ChrF(precision, recall, 0.0)
    factor = beta**2
    f_score = (1 + factor) * precision * recall / (factor * precision + recall)
    return ChrF(precision, recall, f_score)


def best_chrf_statistics(hypothesis: str, references: Sequence[str], beta: float) -> list:
    """Statistics against the reference giving the highest F (sacrebleu's multi-ref rule)."""
    if not references:
        raise ValueError("chrF needs at least one reference")
    candidates = [chrf_statistics(hypothesis, ref) for ref in references]
    return max(candidates, key=lambda stats: chrf_from_statistics(stats, beta).f_score)


def sentence_chrf(hypothesis: str, references: Sequence[str], beta: float = CHRF_BETA) -> ChrF:
    """Sentence chrF (beta = 3, character 4-grams) against the best of ``references``."""
    return chrf_from_statistics(best_chrf_statistics(hypothesis, references, beta), beta)


def corpus_chrf(
    hypotheses: Sequence[str],
    references_per_item: Sequence[Sequence[str]],
    beta: float = CHRF_BETA,
) -> ChrF:
    """Corpus chrF: n-gram statistics summed over items, then P/R/F (as sacrebleu CHRF)."""
    totals = [[0, 0, 0] for _ in range(CHRF_CHAR_ORDER)]
    for hypothesis, references in zip(hypotheses, references_per_item, strict=True):
        for total, stats in zip(
            totals, best_chrf_statistics(hypothesis, references, beta), strict=True
        ):
            for k in range(3):
                total[k] += stats[k]
    return chrf_from_statistics(totals, beta)


# --- GLEU -------------------------------------------------------------------------------


def _all_ngrams(tokens: Sequence[str], max_order: int = GLEU_MAX_ORDER) -> Counter:
    return Counter(
        tuple(tokens[i : i + n])
        for n in range(1, max_order + 1)
        for i in range(len(tokens) - n + 1)
    )


def gleu_statistics(hypothesis: str, references: Sequence[str]) -> tuple[int, int]:
    """``(matches, max(hyp_ngrams, ref_ngrams))`` for the reference with the best ratio."""
    hyp_grams = _all_ngrams(tokenize(hypothesis))
    hyp_total = sum(hyp_grams.values())
    best: tuple[int, int] | None = None
    for reference in references:
        ref_grams = _all_ngrams(tokenize(reference))
        n_all = max(hyp_total, sum(ref_grams.values()))
        if n_all == 0:
            continue
        candidate = (sum((hyp_grams & ref_grams).values()), n_all)
        if best is None or candidate[0] / candidate[1] > best[0] / best[1]:
            best = candidate
    return best if best is not None else (0, 0)


def sentence_gleu(hypothesis: str, references: Sequence[str]) -> float:
    """Google-BLEU (Wu et al. 2016) as NLTK's ``sentence_gleu``: min(n-gram P, n-gram R).

    All 1..4-grams of hypothesis and reference are pooled; GLEU = matches / max(#hyp n-grams,
    #ref n-grams). With several references the best-scoring one is used. Tokens: :func:`tokenize`.
    """
    matches, n_all = gleu_statistics(hypothesis, references)
    return matches / n_all if n_all else 0.0


def corpus_gleu(hypotheses: Sequence[str], references_per_item: Sequence[Sequence[str]]) -> float:
    """NLTK ``corpus_gleu``: matches and totals summed over items before dividing."""
    total_matches = total_all = 0
    for hypothesis, references in zip(hypotheses, references_per_item, strict=True):
        matches, n_all = gleu_statistics(hypothesis, references)
        total_matches += matches
        total_all += n_all
    return total_matches / total_all if total_all else 0.0


# --- decontextualization metrics --------------------------------------------------------
#
# Paper vs scorer. The decontextualization paper (Choi et al., TACL 2021, section 6) describes
# the measures in words: length increase, % of sentences changed, sentence match after
# "normalising" (lower case, no punctuation, no articles), and SARI add/delete "on unigrams".
# Where the words leave room, the official scorer (google-research/language,
# ``language/decontext/eval_util.py``, run as ``eval.py --word_tokenizer=whitespace``) decides,
# and these functions implement the scorer, rule for rule:
#
# - text is normalised (:func:`normalize_for_match`) before the match, "changed" and SARI;
# - the length ratio is in characters of the raw (not normalised) sentences;
# - SARI unigrams are the *set* of whitespace tokens of the normalised text (so punctuation
#   and articles are never edits), a reference word weighs the share of non-empty references
#   that contain it, and the per-example counts are averaged before P/R/F1
#   (:func:`qc.evaluation.evaluate_decontext`).
#
# The scorer's default ``--word_tokenizer=nltk_english`` would split some tokens of the
# normalised text further (``cannot`` -> ``can not``, non-ASCII punctuation such as ``…``);
# we implement the whitespace tokenizer (docs/review-and-export.md, "Checked against the
# official scorers").

_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


@lru_cache(maxsize=65536)
def normalize_for_match(text: str) -> str:
    """``eval_util.normalize_text``: the text every decontext measure but the length compares.

    Lower case; ASCII punctuation (``string.punctuation``) removed, not replaced, so
    ``"don't"`` -> ``"dont"`` and ``"U.S."`` -> ``"us"``; then the whole words a/an/the
    replaced by a space; whitespace runs collapsed and the ends stripped. Non-ASCII
    punctuation (``…``, ``—``) is kept.
    """
    text = text.lower().translate(_ASCII_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def sentence_match(output: str, references: Sequence[str]) -> bool:
    """Whether the normalised ``output`` equals a normalised reference (scorer's match)."""
    normalized = normalize_for_match(output)
    return any(normalized == normalize_for_match(ref) for ref in references)


def is_edited(original: str, output: str) -> bool:
    """The scorer's "changed": the normalised output differs from the normalised original.

    So a change of case, punctuation, articles or spacing alone is not an edit.
    """
    return normalize_for_match(output) != normalize_for_match(original)


def length_ratio(original: str, output: str) -> float:
    """len(output) / len(original) in characters of the raw sentences ("length increase").

    The paper speaks of length; the scorer measures it in characters (Python ``len``, i.e.
    code points), before normalisation.
    """
    if not original:
        raise ValueError("the original sentence is empty")
    return len(output) / len(original)


def sari_unigrams(text: str) -> frozenset[str]:
    """SARI unigrams: the set of whitespace tokens of :func:`normalize_for_match` ``(text)``."""
    return frozenset(normalize_for_match(text).split())


@dataclass
class EditCounts:
    """True positives, false positives and false negatives of one kind of SARI edit.

    Accumulate examples with :meth:`add` (sums) and divide with :meth:`mean`: precision and
    recall are ratios, so the scorer's mean counts and the sums give the same P/R/F1; the
    scorer prints the mean counts. P, R and F1 are 0 when there is no true positive.
    """

    true_positive: float = 0.0
    false_positive: float = 0.0
    false_negative: float = 0.0

    def add(self, other: EditCounts) -> None:
        self.true_positive += other.true_positive
        self.false_positive += other.false_positive
        self.false_negative += other.false_negative

    @classmethod
    def mean(cls, counts: Sequence[EditCounts]) -> EditCounts:
        """Per-field mean over examples, summed as the scorer does (``sum(l) / len(l)``)."""
        if not counts:
            raise ValueError("no counts to average")
        n = len(counts)
        return cls(sum(c.true_positive for c in counts) / n,
                   sum(c.false_positive for c in counts) / n,
                   sum(c.false_negative for c in counts) / n)

    @property
    def precision(self) -> float:
        if not self.true_positive:
            return 0.0
        return self.true_positive / (self.true_positive + self.false_positive)

    @property
    def recall(self) -> float:
        if not self.true_positive:
            return 0.0
        return self.true_positive / (self.true_positive + self.false_negative)

    @property
    def f1(self) -> float:
        if not self.true_positive:
            return 0.0
        precision, recall = self.precision, self.recall
        return 2 * precision * recall / (precision + recall)

    def as_dict(self) -> dict[str, float]:
        """``precision``, ``recall``, ``f1`` and the raw ``tp``, ``fp``, ``fn``."""
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "tp": self.true_positive, "fp": self.false_positive,
                "fn": self.false_negative}


def sari_edit_counts(
    original: str, output: str, references: Sequence[str]
) -> tuple[EditCounts, EditCounts]:
    """SARI add and delete counts for one example (``eval_util._get_raw_sari_score``).

    Paper (section 6): add edits are unigrams of a sentence not in the original, delete
    edits unigrams of the original not in the sentence, scored against the references'
    edits. Scorer (implemented): on :func:`sari_unigrams` of each sentence, a word ``w``
    weighs ``r(w) / R``, where ``R`` is the number of references with at least one token and
    ``r(w)`` how many of them contain ``w``.

    - add: TP = sum of the weights of the output's added words, FP = #added - TP,
      FN = sum of the weights of the reference words not in the original - TP;
    - delete: a word of the original weighs ``1 - r(w) / R`` (the share of references that
      drop it); TP = sum of those weights over the output's deleted words,
      FP = #deleted - TP, FN = sum over all words of the original - TP.

    Raises ``ValueError`` without references, where the scorer fails
    (``Annotation cannot be empty.``).
    """
    if not references:
        raise ValueError("SARI needs at least one reference")
    source = sari_unigrams(original)
    prediction = sari_unigrams(output)
    targets = [tokens for tokens in map(sari_unigrams, references) if tokens]
    weight: dict[str, float] = {}
    for target in targets:
        for word in target:
            weight[word] = weight.get(word, 0) + 1
    weight = {word: count / len(targets) for word, count in weight.items()}

    added = prediction - source
    add_tp = sum(weight.get(word, 0.0) for word in added)
    additions = EditCounts(
        add_tp, len(added) - add_tp,
        sum(w for word, w in weight.items() if word not in source) - add_tp)

    deleted = source - prediction
    dropped_by_references = {word: 1 - weight.get(word, 0.0) for word in source
                             if 1 - weight.get(word, 0.0) > 0}
    del_tp = sum(dropped_by_references.get(word, 0.0) for word in deleted)
    deletions = EditCounts(
        del_tp, len(deleted) - del_tp, sum(dropped_by_references.values()) - del_tp)
    return additions, deletions
