"""A researcher launches an MTurk batch from the staff page on a machine without AWS
credentials (the demo's default provider): no 500, a clear message on the batch's page, and
the way out (resume, cancel) offered."""

from __future__ import annotations

import pytest

from annotation.models import Batch
from tests.browser.conftest import login_browser
from tests.factories import batch_plausibility_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_launch_without_credentials_shows_why(page, live_server, staff_user, settings,
                                              monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    settings.MTURK_ENDPOINT_URL = "http://127.0.0.1:9/"  # never reached: signing fails first
    batch_plausibility_project(items=5)
    login_browser(page, live_server, staff_user)
    responses = []
    page.on("response", lambda response: responses.append(response.status))

    page.goto(f"{live_server.url}/staff/batches/new/")
    page.select_option("select[name=project]", "claire")
    page.fill("input[name=title]", "Rate fillers")
    page.check("input[name=splits][value=dev]")
    page.click("button:has-text('Estimate the cost')")
    page.click("button:has-text('Confirm and launch')")

    alert = page.locator("[data-testid=batch-error]")
    alert.wait_for()
    assert "AWS credentials for MTurk are not configured" in alert.inner_text()
    assert "AWS_ACCESS_KEY_ID" in alert.inner_text()
    assert page.locator("[data-testid=batch-status]").inner_text() == "failed"
    assert page.locator("button:has-text('Resume publishing')").count() == 1
    assert not [status for status in responses if status >= 500]

    # Resuming says the same, again without a 500; cancelling releases the items.
    page.click("button:has-text('Resume publishing')")
    page.locator("[data-testid=batch-error]").wait_for()
    page.click("button:has-text('Cancel batch')")
    page.locator("[data-testid=batch-status]:has-text('cancelled')").wait_for()
    assert Batch.objects.get().status == Batch.Status.CANCELLED
    assert not [status for status in responses if status >= 500]
