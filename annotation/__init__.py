"""Unpack: the Django project package and the core app (models, services, selectors, API)."""

from .celery import app as celery_app

__all__ = ("celery_app",)
