"""Authentication backend: Django's ``ModelBackend`` (same password and ``is_active`` checks),
except that the user of a session is loaded together with their Worker.

Every annotator request needs both (``worker_for_user``). They are read by one SELECT (the user
LEFT JOIN their Worker) written once from the models' metadata (``annotation.sql.rows``): the
same instances as ``select_related("worker")`` builds, without compiling that query on every
request.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError
from django.db import connections, router

from .models import Worker
from .sql import rows


def user_with_worker(user_id):
    """The user with this primary key, their Worker (or None) cached on ``user.worker`` as
    select_related would; None when there is no such user."""
    user_model = get_user_model()
    using = router.db_for_read(user_model)
    connection = connections[using]
    sql, user_table, worker_table = rows.user_with_worker_select(using)
    try:
        user_id = user_model._meta.pk.to_python(user_id)
    except (TypeError, ValueError, ValidationError):  # a malformed id: no such user
        return None
    with connection.cursor() as cursor:
        cursor.execute(sql, {"user_id": user_id})
        row = cursor.fetchone()
    if row is None:
        return None
    width = len(user_table.fields)
    user = rows.instance(user_table, row[:width], using, connection)
    worker = rows.instance(worker_table, row[width:], using, connection)
    link = Worker._meta.get_field("user")
    link.remote_field.set_cached_value(user, worker)
    if worker is not None:
        link.set_cached_value(worker, user)
    return user


class WorkerLoadingModelBackend(ModelBackend):
    def get_user(self, user_id):
        user = user_with_worker(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
