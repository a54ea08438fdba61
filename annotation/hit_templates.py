"""Render the MTurk XML/HTML templates in ``hit_templates/``.

Templates use ``${name}`` placeholders. Every value is XML-escaped (``&``, ``<``, ``>``, ``"``,
``'``; the same escaping is correct HTML), so dataset text and titles can never break the XML or
inject markup. Only ``TrustedMarkup`` -- produced by this module from its own templates -- is
inserted as is. A placeholder without a value raises ``TemplateVariableMissing`` naming the
template and the variable (nothing ever renders as an empty string by accident); a value for no
placeholder raises ``TemplateVariableUnexpected``, which catches typos.

Public API:

* ``render_external_question(url=..., frame_height=...)`` -- an ExternalQuestion pointing at our
  task page; MTurk appends ``assignmentId``, ``hitId``, ``workerId`` and ``turkSubmitTo``.
* ``render_html_task_form(...)`` + ``render_html_question(html=..., frame_height=...)`` -- a
  self-contained HTMLQuestion whose form posts to MTurk's ``/mturk/externalSubmit``.
* ``render_qualification_test(...)`` -> ``QualificationTest`` (QuestionForm test + AnswerKey,
  score = number of correct answers) and ``render_plausibility_qualification_test(split, ...)``
  for the SemEval-2022 Task 7 test (4 questions for train, 6 for dev/test).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "hit_templates"
PLACEHOLDER_PATTERN = re.compile(r"\$\{([a-z_][a-z0-9_]*)\}")
# Characters XML 1.0 forbids even when escaped (C0 controls other than tab, LF, CR).
FORBIDDEN_XML_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
MAX_SELECTIONS_PER_QUESTION = 5
PLAUSIBILITY_QUESTIONS_PER_SPLIT = {"train": 4, "dev": 6, "test": 6}


class TemplateError(ValueError):
    """A template could not be rendered; the message names the template and the cause."""


class TemplateVariableMissing(TemplateError):
    def __init__(self, template: str, variable: str) -> None:
        super().__init__(f"template {template!r} needs a value for {variable!r}")
        self.template = template
        self.variable = variable


class TemplateVariableUnexpected(TemplateError):
    def __init__(self, template: str, variables: Sequence[str]) -> None:
        super().__init__(
            f"template {template!r} has no placeholder for {', '.join(sorted(variables))}"
        )
        self.template = template
        self.variables = tuple(variables)


class TrustedMarkup(str):
    """Markup rendered by this module from its own templates; inserted without escaping."""


def escape_xml(value: str) -> str:
    """Escape text for XML element content and attribute values (also valid HTML escaping)."""
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


@lru_cache(maxsize=32)
def _load(template_name: str) -> str:
    path = TEMPLATE_DIR / template_name
    if not path.is_file():
        raise TemplateError(f"template {template_name!r} not found in {TEMPLATE_DIR}")
    return path.read_text(encoding="utf-8")


def render_template(template_name: str, **values: object) -> TrustedMarkup:
    """Fill ``${name}`` placeholders of ``hit_templates/<template_name>`` with escaped values.

    Values may be ``str``, ``int`` or ``TrustedMarkup``; ``None`` counts as missing. Text holding
    characters XML cannot carry (e.g. NUL) raises ``TemplateError`` naming the variable.
    """
    source = _load(template_name)
    placeholders = set(PLACEHOLDER_PATTERN.findall(source))
    unexpected = set(values) - placeholders
    if unexpected:
        raise TemplateVariableUnexpected(template_name, sorted(unexpected))
    rendered_values: dict[str, str] = {}
    for name in placeholders:
        value = values.get(name)
        if value is None:
            raise TemplateVariableMissing(template_name, name)
        if isinstance(value, TrustedMarkup):
            rendered_values[name] = value
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise TemplateError(
                f"template {template_name!r}: {name!r} must be text or an integer, "
                f"not {type(value).__name__}"
            )
        text = str(value)
        if FORBIDDEN_XML_CHARACTERS.search(text):
            raise TemplateError(
                f"template {template_name!r}: {name!r} contains a control character XML "
                "cannot carry"
            )
        rendered_values[name] = escape_xml(text)
    return TrustedMarkup(
        PLACEHOLDER_PATTERN.sub(lambda match: rendered_values[match.group(1)], source)
    )


def render_external_question(*, url: str, frame_height: int = 0) -> TrustedMarkup:
    """An ExternalQuestion showing ``url`` in a frame ``frame_height`` pixels high (0 = full).

    Real MTurk requires an ``https://`` URL; ``http://`` is accepted here for local stand-ins.
    """
    if not url.startswith(("https://", "http://")):
        raise TemplateError(f"external_question.xml: url must be http(s), not {url!r}")
    if frame_height < 0:
        raise TemplateError("external_question.xml: frame_height must be >= 0")
    return render_template("external_question.xml", url=url, frame_height=frame_height)


def render_html_task_form(
    *, title: str, instructions: str, item_text: str, question: str, field_name: str
) -> TrustedMarkup:
    """A self-contained HTML page whose form posts ``field_name`` to MTurk's externalSubmit."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", field_name):
        raise TemplateError(f"html_task_form.html: field_name {field_name!r} is not a form name")
    return render_template(
        "html_task_form.html",
        title=title,
        instructions=instructions,
        item_text=item_text,
        question=question,
        field_name=field_name,
    )


