"""Live checks on an annotator's answer, evaluated from ``qc/rules/live_checks.json``.

The browser runs the same rules from the same file, so the semantics here are deliberately
simple and spelled out in the JSON ("description" of every rule) and in docs/qc.md. Each
check returns the warnings in the order the rules are listed in the JSON.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

RULES_PATH = Path(__file__).resolve().parent / "rules" / "live_checks.json"
CASES_PATH = Path(__file__).resolve().parent / "rules" / "live_checks_cases.json"



@dataclass(frozen=True)
class Warning:  # the name the brief, the API and the browser use; shadows the builtin here only
    """One live-check result: a stable ``code`` and a human ``message``."""

    code: str
    message: str


@cache
def load_rules(path: Path = RULES_PATH) -> dict:
    """The parsed rule file (cached; the file ships with the package)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class _Tokenizer:
    pattern: re.Pattern
    apostrophes: dict[int, str]
    clitics: tuple[str, ...]
    irregular: dict[str, tuple[str, ...]]
    negation_suffix: str
    negation: str
    capitals_min_letters: int


@cache
def _tokenizer() -> _Tokenizer:
    rules = load_rules()["tokenization"]
    contractions = rules["contractions"]
    return _Tokenizer(
        pattern=re.compile(rules["word_pattern"]["python"]),
        apostrophes=str.maketrans(dict.fromkeys(rules["apostrophes"], "'")),
        clitics=tuple(rules["clitics"]),
        irregular={word: tuple(parts) for word, parts in contractions["irregular"].items()},
        negation_suffix=contractions["negation_suffix"], negation=contractions["negation"],
        capitals_min_letters=rules["capitals"]["min_letters"])


def _without_clitic(token: str, clitics: tuple[str, ...]) -> str:
    for clitic in clitics:
        if token.endswith(clitic) and len(token) > len(clitic):
            return token[: -len(clitic)]
    return token


def _word_tokens(lower: str, tokenizer: _Tokenizer) -> tuple[str, ...]:
    """The tokens of one lower-cased word: a negative contraction is its two words, any other
    word loses its clitic ending."""
    if lower in tokenizer.irregular:
        return tokenizer.irregular[lower]
    suffix = tokenizer.negation_suffix
    if lower.endswith(suffix) and len(lower) > len(suffix):
        return (lower[: -len(suffix)], tokenizer.negation)
    return (_without_clitic(lower, tokenizer.clitics),)


def _words(text: str) -> list[tuple[str, bool]]:
    """``(token, written_in_capitals)`` for every token of ``text`` (``tokenize``); the flag
    is the rule file's ``tokenization.capitals`` (an acronym such as "IT" in "the IT
    department")."""
    tokenizer = _tokenizer()
    normal = unicodedata.normalize("NFC", text).translate(tokenizer.apostrophes)
    all_capitals = normal.upper() == normal
    words = []
    for word in tokenizer.pattern.findall(normal):
        lower = word.lower()
        capitals = (not all_capitals and word != lower and word == word.upper()
                    and sum(char.isalpha() for char in word) >= tokenizer.capitals_min_letters)
        words.extend((token, capitals) for token in _word_tokens(lower, tokenizer))
    return words


def tokenize(text: str) -> list[str]:
    """Tokens as the rules see them (``tokenization`` in the rule file): NFC, any apostrophe as
    ``'``, runs of letters and digits of any script joined by inner apostrophes, each
    lower-cased, a negative contraction as its two words (``don't`` -> ``do``, ``not``;
    ``can't`` -> ``can``, ``not``), any other word without its clitic ending (``Pinhead's`` ->
    ``pinhead``, ``they're`` -> ``they``)."""
    return [token for token, _ in _words(text)]


def _rules(kind: str, rules: dict | None = None) -> dict[str, dict]:
    return {rule["code"]: rule for rule in (rules or load_rules())[kind]}


def _ordered(kind: str, found: dict[str, Warning], rules: dict | None = None) -> list[Warning]:
    """Warnings in the JSON's rule order, so both implementations list them identically."""
    return [found[rule["code"]] for rule in (rules or load_rules())[kind]
            if rule["code"] in found]


# --- a project's own thresholds ---------------------------------------------------------------

_KINDS = ("rewrite", "sluice", "split_rephrase")


@cache
def thresholds() -> dict[str, dict]:
    """Every threshold a project may override, keyed ``"<rule code>.<parameter>"``: the numeric
    parameters of the rule file (``min_tokens``, ``min_coverage``…), with the kind, the default,
    its type (``int`` or ``float``) and the rule's description (what it does)."""
    found = {}
    for kind in _KINDS:
        for rule in load_rules()[kind]:
            for parameter, value in rule.items():
                if isinstance(value, bool) or not isinstance(value, int | float):
                    continue
                found[f"{rule['code']}.{parameter}"] = {
                    "kind": kind, "code": rule["code"], "parameter": parameter,
                    "default": value, "type": "int" if isinstance(value, int) else "float",
                    "description": rule["description"]}
    return found


