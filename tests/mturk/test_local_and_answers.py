"""The local provider's contract and the QuestionFormAnswers parser."""

from __future__ import annotations

from decimal import Decimal

import pytest

from annotation.providers import HitTypeSpec, ProviderPermanentError, QualificationRequirementSpec
from annotation.providers.answers import parse_question_form_answers
from annotation.providers.local import LocalProvider

NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/"
    "QuestionFormAnswers.xsd"
)


def test_local_publish_is_idempotent_per_token():
    provider = LocalProvider()
    spec = HitTypeSpec("t", "d", Decimal("0"), 600)
    hit_type_id = provider.create_hit_type(spec)
    assert hit_type_id == provider.create_hit_type(HitTypeSpec("t", "d", Decimal("0"), 600))
    assert hit_type_id != provider.create_hit_type(HitTypeSpec("t2", "d", Decimal("0"), 600))
    first = provider.create_hit(hit_type_id=hit_type_id, question_xml="<x/>", max_assignments=5,
                                lifetime_seconds=60, unique_request_token="item-1")
    again = provider.create_hit(hit_type_id=hit_type_id, question_xml="<x/>", max_assignments=5,
                                lifetime_seconds=60, unique_request_token="item-1")
    other = provider.create_hit(hit_type_id=hit_type_id, question_xml="<x/>", max_assignments=5,
                                lifetime_seconds=60, unique_request_token="item-2")
    assert first.hit_id == again.hit_id != other.hit_id
    assert first.status == "Assignable" and first.assignments_available == 5


def test_local_collects_nothing_remotely_and_refuses_remote_questions():
    provider = LocalProvider()
    assert provider.collects_remotely is False
    assert provider.list_reviewable_hits() == []
    assert provider.list_assignments_for_hit("LOCALH1") == []
    with pytest.raises(ProviderPermanentError) as refused:
        provider.get_hit("LOCALH1")
    assert refused.value.code == "Local.NotApplicable"
    with pytest.raises(ProviderPermanentError):
        provider.get_account_balance()
    with pytest.raises(ValueError, match="message"):
        provider.reject_assignment("A1", message="")


def test_parse_free_text_and_selections():
    xml = (
        f'<QuestionFormAnswers xmlns="{NS}">'
        "<Answer><QuestionIdentifier>rewrite</QuestionIdentifier>"
        "<FreeText>Who is &lt;he&gt; &amp; why?</FreeText></Answer>"
        "<Answer><QuestionIdentifier>rating</QuestionIdentifier>"
        "<SelectionIdentifier>4</SelectionIdentifier></Answer>"
        "<Answer><QuestionIdentifier>tags</QuestionIdentifier>"
        "<SelectionIdentifier>BRIDGING</SelectionIdentifier>"
        "<SelectionIdentifier>NAME_COMPLETION</SelectionIdentifier></Answer>"
        "<Answer><QuestionIdentifier>empty</QuestionIdentifier><FreeText/></Answer>"
        "</QuestionFormAnswers>"
    )
    assert parse_question_form_answers(xml) == {
        "rewrite": "Who is <he> & why?",
        "rating": "4",
        "tags": ("BRIDGING", "NAME_COMPLETION"),
        "empty": "",
    }
    assert parse_question_form_answers("") == {}


@pytest.mark.parametrize(
    "bad",
    [
        "<QuestionFormAnswers>",
        "<Other/>",
        f'<QuestionFormAnswers xmlns="{NS}"><Answer/></QuestionFormAnswers>',
    ],
)
def test_malformed_answers_are_permanent_errors(bad):
    with pytest.raises(ProviderPermanentError) as raised:
        parse_question_form_answers(bad)
    assert raised.value.code == "MalformedAnswer"


def test_spec_validation():
    with pytest.raises(TypeError):
        HitTypeSpec("t", "d", 0.5, 600)  # floats lose cents
    with pytest.raises(ValueError, match="comparator"):
        QualificationRequirementSpec("X", "AtLeast")
    requirement = QualificationRequirementSpec.locale_in("US")
    assert requirement.to_mturk() == {
        "QualificationTypeId": "00000000000000000071",
        "Comparator": "In",
        "LocaleValues": [{"Country": "US"}],
    }
