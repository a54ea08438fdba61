"""qc.effort: the summary's schema, and the three effort flags with their evidence."""

import csv
import json

import pytest

from qc.effort import (
    EFFORT_LIMITS,
    IMPLAUSIBLE_TYPING,
    MACHINE_LIKE_TEXT,
    PASTED_ANSWER,
    EffortError,
    EffortRow,
    EffortSummary,
    effort_flags,
    machine_text_evidence,
    parse_effort,
)

TYPED = {"pastes": 0, "pasted_chars": 0, "pasted_from_page_chars": 0, "typed_chars": 48,
         "typing_ms": 16_000, "focus_losses": 1, "first_input_ms": 3_200}
ANSWER = "When did Frank Zappa's band first play in London?"


def reasons(rows):
    return [(flag.target_id, flag.reason_code) for flag in effort_flags(rows)]


def test_a_valid_summary_is_read_and_written_back_as_it_came():
    summary = parse_effort(TYPED)
    assert summary.to_dict() == TYPED
    assert summary.typing_chars_per_second == pytest.approx(3.0)
    assert parse_effort(None) is None
    assert parse_effort(dict(TYPED, first_input_ms=None)).first_input_ms is None


@pytest.mark.parametrize(("raw", "field"), [
    ([1, 2], "effort"),
    ("pasted", "effort"),
    (dict(TYPED, keys="hello world"), "effort.keys"),
    ({k: v for k, v in TYPED.items() if k != "pastes"}, "effort.pastes"),
    (dict(TYPED, pastes=-1), "effort.pastes"),
    (dict(TYPED, pastes=True), "effort.pastes"),
    (dict(TYPED, typed_chars=1.5), "effort.typed_chars"),
    (dict(TYPED, typed_chars="48"), "effort.typed_chars"),
    (dict(TYPED, typing_ms=2**31), "effort.typing_ms"),
    (dict(TYPED, focus_losses=None), "effort.focus_losses"),
    (dict(TYPED, pasted_chars=10, pasted_from_page_chars=11), "effort.pasted_from_page_chars"),
])
def test_anything_but_the_pages_summary_is_refused_naming_the_field(raw, field):
    with pytest.raises(EffortError) as refused:
        parse_effort(raw)
    assert refused.value.field == field


def test_limits_are_inclusive():
    assert parse_effort({**TYPED, **{name: limit for name, limit in EFFORT_LIMITS.items()}})


def test_a_typed_answer_raises_nothing():
    assert reasons([EffortRow(1, ANSWER, TYPED)]) == []
    assert reasons([EffortRow(2, ANSWER, None)]) == []  # nothing recorded: nothing to say


def test_a_pasted_answer_is_flagged_with_the_evidence():
    pasted = dict(TYPED, pastes=1, pasted_chars=len(ANSWER), typed_chars=2, typing_ms=300)
    [flag] = effort_flags([EffortRow(7, ANSWER, pasted)])
    assert (flag.target_id, flag.reason_code) == (7, PASTED_ANSWER)
    assert flag.score == pytest.approx(1.0)
    assert flag.detail == (f"{len(ANSWER)} characters pasted from outside the page in 1 paste "
                           f"for a {len(ANSWER)}-character answer; 2 characters typed; the "
                           f"page lost the focus once; first keystroke 3.2s after the item "
                           f"was shown")


