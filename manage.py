#!/usr/bin/env python3
"""Django's command-line utility for Unpack."""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    if sys.argv[1:2] == ["demo"]:
        # The demo is a throwaway local setup: the public development key is fine there (a real
        # deployment sets DJANGO_SECRET_KEY, which still wins; see annotation/settings.py).
        os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
