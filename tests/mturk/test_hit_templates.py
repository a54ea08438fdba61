"""HIT templates: escaping, missing variables, and XML that parses."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pytest

from annotation.hit_templates import (
    PLAUSIBILITY_RATING_OPTIONS,
    QualificationQuestion,
    TemplateError,
    TemplateVariableMissing,
    TemplateVariableUnexpected,
    render_external_question,
    render_html_question,
    render_html_task_form,
    render_plausibility_qualification_test,
    render_qualification_test,
    render_template,
)

NASTY = 'Tom & Jerry <script>alert("x")</script> \'quoted\''


def _parse(xml: str) -> ElementTree.Element:
    return ElementTree.fromstring(xml)  # noqa: S314 - our own rendered templates


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element, name):
    return next(child for child in element if _local(child.tag) == name)


def test_external_question_escapes_the_url_and_parses():
    xml = render_external_question(url="https://unpack.test/t?a=1&b=<x>", frame_height=640)
    root = _parse(xml)
    assert _local(root.tag) == "ExternalQuestion"
    assert _child(root, "ExternalURL").text == "https://unpack.test/t?a=1&b=<x>"
    assert _child(root, "FrameHeight").text == "640"
    assert "&b=" not in xml and "&amp;b=&lt;x&gt;" in xml


def test_external_question_refuses_non_http_urls():
    with pytest.raises(TemplateError, match="http"):
        render_external_question(url="javascript:alert(1)")


def test_html_question_carries_the_page_exactly_and_escapes_item_text():
    page = render_html_task_form(
        title=NASTY, instructions="Rewrite & keep structure", item_text=NASTY,
        question="Your rewrite", field_name="rewrite",
    )
    assert "<script>alert" not in page  # dataset text is inert
    assert "Tom &amp; Jerry &lt;script&gt;" in page
    assert 'action="https://www.mturk.com/mturk/externalSubmit"' in page
    assert 'name="assignmentId"' in page and 'name="rewrite"' in page
    xml = render_html_question(html=page, frame_height=450)
    root = _parse(xml)
    assert _local(root.tag) == "HTMLQuestion"
    assert _child(root, "HTMLContent").text == page


def test_html_question_needs_a_submit_form():
    with pytest.raises(TemplateError, match="externalSubmit"):
        render_html_question(html="<p>no form</p>")


def test_missing_variable_names_template_and_variable():
    with pytest.raises(TemplateVariableMissing) as missing:
        render_template("external_question.xml", url="https://unpack.test/")
    assert missing.value.template == "external_question.xml"
    assert missing.value.variable == "frame_height"
    assert "frame_height" in str(missing.value) and "external_question.xml" in str(missing.value)


def test_none_counts_as_missing_and_unknown_variables_are_refused():
    with pytest.raises(TemplateVariableMissing, match="url"):
        render_template("external_question.xml", url=None, frame_height=0)
    with pytest.raises(TemplateVariableUnexpected, match="frame_hieght"):
        render_template("external_question.xml", url="https://u.test", frame_height=0,
                        frame_hieght=1)


def test_control_characters_are_refused_by_name():
    with pytest.raises(TemplateError, match="item_text"):
        render_html_task_form(title="t", instructions="i", item_text="bad\x00byte",
                              question="q", field_name="f")


def _questions(count: int) -> list[QualificationQuestion]:
    return [
        QualificationQuestion(
            identifier=f"case{number}",
            text=f"{NASTY} #{number}",
            options=PLAUSIBILITY_RATING_OPTIONS,
            accepted_answer="5" if number % 2 else "1",
        )
        for number in range(count)
    ]


@pytest.mark.parametrize(("split", "count"), [("train", 4), ("dev", 6), ("test", 6)])
def test_plausibility_test_and_answer_key_parse_and_agree(split, count):
    test = render_plausibility_qualification_test(split=split, questions=_questions(count))
    assert (test.question_count, test.passing_score) == (count, count)
    form = _parse(test.test_xml)
    key = _parse(test.answer_key_xml)
    assert _local(form.tag) == "QuestionForm" and _local(key.tag) == "AnswerKey"
    questions = [element for element in form if _local(element.tag) == "Question"]
    assert len(questions) == count
    assert _child(_child(questions[0], "QuestionContent"), "Text").text == f"{NASTY} #0"
    selections = questions[0].iter()
    assert sum(1 for element in selections if _local(element.tag) == "Selection") == 5
    accepted = {
        _child(question, "QuestionIdentifier").text: _child(
            _child(question, "AnswerOption"), "SelectionIdentifier"
        ).text
        for question in key
    }
    assert accepted == {f"case{n}": ("5" if n % 2 else "1") for n in range(count)}


def test_plausibility_test_question_counts_are_enforced():
    with pytest.raises(TemplateError, match="6 questions"):
        render_plausibility_qualification_test(split="dev", questions=_questions(4))
    with pytest.raises(TemplateError, match="split"):
        render_plausibility_qualification_test(split="val", questions=_questions(4))


def test_passing_score_is_configurable_and_bounded():
    test = render_qualification_test(
        title="t", instructions="i", questions=_questions(6), passing_score=5
    )
    assert test.passing_score == 5
    with pytest.raises(TemplateError, match="passing_score"):
        render_qualification_test(title="t", instructions="i", questions=_questions(2),
                                  passing_score=3)


def test_question_validation():
    with pytest.raises(TemplateError, match="1 to 5"):
        QualificationQuestion("q", "t", tuple((str(n), "x") for n in range(6)), "1")
    with pytest.raises(TemplateError, match="1 to 5"):
        QualificationQuestion("q", "t", (), "1")
    with pytest.raises(TemplateError, match="not one of its options"):
        QualificationQuestion("q", "t", (("a", "A"),), "b")
    single = QualificationQuestion("q", "t", (("a", "A"),), "a")
    assert single.accepted_answer == "a"
