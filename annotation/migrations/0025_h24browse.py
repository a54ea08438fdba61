"""The data browser's indexes and adjudicated references (issue 24).

* ``annotation_project_id`` / ``_state_id`` / ``_source_id``: the browser's keyset pages,
  newest first, unfiltered or by state or provider (selectors/answer_browser.py);
* on PostgreSQL, trigram indexes (the ``pg_trgm`` extension shipped with PostgreSQL, trusted
  since PostgreSQL 13, so a database owner may create it) on the item texts the browser's
  search reads: a substring search of 200,000 items is then an index scan, not a pass over
  them. Where the extension cannot be created the search still works, by scanning;
* ``ItemReference``: the reference a reviewer settled (services/adjudication.py).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import DatabaseError, migrations, models, transaction


#: (table, column) of every item text the browser searches, by task kind.
SEARCHED_TEXTS = (
    ("annotation_targetsentence", "text"),
    ("annotation_dialogueturn", "question"),
    ("annotation_clozefiller", "text"),
    ("annotation_clozeitem", "sentence"),
    ("annotation_complexsentence", "text"),
)


def trigram_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        try:
            with transaction.atomic():  # a savepoint: a refusal leaves the migration going
                cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        except DatabaseError:
            return  # no privilege: the search scans instead
        for table, column in SEARCHED_TEXTS:
            # UPPER(...): Django's icontains is UPPER(column) LIKE UPPER(pattern).
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {table}_{column}_trgm ON {table} "
                           f"USING gin (UPPER({column}) gin_trgm_ops)")


def drop_trigram_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for table, column in SEARCHED_TEXTS:
            cursor.execute(f"DROP INDEX IF EXISTS {table}_{column}_trgm")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0024_h23'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ItemReference',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('text', models.TextField(blank=True)),
                ('rating', models.FloatField(blank=True, null=True)),
                ('note', models.TextField(blank=True)),
                ('decided_at', models.DateTimeField()),
            ],
        ),
        migrations.AddIndex(
            model_name='annotation',
            index=models.Index(fields=['project', 'id'], name='annotation_project_id'),
        ),
        migrations.AddIndex(
            model_name='annotation',
            index=models.Index(fields=['project', 'state', 'id'], name='annotation_project_state_id'),
        ),
        migrations.AddIndex(
            model_name='annotation',
            index=models.Index(fields=['project', 'source', 'id'], name='annotation_project_source_id'),
        ),
        migrations.AddField(
            model_name='itemreference',
            name='chosen',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='annotation.annotation'),
        ),
        migrations.AddField(
            model_name='itemreference',
            name='decided_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='itemreference',
            name='item',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='reference', to='annotation.item'),
        ),
        migrations.RunPython(trigram_indexes, drop_trigram_indexes),
    ]
