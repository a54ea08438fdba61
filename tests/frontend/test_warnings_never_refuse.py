"""Warnings never decide whether an answer is stored (issue 22, point 3): browser-reported
warnings are normalised (long ones cut and marked ``truncated``, extra or malformed ones counted
in a last ``warnings_dropped`` entry), and a refused answer's message says what to do."""

import pytest

from annotation.models import Annotation
from annotation.payloads import MAX_WARNING_MESSAGE, MAX_WARNINGS, clean_warnings
from tests.factories import local_submit, sluice_project


def test_clean_warnings_cuts_and_records_instead_of_refusing():
    long = {"code": "rewrite_new_words", "message": "w" * 700}
    assert clean_warnings(None) == [] and clean_warnings("") == []
    [cut] = clean_warnings([long])
    assert cut["truncated"] is True and len(cut["message"]) == MAX_WARNING_MESSAGE
    assert cut["message"].endswith("\u2026")
    many = clean_warnings([{"code": "c", "message": "m"}] * 25 + ["junk"])
    assert len(many) == MAX_WARNINGS + 1
    assert many[-1] == {"code": "warnings_dropped", "message": "6 more warnings not kept",
                        "truncated": True}
    assert clean_warnings({"code": "x"}) == [
        {"code": "warnings_dropped", "message": "1 more warning not kept", "truncated": True}]
    assert clean_warnings([{"code": 5, "message": 7}]) == [
        {"code": "unknown", "message": "", "truncated": True}]
    assert clean_warnings([{"code": "ok", "message": "fine"}]) == [
        {"code": "ok", "message": "fine"}]


@pytest.mark.django_db
def test_long_warnings_never_refuse_an_answer(annotator_client):
    project = sluice_project()
    item = project.items.get()
    warnings = [{"code": "sluice_too_short", "message": "x" * 900}] * 30
    response = local_submit(annotator_client, project, item.pk,
                            {"full_question": "Why did he leave the band?", "skipped": False},
                            client_warnings=warnings, overridden_warnings=warnings)
    assert response.status_code == 200 and response.json()["status"] == "saved"
    stored = Annotation.objects.get()
    assert len(stored.overridden_warnings) == MAX_WARNINGS + 1
    assert all(w["truncated"] for w in stored.client_warnings)


@pytest.mark.django_db
def test_a_refused_answer_says_what_to_do(annotator_client):
    project = sluice_project()
    item = project.items.get()
    response = local_submit(annotator_client, project, item.pk,
                            {"full_question": "Why " * 600, "skipped": False})
    assert response.status_code == 400
    message = response.json()["message"]
    assert "full_question: longer than 2000 characters" in message
    assert message.endswith("Change your answer and save again.")
    bad_token = local_submit(annotator_client, project, item.pk,
                             {"full_question": "Why?", "skipped": False}, token="short")
    assert bad_token.json()["message"].endswith("Reload the page and save again.")
    assert Annotation.objects.count() == 0
