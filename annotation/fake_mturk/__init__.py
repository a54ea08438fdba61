"""A stateful, MTurk-compatible endpoint for development, tests and benches (stdlib only).

It speaks MTurk's JSON 1.1 protocol as boto3 sends it, keeps HITs, assignments, workers and money
in memory (nothing on disk), and simulates workers under ``/_sim/``. Run it with::

    python -m annotation.fake_mturk --port 8765      # listens on 127.0.0.1 only

and point the provider at it (``MTURK_ENDPOINT_URL=http://127.0.0.1:8765`` plus any dummy AWS
keys). In tests, ``FakeMTurk().start()`` runs it in a thread on a free port.
"""

from .server import FakeMTurk, FakeMTurkHTTPServer
from .sim_client import FakeMTurkSimulator, SimulatorRefused
from .state import MTurkApiError, MTurkWorld, SimulationError

__all__ = [
    "FakeMTurk",
    "FakeMTurkHTTPServer",
    "FakeMTurkSimulator",
    "MTurkApiError",
    "MTurkWorld",
    "SimulationError",
    "SimulatorRefused",
]
