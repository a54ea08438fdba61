"""Bootstrap confidence intervals of agreement, resampling items.

Agreement statistics are computed over items (units); their uncertainty comes from which items
happened to be annotated, so the resampling unit is the item: each resample draws as many
items as there are, with replacement, and keeps every rating of each drawn item (an item drawn
twice counts as two units). The interval is the percentile interval of the statistic over the
resamples (Efron & Tibshirani 1993, ch. 13); resamples where the statistic is undefined (NaN:
no pairable unit, no variation) are left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from qc import textmetrics
from qc.agreement import RatingTable, as_table, fleiss_kappa, krippendorff_alpha


@dataclass(frozen=True)
class Interval:
    """``estimate`` on the data as given, the ``low``-``high`` percentile interval at
    ``confidence``, over ``n_resamples`` resamples (``n_undefined`` of them gave NaN)."""

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    n_undefined: int

    def to_dict(self) -> dict:
        def finite(value: float) -> float | None:
            return float(value) if np.isfinite(value) else None

        return {"estimate": finite(self.estimate), "low": finite(self.low),
                "high": finite(self.high), "confidence": self.confidence,
                "n_resamples": self.n_resamples, "n_undefined": self.n_undefined}


def resample_items(table: RatingTable, rng: np.random.Generator) -> RatingTable:
    """One bootstrap resample of ``table``'s items (see the module docstring)."""
    n_items = len(table.items)
    order = np.argsort(table.item_codes, kind="stable")
    per_item = np.bincount(table.item_codes, minlength=n_items)
    starts = np.concatenate([[0], np.cumsum(per_item)[:-1]])
    drawn = rng.integers(0, n_items, n_items)
    sizes = per_item[drawn]
    new_items = np.repeat(np.arange(n_items), sizes)
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    rows = order[np.repeat(starts[drawn], sizes) + offsets]
    return RatingTable(new_items, table.worker_codes[rows], table.label_codes[rows],
                       np.arange(n_items), table.workers, table.labels)


def bootstrap_interval(ratings, statistic: Callable[[RatingTable], float], *,
                       n_resamples: int = 1000, confidence: float = 0.95,
                       seed: int = 0) -> Interval:
    """Percentile bootstrap interval of ``statistic`` over item resamples of ``ratings``
    (rows ``(item_id, worker_id, label)`` or a RatingTable). Deterministic for a ``seed``."""
    if n_resamples < 1 or not 0 < confidence < 1:
        raise ValueError("n_resamples must be positive and confidence within (0, 1)")
    table = as_table(ratings)
    estimate = float(statistic(table))
    if len(table.items) == 0:
        return Interval(estimate, float("nan"), float("nan"), confidence, n_resamples,
                        n_resamples)
    rng = np.random.default_rng(seed)
    values = np.array([statistic(resample_items(table, rng)) for _ in range(n_resamples)],
                      dtype=np.float64)
    defined = values[np.isfinite(values)]
    if defined.size == 0:
        low = high = float("nan")
    else:
        tail = (1 - confidence) / 2 * 100
        low, high = (float(v) for v in np.percentile(defined, [tail, 100 - tail]))
    return Interval(estimate, low, high, confidence, n_resamples,
                    int(n_resamples - defined.size))


# --- fast paths: the same resamples as weights on per-item contributions ---------------------
#
# Fleiss' kappa and Krippendorff's alpha (nominal, ordinal) are sums of per-item terms, so a
# resample's statistic is a sum weighted by how often each item was drawn. Those terms depend
# only on an item's label counts, and items share a few count patterns (five ratings on a 1-5
# scale make at most 126), so a resample is how many drawn items have each pattern: a
# multinomial draw over the patterns (the distribution of :func:`resample_items`' draws
# tallied per pattern), costing a draw and a product per pattern, not per item.

#: Weights held at once (resamples x patterns): about 16 MB of float64.
BLOCK_CELLS = 2_000_000
#: Above this many per-pattern coincidence cells, the generic path is used instead.
MAX_CELLS = 20_000_000


