"""Authentication backend: Django's ``ModelBackend`` (same password and ``is_active`` checks),
except that the user of a session is loaded together with their Worker.

Every annotator request needs both (``worker_for_user``). They are read by one SELECT (the user
LEFT JOIN their Worker) written once from the models' metadata (``annotation.sql.rows``): the
same instances as ``select_related("worker")`` builds, without compiling that query on every
request.

Password checks that come with a request (the login pages, API authentication) are throttled:
``annotation.login_throttle``.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connections, router

from . import login_throttle
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


class LoginLocked(PermissionDenied):
    """Too many failed logins (``login_throttle``): refused without checking the password."""


class WorkerLoadingModelBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        """Django's password check, throttled per client address and username when there is a
        request (every login page and API authentication passes one)."""
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if request is None:
            return super().authenticate(request, username=username, password=password, **kwargs)
        if not login_throttle.attempt_allowed(request, username):
            # PermissionDenied stops authenticate() from trying other backends.
            raise LoginLocked(login_throttle.locked_message())
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if username is not None and password is not None:
            login_throttle.record(request, username, succeeded=user is not None)
        return user

    def get_user(self, user_id):
        user = user_with_worker(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
