"""Workers' pseudonyms: what staff, exports and audit rows show instead of a provider's worker id
(an MTurk WorkerId, a Prolific participant id) or a username.

Plain Python, no models, so that a migration can rewrite old rows with the same function the
app uses (``Worker.anonymous_id``, migration 0014).
"""

from __future__ import annotations

import hashlib
import re

#: What :func:`pseudonym` returns: ``w`` and 12 lowercase hex digits. A provider's id never
#: looks like this (MTurk WorkerIds are upper case, Prolific ids 24 hex digits).
PSEUDONYM = re.compile(r"w[0-9a-f]{12}")


def pseudonym(*, secret_key: str, provider: str, external_id: str) -> str:
    """A stable pseudonym of one worker, keyed by the server's secret (so it is not reversible
    without it)."""
    digest = hashlib.sha256(secret_key.encode() + f"{provider}:{external_id}".encode())
    return "w" + digest.hexdigest()[:12]


def is_pseudonym(value: object) -> bool:
    return isinstance(value, str) and PSEUDONYM.fullmatch(value) is not None