def _count_patterns(table: RatingTable) -> tuple[np.ndarray, np.ndarray]:
    """``(patterns, pattern of each item)``: the distinct rows of the items x labels counts,
    in lexicographic order (as ``np.unique(counts, axis=0)`` gives them). Each row is read as
    one integer (its counts as digits) so that finding the distinct rows is a sort of
    integers, not of rows (seconds at 200,000 items); rows too wide for that go by rows."""
    counts = np.zeros((len(table.items), len(table.labels)), dtype=np.int64)
    np.add.at(counts, (table.item_codes, table.label_codes), 1)
    base = int(counts.max(initial=0)) + 1
    if counts.shape[1] * np.log2(base) < 62:
        keys = counts @ (base ** np.arange(counts.shape[1] - 1, -1, -1, dtype=np.int64))
        _, first, pattern_of_item = np.unique(keys, return_index=True, return_inverse=True)
        return counts[first].astype(np.float64), pattern_of_item.ravel()
    patterns, pattern_of_item = np.unique(counts, axis=0, return_inverse=True)
    return patterns.astype(np.float64), pattern_of_item.ravel()


def _weight_blocks(table: RatingTable, n_resamples: int, seed: int):
    """``(patterns, blocks)``: the table's count patterns and, block by block, per resample
    how many drawn items have each pattern (resamples x patterns, ``_draw_pattern_weights``).
    Several statistics computed from the same blocks share one set of draws."""
    patterns, pattern_of_item = _count_patterns(table)
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_CELLS // len(patterns))

    def blocks():
        for start in range(0, n_resamples, block):
            yield _draw_pattern_weights(rng, pattern_of_item, len(patterns),
                                        min(block, n_resamples - start))

    return patterns, blocks()


def _draw_weights(rng: np.random.Generator, pattern_of_item: np.ndarray, n_patterns: int,
                  n_resamples: int) -> np.ndarray:
    """Per resample, how many drawn items have each pattern (resamples x patterns), from
    :func:`resample_items`' draws (item by item: the same random numbers)."""
    n_items = len(pattern_of_item)
    weights = np.empty((n_resamples, n_patterns))
    for k in range(n_resamples):
        weights[k] = np.bincount(pattern_of_item[rng.integers(0, n_items, n_items)],
                                 minlength=n_patterns)
    return weights


def _draw_pattern_weights(rng: np.random.Generator, pattern_of_item: np.ndarray,
                          n_patterns: int, n_resamples: int) -> np.ndarray:
    """Per resample, how many drawn items have each pattern (resamples x patterns).

    Drawing ``n`` items uniformly with replacement and counting them per pattern is a
    multinomial draw of ``n`` over the patterns with each pattern's share of the items as its
    probability: drawn as that, a resample costs a binomial draw per pattern, not ``n`` draws
    and a tally (200,000 items x 1,000 resamples was 3 s a QC run). The resamples have the
    same distribution as :func:`resample_items`' (not the same random numbers)."""
    n_items = len(pattern_of_item)
    shares = np.bincount(pattern_of_item, minlength=n_patterns) / n_items
    return rng.multinomial(n_items, shares, size=n_resamples).astype(np.float64)


def _percentile_interval(estimate: float, values: np.ndarray, confidence: float) -> Interval:
    defined = values[np.isfinite(values)]
    if defined.size == 0:
        low = high = float("nan")
    else:
        tail = (1 - confidence) / 2 * 100
        low, high = (float(v) for v in np.percentile(defined, [tail, 100 - tail]))
    return Interval(estimate, low, high, confidence, len(values),
                    int(len(values) - defined.size))


