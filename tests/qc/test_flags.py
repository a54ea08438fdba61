"""Flag rules over synthetic batches with planted problems."""

import numpy as np
import pytest

from qc.flags import (
    COPY_OF_INPUT,
    FAILED_GOLD,
    IGNORES_CONTEXT,
    TOO_FAST,
    TOO_SLOW,
    WARNING_OVERRIDDEN,
    WORKER_FAR_FROM_CONSENSUS,
    WORKER_LOW_AGREEMENT,
    Flag,
    FlagSettings,
    copy_flags,
    gold_flags,
    overridden_warning_flags,
    rewrite_warning_flags,
    robust_z,
    sluice_context_flags,
    timing_flags,
    timing_flags_from_arrays,
    worker_consensus_flags,
)


def test_settings_from_dict_overrides_and_rejects_unknown_keys():
    settings = FlagSettings.from_dict({"fast_z": "2.5", "min_gold_items": 3.0})
    assert settings.fast_z == 2.5 and settings.min_gold_items == 3
    assert FlagSettings.from_dict(None) == FlagSettings()
    assert FlagSettings.from_dict(settings.to_dict()) == settings
    with pytest.raises(ValueError, match="fastz"):
        FlagSettings.from_dict({"fastz": 2})


def test_robust_z():
    assert robust_z([1, 1, 1]).tolist() == [0, 0, 0]
    z = robust_z([1.0, 2.0, 3.0, 100.0])
    assert z[-1] > 10 and abs(z[1]) < 1


def planted_ratings(seed=0):
    """40 items x 5 workers agreeing around the truth, plus a random clicker."""
    rng = np.random.default_rng(seed)
    rows = []
    for item in range(40):
        truth = rng.integers(1, 6)
        for worker in range(5):
            rows.append((item, f"w{worker}", int(np.clip(truth + rng.integers(-1, 2), 1, 5))))
        rows.append((item, "clicker", int(6 - truth)))
    return rows


def test_worker_flags_find_the_planted_worker_only():
    flags = worker_consensus_flags(planted_ratings())
    far = [flag for flag in flags if flag.reason_code == WORKER_FAR_FROM_CONSENSUS]
    assert [flag.target_id for flag in far] == ["clicker"]
    assert far[0].score > 3


def test_categorical_low_agreement():
    rows = [(i, w, "A") for i in range(10) for w in ("a", "b", "c")]
    rows += [(i, "d", "B") for i in range(10)]
    flags = worker_consensus_flags(rows)
    assert flags == [Flag("d", WORKER_LOW_AGREEMENT, 0.0, flags[0].detail)]
    assert worker_consensus_flags(rows, FlagSettings(min_items_per_worker=11)) == []


def test_timing_flags_fast_and_slow():
    rng = np.random.default_rng(3)
    # Ordinary work: log-normal around a minute, clipped to two sigmas.
    seconds = np.exp(np.log(60) + 0.3 * np.clip(rng.normal(size=200), -2, 2))
    rows = [(f"a{k}", float(s)) for k, s in enumerate(seconds)]
    rows += [("bot", 2.0), ("coffee", 3600.0), ("zero", 0.0)]
    flags = {flag.target_id: flag.reason_code for flag in timing_flags(rows)}
    assert flags == {"bot": TOO_FAST, "coffee": TOO_SLOW, "zero": TOO_FAST}
    assert timing_flags([]) == []
    same = timing_flags_from_arrays(np.arange(3), np.array([5.0, 5.0, 5.0]))
    assert same == []


def test_gold_flags():
    gold = {"g1": "PLAUSIBLE", "g2": {4, 5}, "g3": lambda rating: rating <= 2}
    answers = [
        ("good", "g1", "PLAUSIBLE"), ("good", "g2", 5), ("good", "g3", 1), ("good", "x", 3),
        ("bad", "g1", "IMPLAUSIBLE"), ("bad", "g2", 4), ("bad", "g3", 5),
    ]
    flags = gold_flags(answers, gold)
    assert [(f.target_id, f.reason_code) for f in flags] == [("bad", FAILED_GOLD)]
    assert flags[0].score == pytest.approx(2 / 3)
    assert gold_flags(answers, gold, FlagSettings(min_gold_items=4)) == []


def test_copy_and_rewrite_flags():
    rows = [
        (1, "When did they disband?", "when did they disband"),
        (2, "When did they disband?", "When did the Mothers of Invention disband?"),
    ]
    assert [f.target_id for f in copy_flags(rows)] == [1]
    assert copy_flags(rows)[0].reason_code == COPY_OF_INPUT
    flagged = rewrite_warning_flags(rows)
    assert [(f.target_id, f.reason_code) for f in flagged] == [(1, "rewrite_pronoun_left")]


def test_overridden_warnings_are_flagged():
    flags = overridden_warning_flags([(7, "rewrite_too_short")])
    detail = "submitted despite warning rewrite_too_short"
    assert flags == [Flag(7, WARNING_OVERRIDDEN, 1.0, detail)]


def test_sluice_context_flags():
    rows = [
        (1, "Who told Cyrus to try acting?", "his dad", "Why did his dad tell him to act?"),
        (2, "Did he say anything before leaving?", "yes", "Why is the sky blue?"),
        (3, "Was it recovered?", "yes", "When was it recovered?"),
    ]
    assert [(f.target_id, f.reason_code) for f in sluice_context_flags(rows)] == [
        (2, IGNORES_CONTEXT)
    ]
