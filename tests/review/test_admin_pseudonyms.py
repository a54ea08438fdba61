"""Issue 24, point 6: the admin shows and searches the pseudonym every staff page shows."""

from __future__ import annotations

import pytest

from annotation.models import Annotation, Worker
from tests.factories import sluice_project

pytestmark = pytest.mark.django_db


def test_the_admin_finds_a_worker_and_their_answers_by_pseudonym(staff_client):
    project = sluice_project(items=1)
    wanted = Worker.objects.create(provider="mturk", external_id="AWANTEDWORKER1")
    other = Worker.objects.create(provider="mturk", external_id="AOTHERWORKER22")
    for worker in (wanted, other):
        Annotation.objects.create(project=project, item=project.items.get(), worker=worker,
                                  source="import", text=f"answer of {worker.external_id}",
                                  payload={"full_question": "Why?", "skipped": False})
    workers = staff_client.get("/admin/annotation/worker/",
                               {"q": wanted.anonymous_id}).content.decode()
    assert wanted.anonymous_id in workers and "AWANTEDWORKER1" in workers
    assert "AOTHERWORKER22" not in workers
    answers = staff_client.get("/admin/annotation/annotation/",
                               {"q": wanted.anonymous_id}).content.decode()
    assert "1 result" in answers
    assert staff_client.get("/admin/annotation/worker/",
                            {"q": "AOTHERWORKER22"}).content.decode().count(
                                other.anonymous_id) >= 1
