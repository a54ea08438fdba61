from django.db import migrations, models

# The columns are added by ALTER TABLE … ADD COLUMN (the pattern of 0028_h25gold): Django's own
# AddField may rebuild the table on SQLite (copy, drop, rename), which the ProjectCount
# triggers of 0023_h21_pages (they name the project table) forbid. The CHECK is the one
# Django writes for a PositiveIntegerField.
def add_columns(apps, schema_editor):
    table = schema_editor.quote_name("annotation_project")
    schema_editor.execute(f"ALTER TABLE {table} ADD COLUMN budget_cents integer NULL "
                          'CHECK ("budget_cents" >= 0)')
    schema_editor.execute(f"ALTER TABLE {table} ADD COLUMN budget_currency varchar(3) "
                          "NOT NULL DEFAULT ''")


def drop_columns(apps, schema_editor):
    table = schema_editor.quote_name("annotation_project")
    for column in ("budget_cents", "budget_currency"):
        schema_editor.execute(f"ALTER TABLE {table} DROP COLUMN {column}")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0031_h25adapt"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(model_name="project", name="budget_cents",
                                    field=models.PositiveIntegerField(blank=True, null=True)),
                migrations.AddField(model_name="project", name="budget_currency",
                                    field=models.CharField(blank=True, max_length=3)),
            ],
            database_operations=[migrations.RunPython(add_columns, drop_columns)],
        ),
        # The data browser's sorts by worker and by item, keyset pages (CREATE INDEX: no table
        # rebuild on SQLite).
        migrations.AddIndex(
            model_name="annotation",
            index=models.Index(fields=["project", "worker", "id"],
                               name="annotation_project_worker_id"),
        ),
        migrations.AddIndex(
            model_name="annotation",
            index=models.Index(fields=["project", "item", "id"],
                               name="annotation_project_item_id"),
        ),
    ]
