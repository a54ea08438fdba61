from django.db import migrations, models

# The columns are added by ALTER TABLE … ADD COLUMN with a database default: Django's own
# AddField of a NOT NULL column rebuilds the table on SQLite (copy, drop, rename), which the
# ProjectCount triggers of 0023_h21_pages (they name the project table) forbid. The default
# left in the database is the model's own; Django always writes both columns.
COLUMNS = {
    "sqlite": ("real", "bool", "0"),
    "postgresql": ("double precision", "boolean", "false"),
}


def add_columns(apps, schema_editor):
    rate_type, flag_type, false = COLUMNS[schema_editor.connection.vendor]
    table = schema_editor.quote_name("annotation_project")
    schema_editor.execute(f"ALTER TABLE {table} ADD COLUMN gold_rate {rate_type} "
                          "NOT NULL DEFAULT 0")
    schema_editor.execute(f"ALTER TABLE {table} ADD COLUMN gold_failures_stop {flag_type} "
                          f"NOT NULL DEFAULT {false}")


def drop_columns(apps, schema_editor):
    table = schema_editor.quote_name("annotation_project")
    for column in ("gold_rate", "gold_failures_stop"):
        schema_editor.execute(f"ALTER TABLE {table} DROP COLUMN {column}")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0027_h21pages"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(model_name="project", name="gold_rate",
                                    field=models.FloatField(default=0.0)),
                migrations.AddField(model_name="project", name="gold_failures_stop",
                                    field=models.BooleanField(default=False)),
            ],
            database_operations=[migrations.RunPython(add_columns, drop_columns)],
        ),
    ]