def _fleiss_of_weights(counts: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Fleiss' kappa of each resample (a row of weights on the count patterns ``counts``)."""
    n_i = counts.sum(axis=1)
    usable = n_i >= 2
    per_item = np.where(usable, (np.square(counts).sum(axis=1) - n_i)
                        / np.maximum(n_i * (n_i - 1), 1), 0.0)

    def kappas(weights: np.ndarray) -> np.ndarray:
        weights = weights * usable
        items = weights.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = weights @ per_item / items
            shares = (weights @ counts) / (weights @ n_i)[:, None]
            expected = np.square(shares).sum(axis=1)
            return np.where((items > 0) & (expected < 1.0),
                            (observed - expected) / (1.0 - expected), np.nan)

    return kappas


def _alpha_of_weights(counts: np.ndarray, level: str) -> Callable[[np.ndarray], np.ndarray]:
    """Krippendorff's alpha (nominal, ordinal) of each resample (weights on ``counts``)."""
    n_labels = counts.shape[1]
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    contributions = (counts[:, :, None] * counts[:, None, :]
                     - counts[:, :, None] * np.eye(n_labels)[None])
    contributions /= np.where(pairable, m_u - 1, 1.0)[:, None, None]
    contributions[~pairable] = 0.0
    flat = contributions.reshape(len(m_u), n_labels * n_labels)
    index = np.arange(n_labels)
    low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)

    def alphas(weights: np.ndarray) -> np.ndarray:
        values = []
        for coincidences in (weights @ flat).reshape(-1, n_labels, n_labels):
            n_c = coincidences.sum(axis=1)
            if level == "nominal":
                distance = 1.0 - np.eye(n_labels)
            else:
                cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
                between = cumulative[high + 1] - cumulative[low]
                distance = np.square(between - (n_c[low] + n_c[high]) / 2.0)
            expected = float((np.outer(n_c, n_c) * distance).sum())
            observed = float((coincidences * distance).sum())
            values.append(float("nan") if expected == 0.0 or n_c.sum() == 0 else
                          1.0 - (n_c.sum() - 1.0) * observed / expected)
        return np.array(values)

    return alphas


def _alpha_by_patterns(table: RatingTable, level: str, n_patterns: int) -> bool:
    return level != "interval" and n_patterns * len(table.labels) ** 2 <= MAX_CELLS


def agreement_intervals(ratings, level: str = "ordinal", *, n_resamples: int = 1000,
                        confidence: float = 0.95, seed: int = 0) -> dict[str, Interval]:
    """``{"fleiss_kappa": …, "krippendorff_alpha": …}``: both intervals from one set of
    draws, each equal to :func:`fleiss_kappa_interval` and
    :func:`krippendorff_alpha_interval` with the same ``seed`` (which draw the same
    resamples), at the cost of one."""
    table = as_table(ratings)
    if len(table.items) == 0:
        return {"fleiss_kappa": fleiss_kappa_interval(table, n_resamples=n_resamples,
                                                      confidence=confidence, seed=seed),
                "krippendorff_alpha": krippendorff_alpha_interval(
                    table, level, n_resamples=n_resamples, confidence=confidence, seed=seed)}
    patterns, blocks = _weight_blocks(table, n_resamples, seed)
    with_alpha = _alpha_by_patterns(table, level, len(patterns))
    kappas = _fleiss_of_weights(patterns)
    alphas = _alpha_of_weights(patterns, level) if with_alpha else None
    kappa_values, alpha_values = [], []
    for weights in blocks:
        kappa_values.append(kappas(weights))
        if alphas is not None:
            alpha_values.append(alphas(weights))
    result = {"fleiss_kappa": _percentile_interval(
        float(fleiss_kappa(table).kappa), np.concatenate(kappa_values), confidence)}
    result["krippendorff_alpha"] = (
        _percentile_interval(float(krippendorff_alpha(table, level)),
                             np.concatenate(alpha_values), confidence) if with_alpha
        else krippendorff_alpha_interval(table, level, n_resamples=n_resamples,
                                         confidence=confidence, seed=seed))
    return result


def fleiss_kappa_interval(ratings, *, n_resamples: int = 1000, confidence: float = 0.95,
                          seed: int = 0) -> Interval:
    """:func:`bootstrap_interval` of Fleiss' kappa (resamples of the same distribution, drawn
    per count pattern and computed as weighted sums)."""
    table = as_table(ratings)
    estimate = fleiss_kappa(table).kappa
    if len(table.items) == 0:
        return bootstrap_interval(table, lambda t: fleiss_kappa(t).kappa,
                                  n_resamples=n_resamples, confidence=confidence, seed=seed)
    patterns, blocks = _weight_blocks(table, n_resamples, seed)
    kappas = _fleiss_of_weights(patterns)
    return _percentile_interval(float(estimate),
                                np.concatenate([kappas(weights) for weights in blocks]),
                                confidence)


