"""Helpers for tests that start a real server on loopback."""

from __future__ import annotations

import socket
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening_sockets(port: int) -> int:
    """IPv4 TCP sockets in LISTEN state on ``port`` (from /proc/net/tcp)."""
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for line in lines
               if line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A")
