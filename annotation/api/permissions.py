"""The API's side of ``annotation/roles.py``: DRF permission classes over the same actions and
the same rule (:func:`annotation.roles.may`) as the staff pages — never ``is_staff`` alone."""

from __future__ import annotations

from rest_framework import permissions

from ..roles import ACTIONS, decision_action, may


def action_permission(**action_by_method: str | None) -> type[permissions.BasePermission]:
    """A DRF permission: a logged-in user who may do the action named for the request's method
    (e.g. ``GET="see_items"``, an :data:`annotation.roles.ACTIONS` key; ``None``: a login is
    enough). HEAD and OPTIONS follow GET; any other method not named needs every action named,
    so a method the endpoint does not have is refused (403) to those who may not use the
    endpoint, before its 405."""
    unknown = {action for action in action_by_method.values() if action is not None} - set(
        ACTIONS)
    if unknown:
        raise KeyError(f"unknown staff action(s) {sorted(unknown)}")
    every = {action for action in action_by_method.values() if action is not None}

    class ActionPermission(permissions.BasePermission):
        def has_permission(self, request, view) -> bool:
            user = request.user
            if not user or not user.is_authenticated:
                return False
            method = "GET" if request.method in ("HEAD", "OPTIONS") else request.method
            if method in action_by_method:
                action = action_by_method[method]
                return action is None or may(user, action)
            return all(may(user, action) for action in every)

    return ActionPermission


class DecidesItsModel(permissions.BasePermission):
    """A decision endpoint (``api/decisions.py``) decides one object of ``view.model``: the
    action :func:`annotation.roles.decision_action` names for it (approve, reject or bonus an
    assignment: ``decide_assignments``; block a worker: ``decide_workers``…), as on the pages."""

    def has_permission(self, request, view) -> bool:
        return may(request.user, decision_action(view.model))