def render_html_question(*, html: str, frame_height: int = 0) -> TrustedMarkup:
    """An HTMLQuestion carrying ``html`` (a whole page, e.g. ``render_html_task_form``).

    The page travels as escaped XML text, so MTurk hands the worker exactly ``html``.
    """
    if "<form" not in html or "externalSubmit" not in html:
        raise TemplateError("html_question.xml: the HTML needs a form posting to externalSubmit")
    # Escape the page even when it is TrustedMarkup: here it is content, not structure.
    return render_template("html_question.xml", html=str(html), frame_height=frame_height)


@dataclass(frozen=True)
class QualificationQuestion:
    """One multiple-choice question of a qualification test.

    ``options`` are ``(selection_id, text)`` pairs (1 to 5); ``accepted_answer`` is the
    selection_id that scores one point.
    """

    identifier: str
    text: str
    options: tuple[tuple[str, str], ...]
    accepted_answer: str

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.identifier):
            raise TemplateError(f"question identifier {self.identifier!r} is not a plain id")
        if not 1 <= len(self.options) <= MAX_SELECTIONS_PER_QUESTION:
            raise TemplateError(
                f"question {self.identifier!r} has {len(self.options)} options; "
                f"expected 1 to {MAX_SELECTIONS_PER_QUESTION}"
            )
        option_ids = [option_id for option_id, _ in self.options]
        if len(set(option_ids)) != len(option_ids):
            raise TemplateError(f"question {self.identifier!r} repeats an option id")
        if self.accepted_answer not in option_ids:
            raise TemplateError(
                f"question {self.identifier!r}: accepted answer {self.accepted_answer!r} is not "
                f"one of its options {option_ids}"
            )


@dataclass(frozen=True)
class QualificationTest:
    """A rendered qualification test ready for ``create_qualification_type``.

    A worker's qualification value is their number of correct answers (the AnswerKey scores 1
    per correct answer and has no value mapping); require ``passing_score`` on HITs with
    ``QualificationRequirementSpec.score_at_least(type_id, test.passing_score)``.
    """

    test_xml: str
    answer_key_xml: str
    question_count: int
    passing_score: int


def render_qualification_test(
    *,
    title: str,
    instructions: str,
    questions: Sequence[QualificationQuestion],
    passing_score: int,
) -> QualificationTest:
    """A QuestionForm test and its AnswerKey from ``questions``."""
    if not questions:
        raise TemplateError("a qualification test needs at least one question")
    identifiers = [question.identifier for question in questions]
    if len(set(identifiers)) != len(identifiers):
        raise TemplateError(f"question identifiers repeat: {identifiers}")
    if not 1 <= passing_score <= len(questions):
        raise TemplateError(
            f"passing_score {passing_score} must be between 1 and {len(questions)}"
        )
    rendered_questions = []
    rendered_keys = []
    for number, question in enumerate(questions, start=1):
        selections = "".join(
            render_template("qualification_selection.xml", identifier=option_id, text=text)
            for option_id, text in question.options
        )
        rendered_questions.append(
            render_template(
                "qualification_question.xml",
                identifier=question.identifier,
                display_name=f"Question {number}",
                text=question.text,
                selections=TrustedMarkup(selections),
            )
        )
        rendered_keys.append(
            render_template(
                "answer_key_question.xml",
                identifier=question.identifier,
                accepted_answer=question.accepted_answer,
            )
        )
    test_xml = render_template(
        "qualification_test.xml",
        title=title,
        instructions=instructions,
        questions=TrustedMarkup("".join(rendered_questions)),
    )
    answer_key_xml = render_template(
        "answer_key.xml", questions=TrustedMarkup("".join(rendered_keys))
    )
    return QualificationTest(
        test_xml=test_xml,
        answer_key_xml=answer_key_xml,
        question_count=len(questions),
        passing_score=passing_score,
    )


PLAUSIBILITY_RATING_OPTIONS = (
    ("1", "1 - very implausible"),
    ("2", "2 - implausible"),
    ("3", "3 - neutral"),
    ("4", "4 - plausible"),
    ("5", "5 - very plausible"),
)


def render_plausibility_qualification_test(
    *,
    split: str,
    questions: Sequence[QualificationQuestion],
    passing_score: int | None = None,
    title: str = "Qualification: how plausible is the filler?",
    instructions: str = (
        "Each question shows a sentence from a how-to guide with one filler in the gap. "
        "Rate how plausible the filler is in its context, from 1 (very implausible) to "
        "5 (very plausible)."
    ),
) -> QualificationTest:
    """The SemEval-2022 Task 7 test: clearly (im)plausible cases the researchers agreed on.

    The paper uses 4 questions for train batches and 6 for dev/test batches; ``questions`` must
    have that many. ``passing_score`` defaults to all answers correct.
    """
    if split not in PLAUSIBILITY_QUESTIONS_PER_SPLIT:
        raise TemplateError(
            f"split {split!r} is not one of {sorted(PLAUSIBILITY_QUESTIONS_PER_SPLIT)}"
        )
    expected = PLAUSIBILITY_QUESTIONS_PER_SPLIT[split]
    if len(questions) != expected:
        raise TemplateError(
            f"the {split} plausibility test has {expected} questions, got {len(questions)}"
        )
    return render_qualification_test(
        title=title,
        instructions=instructions,
        questions=questions,
        passing_score=expected if passing_score is None else passing_score,
    )
