"""The hot-path item loader (``annotate_selectors.load_items``) returns what the ORM query it
replaces (``page_items_queryset``) returns, for every task kind: every field of the item and of
each joined source row, converted to the same Python values, with the related rows cached (no
query when a page or a validator follows them)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Item, Project
from annotation.selectors.annotate import (
    ITEM_ALIAS,
    SOURCE_RELATIONS,
    item_context,
    item_page_data,
    items_for_page,
    load_items,
    page_items_queryset,
    project_and_item_for_submit,
    project_by_slug,
)
from tests.factories import BUILDERS

pytestmark = pytest.mark.django_db


def field_values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname)
            for field in instance._meta.concrete_fields}


def source_chain(item, path: str) -> list:
    rows, current = [], item
    for name in path.split("__"):
        current = getattr(current, name)
        rows.append(current)
    return rows


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_loader_matches_the_orm_query_for_every_kind(kind):
    project = BUILDERS[kind]()
    Item.objects.filter(project=project).update(is_gold=True, gold_answer={"rating": 3})
    expected = list(page_items_queryset(project).order_by("id"))
    loaded = load_items(project=project, where="1 = 1", params={})
    assert [item.pk for item in loaded] == [item.pk for item in expected] and loaded
    for mine, theirs in zip(loaded, expected, strict=True):
        assert field_values(mine) == field_values(theirs)
        assert mine.project is project
        with CaptureQueriesContext(connection) as queries:
            for path in SOURCE_RELATIONS[kind]:
                for row, reference in zip(source_chain(mine, path), source_chain(theirs, path),
                                          strict=True):
                    assert type(row) is type(reference)
                    assert field_values(row) == field_values(reference)
                    assert not row._state.adding and row._state.db == "default"
            page = item_page_data(mine)
            context = item_context(mine)
        assert queries.captured_queries == []  # joined (and turns prefetched), not lazy
        theirs.project = project
        assert page == item_page_data(theirs) and context == item_context(theirs)


def test_loader_keeps_only_the_projects_items_and_takes_values_as_parameters():
    project = BUILDERS["plausibility"]("mine", items=3)
    other = BUILDERS["plausibility"]("theirs", items=2)
    ids = list(project.items.order_by("id").values_list("id", flat=True))
    foreign = other.items.first().pk
    assert [i.pk for i in items_for_page(project=project, item_ids=[ids[2], foreign, ids[0]])
            ] == [ids[2], ids[0]]
    assert load_items(project=project, where=f"{ITEM_ALIAS}.external_id = %(external_id)s",
                      params={"external_id": "p1'; DROP TABLE annotation_item; --"}) == []
    assert Item.objects.count() == 5


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_project_and_item_for_submit_match_the_orm_in_one_statement(kind):
    project = BUILDERS[kind]()
    item = page_items_queryset(project).order_by("id").first()
    assert project_by_slug(project.slug) is not None  # the process learns the project's kind
    with CaptureQueriesContext(connection) as queries:
        loaded_project, loaded = project_and_item_for_submit(project_slug=project.slug,
                                                             item_id=item.pk)
    turns = 1 if kind in ("rewrite", "sluice") else 0
    assert len(queries.captured_queries) == 1 + turns
    assert field_values(loaded_project) == field_values(Project.objects.get(pk=project.pk))
    assert loaded.project is loaded_project and field_values(loaded) == field_values(item)
    with CaptureQueriesContext(connection) as queries:
        for path in SOURCE_RELATIONS[kind]:
            for row, reference in zip(source_chain(loaded, path), source_chain(item, path),
                                      strict=True):
                assert field_values(row) == field_values(reference)
        context = item_context(loaded)
    assert queries.captured_queries == []
    item.project = project
    assert context == item_context(item)


def test_project_and_item_for_submit_read_the_project_first_when_its_kind_is_unknown_or_stale():
    old = BUILDERS["plausibility"]("reused", items=1)
    project_by_slug("reused")  # learnt: plausibility
    old.delete()
    new = BUILDERS["sluice"]("reused", items=1)
    item = new.items.get()
    # The statement for the learnt kind finds nothing (the kind is checked); the project is
    # then read by itself, and the kind learnt again.
    loaded_project, loaded = project_and_item_for_submit(project_slug="reused", item_id=item.pk)
    assert loaded_project.pk == new.pk and loaded.pk == item.pk
    assert item_context(loaded).q2 == item_context(items_for_page(project=new,
                                                                  item_ids=[item.pk])[0]).q2
    with CaptureQueriesContext(connection) as queries:
        assert project_and_item_for_submit(project_slug="reused", item_id=item.pk)[1] == item
    assert len(queries.captured_queries) == 2  # one statement, and the dialogue's turns
    other = BUILDERS["sluice"]("other", items=1).items.get()
    assert project_and_item_for_submit(project_slug="reused", item_id=other.pk) == (
        loaded_project, None)
    assert project_and_item_for_submit(project_slug="nope", item_id=item.pk) == (None, None)
    assert project_and_item_for_submit(project_slug="reused' OR '1'='1",
                                       item_id=item.pk) == (None, None)
