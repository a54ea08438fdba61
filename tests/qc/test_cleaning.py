"""Sluice cleaning: unit cases and the released processed files reproduced from the raw CSVs."""

import json

import pytest

from qc.cleaning import (
    A1,
    ANSWER,
    Q1,
    Q2,
    ROW_ID,
    clean,
    clean_split,
    cross_split_contexts,
    dedupe_references,
    drop_short_q1,
    drop_skipped,
    is_skipped,
    read_sluice_csv,
    references_by_context,
    train_dev_splits,
)


def row(q1, answer, a1="yes", q2="Who"):
    return {Q1: q1, A1: a1, Q2: q2, ANSWER: answer}


def test_operations():
    rows = [
        row("Did anyone else come?", "Who else came?"),
        row("Anyone else?", "Who else?"),
        row("Did anyone else come?", " "),
        row("Did anyone else come?", "*not enough info*"),
        row("Did anyone else come?", "Who else came?"),
    ]
    assert [is_skipped(r[ANSWER]) for r in rows] == [False, False, True, True, False]
    assert len(drop_skipped(rows)) == 3
    assert len(drop_short_q1(rows)) == 4
    assert dedupe_references(rows) == [rows[0], rows[1], rows[2], rows[3]]
    grouped = references_by_context(rows)
    assert grouped[("Did anyone else come?", "yes", "Who")][0] == "Who else came?"
    assert grouped[("Anyone else?", "yes", "Who")] == ["Who else?"]


def test_read_rejects_missing_columns(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(",Input.question_1\n0,Hi there you\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        read_sluice_csv(path)


def released(shared_data, split):
    path = shared_data / "sluice" / "processed" / f"sluice_{split}_filtered.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_cleaning_reproduces_released_train_and_val(shared_data):
    raw = read_sluice_csv(shared_data / "sluice" / "raw" / "conv_sluice_train_dev.csv")
    assert len(raw) == 3780
    splits = train_dev_splits(raw)
    assert splits == sorted(splits)  # dev is a prefix of the file, then train
    val = clean(r for r, split in zip(raw, splits, strict=True) if split == "dev")
    train = clean(r for r, split in zip(raw, splits, strict=True) if split == "train")
    released_train, released_val = released(shared_data, "train"), released(shared_data, "val")
    assert len(val) == len(released_val) == 300
    assert [r[ROW_ID] for r in val] == list(released_val)
    # Released train keeps one skipped row (raw id 3780, empty answer) the rule drops.
    assert len(released_train) == 3082 and len(train) == 3081
    assert set(released_train) - {r[ROW_ID] for r in train} == {"3780"}


def test_cleaning_reproduces_released_test(shared_data):
    raw = read_sluice_csv(shared_data / "sluice" / "raw" / "conv_sluice_test.csv")
    assert len(raw) == 1200
    test = clean_split(raw, "test")
    released_test = released(shared_data, "test").values()
    assert len(test) == len(released_test) == 793
    as_tuples = [(r[Q1], r[A1], r[Q2], r[ANSWER]) for r in test]
    assert as_tuples == [(r[Q1], r[A1], r[Q2], r[ANSWER]) for r in released_test]


def test_train_dev_split_keeps_dropped_rows_where_they_stand():
    rows = [row("Who?", "x"), row("Did anyone else come?", "Who else came?"),
            row("Did anyone come over?", ""), row("Did someone else come?", "Who else?"),
            row("Did anybody come?", "Who came?")]
    assert train_dev_splits(rows, val_size=2) == ["dev", "dev", "dev", "dev", "train"]


def test_cross_split_contexts(shared_data):
    assert cross_split_contexts([("a", "train"), ("a", "train"), ("b", "dev"),
                                 ("b", "test"), ("b", "train")]) == {"b": ("dev", "test", "train")}
    raw = shared_data / "sluice" / "raw"
    train_dev = read_sluice_csv(raw / "conv_sluice_train_dev.csv")
    test = read_sluice_csv(raw / "conv_sluice_test.csv")
    rows = [((r[Q1], r[A1], r[Q2]), split)
            for r, split in zip(train_dev, train_dev_splits(train_dev), strict=True)]
    rows += [((r[Q1], r[A1], r[Q2]), "test") for r in test]
    leaks = cross_split_contexts(rows)
    # 7 contexts of the train/dev file are also test contexts, one more is in val and train.
    assert sum("test" in splits for splits in leaks.values()) == 7
    assert leaks[("Does he have any other talents?", "yes", "What")] == ("dev", "train")
    assert len(leaks) == 8