def test_a_pasted_name_or_page_text_is_not_a_pasted_answer():
    # 14 characters pasted (a name): under the minimum, and a small share of the answer
    name = dict(TYPED, pastes=1, pasted_chars=14)
    # the whole question copied from the page and edited: the page's own words
    own = dict(TYPED, pastes=1, pasted_chars=40, pasted_from_page_chars=40, typed_chars=10)
    # half of it pasted from elsewhere: at the threshold, not beyond it
    half = dict(TYPED, pastes=2, pasted_chars=len(ANSWER) // 2)
    assert reasons([EffortRow(1, ANSWER, name), EffortRow(2, ANSWER, own),
                    EffortRow(3, ANSWER, half)]) == []
    mixed = dict(own, pasted_chars=70, pasted_from_page_chars=40)
    [flag] = effort_flags([EffortRow(4, ANSWER, mixed)])
    assert flag.reason_code == PASTED_ANSWER
    assert "(40 characters more were copied from the task page itself)" in flag.detail


def test_typing_faster_than_people_type_is_flagged():
    scripted = dict(TYPED, typed_chars=50, typing_ms=500)  # 100 characters a second
    fast_human = dict(TYPED, typed_chars=50, typing_ms=5_000)  # 10 a second: a fast typist
    burst = dict(TYPED, typed_chars=12, typing_ms=100)  # too few characters to measure
    [flag] = effort_flags([EffortRow(1, ANSWER, scripted), EffortRow(2, ANSWER, fast_human),
                           EffortRow(3, ANSWER, burst)])
    assert (flag.target_id, flag.reason_code, flag.score) == (1, IMPLAUSIBLE_TYPING, 100.0)
    assert flag.detail.startswith("50 characters typed in 0.50s of typing (100 a second")
    assert flag.detail.endswith("; the page lost the focus once; first keystroke 3.2s after "
                                "the item was shown")
    no_keys = dict(scripted, focus_losses=3, first_input_ms=None)
    assert effort_flags([EffortRow(1, ANSWER, no_keys)])[0].detail.endswith(
        "; the page lost the focus 3 times; no keystroke")


CHATBOT_ANSWERS = [
    "Sure! Here is the rewritten question: When did Frank Zappa disband the Mothers?",
    "Certainly! When did the Mothers of Invention, Frank Zappa's band, disband?",
    "**Rewritten question:** When did the Mothers of Invention disband?",
    "As an AI language model, I cannot know the answer, but the question is: who went?",
    "The album showcases the intricate interplay of jazz and rock in Zappa's work.",
    "Who delved into the multifaceted realm of Zappa's orchestral music?",
    "When did the band disband? I hope this helps!",
]


@pytest.mark.parametrize("text", CHATBOT_ANSWERS)
def test_documented_chatbot_marks_are_flagged(text):
    [flag] = effort_flags([EffortRow(1, text, None)])
    assert flag.reason_code == MACHINE_LIKE_TEXT
    assert flag.detail.startswith("the answer reads like chatbot output: ")


def test_one_marker_word_alone_is_not_enough():
    evidence = machine_text_evidence("What was pivotal about the 1969 breakup?")
    assert evidence.marker_words == ("pivotal",) and evidence.score == 1
    assert reasons([EffortRow(1, "What was pivotal about the 1969 breakup?", None)]) == []


def test_released_human_answers_are_almost_never_flagged_as_machine_text(shared_data):
    """Every released human rewrite and sluice answer (9,403 answers written before chatbots):
    the text rule must not turn honest work into flags (measured: none flagged)."""
    texts = [row["Rewrite"] for row in
             json.loads((shared_data / "canard" / "dev.json").read_text())]
    texts += [answer for pair in
              json.loads((shared_data / "canard" / "multiple_refs.json").read_text())
              for answer in pair]
    for name in ("conv_sluice_train_dev.csv", "conv_sluice_test.csv"):
        with (shared_data / "sluice" / "raw" / name).open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        column = next(key for key in rows[0] if "full_question" in key)
        texts += [row[column] for row in rows]
    assert len(texts) > 8_000
    flagged = effort_flags(EffortRow(index, text, None) for index, text in enumerate(texts))
    assert len(flagged) <= len(texts) // 1000, [texts[flag.target_id] for flag in flagged]


def test_effort_summary_dataclass_defaults_are_a_blank_summary():
    assert EffortSummary().to_dict() == dict.fromkeys(EFFORT_LIMITS, 0) | {"first_input_ms": None}
