"""``python -m annotation.fake_prolific --port 8766``: serve the Prolific stand-in on 127.0.0.1."""

from __future__ import annotations

from ..standin_server import serve_from_command_line
from .server import FakeProlificHTTPServer


def main(argv: list[str] | None = None) -> None:
    serve_from_command_line(
        FakeProlificHTTPServer, prog="python -m annotation.fake_prolific",
        description="A stateful Prolific-compatible API on 127.0.0.1 (state kept in memory).",
        default_port=8766, label="fake Prolific", argv=argv)


if __name__ == "__main__":
    main()