def krippendorff_alpha_interval(ratings, level: str = "ordinal", *, n_resamples: int = 1000,
                                confidence: float = 0.95, seed: int = 0) -> Interval:
    """:func:`bootstrap_interval` of Krippendorff's alpha at ``level`` (nominal and ordinal:
    resamples of the same distribution, drawn per count pattern and computed as weighted sums
    of per-item coincidences)."""
    table = as_table(ratings)
    if level == "interval" or len(table.items) == 0:
        return bootstrap_interval(table, lambda t: krippendorff_alpha(t, level),
                                  n_resamples=n_resamples, confidence=confidence, seed=seed)
    patterns, blocks = _weight_blocks(table, n_resamples, seed)
    if not _alpha_by_patterns(table, level, len(patterns)):
        return bootstrap_interval(table, lambda t: krippendorff_alpha(t, level),
                                  n_resamples=n_resamples, confidence=confidence, seed=seed)
    alphas = _alpha_of_weights(patterns, level)
    return _percentile_interval(float(krippendorff_alpha(table, level)),
                                np.concatenate([alphas(weights) for weights in blocks]),
                                confidence)


# --- text agreement: corpus metrics are ratios of sums over items -----------------------------
#
# Corpus BLEU, GLEU and chrF between two annotators' texts add per-item counts (n-gram matches,
# lengths) before dividing, so a resample's score is that of the weighted sum of the items'
# counts: each item's texts are tokenised once, not once per resample.

#: The text agreement statistics, as ``qc.textmetrics`` computes them (BLEU 0-100, the others
#: fractions).
TEXT_STATISTICS = ("bleu", "gleu", "chrf")


def text_agreement_intervals(hypotheses: Sequence[str],
                             references_per_item: Sequence[Sequence[str]], *,
                             n_resamples: int = 1000, confidence: float = 0.95,
                             seed: int = 0) -> dict[str, Interval]:
    """Percentile bootstrap intervals of corpus BLEU, GLEU and chrF of ``hypotheses`` against
    ``references_per_item`` (one item each: one annotator's text against the others'),
    resampling items with the same draws as :func:`resample_items`. The estimates equal
    ``textmetrics.corpus_bleu`` / ``corpus_gleu`` / ``corpus_chrf`` of the items as given."""
    if n_resamples < 1 or not 0 < confidence < 1:
        raise ValueError("n_resamples must be positive and confidence within (0, 1)")
    if len(hypotheses) != len(references_per_item):
        raise ValueError("one list of references is needed per hypothesis")
    n_items = len(hypotheses)
    if n_items == 0:
        nan = float("nan")
        return {name: Interval(nan, nan, nan, confidence, n_resamples, n_resamples)
                for name in TEXT_STATISTICS}
    pairs = list(zip(hypotheses, references_per_item, strict=True))
    bleu = np.array([textmetrics.bleu_statistics(h, refs) for h, refs in pairs], dtype=float)
    gleu = np.array([textmetrics.gleu_statistics(h, refs) for h, refs in pairs], dtype=float)
    chrf = np.array([np.ravel(textmetrics.best_chrf_statistics(h, refs, textmetrics.CHRF_BETA))
                     for h, refs in pairs], dtype=float)
    per_item = np.hstack([bleu, gleu, chrf])
    widths = np.cumsum([0, bleu.shape[1], gleu.shape[1]])

    def scores(summed: np.ndarray) -> tuple[float, float, float]:
        bleu_sum = summed[: widths[1]]
        matches, n_all = summed[widths[1] : widths[2]]
        chrf_sum = summed[widths[2] :].reshape(-1, 3)
        return (textmetrics.bleu_from_statistics(bleu_sum),
                float(matches / n_all) if n_all else 0.0,
                textmetrics.chrf_from_statistics(chrf_sum.tolist()).f_score)

    estimates = scores(per_item.sum(axis=0))
    rng = np.random.default_rng(seed)
    values = []
    block = max(1, BLOCK_CELLS // n_items)
    for start in range(0, n_resamples, block):
        weights = _draw_weights(rng, np.arange(n_items), n_items,
                                min(block, n_resamples - start))
        values.extend(scores(summed) for summed in weights @ per_item)
    table = np.array(values, dtype=np.float64)
    return {name: _percentile_interval(float(estimates[k]), table[:, k], confidence)
            for k, name in enumerate(TEXT_STATISTICS)}
