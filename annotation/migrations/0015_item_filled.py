"""``Item.filled`` (issue 15): an item whose counted answers fill every redundancy slot of its
split is marked, and the work queue walks the unmarked ones only (partial index
``item_unfilled``). The items already filled are marked here; the services keep the mark from
then on (``annotation.services.annotations``, "Filled items").
Reversing drops the column; nothing else depends on it.
"""

from django.db import migrations, models
from django.db.models import Count, Q

COUNTED = "counted"
#: Items per UPDATE (bounded IN lists).
CHUNK = 1000


def mark_filled_items(apps, schema_editor):
    """One grouped read of the counted answers per project (a hash aggregate whatever the
    planner's statistics say) and UPDATEs by primary key, in chunks."""
    project_model = apps.get_model("annotation", "Project")
    item_model = apps.get_model("annotation", "Item")
    annotation_model = apps.get_model("annotation", "Annotation")
    for project in project_model.objects.all():
        counted = (annotation_model.objects.filter(project=project, state=COUNTED)
                   .order_by().values("item_id", "item__split").annotate(n=Count("id"))
                   .values_list("item_id", "item__split", "n"))
        filled = [item_id for item_id, split, n in counted.iterator(chunk_size=10_000)
                  if n >= int(project.redundancy.get(split, 1))]
        for start in range(0, len(filled), CHUNK):
            item_model.objects.filter(pk__in=filled[start:start + CHUNK]).update(filled=True)


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0014_h11_pseudonyms_in_details"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="filled",
            field=models.BooleanField(default=False),
        ),
        migrations.AddIndex(
            model_name="item",
            index=models.Index(condition=Q(("filled", False)), fields=["project", "id"],
                               name="item_unfilled"),
        ),
        migrations.RunPython(mark_filled_items, migrations.RunPython.noop),
    ]
