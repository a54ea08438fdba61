from __future__ import annotations

import uuid

from django.db import transaction

from ..models import Worker


def worker_for_user(*, user) -> Worker:
    """The local Worker of a logged-in user, created on first use.

    Found only by its link to the account, never by name: a Worker without an account (its
    account deleted, or made by the demo's simulated crowd) or of another account keeps its
    work. A new account gets a Worker of its own, named after the username when that name is
    free and after the username and user id otherwise, so recreating a deleted account never
    hands the new person the old person's work and history.
    """
    worker = getattr(user, "worker", None)
    if worker is not None:
        return worker
    username = user.get_username()
    with transaction.atomic():
        worker = Worker.objects.select_for_update().filter(user=user).first()
        if worker is not None:
            return worker
        for external_id in (username, f"{username}#user-{user.pk}"):
            worker, created = Worker.objects.get_or_create(
                provider=Worker.Provider.LOCAL, external_id=external_id,
                defaults={"user": user})
            if created or worker.user_id == user.pk:
                return worker
        return Worker.objects.create(
            provider=Worker.Provider.LOCAL, user=user,
            external_id=f"{username}#user-{user.pk}-{uuid.uuid4().hex[:8]}")


def worker_get_or_create(*, provider: str, external_id: str) -> Worker:
    worker, _ = Worker.objects.get_or_create(provider=provider, external_id=external_id)
    return worker
