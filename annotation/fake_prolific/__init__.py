"""A stateful, Prolific-compatible API for development, tests and benches.

It serves the part of Prolific's REST API v1 that ``annotation.providers.prolific`` uses, keeps
studies, submissions, participant groups and money in memory, and simulates participants through
a side door under ``/_sim/``. Run it with::

    python -m annotation.fake_prolific --port 8766      # listens on 127.0.0.1 only

and point the provider at it (``PROLIFIC_API_URL=http://127.0.0.1:8766`` and any
``PROLIFIC_API_TOKEN``). In tests, ``FakeProlific().start()`` runs it in a thread on a free port.
"""

from .server import FakeProlific, FakeProlificHTTPServer
from .sim_client import FakeProlificSimulator, SimulatorRefused
from .state import ProlificApiError, ProlificWorld, SimulationError

__all__ = [
    "FakeProlific",
    "FakeProlificHTTPServer",
    "FakeProlificSimulator",
    "ProlificApiError",
    "ProlificWorld",
    "SimulationError",
    "SimulatorRefused",
]
