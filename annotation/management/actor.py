"""Who ran a command that decides or spends (``review``, ``launch_batch``): the audit trail
names them, as it names the staff user of a page or an API call.

* ``--actor USERNAME`` (or ``UNPACK_ACTOR``): an active account that may do the action under
  the same rule as the pages and the API (``annotation/roles.py``); it becomes the ``actor`` of
  every audit row the command writes. An unknown, inactive or unauthorised account is refused
  before anything changes.
* Always: the operating-system login that ran the command is written into the detail of every
  audit row as ``command_line_user`` (``services.audit.command_line``), so a row written
  without ``--actor`` still names someone — the person with shell access to the database.
"""

from __future__ import annotations

import getpass
import os

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from ..roles import ACTIONS, may

ACTOR_ENV = "UNPACK_ACTOR"


def add_actor_argument(parser) -> None:
    parser.add_argument(
        "--actor", default=None, metavar="USERNAME",
        help=f"the account deciding (default ${ACTOR_ENV}); recorded on every audit row, with "
             "the operating-system login that ran the command")


def os_login() -> str:
    """The operating-system account running the command ("unknown" where it has no name, e.g.
    an arbitrary uid in a container)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def resolve_actor(options: dict, action: str):
    """The account named by ``--actor`` or ``UNPACK_ACTOR`` (None when neither is set), checked
    against ``action`` (an ``annotation.roles.ACTIONS`` key); CommandError otherwise."""
    username = options.get("actor") or os.environ.get(ACTOR_ENV) or None
    if username is None:
        return None
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise CommandError(f"--actor {username!r}: no active account of that name")
    if not may(user, action):
        raise CommandError(f"--actor {username!r} may not do this (it needs the permission "
                           f"{ACTIONS[action]}; see docs/security.md, Roles)")
    return user
