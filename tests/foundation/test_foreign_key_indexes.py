"""Every foreign key of the tables the annotators write is the first column of some index: a
lookup or a cascade by it never scans the table. The single-column indexes Django would add are
left out where a composite index already leads with the column (migration 0016): each index
is one more insertion per submit."""

import pytest
from django.db import connection

from annotation.models import Annotation, Item, ItemLease

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", [Annotation, Item, ItemLease])
def test_every_foreign_key_leads_an_index(model):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, model._meta.db_table)
    leading = {details["columns"][0] for details in constraints.values()
               if (details["index"] or details["unique"]) and details["columns"]}
    foreign_keys = [field.column for field in model._meta.concrete_fields
                    if field.is_relation]
    assert foreign_keys and not [column for column in foreign_keys if column not in leading]


def test_no_single_column_index_repeats_a_composite_ones_lead():
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor,
                                                               Annotation._meta.db_table)
    composite_leads = {details["columns"][0] for details in constraints.values()
                       if details["index"] and len(details["columns"]) > 1}
    single = {details["columns"][0] for details in constraints.values()
              if details["index"] and not details["unique"] and len(details["columns"]) == 1
              and not details.get("primary_key")}
    # assignment_id stays single: its composite (worker, item, assignment) does not lead with it.
    assert single & composite_leads == set()
    assert {"item_id", "project_id", "worker_id"} <= composite_leads
