"""Services whose id lists grow with the project send statements of bounded size (issue 21).

PostgreSQL refuses a statement with more than 65,535 parameters; ``make_splits`` on a
200,000-item project moved ~70,000 items in one ``id__in`` and crashed. These tests run
``make_splits`` and the bulk decisions past that size (rows built with one INSERT … SELECT,
so they stay fast), and check the chunking helper every such service uses.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Count

from annotation.models import Annotation, Item, Project
from annotation.services import decisions
from annotation.services.batching import ID_CHUNK, chunks
from annotation.services.splits import project_split
from tests.factories import ProjectFactory, workers

pytestmark = pytest.mark.django_db

PAST_THE_LIMIT = 70_000  # > 65,535: one statement with an id each would be refused


def test_chunks_cut_any_iterable_in_order():
    assert list(chunks(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(chunks([], 3)) == []
    assert ID_CHUNK < 32_766  # SQLite's limit, the lower of the two
    with pytest.raises(ValueError):
        list(chunks([1], 0))


def _many_items(project: Project, n: int, split: str) -> None:
    """``n`` CLAIRE items of the project, one per group, in one statement per table."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO annotation_clozeitem (project_id, external_id, resolved_pattern, "
            "article_title, section_header, previous_context, sentence, followup_context) "
            "SELECT %s, 'c' || k, 'p', 't', '', '', 's ______', '' "
            "FROM generate_series(1, %s) k", [project.pk, n])
        cursor.execute(
            "INSERT INTO annotation_clozefiller (cloze_id, position, text) "
            "SELECT id, 1, 'f' FROM annotation_clozeitem WHERE project_id = %s", [project.pk])
        # Without statistics the planner takes both new tables for a row each and joins them
        # in a nested loop: n² comparisons, minutes at 90,000 rows.
        cursor.execute("ANALYZE annotation_clozeitem, annotation_clozefiller")
        cursor.execute(
            "INSERT INTO annotation_item (project_id, external_id, split, group_key, position, "
            "is_gold, created_at, filled, filler_id) SELECT c.project_id, c.external_id, %s, "
            "c.external_id, 0, false, now(), false, f.id FROM annotation_clozefiller f "
            "JOIN annotation_clozeitem c ON c.id = f.cloze_id WHERE c.project_id = %s",
            [split, project.pk])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's parameter limit")
def test_make_splits_moves_more_items_than_a_statement_takes_parameters():
    project = ProjectFactory(slug="huge-split", kind="plausibility")
    # 90,000 items all in test: the group split moves the ~90% it puts in train and dev
    _many_items(project, 90_000, "test")
    item = Item.objects.filter(project=project).order_by("pk").first()
    Annotation.objects.create(project=project, item=item, worker=workers(1)[0], source="local",
                              rating=3)
    result = project_split(project=project, rule="group", seed=1, force=True)
    assert result.moved_items > PAST_THE_LIMIT
    counts = dict(Item.objects.filter(project=project).values("split")
                  .annotate(n=Count("pk")).values_list("split", "n"))
    assert counts == result.counts and sum(counts.values()) == 90_000
    assert 90_000 - counts["test"] == result.moved_items


def test_bulk_approval_checks_more_ids_than_a_statement_takes_parameters():
    missing = range(10_000_000, 10_000_000 + PAST_THE_LIMIT)
    with pytest.raises(ValidationError) as refused:
        decisions.assignments_approve(assignment_ids=missing)
    assert "no assignment [10000000" in str(refused.value)
    assert decisions.assignments_sync_decisions(assignment_ids=missing) == 0
