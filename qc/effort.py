"""Effort signals of free-text answers: flags from what the task page recorded about how an
answer was written, and from the answer's own words.

The page (``frontend/static/frontend/annotate/effort.js``) records, per item, a summary and
never the keystrokes' content (:class:`EffortSummary`): how many paste events, how many
characters arrived by pasting (and how many of those had been copied from the task page
itself, e.g. a name from the dialogue), how many by typing and over how many milliseconds of
typing, how often the page lost the focus, and how long after the item was shown the first
keystroke came. ``docs/annotating.md`` ("What the page records about how you write") tells
workers what is recorded and why.

Three rules, each a :class:`qc.flags.Flag` with the evidence in its detail:

- ``pasted_answer``: most of the answer came from outside the page by pasting (an LLM's
  output pasted in is the pattern Veselovsky et al. 2023 measured with the same signal).
- ``implausible_typing``: characters typed faster than people type (sustained over enough
  characters to be a measure, not a burst), which scripted keystrokes do.
- ``machine_like_text``: the text carries documented marks of chatbot output
  (:func:`machine_text_evidence`; the sources are cited in ``docs/qc.md``).

Pure: no Django, no network.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from qc.flags import Flag, _plain

PASTED_ANSWER = "pasted_answer"
IMPLAUSIBLE_TYPING = "implausible_typing"
MACHINE_LIKE_TEXT = "machine_like_text"

#: The summary's fields and the largest value each may take (the server refuses more: no
#: answer is longer than 2,000 characters, but pastes may be replaced and retyped).
EFFORT_LIMITS: dict[str, int] = {
    "pastes": 10_000,
    "pasted_chars": 10_000_000,
    "pasted_from_page_chars": 10_000_000,
    "typed_chars": 10_000_000,
    "typing_ms": 2**31 - 1,
    "focus_losses": 10_000,
    "first_input_ms": 2**31 - 1,
}
#: Fields that may be null: no keystroke came (a sluice Skip, an answer chosen by clicks).
NULLABLE = frozenset({"first_input_ms"})


class EffortError(ValueError):
    """A summary that is not one the page sends; ``field`` names the culprit."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class EffortSummary:
    """How one answer was written, as the page measured it (counts and milliseconds only)."""

    pastes: int = 0
    pasted_chars: int = 0
    pasted_from_page_chars: int = 0
    typed_chars: int = 0
    typing_ms: int = 0
    focus_losses: int = 0
    first_input_ms: int | None = None

    @property
    def pasted_from_outside_chars(self) -> int:
        """Pasted characters that had not been copied from the task page itself."""
        return max(self.pasted_chars - self.pasted_from_page_chars, 0)

    @property
    def typing_chars_per_second(self) -> float | None:
        """Typing speed while typing (pauses excluded by the page), or None without typing."""
        if self.typed_chars <= 0 or self.typing_ms <= 0:
            return None
        return self.typed_chars * 1000.0 / self.typing_ms

    def to_dict(self) -> dict[str, int | None]:
        return {name: getattr(self, name) for name in EFFORT_LIMITS}


