"""Who may do what through the API: Django's model permissions — a user's own, their groups'
(``researcher``, ``reviewer``: migration 0007) or a superuser's — never ``is_staff`` alone.

``is_staff`` only lets an account into the admin site; what it may read or change there and
here is what its permissions say.
"""

from __future__ import annotations

from rest_framework import permissions


def model_permission(**needed_by_method: str | None) -> type[permissions.BasePermission]:
    """A DRF permission: a logged-in user holding the permission named for the request's method
    (e.g. ``GET="annotation.view_item"``; ``None``: a login is enough). HEAD and OPTIONS follow
    GET; any other method not named needs every permission named, so a method the endpoint
    does not have is refused (403) to those who may not use the endpoint, before its 405."""
    every = {needed for needed in needed_by_method.values() if needed is not None}

    class ModelPermission(permissions.BasePermission):
        def has_permission(self, request, view) -> bool:
            user = request.user
            if not user or not user.is_authenticated:
                return False
            method = "GET" if request.method in ("HEAD", "OPTIONS") else request.method
            if method in needed_by_method:
                needed = needed_by_method[method]
                return needed is None or user.has_perm(needed)
            return user.has_perms(every)

    return ModelPermission


class ChangesItsModel(permissions.BasePermission):
    """A decision endpoint (``api/decisions.py``) changes one object of ``view.model``: it needs
    ``<app>.change_<model>`` (approve, reject or bonus an assignment: ``change_assignment``;
    block a worker: ``change_worker``; dismiss a flag: ``change_flag``…)."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        meta = view.model._meta
        return bool(user and user.is_authenticated
                    and user.has_perm(f"{meta.app_label}.change_{meta.model_name}"))


SEES_EVERY_ANNOTATION = "annotation.view_annotation"
