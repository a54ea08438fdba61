"""Bootstrap intervals of text agreement (issue 24): corpus BLEU, GLEU and chrF between two
annotators' texts, resampling items; the estimates are the corpus metrics themselves."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from qc import bootstrap, textmetrics

WORDS = ["the", "band", "Zappa", "formed", "in", "1966", "and", "disbanded", "1969", ",", "why",
         "did", "they", "?", "Mothers", "of", "Invention", "U.S.", "isn't", '"great"']


def texts(n: int, seed: int) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    hypotheses = [" ".join(rng.choices(WORDS, k=rng.randint(1, 14))) for _ in range(n)]
    references = [[" ".join(rng.choices(WORDS, k=rng.randint(1, 14)))] for _ in range(n)]
    return hypotheses, references


def test_estimates_equal_the_corpus_metrics():
    hypotheses, references = texts(60, seed=3)
    intervals = bootstrap.text_agreement_intervals(hypotheses, references, n_resamples=50)
    assert intervals["bleu"].estimate == pytest.approx(
        textmetrics.corpus_bleu(hypotheses, references), abs=1e-9)
    assert intervals["gleu"].estimate == pytest.approx(
        textmetrics.corpus_gleu(hypotheses, references), abs=1e-12)
    assert intervals["chrf"].estimate == pytest.approx(
        textmetrics.corpus_chrf(hypotheses, references).f_score, abs=1e-12)


def test_bleu_statistics_sum_to_sacrebleus_corpus_bleu_with_several_references():
    hypotheses, references = texts(30, seed=5)
    references = [[*refs, hyp[: len(hyp) // 2]] for hyp, refs in zip(hypotheses, references,
                                                                      strict=True)]
    summed = np.sum([textmetrics.bleu_statistics(h, r)
                     for h, r in zip(hypotheses, references, strict=True)], axis=0)
    assert textmetrics.bleu_from_statistics(summed) == pytest.approx(
        textmetrics.corpus_bleu(hypotheses, references), abs=1e-9)


def test_each_resample_is_the_metric_of_the_drawn_items():
    """The interval is the percentile interval of the metric recomputed on item resamples
    drawn as ``resample_items`` draws them (same seed, same draws)."""
    hypotheses, references = texts(25, seed=7)
    n_resamples = 40
    rng = np.random.default_rng(0)
    by_hand = []
    for _ in range(n_resamples):
        drawn = rng.integers(0, 25, 25)
        by_hand.append(textmetrics.corpus_gleu([hypotheses[k] for k in drawn],
                                               [references[k] for k in drawn]))
    low, high = np.percentile(by_hand, [2.5, 97.5])
    interval = bootstrap.text_agreement_intervals(hypotheses, references,
                                                  n_resamples=n_resamples)["gleu"]
    assert interval.low == pytest.approx(low) and interval.high == pytest.approx(high)
    assert interval.low <= interval.estimate <= interval.high
    assert interval.n_resamples == n_resamples and interval.n_undefined == 0


def test_identical_texts_agree_fully_and_no_items_give_no_interval():
    same = ["Zappa formed the Mothers of Invention in 1964 ."] * 5
    intervals = bootstrap.text_agreement_intervals(same, [[text] for text in same],
                                                   n_resamples=20)
    assert intervals["bleu"].low == pytest.approx(100.0)
    assert intervals["gleu"].to_dict()["high"] == 1.0 and intervals["chrf"].low == 1.0
    empty = bootstrap.text_agreement_intervals([], [], n_resamples=20)
    assert all(math.isnan(interval.estimate) and interval.to_dict()["low"] is None
               for interval in empty.values())


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="one list of references"):
        bootstrap.text_agreement_intervals(["a"], [], n_resamples=5)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap.text_agreement_intervals(["a"], [["a"]], n_resamples=0)
