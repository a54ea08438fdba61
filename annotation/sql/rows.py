"""The annotator hot path's SELECTs of model rows, and loading their rows as model instances.

Every annotator request reads a few rows (its user and Worker, the project, the item with its
source material). Written with the ORM, compiling those small SELECTs (joins, 20-40 columns,
converters) cost more CPU than running them, on every request. So the few hot SELECTs are
written once per database from the models' metadata (``user_with_worker_select``,
``project_by_slug_select``, ``items_select``), and their rows become the same instances the ORM
would build: every field through the ORM's own database converters, then ``Model.from_db``.
Tests compare each of them with its ORM twin. Only model metadata (table and column names) is
formatted into a statement; every value is a named parameter.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import connections
from django.db.models import Model

from ..models import Item, Project, Worker


@dataclass(frozen=True)
class Table:
    """How to read one model's concrete fields from a row (in field order)."""

    model: type[Model]
    alias: str
    fields: tuple  # concrete fields, in column order
    converters: tuple  # per field: the ORM's converters for this database
    parent_index: int | None = None  # in a join: the table whose foreign key points here
    parent_field: object | None = None  # that foreign key
    pk_index: int = 0  # where the primary key is among ``fields``
    attnames: tuple = ()  # the fields' attribute names, as Model.from_db takes them

    def columns(self, quote) -> str:
        return ", ".join(f"{self.alias}.{quote(field.column)}" for field in self.fields)


def table(model: type[Model], alias: str, connection, parent_index: int | None = None,
          parent_field=None) -> Table:
    fields = tuple(model._meta.concrete_fields)
    converters = []
    for field in fields:
        column = field.get_col(alias)
        converters.append(tuple(connection.ops.get_db_converters(column)
                                + column.get_db_converters(connection)))
    return Table(model, alias, fields, tuple(converters), parent_index, parent_field,
                 pk_index=fields.index(model._meta.pk),
                 attnames=tuple(field.attname for field in fields))


def instance(table: Table, values, using: str, connection) -> Model | None:
    """The instance of ``values`` (the table's columns); None for a LEFT JOIN that found no
    row (primary key NULL)."""
    if values[table.pk_index] is None:
        return None
    values = list(values)
    for index, converters in enumerate(table.converters):
        for converter in converters:
            values[index] = converter(values[index], table.fields[index], connection)
    return table.model.from_db(using, table.attnames, values)


@functools.cache
def user_with_worker_select(using: str) -> tuple[str, Table, Table]:
    """A user (``%(user_id)s``) LEFT JOIN their Worker: ``(sql, user table, worker table)``."""
    connection = connections[using]
    quote = connection.ops.quote_name
    user_model = get_user_model()
    user = table(user_model, "u", connection)
    worker = table(Worker, "w", connection)
    link = Worker._meta.get_field("user")
    sql = (f"SELECT {user.columns(quote)}, {worker.columns(quote)} "  # noqa: S608
           f"FROM {quote(user_model._meta.db_table)} u "
           f"LEFT OUTER JOIN {quote(Worker._meta.db_table)} w "
           f"ON w.{quote(link.column)} = u.{quote(user_model._meta.pk.column)} "
           f"WHERE u.{quote(user_model._meta.pk.column)} = %(user_id)s")
    return sql, user, worker


@functools.cache
def project_by_slug_select(using: str) -> tuple[str, Table]:
    """The project whose slug is ``%(slug)s``: ``(sql, table)``."""
    connection = connections[using]
    quote = connection.ops.quote_name
    project = table(Project, quote(Project._meta.db_table), connection)
    sql = (f"SELECT {project.columns(quote)} FROM {project.alias} "  # noqa: S608
           f"WHERE {project.alias}.{quote(Project._meta.get_field('slug').column)} = %(slug)s")
    return sql, project


#: The alias of the item table in ``items_select``'s ``where``.
ITEM_ALIAS = "item"
#: The alias of the project table in ``items_select(with_project=True)``.
PROJECT_ALIAS = "project"


@dataclass(frozen=True)
class ItemsSelect:
    sql: str  # SELECT … FROM the item table AS item LEFT JOIN … WHERE item.project_id = …AND
    tables: tuple[Table, ...]


@functools.cache
def items_select(source_paths: tuple[str, ...], using: str,
                 with_project: bool = False) -> ItemsSelect:
    """Items of project ``%(project_id)s`` with the source rows along ``source_paths`` (e.g.
    ``("turn__dialogue",)``) LEFT JOINed as select_related joins them; the caller appends its
    condition over the item table (aliased ``ITEM_ALIAS``) in parentheses.

    ``with_project``: the project's row too (its table second, joined as select_related
    joins ``project``), and the project named by ``%(slug)s`` and ``%(kind)s`` instead of
    ``%(project_id)s``: the submit reads its project and item in one statement."""
    connection = connections[using]
    quote = connection.ops.quote_name
    tables, joins = [], []

    def add(model, alias, parent_index=None, parent_field=None):
        tables.append(table(model, alias, connection, parent_index, parent_field))
        return len(tables) - 1

    add(Item, ITEM_ALIAS)
    project_field = Item._meta.get_field("project")
    if with_project:
        add(Project, PROJECT_ALIAS, 0, project_field)
        joins.append(f"INNER JOIN {quote(Project._meta.db_table)} {PROJECT_ALIAS} "
                     f"ON {PROJECT_ALIAS}.{quote(Project._meta.pk.column)} = "
                     f"{ITEM_ALIAS}.{quote(project_field.column)}")
    for path in source_paths:
        parent = 0
        for name in path.split("__"):
            field = tables[parent].model._meta.get_field(name)
            related = field.related_model
            alias = quote(f"source{len(tables)}")
            # LEFT JOIN as select_related does for a nullable foreign key.
            joins.append(f"LEFT OUTER JOIN {quote(related._meta.db_table)} {alias} "
                         f"ON {alias}.{quote(related._meta.pk.column)} = "
                         f"{tables[parent].alias}.{quote(field.column)}")
            parent = add(related, alias, parent, field)
    columns = ", ".join(each.columns(quote) for each in tables)
    if with_project:
        where = (f"{PROJECT_ALIAS}.{quote(Project._meta.get_field('slug').column)} = %(slug)s "
                 f"AND {PROJECT_ALIAS}.{quote(Project._meta.get_field('kind').column)} "
                 f"= %(kind)s AND")
    else:
        where = f"{ITEM_ALIAS}.{quote(project_field.column)} = %(project_id)s AND"
    sql = " ".join([f"SELECT {columns} FROM {quote(Item._meta.db_table)} {ITEM_ALIAS}",  # noqa: S608
                    *joins, f"WHERE {where}"])
    return ItemsSelect(sql, tuple(tables))
