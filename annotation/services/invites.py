"""Single-use invite links: a researcher invites someone as an annotator, reviewer or
researcher (the groups of ``annotation/roles.py``, through ``accounts``), optionally with
access to chosen projects; the link lets one person set a username and password once.

* ``invite_create`` makes the token (``secrets.token_urlsafe``, 256 random bits) and stores
  only its SHA-256, so neither the database nor the admin can rebuild a link; the link is
  shown once, to the person who made it.
* ``invite_accept`` makes the account in the same transaction that marks the invite used,
  with the invite's row locked: two people racing on one link get one account, the other a
  clear refusal. An expired, used, revoked or unknown (forged) token is refused by
  ``invite_check`` with a sentence saying which, and nothing is written.
* ``invite_revoke`` withdraws an invite nobody has used yet (who and when are kept on the
  invite); its link then answers as a used one does (410), saying it was withdrawn.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..models import Invite
from .accounts import ROLES, account_create

TOKEN_PATTERN = re.compile(r"^[A-Za-z0-9_-]{43}$")  # token_urlsafe(32)


class InviteRefused(Exception):
    """The link cannot be used; the message says why (unknown, expired or used)."""

    def __init__(self, message: str, *, gone: bool):
        super().__init__(message)
        self.gone = gone  # the link was real (expired or used), not unknown or forged


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invite_create(*, role: str, projects=(), created_by=None,
                  days: int | None = None) -> tuple[Invite, str]:
    """A new invite for ``role`` (one of ``accounts.ROLES``) giving access to ``projects``,
    valid ``days`` (``UNPACK_INVITE_DAYS``); returns it and the token of its link."""
    if role not in ROLES:
        raise ValueError(f"role: one of {', '.join(ROLES)}")
    days = settings.UNPACK_INVITE_DAYS if days is None else days
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invite = Invite.objects.create(token_sha256=_digest(token), role=role,
                                       created_by=created_by,
                                       expires_at=timezone.now() + timedelta(days=days))
        invite.projects.set(projects)
    return invite, token


def invite_check(token: str, *, for_update: bool = False) -> Invite:
    """The usable invite of ``token``, or InviteRefused naming why."""
    if not TOKEN_PATTERN.match(token or ""):
        raise InviteRefused("This invite link is not valid; ask for a new one.", gone=False)
    invites = Invite.objects.select_for_update() if for_update else Invite.objects
    invite = invites.filter(token_sha256=_digest(token)).first()
    if invite is None:
        raise InviteRefused("This invite link is not valid; ask for a new one.", gone=False)
    if invite.used_at is not None:
        raise InviteRefused("This invite link has been used already; each link makes one "
                            "account. Log in, or ask for a new link.", gone=True)
    if invite.revoked_at is not None:
        raise InviteRefused(REVOKED, gone=True)
    if invite.expires_at <= timezone.now():
        raise InviteRefused("This invite link has expired; ask for a new one.", gone=True)
    return invite


REVOKED = "This invite link has been withdrawn by the team; ask them for a new one."


class InviteNotRevocable(Exception):
    """The invite cannot be withdrawn (already used, or withdrawn already); the message says
    which."""


@transaction.atomic
def invite_revoke(*, invite_id: int, revoked_by=None) -> Invite:
    """Withdraw the invite ``invite_id`` (Invite.DoesNotExist if there is none), keeping who
    and when. Its row is locked, so a revoke racing an acceptance either wins (the link is
    refused) or finds it used (InviteNotRevocable, nothing written)."""
    invite = Invite.objects.select_for_update().get(pk=invite_id)
    if invite.used_at is not None:
        raise InviteNotRevocable("This invite has been used already; the account it made "
                                 "stays (change its role on the team page).")
    if invite.revoked_at is not None:
        raise InviteNotRevocable("This invite was withdrawn already.")
    invite.revoked_at = timezone.now()
    invite.revoked_by = revoked_by
    invite.save(update_fields=["revoked_at", "revoked_by"])
    return invite


@transaction.atomic
def invite_accept(*, token: str, username: str, password: str):
    """Make the invited account (``accounts.account_create``: ValidationError by field for a
    taken username or a weak password, the invite left unused) and use up the invite."""
    invite = invite_check(token, for_update=True)
    user = account_create(username=username, password=password, role=invite.role)
    for project in invite.projects.all():
        project.allowed_users.add(user)
    invite.used_at = timezone.now()
    invite.used_by = user
    invite.save(update_fields=["used_at", "used_by"])
    return user


def invites_pending() -> list[Invite]:
    """Invites not used, not revoked and not expired, newest first (the invites page lists
    them)."""
    return list(Invite.objects.filter(used_at__isnull=True, revoked_at__isnull=True,
                                      expires_at__gt=timezone.now())
                .select_related("created_by").prefetch_related("projects")
                .order_by("-created_at")[:100])
