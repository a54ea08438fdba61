"""Issue 24, point 6: money in the provider's currency wherever staff read it (annotation.money).

MTurk pays in US dollars; Prolific in its workspace's currency (``PROLIFIC_CURRENCY``), which the
stored amounts (smallest unit) do not say: a Prolific bonus must never read "$" when the
workspace pays in pounds."""

from __future__ import annotations

import pytest
from django.test import override_settings

from annotation.models import Assignment, Bonus, Worker
from annotation.money import money_text, provider_currency, provider_money_text
from annotation.selectors.bonuses import bonus_report
from tests.factories import claire_sample, prolific_study_hit, publish_hit

pytestmark = pytest.mark.django_db


def test_each_provider_names_its_currency():
    assert provider_currency("mturk") == "USD"
    assert provider_currency("local") is None
    with override_settings(PROLIFIC_CURRENCY="GBP"):
        assert provider_money_text(1250, "prolific") == "£12.50"
    with override_settings(PROLIFIC_CURRENCY="USD"):
        assert provider_money_text(1250, "prolific") == "$12.50"
    assert provider_money_text(123456, "mturk") == "$1,234.56"
    assert money_text(300, "CHF") == "3.00 CHF"
    assert money_text(300, None) == "300 cents"


@pytest.mark.parametrize(("provider", "said"), [("mturk", "$0.50"), ("prolific", "£0.50")])
def test_a_bonus_report_reads_in_the_providers_currency(provider, said):
    project, items = claire_sample()
    hit = (prolific_study_hit(project, study_id="S1", items=items[:1]) if provider == "prolific"
           else publish_hit(project, items=items[:1]))
    worker = Worker.objects.create(provider=provider, external_id="W1")
    assignment = Assignment.objects.create(hit=hit, worker=worker, provider_assignment_id="A1",
                                           status=Assignment.Status.APPROVED)
    bonus = Bonus.objects.create(assignment=assignment, amount_cents=50, reason="Thanks",
                                 unique_request_token=f"tok-{provider}",
                                 sent_at="2026-01-01T00:00:00Z")
    with override_settings(PROLIFIC_CURRENCY="GBP"):
        done, text = bonus_report(bonus.pk)
    assert done and text == f"bonus {bonus.pk}: {said} paid"
