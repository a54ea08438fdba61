"""Live checks on words as annotators write them (issue 22, points 5 and 6): capitals of any
script start a simple sentence, negative contractions are their two words (so "don't" is not a
word missing from a conversation that says "do not"), and an acronym in capitals ("IT") is not a
pronoun. The browser runs the same rules (tests/browser/test_livecheck_parity.py)."""

from qc.livechecks import check_rewrite, check_split, tokenize


def test_negative_contractions_are_their_two_words():
    assert tokenize("Don't, can't, won't, cannot, isn't") == [
        "do", "not", "can", "not", "will", "not", "can", "not", "is", "not"]
    # Typographic apostrophes too.
    assert tokenize("don\u2019t") == ["do", "not"]


def test_contractions_are_not_new_words_when_their_forms_are_in_the_conversation():
    context = ["Frank Zappa", "He said he could not sign the contract."]
    assert check_rewrite("Why couldn't he sign?", "Why couldn't Frank Zappa sign the contract?",
                         context_words=context) == []
    assert check_rewrite("Why not?", "Why can't Frank Zappa sign the contract?",
                         context_words=context) == []
    # A contraction whose word is not in the conversation is still named.
    [warning] = check_rewrite("Why not?", "Why mustn't Frank Zappa sign the contract?",
                              context_words=context)
    assert warning.code == "rewrite_new_words" and "(must)" in warning.message


def test_an_acronym_in_capitals_is_not_a_pronoun():
    assert check_rewrite("Who ran the IT department?", "Who ran the IT department at Apple?") == []
    [warning] = check_rewrite("Who ran it?", "Who ran it, the IT department at Apple?")
    assert warning.code == "rewrite_pronoun_left" and "(it)" in warning.message
    # One capital letter is no acronym, and a text all in capitals marks nothing.
    assert [w.code for w in check_rewrite("What did he do?", "WHAT DID HE DO AT APPLE?")] == [
        "rewrite_pronoun_left"]


def test_a_capital_of_any_script_starts_a_sentence():
    complex_sentence = "\u00c9mile Zola was a writer and the \u00c5ngstr\u00f6m is a unit."
    assert check_split(complex_sentence,
                       ["\u00c9mile Zola was a writer.", "\u00c5ngstr\u00f6m is a unit."]) == []
    # Decomposed (E + combining acute) and title-case letters count as well.
    assert check_split(complex_sentence,
                       ["E\u0301mile Zola was a writer.", "\u01c5 \u00c5ngstr\u00f6m is a unit."]
                       ) == []
    [warning] = check_split(complex_sentence,
                            ["\u00e9mile Zola was a writer.", "\u00c5ngstr\u00f6m is a unit."])
    assert warning.code == "split_not_a_sentence" and "Sentence(s) 1 " in warning.message
