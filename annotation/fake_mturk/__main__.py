"""``python -m annotation.fake_mturk --port 8765``: serve the MTurk stand-in on 127.0.0.1."""

from __future__ import annotations

from ..standin_server import serve_from_command_line
from .server import FakeMTurkHTTPServer


def main(argv: list[str] | None = None) -> None:
    serve_from_command_line(
        FakeMTurkHTTPServer, prog="python -m annotation.fake_mturk",
        description="A stateful MTurk-compatible endpoint on 127.0.0.1 (state kept in memory).",
        default_port=8765, label="fake MTurk", argv=argv)


if __name__ == "__main__":
    main()
