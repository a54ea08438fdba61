"""Providers: the doors through which Unpack publishes work and collects results.

``get_provider("local")`` (the default) serves annotators logged into the app;
``get_provider("mturk")`` talks to Amazon Mechanical Turk (sandbox unless ``MTURK_LIVE``);
``get_provider("prolific")`` to Prolific (``PROLIFIC_API_URL``, ``PROLIFIC_API_TOKEN``).
The boto3- and requests-backed modules are imported only when their provider is asked for.
"""

from __future__ import annotations

from .base import (
    AccountBalance,
    AnnotationProvider,
    CollectedAssignment,
    HitTypeSpec,
    LocaleValue,
    NotifyFailure,
    PaidBonus,
    ProviderError,
    ProviderPermanentError,
    ProviderThrottled,
    ProviderTransientError,
    PublishedHit,
    QualificationRequirementSpec,
)

PROVIDER_NAMES = ("local", "mturk", "prolific")

__all__ = [
    "PROVIDER_NAMES",
    "AccountBalance",
    "AnnotationProvider",
    "CollectedAssignment",
    "HitTypeSpec",
    "LocaleValue",
    "NotifyFailure",
    "PaidBonus",
    "ProviderError",
    "ProviderPermanentError",
    "ProviderThrottled",
    "ProviderTransientError",
    "PublishedHit",
    "QualificationRequirementSpec",
    "get_provider",
]


def get_provider(name: str = "local", *, live: bool | None = None) -> AnnotationProvider:
    """A provider by name: ``"local"`` (default), ``"mturk"`` or ``"prolific"``.

    The MTurk provider is configured from Django settings (``MTurkConfig.from_settings``);
    ``live`` (when given) overrides ``MTURK_LIVE`` — a batch records whether it was launched
    live, and its later jobs must talk to the same marketplace. Build
    ``MTurkProvider(MTurkConfig(...))`` directly to configure it by hand.
    Raises ``ValueError`` for an unknown name.
    """
    if name == "local":
        from .local import LocalProvider

        return LocalProvider()
    if name == "mturk":
        from dataclasses import replace

        from .mturk import MTurkConfig, MTurkProvider

        config = MTurkConfig.from_settings()
        return MTurkProvider(config if live is None else replace(config, live=live))
    if name == "prolific":
        from .prolific import ProlificConfig, ProlificProvider

        return ProlificProvider(ProlificConfig.from_settings())
    raise ValueError(f"unknown provider {name!r}; expected one of {', '.join(PROVIDER_NAMES)}")
