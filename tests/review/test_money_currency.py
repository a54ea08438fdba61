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


def _prolific_assignment(status=Assignment.Status.SUBMITTED):
    project, items = claire_sample(slug="gbp-words")
    hit = prolific_study_hit(project, study_id="SGBP", items=items[:1])
    worker = Worker.objects.create(provider="prolific", external_id="5f0c0ffee0c0ffee0c0ffee1")
    return hit, Assignment.objects.create(hit=hit, worker=worker, provider_assignment_id="SGBP-1",
                                          status=status)


@override_settings(PROLIFIC_CURRENCY="GBP")
def test_a_prolific_bonus_cap_reads_in_pounds():
    from django.core.exceptions import ValidationError

    from annotation.services import decisions

    _, assignment = _prolific_assignment()
    with pytest.raises(ValidationError) as refused:
        decisions.bonus_create(assignment_id=assignment.pk, amount_cents=10_001, reason="x")
    assert refused.value.message_dict["amount_cents"] == [
        "a bonus must be between £0.01 and £100.00"]
    assert not Bonus.objects.exists()


@override_settings(PROLIFIC_CURRENCY="GBP")
def test_a_prolific_batch_reads_in_pounds_on_the_staff_pages(staff_client):
    from annotation.models import StatusEvent

    hit, assignment = _prolific_assignment()
    batch = hit.batch
    batch.reward_cents = 175
    batch.save(update_fields=["reward_cents"])
    StatusEvent.objects.create(kind="bonus_created", batch=batch, assignment=assignment,
                               detail={"bonus_id": 3, "amount_cents": 25})
    StatusEvent.objects.create(kind="batch_launched", batch=batch, detail={"estimate": {
        "hits": 1, "assignments": 4, "provider": "prolific", "reward_cents": 700,
        "fee_cents": 233, "vat_cents": 47, "total_cents": 980}})
    detail = staff_client.get(f"/staff/batches/{batch.pk}/").content.decode()
    listing = staff_client.get("/staff/batches/").content.decode()
    assert "bonus queued; £0.25" in detail
    assert "estimate: 1 HITs, 4 places, £9.80 in all (rewards £7.00, fees £2.33, VAT £0.47)" in (
        detail)
    assert "£1.75 per" in detail and "£1.75" in listing
    for page in (detail, listing):
        assert "$" not in page.split("<main", 1)[-1] and "¢" not in page and " cents" not in page
    # The bonus forms say what the whole number is in.
    from django.template.loader import render_to_string

    for template in ("_assignment_actions.html", "_approve_and_bonus.html"):
        form = render_to_string(f"frontend/review/{template}", {
            "assignment": assignment, "project": batch.project})
        assert 'name="amount_cents"' in form and 'placeholder="pence (GBP)"' in form
        assert "cents" not in form.replace("amount_cents", "")
