"""A running MTurk stand-in and a provider bound to it, for the batch service tests."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from annotation.fake_mturk import FakeMTurk, FakeMTurkSimulator
from annotation.providers.mturk import MTurkConfig, MTurkProvider, RetryPolicy

FAST_RETRIES = RetryPolicy(max_attempts=3, base_delay_seconds=0.001, max_delay_seconds=0.005)


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeMTurk]:
    with FakeMTurk() as server:
        yield server


@pytest.fixture
def fake(fake_server: FakeMTurk, settings, monkeypatch) -> FakeMTurk:
    """The stand-in, emptied, with the app's settings and AWS credentials pointing at it."""
    fake_server.world.reset()
    settings.MTURK_ENDPOINT_URL = fake_server.base_url
    settings.MTURK_LIVE = False
    settings.UNPACK_PUBLIC_URL = "https://unpack.example.org"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    return fake_server


@pytest.fixture
def simulator(fake: FakeMTurk) -> FakeMTurkSimulator:
    return FakeMTurkSimulator(fake.base_url)


@pytest.fixture
def provider(fake: FakeMTurk) -> MTurkProvider:
    config = MTurkConfig(endpoint_url=fake.base_url, aws_access_key_id="AKIDFAKEFAKEFAKE",
                         aws_secret_access_key="fake-secret", retry=FAST_RETRIES)
    return MTurkProvider(config, sleep=lambda _seconds: None, rng=random.Random(1))
