"""Fixtures for the pure-Python qc tests: where the shared real data lives."""

from pathlib import Path

import pytest

# The shared folder sits beside the repository: <repo>/../shared/data.
SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the released datasets; tests needing it are skipped when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED_DATA}")
    return SHARED_DATA
