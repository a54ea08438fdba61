"""The papers' rule-based baselines, as plain string functions."""

from __future__ import annotations

import re

from qc.livechecks import load_rules, sluice_wh_word

# CANARD's Pronoun Sub: personal and possessive pronouns, replaced by the bare title ("his"
# does not become "<title>'s"). With CANARD's official spaCy tokenisation this gives the
# paper's 47.72 BLEU on dev exactly (see docs/qc.md).
PRONOUNS = (
    "he", "she", "it", "they", "him", "her", "them", "his", "hers", "its", "their", "theirs",
)
_PRONOUN_PATTERN = re.compile(r"(?<![\w'])(" + "|".join(PRONOUNS) + r")(?![\w'])", re.IGNORECASE)


def repeat(sentence: str) -> str:
    """REPEAT (decontextualization) / Copy (CANARD): the input unchanged."""
    return sentence


copy = repeat


def pronoun_sub(question: str, title: str) -> str:
    """CANARD Pronoun Sub: replace the first pronoun of the question with the article title.

    A pronoun is a whole word (not part of a word or of a contraction like "it's") from
    :data:`PRONOUNS`, matched case-insensitively. Questions without one are returned as is.
    """
    return _PRONOUN_PATTERN.sub(lambda _: title, question, count=1)


def _wh_pattern() -> re.Pattern:
    words = "|".join(load_rules()["wh_words"])
    return re.compile(r"(?<![\w'])(" + words + r")(?![\w'])", re.IGNORECASE)


def _sluice_word(q2: str) -> str:
    """Q2 as written, without surrounding whitespace and trailing question marks."""
    return q2.strip().rstrip("?").strip()


def copy_edit_q1(q1: str, q2: str) -> str:
    """Sluice C&E Q1: put Q2's wh-word in place of Q1's first wh-word.

    Q2's wh-word is found as in the live checks (:func:`qc.livechecks.sluice_wh_word`) and
    written capitalised when it replaces Q1's first word, lower-case elsewhere. A Q1 without
    a wh-word (a yes/no question) gets the wh-word prepended: "Did anyone laugh?" + "Who" ->
    "Who did anyone laugh?".
    """
    wh_word = sluice_wh_word(q2) or _sluice_word(q2).lower()
    pattern = _wh_pattern()
    match = pattern.search(q1)
    if match is None:
        stripped = q1.strip()
        rest = stripped[:1].lower() + stripped[1:]
        return f"{wh_word.capitalize()} {rest}".strip()
    replacement = wh_word.capitalize() if match.start() == 0 else wh_word
    return q1[: match.start()] + replacement + q1[match.end() :]


def copy_edit_answer(a1: str, q2: str) -> str:
    """Sluice C&E A: Q2 (without its question mark) prepended to the answer A1."""
    return f"{_sluice_word(q2)} {a1.strip()}".strip()