def parse_effort(raw: Any) -> EffortSummary | None:
    """The summary a submission carries (``effort``), checked: None when absent; otherwise an
    object with exactly the :data:`EFFORT_LIMITS` fields, each a whole number from 0 to its
    limit (``first_input_ms`` may be null), and no more pasted-from-page than pasted
    characters. Anything else raises :class:`EffortError` naming the field: the page never
    sends it, so it is refused rather than guessed at."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise EffortError("effort", "must be an object")
    unknown = sorted(set(raw) - set(EFFORT_LIMITS))
    if unknown:
        raise EffortError(f"effort.{unknown[0][:40]}", "is not a field of the effort summary")
    values: dict[str, int | None] = {}
    for name, limit in EFFORT_LIMITS.items():
        if name not in raw:
            raise EffortError(f"effort.{name}", "is missing")
        value = raw[name]
        if value is None and name in NULLABLE:
            values[name] = None
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
            raise EffortError(f"effort.{name}", f"must be a whole number from 0 to {limit}")
        values[name] = value
    if values["pasted_from_page_chars"] > values["pasted_chars"]:
        raise EffortError("effort.pasted_from_page_chars",
                          "must not be more than pasted_chars")
    return EffortSummary(**values)


@dataclass(frozen=True)
class EffortSettings:
    """Thresholds of the effort rules.

    - ``min_pasted_chars`` / ``max_pasted_share``: ``pasted_answer`` when at least this many
      characters were pasted from outside the page and they make more than this share of the
      answer's length (a pasted name or date in a typed answer is not flagged).
    - ``min_typed_chars`` / ``max_typing_chars_per_second``: ``implausible_typing`` when at
      least this many characters were typed at more than this many a second (15 a second is
      180 words a minute, beyond sustained human typing: fast typists reach about 120).
    - ``min_machine_score``: ``machine_like_text`` when :func:`machine_text_evidence` scores
      the text at least this (a chatbot phrase or formatting counts 2, a marker word 1: one
      marker word alone never flags).
    """

    min_pasted_chars: int = 20
    max_pasted_share: float = 0.5
    min_typed_chars: int = 20
    max_typing_chars_per_second: float = 15.0
    min_machine_score: int = 2


DEFAULT_EFFORT_SETTINGS = EffortSettings()


class EffortRow(NamedTuple):
    """One answer: its id, its text and the page's summary (None: not recorded)."""

    target_id: Any
    text: str
    effort: EffortSummary | Mapping | None


def _summary(effort: EffortSummary | Mapping | None) -> EffortSummary | None:
    if effort is None or isinstance(effort, EffortSummary):
        return effort
    return parse_effort(effort)


def _chars(count: int) -> str:
    return f"{count} character" if count == 1 else f"{count} characters"


def _circumstances(effort: EffortSummary) -> str:
    """The rest of the summary, as evidence beside a flag: leaving the page (to another tab or
    program: where a pasted answer comes from) and when the first keystroke came."""
    losses = ("the page never lost the focus" if effort.focus_losses == 0 else
              "the page lost the focus once" if effort.focus_losses == 1 else
              f"the page lost the focus {effort.focus_losses} times")
    first = ("no keystroke" if effort.first_input_ms is None else
             f"first keystroke {effort.first_input_ms / 1000:.1f}s after the item was shown")
    return f"{losses}; {first}"


def pasted_answer_flags(rows: Iterable[EffortRow],
                        settings: EffortSettings = DEFAULT_EFFORT_SETTINGS) -> list[Flag]:
    """``pasted_answer``; score = the share of the answer's length pasted from outside the
    page (may exceed 1 when pasted text was then cut down)."""
    flags = []
    for row in rows:
        effort = _summary(row.effort)
        if effort is None:
            continue
        outside = effort.pasted_from_outside_chars
        length = len(row.text.strip())
        if outside < settings.min_pasted_chars or length == 0:
            continue
        share = outside / length
        if share <= settings.max_pasted_share:
            continue
        pastes = "1 paste" if effort.pastes == 1 else f"{effort.pastes} pastes"
        own = (f" ({_chars(effort.pasted_from_page_chars)} more were copied from the task "
               f"page itself)" if effort.pasted_from_page_chars else "")
        flags.append(Flag(_plain(row.target_id), PASTED_ANSWER, share,
                          f"{_chars(outside)} pasted from outside the page in {pastes}{own} "
                          f"for a {length}-character answer; {_chars(effort.typed_chars)} "
                          f"typed; {_circumstances(effort)}"))
    return flags


def implausible_typing_flags(rows: Iterable[EffortRow],
                             settings: EffortSettings = DEFAULT_EFFORT_SETTINGS) -> list[Flag]:
    """``implausible_typing``; score = characters typed a second."""
    flags = []
    for row in rows:
        effort = _summary(row.effort)
        if effort is None or effort.typed_chars < settings.min_typed_chars:
            continue
        speed = effort.typing_chars_per_second
        if speed is None or speed <= settings.max_typing_chars_per_second:
            continue
        flags.append(Flag(_plain(row.target_id), IMPLAUSIBLE_TYPING, speed,
                          f"{_chars(effort.typed_chars)} typed in "
                          f"{effort.typing_ms / 1000:.2f}s of typing ({speed:.0f} a second; "
                          f"people type at most about 10 a second); "
                          f"{_circumstances(effort)}"))
    return flags


# --- text that reads like a chatbot's -------------------------------------------------------

