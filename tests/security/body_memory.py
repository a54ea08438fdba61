"""Serve the app with gunicorn over loopback and send concurrent large bodies, measuring each
gunicorn process's peak RSS (``VmHWM``) before and after: shared by
``tests/security/test_body_memory.py`` (small bodies) and ``bench/bench_big_bodies.py``
(the issue's four 100 MB bodies)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHUNK = b"x" * 65536


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _status(pid: int, field: str) -> int:
    """A ``/proc/<pid>/status`` size in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def processes(master: int) -> list[int]:
    """The gunicorn master and its workers."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [master, *map(int, children)]


def peaks(master: int) -> dict[int, int]:
    return {pid: _status(pid, "VmHWM") for pid in processes(master)}


@dataclass
class Answer:
    status: int | None
    sent: int
    error: str = ""


def post_body(port: int, path: str, size: int, *, chunked: bool = False) -> Answer:
    """POST ``size`` bytes of JSON-ish filler, streamed in 64 KB pieces (the client holds no
    more than one piece), and read the status line. The server may answer and close before
    the body is sent: that is the point."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
    sent = 0
    error = ""
    try:
        sock.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"Content-Type: application/json\r\n{length}\r\n"
                      "Connection: close\r\n\r\n").encode())
        while sent < size:
            piece = CHUNK[:min(len(CHUNK), size - sent)]
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sent += len(piece)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
    except OSError as failure:  # reset or broken pipe: the server stopped reading
        error = type(failure).__name__
    status = None
    try:
        head = sock.recv(64)
        if head.startswith(b"HTTP/1.1 "):
            status = int(head[9:12])
    except OSError as failure:
        error = error or type(failure).__name__
    sock.close()
    return Answer(status, sent, error)


class Server:
    """gunicorn (the shipped config) on a free loopback port, in a context manager."""

    def __init__(self, *, workers: int = 2, threads: int = 2, env: dict | None = None):
        self.port = free_port()
        self.args = [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "gunicorn.conf.py"),
                     "--bind", f"127.0.0.1:{self.port}", "--workers", str(workers),
                     "--threads", str(threads), "--log-level", "warning"]
        self.env = {**os.environ, "UNPACK_ALLOW_DEV_KEY": "true", **(env or {})}

    def __enter__(self) -> Server:
        self.process = subprocess.Popen(self.args, cwd=ROOT, env=self.env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                if len(processes(self.process.pid)) > 1:
                    break
            except OSError:
                time.sleep(0.2)
        else:
            self.process.kill()
            raise RuntimeError("gunicorn did not start")
        return self

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def concurrent_bodies(port: int, path: str, size: int, count: int, *,
                      chunked: bool = False) -> list[Answer]:
    answers: list[Answer] = [None] * count  # type: ignore[list-item]

    def one(index: int) -> None:
        answers[index] = post_body(port, path, size, chunked=chunked)

    threads = [threading.Thread(target=one, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def measure(server: Server, path: str, size: int, count: int, *, chunked: bool = False):
    """Warm every process up (a few small refused bodies), then ``count`` concurrent bodies
    of ``size`` bytes: ``(answers, {pid: peak RSS growth in kB})``."""
    for _ in range(8):
        post_body(server.port, path, 4 * 1024 * 1024)
    before = peaks(server.process.pid)
    answers = concurrent_bodies(server.port, path, size, count, chunked=chunked)
    time.sleep(0.5)
    after = peaks(server.process.pid)
    return answers, {pid: after.get(pid, 0) - peak for pid, peak in before.items()}
