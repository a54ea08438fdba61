"""Parse MTurk's QuestionFormAnswers XML (an assignment's ``Answer``) into a plain dict."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from .base import ProviderPermanentError


def _local_name(tag: str) -> str:
    """``{namespace}Name`` -> ``Name``: MTurk has used several schema versions in namespaces."""
    return tag.rsplit("}", 1)[-1]


def parse_question_form_answers(answer_xml: str) -> dict[str, str | tuple[str, ...]]:
    """Map each ``QuestionIdentifier`` to its answer.

    ``FreeText`` and a single ``SelectionIdentifier`` give a string; several selections give a
    tuple in document order; ``OtherSelectionText`` and ``UploadedFileKey`` give a string. An
    empty document (assignment not yet submitted) gives ``{}``. Malformed XML raises
    ``ProviderPermanentError`` naming the problem, since retrying cannot repair it.
    """
    if not answer_xml or not answer_xml.strip():
        return {}
    try:
        # expat >= 2.4.1 (Python 3.11) refuses entity bombs; no external entities are fetched.
        root = ElementTree.fromstring(answer_xml)  # noqa: S314
    except ElementTree.ParseError as error:
        raise ProviderPermanentError(
            f"assignment answer is not well-formed QuestionFormAnswers XML: {error}",
            code="MalformedAnswer",
        ) from error
    if _local_name(root.tag) != "QuestionFormAnswers":
        raise ProviderPermanentError(
            f"assignment answer root is <{_local_name(root.tag)}>, not <QuestionFormAnswers>",
            code="MalformedAnswer",
        )
    answers: dict[str, str | tuple[str, ...]] = {}
    for answer in root:
        if _local_name(answer.tag) != "Answer":
            continue
        identifier = ""
        selections: list[str] = []
        text_value: str | None = None
        for part in answer:
            name = _local_name(part.tag)
            value = part.text or ""
            if name == "QuestionIdentifier":
                identifier = value.strip()
            elif name == "SelectionIdentifier":
                selections.append(value)
            elif name in {"FreeText", "OtherSelectionText", "UploadedFileKey"}:
                text_value = value
        if not identifier:
            raise ProviderPermanentError(
                "an <Answer> in the assignment has no <QuestionIdentifier>",
                code="MalformedAnswer",
            )
        if text_value is not None:
            answers[identifier] = text_value
        elif len(selections) == 1:
            answers[identifier] = selections[0]
        elif selections:
            answers[identifier] = tuple(selections)
        else:
            answers[identifier] = ""
    return answers
