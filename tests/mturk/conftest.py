"""Fixtures for the MTurk door: a stand-in MTurk server, a provider bound to it, a Stubber."""

from __future__ import annotations

import random
from collections.abc import Iterator

import boto3
import pytest
from botocore.stub import Stubber

from annotation.fake_mturk import FakeMTurk, FakeMTurkSimulator
from annotation.providers.mturk import MTurkConfig, MTurkProvider, RetryPolicy

FAST_RETRIES = RetryPolicy(max_attempts=4, base_delay_seconds=0.001, max_delay_seconds=0.01)


@pytest.fixture(scope="session")
def fake_mturk_server() -> Iterator[FakeMTurk]:
    with FakeMTurk() as server:
        yield server


@pytest.fixture
def fake_mturk(fake_mturk_server: FakeMTurk) -> FakeMTurk:
    """The running stand-in, emptied before each test."""
    fake_mturk_server.world.reset()
    return fake_mturk_server


@pytest.fixture
def simulator(fake_mturk: FakeMTurk) -> FakeMTurkSimulator:
    return FakeMTurkSimulator(fake_mturk.base_url)


@pytest.fixture
def provider(fake_mturk: FakeMTurk) -> MTurkProvider:
    """The real boto3 client, through the provider, talking to the stand-in."""
    config = MTurkConfig(
        endpoint_url=fake_mturk.base_url,
        aws_access_key_id="AKIDFAKEFAKEFAKE",
        aws_secret_access_key="fake-secret",
        retry=FAST_RETRIES,
    )
    return MTurkProvider(config, rng=random.Random(7))


class RecordedSleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def stubbed() -> Iterator[tuple[MTurkProvider, Stubber, RecordedSleeps]]:
    """A provider over a Stubber-wrapped client (no network); sleeps are recorded, not slept."""
    client = boto3.client(
        "mturk",
        region_name="us-east-1",
        aws_access_key_id="AKIDFAKEFAKEFAKE",
        aws_secret_access_key="fake-secret",
    )
    sleeps = RecordedSleeps()
    provider = MTurkProvider(
        MTurkConfig(retry=RetryPolicy(max_attempts=3, base_delay_seconds=1.0)),
        client=client,
        sleep=sleeps,
        rng=random.Random(3),
    )
    with Stubber(client) as stubber:
        yield provider, stubber, sleeps
        stubber.assert_no_pending_responses()
