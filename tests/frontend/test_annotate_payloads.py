"""Payload validation per task kind, and the decontext re-derivation of the sentence."""

import pytest

from annotation.payloads import ItemContext, PayloadError, apply_operations, validate_payload

SENTENCE = "It is brittle at room temperature."
PAGE = ("Zinc is a chemical element with the symbol Zn.",
        "Zinc is a bluish-white metal. It is brittle at room temperature.")
DECONTEXT = ItemContext(kind="decontext", sentence=SENTENCE, paragraphs=PAGE)


def swap_it(**extra):
    return {"op": "swap", "start": 0, "end": 2, "text": "Zinc", "source": None,
            "edit_type": "PRONOUN/NP SWAP", **extra}


def test_apply_operations_uses_spans_of_the_original():
    operations = [{"op": "delete", "start": 13, "end": 33, "text": ""}, swap_it(),
                  {"op": "add", "start": 6, "end": 6, "text": "very "}]
    assert apply_operations(SENTENCE, operations) == "Zinc is very brittle."


def test_decontext_done_is_verified_against_the_operations():
    clean = validate_payload("decontext", {
        "category": "DONE", "decontextualized_sentence": "Zinc is brittle at room temperature.",
        "operations": [swap_it(source={"paragraph": 0, "start": 0, "end": 4})]}, DECONTEXT)
    assert clean.columns["category"] == "DONE"
    assert clean.columns["text"] == "Zinc is brittle at room temperature."
    assert clean.columns["edit_operations"][0]["source"] == {"paragraph": 0, "start": 0, "end": 4}


@pytest.mark.parametrize(("payload", "field"), [
    # free rewriting: the sentence does not follow from the operations
    ({"category": "DONE", "decontextualized_sentence": "Zinc is very brittle.",
      "operations": [swap_it()]}, "decontextualized_sentence"),
    # the claimed source does not hold the copied text
    ({"category": "DONE", "decontextualized_sentence": "Zinc is brittle at room temperature.",
      "operations": [swap_it(source={"paragraph": 1, "start": 5, "end": 9})]},
     "operations[0].source"),
    ({"category": "DONE", "decontextualized_sentence": "x",
      "operations": [{"op": "delete", "start": 0, "end": 99, "text": ""}]}, "operations[0]"),
    ({"category": "DONE", "decontextualized_sentence": "x",
      "operations": [swap_it(), {"op": "add", "start": 1, "end": 1, "text": "x"}]},
     "operations"),
    ({"category": "DONE", "decontextualized_sentence": SENTENCE,
      "operations": [swap_it(edit_type="REWRITE")]}, "operations[0].edit_type"),
    ({"category": "IMPOSSIBLE", "operations": [swap_it()]}, "operations"),
    ({"category": "MAYBE", "operations": []}, "category"),
    ({"category": "DONE", "decontextualized_sentence": SENTENCE,
      "operations": [{"op": "add", "start": True, "end": 1, "text": "x"}]},
     "operations[0].start"),
])
def test_decontext_rejects_inconsistent_submissions(payload, field):
    with pytest.raises(PayloadError) as error:
        validate_payload("decontext", payload, DECONTEXT)
    assert error.value.field == field


def test_feasible_without_edits_is_unnecessary_and_infeasible_is_impossible():
    unchanged = validate_payload("decontext", {"category": "DONE", "operations": [],
                                               "decontextualized_sentence": SENTENCE}, DECONTEXT)
    assert unchanged.payload["category"] == "UNNECESSARY"
    impossible = validate_payload("decontext", {"category": "IMPOSSIBLE", "operations": []},
                                  DECONTEXT)
    assert impossible.columns == {"category": "IMPOSSIBLE", "text": SENTENCE,
                                  "edit_operations": []}


def test_other_kinds_derive_their_columns():
    assert validate_payload("plausibility", {"rating": 5}, ItemContext("plausibility")).columns \
        == {"rating": 5}
    assert validate_payload("rewrite", {"rewrite": " Who? "}, ItemContext("rewrite")).payload \
        == {"rewrite": "Who?"}
    assert validate_payload("sluice", {"full_question": "x", "skipped": True},
                            ItemContext("sluice")).columns == {"text": "", "skipped": True}
    split = validate_payload("split_rephrase", {"simple_sentences": ["A b.", " ", "C d."]},
                             ItemContext("split_rephrase"))
    assert split.payload == {"simple_sentences": ["A b.", "C d."]}
    assert split.columns == {"text": "A b. C d."}


def test_text_may_come_from_the_page_title_and_a_section_heading():
    context = ItemContext(kind="decontext", sentence=SENTENCE, paragraphs=PAGE, title="Zinc",
                          headings=("", "Properties"))
    from_title = swap_it(source={"part": "title", "start": 0, "end": 4})
    clean = validate_payload("decontext", {"category": "DONE", "operations": [from_title],
                                           "decontextualized_sentence": "Zinc is brittle at "
                                           "room temperature."}, context)
    assert clean.payload["operations"][0]["source"] == {"part": "title", "start": 0, "end": 4}
    heading = {"op": "add", "start": 33, "end": 33, "text": " Properties",
               "source": {"part": "heading", "paragraph": 1, "start": 0, "end": 10},
               "edit_type": None}
    clean = validate_payload("decontext", {"category": "DONE", "operations": [heading],
                                           "decontextualized_sentence": "It is brittle at room "
                                           "temperature Properties."}, context)
    assert clean.payload["operations"][0]["source"]["part"] == "heading"
    for wrong in ({"part": "title", "start": 0, "end": 3}, {"part": "heading", "paragraph": 0,
                                                           "start": 0, "end": 4},
                  {"part": "footer", "start": 0, "end": 4}):
        with pytest.raises(PayloadError):
            validate_payload("decontext", {"category": "DONE", "operations": [
                swap_it(source=wrong)], "decontextualized_sentence": "Zinc is brittle at room "
                "temperature."}, context)


def test_single_line_answers_never_store_a_newline():
    rewrite = validate_payload("rewrite", {"rewrite": "What were the abilities\nof Pinhead?"},
                               ItemContext("rewrite"))
    assert rewrite.payload == {"rewrite": "What were the abilities of Pinhead?"}
    assert rewrite.columns == {"text": "What were the abilities of Pinhead?"}
    sluice = validate_payload("sluice", {"full_question": "Why did he\r\n \u2028leave?",
                                         "skipped": False}, ItemContext("sluice"))
    assert sluice.payload["full_question"] == "Why did he leave?"
    split = validate_payload("split_rephrase", {"simple_sentences": ["A\nb.", "C d."]},
                             ItemContext("split_rephrase"))
    assert split.payload == {"simple_sentences": ["A b.", "C d."]}


@pytest.mark.parametrize(("kind", "payload"), [
    ("plausibility", {"rating": 0}), ("plausibility", {"rating": True}),
    ("plausibility", {"rating": 3.5}), ("rewrite", {"rewrite": "  "}),
    ("rewrite", {"rewrite": 4}), ("sluice", {"full_question": "", "skipped": False}),
    ("sluice", {"full_question": "Why?", "skipped": "no"}),
    ("split_rephrase", {"simple_sentences": ["Only one."]}),
    ("split_rephrase", {"simple_sentences": "A. B."}), ("rewrite", ["not", "a", "dict"]),
])
def test_bad_payloads_are_refused(kind, payload):
    with pytest.raises(PayloadError):
        validate_payload(kind, payload, ItemContext(kind))
