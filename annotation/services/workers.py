from __future__ import annotations

from django.db import transaction

from ..models import Worker


def worker_for_user(*, user) -> Worker:
    """The local Worker of a logged-in user, created on first use."""
    worker = getattr(user, "worker", None)
    if worker is not None:
        return worker
    with transaction.atomic():
        worker, _ = Worker.objects.get_or_create(
            provider=Worker.Provider.LOCAL, external_id=user.get_username(),
            defaults={"user": user},
        )
        if worker.user_id is None:
            worker.user = user
            worker.save(update_fields=["user"])
    return worker


def worker_get_or_create(*, provider: str, external_id: str) -> Worker:
    worker, _ = Worker.objects.get_or_create(provider=provider, external_id=external_id)
    return worker
