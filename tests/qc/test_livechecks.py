"""Live checks: the shared test vectors, the rule file's shape, and message formatting."""

import json

import pytest

from qc.livechecks import (
    CASES_PATH,
    check,
    check_rewrite,
    check_sluice,
    check_split,
    load_rules,
    sluice_wh_word,
    split_coverage,
    tokenize,
)

CASES = json.loads(CASES_PATH.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_shared_case(case):
    assert [warning.code for warning in check(case["kind"], case["input"])] == case["expected"]


def test_cases_cover_every_rule():
    kinds = ("rewrite", "sluice", "split_rephrase")
    codes = {rule["code"] for kind in kinds for rule in load_rules()[kind]}
    expected = {code for case in CASES for code in case["expected"]}
    assert codes == expected


def test_every_rule_is_described():
    rules = load_rules()
    assert rules["plausibility"] == []
    for kind in ("rewrite", "sluice", "split_rephrase"):
        for rule in rules[kind]:
            assert rule["description"] and rule["message"] and rule["code"].startswith(
                {"rewrite": "rewrite_", "sluice": "sluice_", "split_rephrase": "split_"}[kind]
            )


def test_tokenization_is_the_documented_regex():
    expected = ["who", "the", "best", "known", "2nd", "act"]
    assert tokenize("Who's the BEST-known 2nd act?") == expected


def test_tokenization_is_unicode_aware_and_knows_possessives_and_contractions():
    assert tokenize("Zappa\u2019s Björk's café, they're Ωmega") == [
        "zappa", "björk", "café", "they", "ωmega"]
    assert tokenize("it's don't rock 'n' roll") == ["it", "do", "not", "rock", "n", "roll"]
    # NFC: a decomposed é is the same word as the composed one.
    assert tokenize("cafe\u0301") == ["café"]
    context = ["Pinhead", "Frank Zappa"]
    assert check_rewrite("What were his abilities?", "What were Pinhead's abilities?",
                         context_words=["abilities", *context]) == []
    assert [w.code for w in check_rewrite("Is it new?", "Isn't Zappa\u2019s band new?",
                                          context_words=context)] == ["rewrite_new_words"]
    pronouns = check_rewrite("Where are they now?", "Where are they're and it's now?")
    assert pronouns[0].code == "rewrite_pronoun_left" and "they, it" in pronouns[0].message


def test_messages_name_what_was_found():
    warnings = check_rewrite("Did he write it?", "Did he write it for them?")
    assert warnings[0].code == "rewrite_pronoun_left"
    assert "he, it, them" in warnings[0].message
    sluice = check_sluice("Where was he born?", "London", "When", "Where was he born?")
    assert "'when'" in sluice[0].message
    split = check_split("A b.", ["lower case.", "Fine sentence", "Good one."])
    assert "1, 2" in split[0].message


def test_wh_word_and_coverage():
    assert sluice_wh_word("By who?") == "who"
    assert sluice_wh_word("Really?") == "really"
    assert sluice_wh_word("") == ""
    assert split_coverage("The cat sat.", ["A cat.", "It sat down."]) == 1.0
    assert split_coverage("The cat sat.", ["A dog."]) == 0.0
    assert split_coverage("The of.", []) == 1.0


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError):
        check("poetry", {})