def validate_overrides(overrides) -> dict:
    """``overrides`` if it is a valid set of threshold overrides, else ValueError naming the
    key: an object of known ``"<rule code>.<parameter>"`` keys (:func:`thresholds`), integers
    of at least 0 for counts, numbers from 0 to 1 for ratios and coverage."""
    if not isinstance(overrides, dict):
        raise ValueError("must be an object such as {\"sluice_too_short.min_tokens\": 3}")
    known = thresholds() if overrides else {}
    for key, value in overrides.items():
        if key not in known:
            raise ValueError(f"unknown setting {key!r}; known: {', '.join(sorted(known))}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{key}: must be a number")
        if known[key]["type"] == "int" and (not isinstance(value, int) or not 0 <= value <= 100):
            raise ValueError(f"{key}: must be a whole number from 0 to 100")
        if known[key]["type"] == "float" and not 0 <= value <= 1:
            raise ValueError(f"{key}: must be a number from 0 to 1")
    return overrides


def rules_with(overrides: dict | None) -> dict:
    """The rule file with a project's threshold ``overrides`` applied (what both the page and
    the server check with). Invalid overrides raise ValueError (:func:`validate_overrides`)."""
    if not overrides:
        return load_rules()
    validate_overrides(overrides)
    rules = dict(load_rules())
    for kind in _KINDS:
        rules[kind] = [
            {**rule, **{parameter: overrides[f"{rule['code']}.{parameter}"]
                        for parameter in rule if f"{rule['code']}.{parameter}" in overrides}}
            for rule in rules[kind]]
    return rules


def _contains_phrase(tokens: Sequence[str], phrase: str) -> bool:
    phrase_tokens = tokenize(phrase)
    width = len(phrase_tokens)
    return width > 0 and any(
        list(tokens[i : i + width]) == phrase_tokens for i in range(len(tokens) - width + 1)
    )


def _distinct(words: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(words))


def stopwords() -> frozenset[str]:
    """The shared stopword list (function words that carry no content)."""
    return frozenset(load_rules()["stopwords"])


def content_words(text: str) -> list[str]:
    """Distinct non-stopword tokens of ``text`` in order of first occurrence."""
    stop = stopwords()
    return _distinct(token for token in tokenize(text) if token not in stop)


def check_rewrite(
    question: str, rewrite: str, *, context_words: Iterable[str] | None = None,
    rules_file: dict | None = None,
) -> list[Warning]:
    """Warnings for a question-in-context rewrite (CANARD; also decontextualized sentences).

    ``context_words`` (optional) is every word the annotator may copy from: title, section,
    previous questions and answers; any strings, tokenised here. Without it the
    ``rewrite_new_words`` rule is not evaluated.
    """
    rules = _rules("rewrite", rules_file)
    words = _words(rewrite)
    tokens = [token for token, _ in words]
    question_tokens = tokenize(question)
    found: dict[str, Warning] = {}

    rule = rules["rewrite_too_short"]
    if len(tokens) < rule["min_tokens"] or len(tokens) < rule["min_ratio_to_question"] * len(
        question_tokens
    ):
        found[rule["code"]] = Warning(rule["code"], rule["message"])

    rule = rules["rewrite_pronoun_left"]
    pronouns = set(rule["words"])
    found_pronouns = _distinct(token for token, capitals in words
                               if token in pronouns and not capitals)
    if found_pronouns:
        message = rule["message"].replace("{words}", ", ".join(found_pronouns))
        found[rule["code"]] = Warning(rule["code"], message)

    rule = rules["rewrite_ambiguous_words"]
    found_phrases = [phrase for phrase in rule["phrases"] if _contains_phrase(tokens, phrase)]
    if found_phrases:
        message = rule["message"].replace("{words}", ", ".join(found_phrases))
        found[rule["code"]] = Warning(rule["code"], message)

    rule = rules["rewrite_other_without_phrase"]
    triggers = set(rule["trigger_words"])
    triggered = triggers.intersection(tokens) or triggers.intersection(question_tokens)
    if triggered and not any(_contains_phrase(tokens, p) for p in rule["allowed_phrases"]):
        found[rule["code"]] = Warning(rule["code"], rule["message"])

    rule = rules["rewrite_new_words"]
    if context_words is not None:
        known = set(question_tokens) | stopwords()
        for text in context_words:
            known.update(tokenize(text))
        for phrase in rules["rewrite_other_without_phrase"]["allowed_phrases"]:
            known.update(tokenize(phrase))
        new_words = _distinct(token for token in tokens if token not in known)
        if new_words:
            message = rule["message"].replace("{words}", ", ".join(new_words))
            found[rule["code"]] = Warning(rule["code"], message)

    return _ordered("rewrite", found, rules_file)


