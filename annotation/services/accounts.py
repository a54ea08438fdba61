"""Accounts and roles, for the console's team page (``frontend/staff/projects.py``).

A role is membership of one of the groups of ``annotation/roles.py`` (migrations 0007, 0013,
0018): ``annotator`` is none of them, ``reviewer`` and ``researcher`` are theirs. Staff roles
also get ``is_staff`` (the staff links; the admin site's door, where the same permissions
apply), never a superuser's powers.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction

ROLES = ("annotator", "reviewer", "researcher")
STAFF_GROUPS = ("reviewer", "researcher")


def account_role(user) -> str:
    """The user's role: their highest staff group, else ``annotator``."""
    names = set(user.groups.values_list("name", flat=True))
    return next((role for role in ("researcher", "reviewer") if role in names), "annotator")


@transaction.atomic
def account_role_set(*, user, role: str):
    """Give ``user`` exactly ``role`` (ValidationError for an unknown role)."""
    if role not in ROLES:
        raise ValidationError({"role": [f"role: one of {', '.join(ROLES)}"]})
    user.groups.remove(*Group.objects.filter(name__in=STAFF_GROUPS))
    if role != "annotator":
        group, _ = Group.objects.get_or_create(name=role)
        user.groups.add(group)
    user.is_staff = role != "annotator" or user.is_superuser
    user.save(update_fields=["is_staff"])
    return user


def _username_allowed(username: str) -> bool:
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        return False
    return True


@transaction.atomic
def account_create(*, username: str, password: str, role: str):
    """A new account with ``role``; ValidationError (by field) for a username that is empty,
    too long or has characters the auth User model refuses (its own ``UnicodeUsernameValidator``:
    letters, digits and @ . + - _), a username in use, a weak password (Django's password
    validators) or an unknown role; nothing is written then."""
    user_model = get_user_model()
    errors: dict[str, list[str]] = {}
    username = (username or "").strip()
    max_length = user_model._meta.get_field(user_model.USERNAME_FIELD).max_length
    if not username:
        errors["username"] = ["username: must not be empty"]
    elif len(username) > max_length:
        errors["username"] = [f"username: at most {max_length} characters"]
    elif not _username_allowed(username):
        errors["username"] = [f"username: {username!r} has a character other than letters, "
                              "digits and @ . + - _"]
    elif user_model.objects.filter(username__iexact=username).exists():
        errors["username"] = [f"username: {username!r} is taken"]
    try:
        validate_password(password, user_model(username=username))
    except ValidationError as error:
        errors["password"] = error.messages
    if role not in ROLES:
        errors["role"] = [f"role: one of {', '.join(ROLES)}"]
    if errors:
        raise ValidationError(errors)
    user = user_model.objects.create_user(username=username, password=password)
    return account_role_set(user=user, role=role)
