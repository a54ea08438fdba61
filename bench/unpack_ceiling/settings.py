"""The app's settings (``annotation.settings``, read from the environment as always) plus the
ceiling's app and URL. For ``bench/bench_ceiling.py`` only."""

from annotation.settings import *  # noqa: F403
from annotation.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "unpack_ceiling"]
ROOT_URLCONF = "unpack_ceiling.urls"
