"""Choosing a provider, and the marketplace an MTurk provider talks to."""

import pytest
from django.test import override_settings

from annotation.providers import get_provider
from annotation.providers.local import LocalProvider
from annotation.providers.mturk import LIVE_ENDPOINT_URL, SANDBOX_ENDPOINT_URL


def test_local_is_the_default():
    assert isinstance(get_provider(), LocalProvider)


def test_unknown_provider_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown provider 'crowdflower'"):
        get_provider("crowdflower")


@override_settings(MTURK_ENDPOINT_URL=None, MTURK_LIVE=False)
def test_sandbox_unless_live_is_asked_for():
    assert get_provider("mturk").config.resolved_endpoint_url == SANDBOX_ENDPOINT_URL
    assert get_provider("mturk", live=True).config.resolved_endpoint_url == LIVE_ENDPOINT_URL


@override_settings(MTURK_ENDPOINT_URL=None, MTURK_LIVE=True)
def test_a_batch_launched_in_the_sandbox_stays_there_when_the_default_is_live():
    assert get_provider("mturk", live=False).config.resolved_endpoint_url == SANDBOX_ENDPOINT_URL
    assert get_provider("mturk").config.resolved_endpoint_url == LIVE_ENDPOINT_URL


@override_settings(MTURK_ENDPOINT_URL="http://127.0.0.1:8765", MTURK_LIVE=False)
def test_an_explicit_endpoint_wins():
    assert get_provider("mturk", live=True).config.resolved_endpoint_url == (
        "http://127.0.0.1:8765")
