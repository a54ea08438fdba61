"""Bench-only Django app: the framework's own ceiling (``bench/bench_ceiling.py``).

Served only under ``unpack_ceiling.settings`` (the app's settings plus this app and one URL),
with ``bench/`` on ``PYTHONPATH``; ``annotation.settings`` never lists it, so no deployment can
reach its view."""
