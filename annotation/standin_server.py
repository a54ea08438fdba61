"""What the local stand-ins for crowd providers (``fake_mturk``, ``fake_prolific``) share: running
their HTTP server in a background thread (tests, benches) or in the foreground (``python -m``)."""

from __future__ import annotations

import argparse
import threading
from http.server import ThreadingHTTPServer
from typing import Any, Generic, TypeVar

ServerT = TypeVar("ServerT", bound=ThreadingHTTPServer)


class BackgroundServer(Generic[ServerT]):
    """A stand-in server in a daemon thread; also a context manager.

    Subclasses set ``server_class`` (its constructor takes ``port`` and ``verbose=``) and
    ``label``. ``base_url`` and ``world`` are those of the running server."""

    server_class: type[ServerT]
    label = "stand-in"

    def __init__(self, port: int = 0, *, verbose: bool = False) -> None:
        self._port = port
        self._verbose = verbose
        self._server: ServerT | None = None
        self._thread: threading.Thread | None = None

    def start(self):
        if self._server is not None:
            raise RuntimeError(f"the {self.label} server is already running")
        self._server = self.server_class(self._port, verbose=self._verbose)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name=self.label.replace(" ", "-"), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def _running(self) -> ServerT:
        if self._server is None:
            raise RuntimeError(f"the {self.label} server is not running")
        return self._server

    @property
    def base_url(self) -> str:
        return self._running().base_url  # type: ignore[attr-defined]

    @property
    def world(self) -> Any:
        return self._running().world  # type: ignore[attr-defined]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve_from_command_line(server_class: type[ThreadingHTTPServer], *, prog: str,
                            description: str, default_port: int, label: str,
                            argv: list[str] | None = None) -> None:
    """``python -m <prog> --port N [--verbose]``: serve on 127.0.0.1 until Ctrl-C."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--port", type=int, default=default_port,
                        help="port on 127.0.0.1 (0 = any)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    arguments = parser.parse_args(argv)
    server = server_class(arguments.port, verbose=arguments.verbose)
    base_url = server.base_url  # type: ignore[attr-defined]
    print(f"{label} listening on {base_url} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
