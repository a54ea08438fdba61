"""Who may do what, for every staff entry point: the REST API (``annotation/api/``), the staff
pages (``/staff/review/…``, ``/staff/batches/…``) and the admin site.

The rule, written once: **an action needs one Django model permission**, held by the user, one
of their groups or a superuser. ``is_staff`` is never enough: it only lets an account into the
admin site, where the same permissions apply. Migration 0007 (and 0013) make two groups:

* ``researcher`` — everything: projects, batches (launch, resume, cancel: money), decisions.
* ``reviewer`` — reads projects, items, annotations, batches and workers, and reviews: approves
  and rejects assignments and answers, pays bonuses, blocks and unblocks workers, dismisses
  flags, runs QC. Never launches, resumes or cancels a batch, never creates or changes a project
  (imports are the command line's, which has the database anyway). Sees workers by pseudonym
  only, never their raw MTurk WorkerId or Prolific PID (``see_worker_ids``).

:data:`ACTIONS` names the permission of every action; the API's permission classes
(``annotation/api/permissions.py``) and the pages' :func:`page_requires` read it through
:func:`may`, so a page and its API twin cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

#: Every staff action and the model permission it needs.
ACTIONS: dict[str, str] = {
    "see_projects": "annotation.view_project",
    "change_projects": "annotation.change_project",
    "add_projects": "annotation.add_project",
    "see_items": "annotation.view_item",
    "see_work": "annotation.view_annotation",  # every worker's answers, the review queue
    "see_batches": "annotation.view_batch",
    "launch_batches": "annotation.add_batch",  # spends money
    "run_batches": "annotation.change_batch",  # resume or cancel publishing
    "decide_assignments": "annotation.change_assignment",  # approve, reject, bonus
    "decide_annotations": "annotation.change_annotation",
    "decide_flags": "annotation.change_flag",  # dismiss a flag; run QC (which raises them)
    "decide_workers": "annotation.change_worker",  # block, unblock
    # A worker's raw provider id (MTurk WorkerId, Prolific PID: personal data), for the roles
    # that pay or block on the provider's own site (researchers; superusers). Everyone else sees
    # workers by pseudonym only; see :func:`may_see_worker_ids`.
    "see_worker_ids": "annotation.view_worker",
    "manage_team": "auth.add_user",  # create accounts, give roles (researchers, migration 0018)
}


def may(user, action: str) -> bool:
    """True when ``user`` (possibly anonymous) may do ``action`` (a key of :data:`ACTIONS`)."""
    return bool(user is not None and user.is_authenticated
                and user.has_perm(ACTIONS[action]))


def may_see_worker_ids(user) -> bool:
    """True when ``user`` may see raw provider ids of workers (``Worker.external_id``) and find
    workers or their work by one: the admin's worker pages and searches follow it
    (``annotation/admin.py``: ``RawWorkerIdsMixin``); the API, the staff pages, the exports
    and the logs show pseudonyms to everyone (``annotation/pseudonyms.py``)."""
    return may(user, "see_worker_ids")


def decision_action(model) -> str:
    """The action that decides one object of ``model`` (``Assignment`` → ``decide_assignments``)."""
    return f"decide_{model._meta.model_name}s"


def page_requires(action: str) -> Callable:
    """Decorator for a staff page: anonymous visitors go to the login page; a logged-in user
    who may not do ``action`` gets 403, before the view reads or writes anything."""
    if action not in ACTIONS:  # fails at import time, not on the first request
        raise KeyError(f"unknown staff action {action!r}")

    def decorator(view):
        @wraps(view)
        def checked(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not may(request.user, action):
                raise PermissionDenied(f"this page needs the permission {ACTIONS[action]}")
            return view(request, *args, **kwargs)

        return checked

    return decorator
