"""An MTurk bonus whose SendBonus reply is lost (the stand-in pays, then closes the connection
without answering): settled from MTurk's own ListBonusPayments, never sent again when paid;
sent once more with the same token when MTurk lists nothing. The command says exactly what
happened. Jobs run inline (the embedded default): transactional tests, so they run at commit."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Bonus
from annotation.services.batches.collect import batch_collect
from tests.factories import batch_plausibility_project, launched_batch, submitted_assignment

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def assignment_id(fake, simulator) -> str:
    batch = launched_batch(batch_plausibility_project(items=5))
    assignment = submitted_assignment(simulator, batch.hits.get(), "ABONUSW1")
    batch_collect(batch_id=batch.pk)
    return assignment


def review(*args: str) -> str:
    out = StringIO()
    call_command("review", *args, stdout=out)
    return out.getvalue()


def test_a_lost_reply_to_a_paid_bonus_is_settled_from_mturks_list(fake, simulator,
                                                                  assignment_id):
    simulator.withhold_replies("SendBonus")
    said = review("bonus", assignment_id, "--amount", "0.25", "--reason", "Careful work")
    bonus = Bonus.objects.get()
    assert said.strip() == (f"bonus {bonus.pk}: $0.25 paid: the reply to the pay call was "
                            "lost, and MTurk's list of payments shows it paid (nothing was "
                            "sent again)")
    assert bonus.sent_at is not None
    assert len(fake.world.bonuses) == 1
    assert simulator.stats()["calls"]["SendBonus"] == 1  # not sent again
    assert simulator.stats()["calls"]["ListBonusPayments"] >= 1


def test_a_lost_reply_mturk_never_acted_on_is_sent_once_more_with_the_same_token(
        fake, simulator, assignment_id):
    # A fault MTurk answers after doing nothing (500), twice: the outcome is unknown both times.
    simulator.inject_fault("SendBonus", error="ServiceFault", count=2)
    with pytest.raises(CommandError) as unknown:
        review("bonus", assignment_id, "--amount", "0.25", "--reason", "Careful work")
    bonus = Bonus.objects.get()
    text = str(unknown.value)
    assert text.startswith(f"bonus {bonus.pk}: $0.25: outcome unknown: the reply to paying "
                           "$0.25 was lost")
    assert "MTurk may have paid it" in text
    assert "queued" not in text and "not paid yet; sent again" not in text
    assert f"review bonus-check {bonus.pk}" in text  # nothing retries inline: says what does
    assert simulator.stats()["calls"]["SendBonus"] == 2
    # The command it names: MTurk lists nothing, so it is sent once more (same token): paid.
    assert review("bonus-check", str(bonus.pk)).strip() == f"bonus {bonus.pk}: $0.25 paid"
    assert len(fake.world.bonuses) == 1
    assert simulator.stats()["calls"]["SendBonus"] == 3
