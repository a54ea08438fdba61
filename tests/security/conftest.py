"""Security tests: users without password hashing (hundreds of parametrised requests)."""

from __future__ import annotations

import pytest


@pytest.fixture
def staff_user(django_user_model):
    user = django_user_model(username="researcher", is_staff=True, is_superuser=True)
    user.set_unusable_password()
    user.save()
    return user


@pytest.fixture
def annotator_user(django_user_model):
    user = django_user_model(username="annotator")
    user.set_unusable_password()
    user.save()
    return user
