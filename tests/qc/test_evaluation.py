"""Per-task evaluation: small hand-checked cases and the sluice paper's ANN AGREE on real data."""

import math
import statistics

import pytest

from qc.cleaning import clean, read_sluice_csv, references_by_context
from qc.evaluation import (
    canard_human_agreement,
    claire_accuracy,
    claire_human_upper_bound,
    claire_spearman,
    decontext_human_examples,
    evaluate_decontext,
    evaluate_sluice,
    evaluate_websplit,
    sluice_annotator_agreement,
)


def test_decontext_repeat_baseline_scores():
    examples = [
        ("He won .", "He won .", ["John won .", "John Smith won ."]),
        ("It rained .", "It rained .", ["It rained ."]),
    ]
    scores = evaluate_decontext(examples)
    assert scores.n_examples == 2
    assert scores.length_increase == 1.0 and scores.percent_edited == 0.0
    assert scores.match_all == 0.5
    assert scores.match_edited == 0.0  # only the first example has all references edited
    assert scores.sari_add.true_positive == 0.0 and scores.sari_add.recall == 0.0
    assert scores.sari_delete.false_negative == pytest.approx(1.0)


def test_decontext_human_pipeline():
    examples = [
        ("He won.", [("DONE", "John won."), ("DONE", "John Smith won."), ("DONE", "Jo won.")]),
        ("It fell.", [("IMPOSSIBLE", ""), ("IMPOSSIBLE", ""), ("DONE", "The tree fell.")]),
    ]
    scored = decontext_human_examples(examples)
    assert scored == [("He won.", "John won.", ("John Smith won.", "Jo won."))]
    scores = evaluate_decontext(scored)
    assert scores.percent_edited == 1.0 and scores.length_increase == 1.0
    with pytest.raises(ValueError):
        evaluate_decontext([])


def test_claire_measures():
    gold = {"1_1": "PLAUSIBLE", "1_2": "NEUTRAL", "1_3": "IMPLAUSIBLE"}
    assert claire_accuracy(gold, {"1_1": "PLAUSIBLE", "1_2": "PLAUSIBLE"}) == pytest.approx(1 / 3)
    assert claire_spearman({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 10, "b": 20, "c": 30}) == 1.0
    with pytest.raises(ValueError):
        claire_spearman({"a": 1.0}, {})
    ratings = [("f1", "w1", 5), ("f1", "w2", 3), ("f2", "w1", 1), ("f2", "w2", 2)]
    # f1 mean 4 -> PLAUSIBLE: ratings 5 (P) right, 3 (N) wrong; f2 both IMPLAUSIBLE right.
    assert claire_human_upper_bound(ratings) == 0.75


def test_canard_human_agreement_identical_pairs():
    assert canard_human_agreement([["What did he do ?", "What did he do ?"]]) == pytest.approx(100)


def test_websplit_measures():
    examples = [
        (["Alan Bean was born in Wheeler .", "He flew on Apollo 12 ."],
         [["Alan Bean was born in Wheeler .", "He flew on Apollo 12 ."], ["Other ."]]),
        (["A b c d"], [["Something else entirely here"]]),
    ]
    scores = evaluate_websplit(examples)
    assert scores.n_complex == 2
    assert scores.simple_per_complex == 1.5
    assert scores.tokens_per_simple == pytest.approx((7 + 6 + 4) / 3)
    assert scores.bleu == pytest.approx(50.0, abs=0.5)


def test_evaluate_sluice_identical_is_perfect():
    scores = evaluate_sluice(["Who else came ?"], [["Who else came ?", "Who came ?"]])
    assert (scores.gleu, scores.bleu, scores.chrf) == (1.0, pytest.approx(1.0), 1.0)
    with pytest.raises(ValueError):
        evaluate_sluice([], [])


def test_sluice_annotator_agreement_on_raw_test(shared_data):
    """Paper Table 2 ANN AGREE: GLEU 0.570, BLEU 0.589, chrF 0.712 (P 0.704, R 0.720).

    Measured on the raw test CSV after the paper's filters (skips and Q1 < 3 words dropped,
    duplicates kept: identical answers are agreement), averaged over ten seeds; docs/qc.md
    records the figures and why chrF comes out higher.
    """
    raw = read_sluice_csv(shared_data / "sluice" / "raw" / "conv_sluice_test.csv")
    grouped = references_by_context(clean(raw))
    runs = [sluice_annotator_agreement(grouped, seed=seed) for seed in range(10)]
    assert runs[0].n_items == 352
    assert statistics.mean(run.gleu for run in runs) == pytest.approx(0.570, abs=0.02)
    assert statistics.mean(run.bleu for run in runs) == pytest.approx(0.589, abs=0.02)
    assert statistics.mean(run.chrf for run in runs) == pytest.approx(0.712, abs=0.04)
    assert not math.isnan(runs[0].chrf_precision)
    assert sluice_annotator_agreement(grouped, seed=3) == runs[3]
