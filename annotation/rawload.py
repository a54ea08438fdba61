"""Loading model instances from hand-written SELECTs on the annotator hot path.

Every annotator request reads a few rows (its user and Worker, the project, the item with its
source material). Written with the ORM, compiling those small SELECTs (joins, 20-40 columns,
converters) cost more CPU than running them, on every request. So the few hot SELECTs are
written once from the models' metadata, and their rows become the same instances the ORM would
build: every field through the ORM's own database converters, then ``Model.from_db``.
Tests compare each of them with its ORM twin.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Model


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