#: What chatbots write around or instead of an answer (Wikipedia: "Signs of AI writing",
#: sections on collaborative communication and knowledge-cutoff disclaimers; Veselovsky et al.
#: 2023 found such framing in pasted crowd answers). Matched case-insensitively.
CHATBOT_PHRASES: tuple[str, ...] = (
    "as an ai", "language model", "i hope this helps", "let me know if",
    "feel free to", "here is the rewritten", "here's the rewritten", "here is a rewritten",
    "here's a rewritten", "here is the rephrased", "here's the rephrased", "rewritten question:",
    "rephrased question:", "certainly!", "certainly,", "sure!", "sure, here", "of course!",
    "i cannot assist", "i can't assist", "i'm sorry, but", "as of my last",
    "knowledge cutoff", "great question",
)
#: Words chatbots overuse: the "excess vocabulary" whose frequency rose sharply after
#: ChatGPT's release (Kobak et al. 2024), the adjectives of Liang et al. 2024, and the "AI
#: vocabulary" of Wikipedia's "Signs of AI writing" (stems; a word matches when it starts with
#: one). Each is ordinary English: one alone never flags.
MARKER_STEMS: tuple[str, ...] = (
    "delve", "showcas", "underscor", "intricat", "meticulous", "commendabl", "pivotal",
    "realm", "tapestr", "multifaceted", "garner", "bolster", "testament", "seamless",
    "vibrant", "interplay", "furthermore", "moreover",
)
_MARKDOWN = re.compile(r"\*\*[^*\n]+\*\*|^\s{0,3}#{1,6}\s|^\s*[-*•]\s+\S|^\s*\d+\.\s+\S",
                       re.MULTILINE)
_WORD = re.compile(r"[a-z]+")


class MachineEvidence(NamedTuple):
    """What :func:`machine_text_evidence` found; ``score``: 2 a phrase or formatting, 1 a
    distinct marker word."""

    phrases: tuple[str, ...]
    formatting: bool
    marker_words: tuple[str, ...]

    @property
    def score(self) -> int:
        return 2 * len(self.phrases) + 2 * int(self.formatting) + len(self.marker_words)

    def describe(self) -> str:
        parts = []
        if self.phrases:
            parts.append("chatbot phrases " + ", ".join(f"“{p}”" for p in self.phrases))
        if self.formatting:
            parts.append("Markdown formatting (bold, a heading or a list)")
        if self.marker_words:
            parts.append("words typical of chatbot text " + ", ".join(
                f"“{w}”" for w in self.marker_words))
        return "; ".join(parts)


def machine_text_evidence(text: str) -> MachineEvidence:
    """The documented marks of machine-written text in ``text`` (see :data:`CHATBOT_PHRASES`,
    :data:`MARKER_STEMS`)."""
    lowered = text.lower()
    phrases = tuple(phrase for phrase in CHATBOT_PHRASES if phrase in lowered)
    markers = sorted({word for word in _WORD.findall(lowered)
                      if word.startswith(MARKER_STEMS)})
    return MachineEvidence(phrases, bool(_MARKDOWN.search(text)), tuple(markers))


def machine_text_flags(rows: Iterable[tuple[Any, str]],
                       settings: EffortSettings = DEFAULT_EFFORT_SETTINGS) -> list[Flag]:
    """``machine_like_text`` over ``(target_id, text)``; score = the evidence's score."""
    flags = []
    for target_id, text in rows:
        evidence = machine_text_evidence(text)
        if evidence.score >= settings.min_machine_score:
            flags.append(Flag(_plain(target_id), MACHINE_LIKE_TEXT, float(evidence.score),
                              f"the answer reads like chatbot output: {evidence.describe()}"))
    return flags


def effort_flags(rows: Iterable[EffortRow],
                 settings: EffortSettings = DEFAULT_EFFORT_SETTINGS) -> list[Flag]:
    """Every effort flag of the answers ``rows`` (the text rule applies with or without a
    recorded summary: answers imported or collected from MTurk's own form have none)."""
    rows = [EffortRow(row.target_id, row.text, _summary(row.effort)) for row in rows]
    return (pasted_answer_flags(rows, settings) + implausible_typing_flags(rows, settings)
            + machine_text_flags(((row.target_id, row.text) for row in rows), settings))
