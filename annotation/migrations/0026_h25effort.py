from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0025_h24browse"),
    ]

    operations = [
        # Nullable, no default: adding it rewrites no existing row (PostgreSQL and SQLite
        # add a NULL column in place).
        migrations.AddField(
            model_name="annotation",
            name="effort",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
