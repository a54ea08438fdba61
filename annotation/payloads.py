"""Per-kind validation of annotation payloads and the denormalised columns derived from them.

Contract: ``validate_payload(kind, raw, context)`` returns a ``CleanPayload`` (the canonical
payload to store plus the column values) or raises ``PayloadError`` naming the offending field.
``context`` is the ``ItemContext`` of the item being annotated (``annotation.selectors.annotate``);
the decontext validator needs the original sentence and the page to check the operations.

Payload shapes (shared with the browser, the collector and the exporters):

* decontext: ``{"category", "decontextualized_sentence", "operations": [...]}``. Operations are
  character spans of the original sentence; the server re-applies them and rejects a submission
  whose sentence differs, so no free rewriting can slip through. FEASIBLE without edits is stored
  as UNNECESSARY, INFEASIBLE as IMPOSSIBLE (sentence kept as the original, no operations).
* plausibility: ``{"rating": 1..5}``; rewrite: ``{"rewrite": str}``;
  sluice: ``{"full_question": str, "skipped": bool}``;
  split_rephrase: ``{"simple_sentences": [str, ...]}`` (column text = joined by a space).

Every kind also takes a problem report instead of an answer ("Skip / report a problem with this
item"): ``{"problem": {"reason": "broken_source" | "offensive" | "unclear", "note": str}}``,
stored as such (note stripped, on one line) with the columns ``problem``/``problem_note``
(the row's state is then ``reported``: see ``annotation.services.annotations``). A sluice Skip
is an answer of its own (``skipped``), not a report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

from diff_match_patch import diff_match_patch
from django.utils.dateparse import parse_datetime

from qc import livechecks

from .models import TaskKind

EDIT_TYPES = ("PRONOUN/NP SWAP", "NAME COMPLETION", "DM REMOVAL", "BRIDGING", "GLOBAL SCOPING",
              "ADDITION")
OPERATIONS = ("delete", "add", "swap")
MAX_TEXT = 2000
MAX_OPERATIONS = 50
MAX_SIMPLE_SENTENCES = 20
PROBLEM_REASONS = ("broken_source", "offensive", "unclear")
MAX_PROBLEM_NOTE = 500
# The window a browser-reported time must fall in, around the server's clock: a page may stay
# open (or a draft be resumed) for weeks, and a client clock may run a few minutes fast.
CLIENT_TIME_MAX_AGE = timedelta(days=30)
CLIENT_TIME_MAX_AHEAD = timedelta(minutes=5)


class PayloadError(ValueError):
    """A submission that does not fit its task kind; ``field`` names the culprit."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class ItemContext:
    """What a validator and the live checks need to know about an item (plain data)."""

    kind: str
    sentence: str = ""  # decontext target / split complex sentence
    paragraphs: tuple[str, ...] = ()  # decontext page text, paragraph by paragraph
    title: str = ""  # decontext page title
    headings: tuple[str, ...] = ()  # decontext: the heading shown above each paragraph, or ""
    question: str = ""  # rewrite: the turn's question
    context_words: tuple[str, ...] = ()  # rewrite: title, section, earlier questions/answers
    q1: str = ""  # sluice
    a1: str = ""
    q2: str = ""


@dataclass(frozen=True)
class CleanPayload:
    payload: dict
    columns: dict = field(default_factory=dict)


def _text(raw: Any, name: str, *, allow_empty: bool = False) -> str:
    if not isinstance(raw, str):
        raise PayloadError(name, "must be a string")
    value = raw.strip()
    if not value and not allow_empty:
        raise PayloadError(name, "must not be empty")
    if len(value) > MAX_TEXT:
        raise PayloadError(name, f"longer than {MAX_TEXT} characters")
    return value


