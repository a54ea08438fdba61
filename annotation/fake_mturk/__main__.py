"""``python -m annotation.fake_mturk --port 8765``: serve the MTurk stand-in on 127.0.0.1."""

from __future__ import annotations

import argparse

from .server import FakeMTurkHTTPServer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m annotation.fake_mturk",
        description="A stateful MTurk-compatible endpoint on 127.0.0.1 (state kept in memory).",
    )
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0 = any)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    arguments = parser.parse_args(argv)
    server = FakeMTurkHTTPServer(arguments.port, verbose=arguments.verbose)
    print(f"fake MTurk listening on {server.base_url} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
