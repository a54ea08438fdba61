"""The two staff roles as groups of model permissions (the API checks permissions, not
``is_staff``): ``researcher`` runs projects and batches; ``reviewer`` reads items, annotations
and batches and decides flags and annotations in the review queue."""

from django.db import migrations

ROLES = {
    "researcher": ["add_project", "change_project", "view_project", "view_item",
                   "view_annotation", "change_annotation", "add_batch", "change_batch",
                   "view_batch", "view_assignment", "change_assignment", "view_flag",
                   "change_flag", "view_worker", "change_worker"],
    "reviewer": ["view_project", "view_item", "view_annotation", "change_annotation",
                 "view_batch", "view_assignment", "change_assignment", "view_flag",
                 "change_flag"],
}


def create_groups(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are created after migrations by default; make sure they exist now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    group_model = apps.get_model("auth", "Group")
    permission_model = apps.get_model("auth", "Permission")
    for name, codenames in ROLES.items():
        group, _ = group_model.objects.get_or_create(name=name)
        group.permissions.add(*permission_model.objects.filter(
            content_type__app_label="annotation", codename__in=codenames))


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_i10a_audit_trail"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]
