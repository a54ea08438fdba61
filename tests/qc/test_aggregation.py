"""Aggregation: plausibility classes (checked on every released CLAIRE row), majority, median."""

import csv
import statistics

import numpy as np
import pytest

from qc.aggregation import (
    IMPLAUSIBLE,
    NEUTRAL,
    PLAUSIBLE,
    aggregate_plausibility,
    claire_sentence_id,
    decontext_human_output,
    decontext_sentence,
    majority_label,
    majority_labels,
    plausibility_label,
    plausibility_labels,
    plausible_fillers_per_sentence,
)


@pytest.mark.parametrize(
    ("mean", "label"),
    [(1.0, IMPLAUSIBLE), (2.5, IMPLAUSIBLE), (2.51, NEUTRAL), (3.99, NEUTRAL), (4.0, PLAUSIBLE)],
)
def test_plausibility_thresholds(mean, label):
    assert plausibility_label(mean) == label
    assert plausibility_labels([mean]).tolist() == [label]


def test_aggregate_plausibility_means():
    rows = [("1_1", "a", 5), ("1_1", "b", 3), ("1_2", "a", 2), ("1_2", "b", 3), ("1_3", "c", 4)]
    result = aggregate_plausibility(rows)
    assert result.filler_ids.tolist() == ["1_1", "1_2", "1_3"]
    assert result.mean_rating.tolist() == [4.0, 2.5, 4.0]
    assert result.label.tolist() == [PLAUSIBLE, IMPLAUSIBLE, PLAUSIBLE]
    assert result.n_ratings.tolist() == [2, 2, 1]


def read_tsv(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return {row[0]: row[1] for row in csv.reader(handle, delimiter="\t") if row}


def test_every_released_claire_label_follows_from_its_score(shared_data):
    total = 0
    plausible_means = {}
    for split in ("train", "dev", "test"):
        scores = read_tsv(shared_data / "claire" / f"{split}_scores.tsv")
        labels = read_tsv(shared_data / "claire" / f"{split}_labels.tsv")
        assert scores.keys() == labels.keys()
        ids = list(scores)
        predicted = plausibility_labels([float(scores[i]) for i in ids])
        assert predicted.tolist() == [labels[i] for i in ids]
        total += len(ids)
        per_sentence = plausible_fillers_per_sentence(
            (claire_sentence_id(i), labels[i]) for i in ids
        )
        plausible_means[split] = statistics.mean(per_sentence.values())
    assert total == 24_975
    # Paper: 1.84 / 1.87 / 1.84 plausible fillers per sentence. The released labels give
    # train 1.837 (matches), dev 1.832 and test 1.940 (they do not: the released dev/test
    # ratings differ from the ones the paper counted); we pin what the released files give.
    assert plausible_means["train"] == pytest.approx(1.84, abs=0.005)
    assert plausible_means["dev"] == pytest.approx(1.832, abs=1e-9)
    assert plausible_means["test"] == pytest.approx(1.94, abs=1e-9)


def test_claire_sentence_id():
    assert claire_sentence_id("12_5") == "12"
    with pytest.raises(ValueError):
        claire_sentence_id("12")


def test_majority_with_deterministic_tie_break():
    rows = [(1, "a", "B"), (1, "b", "A"), (2, "a", "B"), (2, "b", "B"), (2, "c", "A")]
    assert majority_labels(rows) == {1: "A", 2: "B"}
    assert majority_labels(rows, preference=["B", "A"]) == {1: "B", 2: "B"}
    assert majority_label(["DONE", "IMPOSSIBLE"], preference=["IMPOSSIBLE"]) == "IMPOSSIBLE"
    with pytest.raises(ValueError):
        majority_label([])


def test_majority_is_order_independent():
    rows = [(i % 7, w, (i * w) % 3) for i in range(50) for w in range(4)]
    shuffled = [rows[k] for k in np.random.default_rng(1).permutation(len(rows))]
    assert majority_labels(rows) == majority_labels(shuffled)


def test_decontext_median_length_output():
    original = "He won."
    annotations = [
        ("DONE", "John Smith won the race in 1990."),
        ("DONE", "John won."),
        ("UNNECESSARY", ""),
        ("DONE", "John Smith won."),
        ("IMPOSSIBLE", ""),
    ]
    result = decontext_human_output(original, annotations)
    # Feasible by length: "He won." (7), "John won." (9), "John Smith won." (15), ... (32);
    # the lower median of four is the second; references keep the sorted order.
    assert (result.output, result.output_category) == ("John won.", "DONE")
    assert result.references == ("He won.", "John Smith won.",
                                 "John Smith won the race in 1990.")
    assert result.scorable


def test_decontext_median_is_by_characters_with_ties_in_annotation_order():
    # 21 characters (23 UTF-8 bytes) vs 22 characters (22 bytes): by bytes the other one.
    result = decontext_human_output("Zoë sang it.", [("DONE", "Zoe Odegaard sang it!!"),
                                                     ("DONE", "Zoë Ødegaard sang it.")])
    assert result.output == "Zoë Ødegaard sang it."
    assert result.references == ("Zoe Odegaard sang it!!",)
    tied = decontext_human_output("s", [("DONE", "bb"), ("DONE", "aa"), ("DONE", "cc")])
    assert (tied.output, tied.references) == ("aa", ("bb", "cc"))


def test_decontext_skips_majority_impossible_and_keeps_single_feasible_unscorable():
    impossible = [("IMPOSSIBLE", ""), ("IMPOSSIBLE", ""), ("DONE", "x"), ("DONE", "y")]
    assert decontext_human_output("s", [*impossible[:3], ("IMPOSSIBLE", "")]) is None
    # Exactly half impossible is not a majority.
    assert decontext_human_output("s", impossible).output == "x"
    # One feasible annotation: the scorer keeps the example with no reference (and then
    # cannot score it).
    single = decontext_human_output("s", [("DONE", "x"), ("IMPOSSIBLE", "")])
    assert (single.output, single.references, single.scorable) == ("x", (), False)
    with pytest.raises(ValueError):
        decontext_human_output("s", [])


def test_decontext_sentence_is_the_scorers_get_sent():
    assert decontext_sentence("DONE", "It won.", "Zinc won.") == "Zinc won."
    assert decontext_sentence("DONE", "It won.", "") == ""
    assert decontext_sentence("UNNECESSARY", "It won.", "ignored") == "It won."
    assert decontext_sentence("IMPOSSIBLE", "It won.", "") == "It won."
