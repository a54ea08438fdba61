"""Settings for the test suite: the project's own, with the public development key allowed.

Tests are throwaway runs on this machine, so they need no real DJANGO_SECRET_KEY; the variable
is set in the environment (not only here) so the processes the tests start (``manage.py``,
the Celery worker) inherit it. A DJANGO_SECRET_KEY in the environment still wins.
"""

import os
import tempfile

os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")
# Files staff jobs write (an export's zip) go to a scratch folder, not the repository; set in
# the environment so a Celery worker the tests start writes to the same place.
os.environ.setdefault("UNPACK_JOB_FILES_DIR", os.path.join(tempfile.gettempdir(),
                                                           f"unpack-test-jobs-{os.getuid()}"))

from annotation.settings import *  # noqa: F403

# Provider call retries wait milliseconds in tests (the processes tests start inherit these
# through the environment, like the key above); a provider's Retry-After is still honoured.
os.environ.setdefault("UNPACK_PROVIDER_RETRY_BASE_DELAY_SECONDS", "0.001")
os.environ.setdefault("UNPACK_PROVIDER_RETRY_MAX_DELAY_SECONDS", "0.01")
UNPACK_PROVIDER_RETRY_BASE_DELAY_SECONDS = float(
    os.environ["UNPACK_PROVIDER_RETRY_BASE_DELAY_SECONDS"])
UNPACK_PROVIDER_RETRY_MAX_DELAY_SECONDS = float(
    os.environ["UNPACK_PROVIDER_RETRY_MAX_DELAY_SECONDS"])
