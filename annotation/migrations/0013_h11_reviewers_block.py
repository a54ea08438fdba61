"""Reviewers may block and unblock workers (``annotation/roles.py``: a reviewer reviews —
approves, rejects, pays bonuses, blocks, dismisses flags — but never launches or imports)."""

from django.db import migrations

REVIEWER_WORKER_PERMISSIONS = ["change_worker"]  # not view_worker: the admin's worker pages
# show the provider's ids; reviewers block from the review page or the API, by pseudonym


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    group, _ = apps.get_model("auth", "Group").objects.get_or_create(name="reviewer")
    group.permissions.add(*apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="annotation", codename__in=REVIEWER_WORKER_PERMISSIONS))


def revoke(apps, schema_editor):
    group = apps.get_model("auth", "Group").objects.filter(name="reviewer").first()
    if group is not None:
        group.permissions.remove(*group.permissions.filter(
            content_type__app_label="annotation", codename__in=REVIEWER_WORKER_PERMISSIONS))


class Migration(migrations.Migration):
    dependencies = [("annotation", "0012_a12_answer_versions_and_reports")]

    operations = [migrations.RunPython(grant, revoke)]
