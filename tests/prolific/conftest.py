"""Fixtures for the Prolific door: the stand-in, a provider bound to it, a recording transport."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests
from requests.adapters import BaseAdapter

from annotation.fake_prolific import FakeProlific, FakeProlificSimulator
from annotation.providers.prolific import ProlificConfig, ProlificProvider, StudyTemplate
from annotation.providers.retry import RetryPolicy
from tests.factories import study_template

WORKSPACE = "wsp0000000000000000000001"


@pytest.fixture(scope="session")
def fake_prolific_server() -> Iterator[FakeProlific]:
    with FakeProlific() as server:
        yield server


@pytest.fixture
def fake_prolific(fake_prolific_server: FakeProlific) -> FakeProlific:
    """The running stand-in, emptied before each test."""
    fake_prolific_server.world.reset()
    return fake_prolific_server


@pytest.fixture
def simulator(fake_prolific: FakeProlific) -> FakeProlificSimulator:
    return FakeProlificSimulator(fake_prolific.base_url)


@pytest.fixture
def template() -> StudyTemplate:
    return study_template()


@pytest.fixture
def provider(fake_prolific: FakeProlific, template: StudyTemplate) -> ProlificProvider:
    """The real requests client, through the provider, talking to the stand-in."""
    config = ProlificConfig(api_url=fake_prolific.base_url, api_token="test-token",
                            workspace_id=WORKSPACE, page_size=7,
                            retry=RetryPolicy.from_settings())  # the tests' short waits
    return ProlificProvider(config, template=template)


class RecordingAdapter(BaseAdapter):
    """A requests transport that records every request and answers from a queue."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[requests.PreparedRequest] = []
        self.answers: list[tuple[int, object, dict]] = []

    def answer(self, status: int, body: object = None, headers: dict | None = None) -> None:
        self.answers.append((status, body, headers or {}))

    def send(self, request, **kwargs):
        self.requests.append(request)
        status, body, headers = self.answers.pop(0) if self.answers else (200, {}, {})
        response = requests.Response()
        response.status_code = status
        response._content = b"" if body is None else json.dumps(body).encode()
        response.headers.update({"Content-Type": "application/json", **headers})
        response.url = request.url
        response.request = request
        return response

    def close(self) -> None:
        pass

    def body(self, index: int = -1) -> dict:
        return json.loads(self.requests[index].body)


@pytest.fixture
def recorded(template: StudyTemplate) -> tuple[ProlificProvider, RecordingAdapter]:
    adapter = RecordingAdapter()
    session = requests.Session()
    session.mount("https://", adapter)
    config = ProlificConfig(api_token="secret-token", workspace_id=WORKSPACE,
                            retry=RetryPolicy.from_settings())
    return ProlificProvider(config, template=template, session=session), adapter


@pytest.fixture
def prolific_app(fake_prolific: FakeProlific, settings) -> FakeProlific:
    """The stand-in, emptied, with the app's settings pointing at it (get_provider("prolific")
    and every batch service then talk to it)."""
    settings.PROLIFIC_API_URL = fake_prolific.base_url
    settings.PROLIFIC_API_TOKEN = "test-token"
    settings.PROLIFIC_WORKSPACE_ID = WORKSPACE
    settings.PROLIFIC_SERVICE_FEE_PERCENT = "33.3"
    settings.PROLIFIC_VAT_PERCENT = "0"
    settings.PROLIFIC_MIN_HOURLY_REWARD_CENTS = 800
    settings.UNPACK_PUBLIC_URL = "https://unpack.example.org"
    return fake_prolific
