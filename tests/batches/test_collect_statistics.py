"""A collection that grew the annotation table refreshes its planner statistics
(annotation/services/statistics.py; PostgreSQL only)."""

from __future__ import annotations

import pytest

from annotation.models import Annotation
from annotation.services import statistics
from annotation.services.batches import collect
from tests.factories import batch_plausibility_project, launched_batch, submitted_assignment
from tests.foundation.test_planner_statistics import analyze_count, postgres_only


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_collection_that_grew_the_annotations_analyzes_them(
        fake, simulator, django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr(statistics, "MIN_CHANGED_ROWS", 20)  # 28 answers count as big here
    batch = launched_batch(batch_plausibility_project(items=7), django_capture_on_commit_callbacks)
    statistics.planner_statistics_refresh()
    for number, hit in enumerate(batch.hits.order_by("pk")):
        for worker in range(4):
            submitted_assignment(simulator, hit, f"AS{number}X{worker}")
    before = analyze_count(Annotation)
    assert collect.batch_collect(batch_id=batch.pk).annotations_created == 28
    assert analyze_count(Annotation) == before + 1