def sluice_wh_word(q2: str) -> str:
    """Q2's wh-word: its first token in the wh-word list, else its first token ("" if none)."""
    tokens = tokenize(q2)
    wh_words = set(load_rules()["wh_words"])
    return next((token for token in tokens if token in wh_words), tokens[0] if tokens else "")


def check_sluice(q1: str, a1: str, q2: str, answer: str, *,
                 rules_file: dict | None = None) -> list[Warning]:
    """Warnings for a sluice resolution ``answer`` of Q2 given the context (Q1, A1).

    ``a1`` is accepted for a stable signature (the browser passes the whole item); no live
    rule uses it today — context use is checked after submission by ``qc.flags``.
    """
    del a1
    rules = _rules("sluice", rules_file)
    tokens = tokenize(answer)
    found: dict[str, Warning] = {}

    rule = rules["sluice_wrong_start"]
    wh_word = sluice_wh_word(q2)
    if wh_word and (not tokens or tokens[0] != wh_word):
        found[rule["code"]] = Warning(rule["code"], rule["message"].replace("{wh_word}", wh_word))

    rule = rules["sluice_too_short"]
    if len(tokens) < rule["min_tokens"]:
        found[rule["code"]] = Warning(rule["code"], rule["message"])

    rule = rules["sluice_copies_q1"]
    if tokens and tokens == tokenize(q1):
        found[rule["code"]] = Warning(rule["code"], rule["message"])

    return _ordered("sluice", found, rules_file)


def split_coverage(complex_sentence: str, simple_sentences: Sequence[str]) -> float:
    """Share of the complex sentence's distinct content words used by the simple sentences."""
    wanted = content_words(complex_sentence)
    if not wanted:
        return 1.0
    used = set()
    for sentence in simple_sentences:
        used.update(tokenize(sentence))
    return sum(word in used for word in wanted) / len(wanted)


def check_split(complex_sentence: str, simple_sentences: Sequence[str], *,
                rules_file: dict | None = None) -> list[Warning]:
    """Warnings for a split-and-rephrase answer (a list of simple sentences)."""
    rules = _rules("split_rephrase", rules_file)
    sentences = [sentence.strip() for sentence in simple_sentences if tokenize(sentence)]
    found: dict[str, Warning] = {}

    rule = rules["split_too_few_sentences"]
    if len(sentences) < rule["min_sentences"]:
        found[rule["code"]] = Warning(rule["code"], rule["message"])

    rule = rules["split_not_a_sentence"]
    start_categories = set(rule["start_categories"])
    end = re.compile(rule["end_pattern"])
    bad_positions = [
        str(position)
        for position, sentence in enumerate(sentences, start=1)
        if not (unicodedata.category(sentence[0]) in start_categories and end.search(sentence))
    ]
    if bad_positions:
        message = rule["message"].replace("{positions}", ", ".join(bad_positions))
        found[rule["code"]] = Warning(rule["code"], message)

    rule = rules["split_copies_input"]
    complex_tokens = tokenize(complex_sentence)
    if any(tokenize(sentence) == complex_tokens for sentence in sentences):
        found[rule["code"]] = Warning(rule["code"], rule["message"])

    rule = rules["split_low_coverage"]
    coverage = split_coverage(complex_sentence, sentences)
    if coverage < rule["min_coverage"]:
        percent = str(math.floor(coverage * 100))
        message = rule["message"].replace("{coverage_percent}", percent)
        found[rule["code"]] = Warning(rule["code"], message)

    return _ordered("split_rephrase", found, rules_file)


def check(kind: str, payload: dict, *, rules_file: dict | None = None) -> list[Warning]:
    """Dispatch by task kind with a JSON-like payload (the shape used by the cases file).

    kinds and payload keys: ``rewrite`` (question, rewrite, optional context_words),
    ``sluice`` (q1, a1, q2, answer), ``split_rephrase`` (complex_sentence,
    simple_sentences), ``plausibility`` (no rules; always no warnings).
    """
    if kind == "rewrite":
        return check_rewrite(
            payload["question"], payload["rewrite"], context_words=payload.get("context_words"),
            rules_file=rules_file)
    if kind == "sluice":
        return check_sluice(payload["q1"], payload["a1"], payload["q2"], payload["answer"],
                            rules_file=rules_file)
    if kind == "split_rephrase":
        return check_split(payload["complex_sentence"], payload["simple_sentences"],
                           rules_file=rules_file)
    if kind == "plausibility":
        return []
    raise ValueError(f"unknown live-check kind: {kind!r}")
