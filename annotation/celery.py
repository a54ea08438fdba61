"""The Celery application.

With no broker configured (no ``REDIS_URL``) tasks run inline, so the embedded default needs no
services; with ``REDIS_URL`` set they go to Redis and a worker (``celery -A annotation worker``)
runs them.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")

app = Celery("annotation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
