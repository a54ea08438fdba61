from __future__ import annotations

from django.db import transaction

from ..models import Worker


def worker_for_user(*, user) -> Worker:
    """The local Worker of a logged-in user, created on first use.

    Found by its link to the account first; by username only for a Worker no account owns yet
    (e.g. created by an import). A Worker of another account is never returned: an account
    renamed away keeps its Worker, so a new account taking the old name gets a Worker of its
    own (named after its user id) instead of the other person's work and history.
    """
    worker = getattr(user, "worker", None)
    if worker is not None:
        return worker
    with transaction.atomic():
        worker, _ = Worker.objects.select_for_update().get_or_create(
            provider=Worker.Provider.LOCAL, external_id=user.get_username(),
            defaults={"user": user},
        )
        if worker.user_id is None:
            worker.user = user
            worker.save(update_fields=["user"])
        elif worker.user_id != user.pk:
            worker, _ = Worker.objects.get_or_create(
                provider=Worker.Provider.LOCAL,
                external_id=f"{user.get_username()}#user-{user.pk}",
                defaults={"user": user},
            )
    return worker


def worker_get_or_create(*, provider: str, external_id: str) -> Worker:
    worker, _ = Worker.objects.get_or_create(provider=provider, external_id=external_id)
    return worker
