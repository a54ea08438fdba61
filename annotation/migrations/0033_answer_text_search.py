"""The data browser's search of the answers' own text (``?answer=``,
selectors/answer_browser.py): on PostgreSQL a trigram index on ``UPPER(text)`` (Django's
icontains), as 0025_h24browse made for the item texts, so a rare substring among 1,000,000
answers is an index scan. Where the ``pg_trgm`` extension is missing the search scans.
"""

from django.db import migrations


def trigram_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if cursor.fetchone() is None:
            return  # 0025 could not create it: the search scans instead
        cursor.execute("CREATE INDEX IF NOT EXISTS annotation_annotation_text_trgm ON "
                       "annotation_annotation USING gin (UPPER(text) gin_trgm_ops)")


def drop_trigram_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS annotation_annotation_text_trgm")


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0032_h24rest"),
    ]

    operations = [
        migrations.RunPython(trigram_index, drop_trigram_index),
    ]
