"""The submit's statements (``services.annotations``): what the submit decides on, read after
the Item row lock, and the one INSERT that stores a local answer when a slot is open.

Only model metadata (table and column names) is formatted in; every value is a named
parameter.
"""

from __future__ import annotations

import functools

from django.db import connections

from ..models import Annotation, Assignment, Item, ItemLease

ANNOTATION_TABLE = Annotation._meta.db_table
ITEM_TABLE = Item._meta.db_table
ASSIGNMENT_TABLE = Assignment._meta.db_table
LEASE_TABLE = ItemLease._meta.db_table

# Everything the submit decides on, in ONE indexed statement (client_token is unique; item_id is
# indexed): the annotation holding this token and its worker, this worker's own answer to the
# item (in this assignment, or outside any), and the slots the item's other counted annotations
# fill. Run after the row lock.
_SUBMIT_STATE = f"""
SELECT MAX(CASE WHEN a.client_token = %(token)s THEN a.id END),
       MAX(CASE WHEN a.client_token = %(token)s THEN a.worker_id END),
       MAX(CASE WHEN a.item_id = %(item_id)s AND a.worker_id = %(worker_id)s
                     AND {{same_assignment}} THEN a.id END),
       COALESCE(SUM(CASE WHEN a.item_id = %(item_id)s AND a.state = %(counted)s
                              AND a.worker_id <> %(worker_id)s
                         THEN 1 ELSE 0 END), 0)
FROM {ANNOTATION_TABLE} a
WHERE a.client_token = %(token)s OR a.item_id = %(item_id)s
"""  # noqa: S608
SUBMIT_STATE = _SUBMIT_STATE.format(same_assignment="a.assignment_id IS NULL")
SUBMIT_STATE_IN_ASSIGNMENT = _SUBMIT_STATE.format(
    same_assignment="a.assignment_id = %(assignment_id)s")

#: The status of assignment ``%(assignment_id)s``; ``FOR SHARE`` appended on PostgreSQL.
ASSIGNMENT_STATUS = f"SELECT status FROM {ASSIGNMENT_TABLE} WHERE id = %(assignment_id)s"  # noqa: S608
#: Lock item ``%(item_id)s`` until the transaction ends (databases with row locks).
LOCK_ITEM = f"SELECT id FROM {ITEM_TABLE} WHERE id = %(item_id)s FOR UPDATE"  # noqa: S608

# INSERT … SELECT … WHERE: the new local answer is stored only if, read after the Item row lock
# (so exactly), its token is not stored yet, the worker has no local answer to the item, and
# fewer than ``required`` of the item's slots are filled by others' counted annotations -- what
# SUBMIT_STATE would establish. An adaptive item's stored target (``Item.target_answers``) is
# read by the statement itself, so that it is the one current under the lock (SQLite reads the
# item before its transaction). No row: the caller finds out why with SUBMIT_STATE.
# ``served_at`` is when the work queue handed the item to the worker (their lease's), read by
# the same statement; it is returned with the new primary key.
_OTHERS_COUNTED = """(SELECT COUNT(*) FROM {table} a WHERE a.item_id = %(item_id)s
       AND a.state = %(counted)s AND a.worker_id <> %(worker_id)s)"""
_INSERT_IF_OPEN = f"""INSERT INTO {{table}} ({{columns}}) SELECT {{values}}
WHERE NOT EXISTS (SELECT 1 FROM {{table}} t WHERE t.client_token = %(token)s)
  AND NOT EXISTS (SELECT 1 FROM {{table}} o WHERE o.item_id = %(item_id)s
                  AND o.worker_id = %(worker_id)s AND o.assignment_id IS NULL)
  AND {_OTHERS_COUNTED} < COALESCE((SELECT it.target_answers FROM {{item_table}} it
                                    WHERE it.id = %(item_id)s), %(required)s)
RETURNING {{pk}}, {{served_at}}"""  # noqa: S608
# PostgreSQL, for a counted answer: the same INSERT, and in the same statement the item's
# ``filled`` mark when this answer fills its last slot (the sub-statements share one snapshot,
# in which the new row is not visible yet: others' counted answers + 1).
_INSERT_IF_OPEN_AND_MARK = f"""WITH stored AS ({_INSERT_IF_OPEN}),
marked AS (UPDATE {{item_table}} SET filled = TRUE WHERE id = %(item_id)s
  AND EXISTS (SELECT 1 FROM stored) AND {_OTHERS_COUNTED} + 1 >= %(required)s)
SELECT * FROM stored"""  # noqa: S608
_SERVED_AT = f"""(SELECT l.served_at FROM {LEASE_TABLE} l
  WHERE l.item_id = %(item_id)s AND l.worker_id = %(worker_id)s)"""  # noqa: S608

#: Mark item ``%(item_id)s`` filled if its counted answers (``%(counted)s``; the caller's own
#: new one included) fill its ``%(required)s`` slots. Run under the Item row lock, after the
#: INSERT of a counted answer (``annotation.services.annotations``, "Filled items").
MARK_FILLED = f"""UPDATE {ITEM_TABLE} SET filled = TRUE WHERE id = %(item_id)s AND NOT filled
  AND (SELECT COUNT(*) FROM {ANNOTATION_TABLE} a WHERE a.item_id = %(item_id)s
       AND a.state = %(counted)s) >= %(required)s"""  # noqa: S608


@functools.cache
def insert_if_open(using: str, *, mark_filled: bool = False) -> tuple[tuple, str, tuple]:
    """The fields ``_INSERT_IF_OPEN`` writes (every concrete field but the primary key; their
    values are the parameters ``f0``, ``f1``, …, but ``served_at``'s: the lease's, read by the
    statement), the statement, for database ``using``, and the ORM's converters of the
    ``served_at`` it returns (each ``(value, expression, connection)``, with that field's
    column as the expression). ``mark_filled`` (PostgreSQL only; the answer is a counted
    one): the statement also marks the item filled when the answer takes its last slot."""
    meta = Annotation._meta
    connection = connections[using]
    quote = connection.ops.quote_name
    fields = tuple(field for field in meta.concrete_fields if not field.primary_key)
    values = [f"%(f{index})s" for index in range(len(fields))]
    served = fields.index(meta.get_field("served_at"))
    values[served] = _SERVED_AT
    column = meta.get_field("served_at").get_col(meta.db_table)
    converters = tuple((converter, column) for converter in
                       connection.ops.get_db_converters(column)
                       + column.get_db_converters(connection))
    template = _INSERT_IF_OPEN_AND_MARK if mark_filled else _INSERT_IF_OPEN
    return fields, template.format(
        table=quote(meta.db_table), columns=", ".join(quote(f.column) for f in fields),
        values=", ".join(values), pk=quote(meta.pk.column),
        served_at=quote(column.target.column), item_table=quote(ITEM_TABLE)), converters
