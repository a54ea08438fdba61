from django.db import migrations, models

# A nullable column without a default, added by ALTER TABLE … ADD COLUMN on both databases
# (no table rebuild on SQLite, where the count triggers of 0023_h21_pages name the tables).


def add_column(apps, schema_editor):
    table = schema_editor.quote_name("annotation_item")
    schema_editor.execute(f"ALTER TABLE {table} ADD COLUMN target_answers integer NULL")


def drop_column(apps, schema_editor):
    table = schema_editor.quote_name("annotation_item")
    schema_editor.execute(f"ALTER TABLE {table} DROP COLUMN target_answers")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0030_h21qc"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(model_name="item", name="target_answers",
                                    field=models.IntegerField(blank=True, null=True)),
            ],
            database_operations=[migrations.RunPython(add_column, drop_column)],
        ),
    ]