def single_line(text: str) -> str:
    """``text`` on one line: every run of line breaks (with the spaces around it) becomes one
    space. Single-line answers (a rewrite, a full question, a simple sentence) never store a
    newline, whatever the browser sent (pages also turn pasted line breaks into spaces)."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _line(raw: Any, name: str, *, allow_empty: bool = False) -> str:
    """A single-line text field: ``_text``, then ``single_line``."""
    return single_line(_text(raw, name, allow_empty=allow_empty))


def _int(raw: Any, name: str) -> int:
    # bool is an int subclass in Python; a JSON true must not pass as 1.
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise PayloadError(name, "must be an integer")
    return raw


# --- decontextualization ---------------------------------------------------------------------


def apply_operations(sentence: str, operations: list[dict]) -> str:
    """The sentence after ``operations`` (spans in the ORIGINAL sentence, non-overlapping).

    Operations are applied in span order; insertions at the same position keep their given
    order. The browser's ``applyOperations`` in decontext.js is the same algorithm.
    """
    ordered = sorted(enumerate(operations), key=lambda pair: (pair[1]["start"], pair[1]["end"],
                                                              pair[0]))
    pieces: list[str] = []
    cursor = 0
    for _, operation in ordered:
        pieces.append(sentence[cursor:operation["start"]])
        pieces.append(operation["text"])
        cursor = operation["end"]
    pieces.append(sentence[cursor:])
    return "".join(pieces)


SOURCE_PARTS = ("text", "title", "heading")


def _clean_source(source: dict, name: str, text: str, context: ItemContext) -> dict:
    """Where on the page copied text came from: ``{"paragraph", "start", "end"}`` in a
    paragraph's text; ``{"part": "title", "start", "end"}`` in the page title;
    ``{"part": "heading", "paragraph", "start", "end"}`` in the heading shown above that
    paragraph. The page must hold exactly ``text`` there (padding spaces aside)."""
    part = source.get("part", "text")
    if part not in SOURCE_PARTS:
        raise PayloadError(f"{name}.part", f"must be one of {', '.join(SOURCE_PARTS)}")
    src_start = _int(source.get("start"), f"{name}.start")
    src_end = _int(source.get("end"), f"{name}.end")
    clean: dict = {"start": src_start, "end": src_end}
    if part == "title":
        page_text = context.title
        clean = {"part": "title", **clean}
    else:
        paragraph = _int(source.get("paragraph"), f"{name}.paragraph")
        if not 0 <= paragraph < len(context.paragraphs):
            raise PayloadError(f"{name}.paragraph", "no such paragraph on the page")
        if part == "heading":
            page_text = context.headings[paragraph] if paragraph < len(context.headings) else ""
            clean = {"part": "heading", "paragraph": paragraph, **clean}
        else:
            page_text = context.paragraphs[paragraph]
            clean = {"paragraph": paragraph, **clean}
    if not 0 <= src_start < src_end <= len(page_text):
        raise PayloadError(name, f"span is outside the {part}")
    # The copied words must really be on the page at that span (padding spaces aside).
    if page_text[src_start:src_end].strip() != text.strip():
        raise PayloadError(name, "the text is not what the page has at that span")
    return clean


def _clean_operation(raw: Any, index: int, context: ItemContext) -> dict:
    name = f"operations[{index}]"
    if not isinstance(raw, dict):
        raise PayloadError(name, "must be an object")
    op = raw.get("op")
    if op not in OPERATIONS:
        raise PayloadError(f"{name}.op", f"must be one of {', '.join(OPERATIONS)}")
    start, end = _int(raw.get("start"), f"{name}.start"), _int(raw.get("end"), f"{name}.end")
    if not 0 <= start <= end <= len(context.sentence):
        raise PayloadError(name, f"span {start}-{end} is outside the sentence")
    text = raw.get("text", "")
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise PayloadError(f"{name}.text", "must be a string of at most 2000 characters")
    if op == "delete" and (start == end or text):
        raise PayloadError(name, "a delete removes a non-empty span and adds no text")
    if op == "add" and (start != end or not text.strip()):
        raise PayloadError(name, "an add inserts non-empty text at one position (start == end)")
    if op == "swap" and (start == end or not text.strip()):
        raise PayloadError(name, "a swap replaces a non-empty span with non-empty text")
    source = raw.get("source")
    if source is not None:
        if op == "delete":
            raise PayloadError(f"{name}.source", "a delete copies nothing from the page")
        if not isinstance(source, dict):
            raise PayloadError(f"{name}.source", "must be an object or null")
        source = _clean_source(source, f"{name}.source", text, context)
    edit_type = raw.get("edit_type")
    if edit_type is not None and edit_type not in EDIT_TYPES:
        raise PayloadError(f"{name}.edit_type", f"must be null or one of {', '.join(EDIT_TYPES)}")
    return {"op": op, "start": start, "end": end, "text": text, "source": source,
            "edit_type": edit_type}


def _first_difference(expected: str, submitted: str) -> str:
    """A short human description of how two sentences differ (diff-match-patch)."""
    differ = diff_match_patch()
    diffs = differ.diff_main(expected, submitted)
    differ.diff_cleanupSemantic(diffs)
    for kind, chunk in diffs:
        if kind == differ.DIFF_INSERT:
            return f"the sentence has {chunk!r} that no operation adds"
        if kind == differ.DIFF_DELETE:
            return f"the operations give {chunk!r} that the sentence lacks"
    return "the sentences differ"


def validate_decontext(raw: dict, context: ItemContext) -> CleanPayload:
    category = raw.get("category")
    operations_raw = raw.get("operations", [])
    if not isinstance(operations_raw, list) or len(operations_raw) > MAX_OPERATIONS:
        raise PayloadError("operations", f"must be a list of at most {MAX_OPERATIONS}")
    if category == "IMPOSSIBLE":
        if operations_raw:
            raise PayloadError("operations", "an INFEASIBLE sentence takes no edits")
        sentence = context.sentence
        operations: list[dict] = []
    elif category in ("DONE", "UNNECESSARY"):
        operations = [_clean_operation(op, i, context) for i, op in enumerate(operations_raw)]
        spans = sorted((op["start"], op["end"]) for op in operations)
        for (_, previous_end), (start, _) in pairwise(spans):
            if start < previous_end:
                raise PayloadError("operations", "two operations overlap in the sentence")
        derived = apply_operations(context.sentence, operations)
        submitted = raw.get("decontextualized_sentence")
        if not isinstance(submitted, str) or submitted != derived:
            detail = _first_difference(derived, submitted if isinstance(submitted, str) else "")
            raise PayloadError("decontextualized_sentence",
                               f"does not follow from the operations: {detail}")
        if not derived.strip():
            raise PayloadError("operations", "the edits leave an empty sentence")
        # FEASIBLE with no edits is UNNECESSARY, with edits DONE: derived, never trusted.
        category = "DONE" if operations else "UNNECESSARY"
        sentence = derived
    else:
        raise PayloadError("category", "must be DONE, IMPOSSIBLE or UNNECESSARY")
    payload = {"category": category, "decontextualized_sentence": sentence,
               "operations": operations}
    return CleanPayload(payload, {"category": category, "text": sentence,
                                  "edit_operations": operations})


# --- the other kinds -------------------------------------------------------------------------


def validate_plausibility(raw: dict, context: ItemContext) -> CleanPayload:
    rating = _int(raw.get("rating"), "rating")
    if not 1 <= rating <= 5:
        raise PayloadError("rating", "must be from 1 to 5")
    return CleanPayload({"rating": rating}, {"rating": rating})


def validate_rewrite(raw: dict, context: ItemContext) -> CleanPayload:
    rewrite = _line(raw.get("rewrite"), "rewrite")
    return CleanPayload({"rewrite": rewrite}, {"text": rewrite})


def validate_sluice(raw: dict, context: ItemContext) -> CleanPayload:
    skipped = raw.get("skipped", False)
    if not isinstance(skipped, bool):
        raise PayloadError("skipped", "must be true or false")
    full_question = _line(raw.get("full_question", ""), "full_question", allow_empty=skipped)
    if skipped:
        full_question = ""
    return CleanPayload({"full_question": full_question, "skipped": skipped},
                        {"text": full_question, "skipped": skipped})


def validate_split_rephrase(raw: dict, context: ItemContext) -> CleanPayload:
    sentences_raw = raw.get("simple_sentences")
    if not isinstance(sentences_raw, list) or len(sentences_raw) > MAX_SIMPLE_SENTENCES:
        raise PayloadError("simple_sentences",
                           f"must be a list of at most {MAX_SIMPLE_SENTENCES} sentences")
    sentences = [_line(s, f"simple_sentences[{i}]", allow_empty=True)
                 for i, s in enumerate(sentences_raw)]
    sentences = [s for s in sentences if s]
    if len(sentences) < 2:
        raise PayloadError("simple_sentences", "write at least two simple sentences")
    return CleanPayload({"simple_sentences": sentences}, {"text": " ".join(sentences)})


VALIDATORS = {
    TaskKind.DECONTEXT: validate_decontext,
    TaskKind.PLAUSIBILITY: validate_plausibility,
    TaskKind.REWRITE: validate_rewrite,
    TaskKind.SLUICE: validate_sluice,
    TaskKind.SPLIT_REPHRASE: validate_split_rephrase,
}


def validate_problem(raw: dict) -> CleanPayload:
    """A problem report (module docstring): a known reason, an optional one-line note."""
    if set(raw) != {"problem"}:
        raise PayloadError("payload", "a problem report takes no answer besides the problem")
    problem = raw["problem"]
    if not isinstance(problem, dict) or not set(problem) <= {"reason", "note"}:
        raise PayloadError("problem", "must be an object with a reason and an optional note")
    reason = problem.get("reason")
    if reason not in PROBLEM_REASONS:
        raise PayloadError("problem.reason", f"must be one of {', '.join(PROBLEM_REASONS)}")
    note = _line(problem.get("note", ""), "problem.note", allow_empty=True)
    if len(note) > MAX_PROBLEM_NOTE:
        raise PayloadError("problem.note", f"longer than {MAX_PROBLEM_NOTE} characters")
    # Stored in the shape it came in, so that it validates again (MTurk collection rebuilds
    # answers from the stored payloads the page sent to MTurk).
    return CleanPayload({"problem": {"reason": reason, "note": note}},
                        {"problem": reason, "problem_note": note})


def validate_payload(kind: str, raw: Any, context: ItemContext) -> CleanPayload:
    """The canonical payload and columns for ``raw``, or ``PayloadError``."""
    if not isinstance(raw, dict):
        raise PayloadError("payload", "must be an object")
    if "problem" in raw:
        return validate_problem(raw)
    try:
        validator = VALIDATORS[kind]
    except KeyError:
        raise PayloadError("kind", f"unknown task kind {kind!r}") from None
    return validator(raw, context)


def live_check_warnings(context: ItemContext, payload: dict, *,
                        overrides: dict | None = None) -> list[dict]:
    """The shared live checks (qc.livechecks) re-run on a clean payload, as {code, message},
    with the project's threshold ``overrides`` (``Project.live_check_settings``), as the page
    ran them."""
    rules_file = livechecks.rules_with(overrides)
    kind = context.kind
    if "problem" in payload:
        return []  # a problem report is not an answer: nothing to check
    if kind == TaskKind.REWRITE:
        warnings = livechecks.check("rewrite", {
            "question": context.question, "rewrite": payload["rewrite"],
            "context_words": list(context.context_words)}, rules_file=rules_file)
    elif kind == TaskKind.SLUICE:
        if payload["skipped"]:
            return []
        warnings = livechecks.check("sluice", {"q1": context.q1, "a1": context.a1,
                                               "q2": context.q2,
                                               "answer": payload["full_question"]},
                                    rules_file=rules_file)
    elif kind == TaskKind.SPLIT_REPHRASE:
        warnings = livechecks.check("split_rephrase", {
            "complex_sentence": context.sentence,
            "simple_sentences": payload["simple_sentences"]}, rules_file=rules_file)
    else:
        return []
    return [{"code": w.code, "message": w.message} for w in warnings]


#: Browser-reported warnings kept per submission, and the length kept of each code and message.
MAX_WARNINGS = 20
MAX_WARNING_CODE = 60
MAX_WARNING_MESSAGE = 500


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def clean_warnings(raw: Any) -> list[dict]:
    """Browser-reported warnings, normalised: a list of at most ``MAX_WARNINGS``
    ``{code, message}`` strings. Warnings never decide whether an answer is stored (they are
    advice the annotator saw; the server re-runs the checks itself), so nothing here refuses:
    a long message (a "words not in the conversation" list of 45 words) is cut to
    ``MAX_WARNING_MESSAGE`` characters ending in "\u2026", a long code to ``MAX_WARNING_CODE``;
    an entry that was cut carries ``"truncated": true``. Entries that are not objects and
    entries beyond the limit are left out, and one last entry ``{"code": "warnings_dropped",
    "message": "N more warnings not kept", "truncated": true}`` says how many; something that
    is not a list at all is recorded the same way (one entry dropped)."""
    if raw in (None, ""):
        return []
    entries = raw if isinstance(raw, list) else []
    cleaned: list[dict] = []
    dropped = 0 if isinstance(raw, list) else 1
    for warning in entries:
        if not isinstance(warning, dict) or len(cleaned) == MAX_WARNINGS:
            dropped += 1
            continue
        code, message = warning.get("code"), warning.get("message", "")
        entry = {"code": _cut(code, MAX_WARNING_CODE) if isinstance(code, str) and code
                 else "unknown",
                 "message": _cut(message, MAX_WARNING_MESSAGE) if isinstance(message, str)
                 else ""}
        if entry["code"] != code or entry["message"] != message:
            entry["truncated"] = True  # cut, or not a string: not what the browser sent
        cleaned.append(entry)
    if dropped:
        noun = "warning" if dropped == 1 else "warnings"
        cleaned.append({"code": "warnings_dropped", "message": f"{dropped} more {noun} not kept",
                        "truncated": True})
    return cleaned


def clean_client_time(raw: Any, *, now: datetime) -> datetime | None:
    """A browser-reported time (ISO 8601, e.g. ``started_at``), or None: absent, malformed,
    impossible (month 13), or outside ``[now - CLIENT_TIME_MAX_AGE, now + CLIENT_TIME_MAX_AHEAD]``.

    Such a time is ignored rather than refused, so a browser with a wrong clock never loses an
    answer; it is never stored, since an extreme one (year 1 at +14:00, year 9999 at -05:00)
    is a timestamp PostgreSQL keeps but Python cannot read back. A time without an offset is
    taken as UTC (browsers send ``toISOString()``, which ends in Z)."""
    if not isinstance(raw, str) or len(raw) > 64:
        return None
    try:
        value = parse_datetime(raw)
    except ValueError:
        return None
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if not now - CLIENT_TIME_MAX_AGE <= value <= now + CLIENT_TIME_MAX_AHEAD:
        return None
    return value.astimezone(UTC)
