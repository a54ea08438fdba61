"""Amounts of money as staff read them, in the currency the provider pays in.

Every amount is stored as a whole number of the smallest unit of its provider's currency
(``reward_cents``, ``amount_cents``): US cents for MTurk, which pays in US dollars only, and the
smallest unit of the workspace's currency for Prolific, which pays in the currency its
workspace was opened in (GBP or USD; ``PROLIFIC_CURRENCY``). Nothing stored says which, so the
provider decides it here, in one place, for every page and command that prints an amount.
Local annotators are not paid through the app: their amounts have no currency.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings

#: What a currency's amounts are written with (a code not listed is written after the amount).
SYMBOLS = {"USD": "$", "GBP": "£", "EUR": "€"}


def provider_currency(provider: str) -> str | None:
    """ISO 4217 code of what ``provider`` pays in; None for local work (not paid here)."""
    if provider == "mturk":
        return "USD"
    if provider == "prolific":
        return settings.PROLIFIC_CURRENCY
    return None


#: What a currency's smallest unit is called, for forms that take whole units ("cents").
MINOR_UNITS = {"USD": "cents", "GBP": "pence", "EUR": "cents"}


def minor_unit_text(currency: str | None) -> str:
    """The unit an amount in ``currency``'s smallest unit is typed in: "cents (USD)",
    "pence (GBP)"; "cents" when the currency is unknown."""
    if currency is None:
        return "cents"
    return f"{MINOR_UNITS.get(currency, 'hundredths')} ({currency})"


def money_text(cents: int, currency: str | None) -> str:
    """``cents`` of ``currency`` for people: "$1.50", "£0.75", "12.00 CHF"; "150 cents"
    (no symbol to guess) when the currency is unknown."""
    if currency is None:
        return f"{cents} cents"
    sign, amount = "-" if cents < 0 else "", f"{abs(cents) / 100:,.2f}"
    symbol = SYMBOLS.get(currency)
    return f"{sign}{symbol}{amount}" if symbol else f"{sign}{amount} {currency}"


def provider_money_text(cents: int, provider: str) -> str:
    """``money_text`` in what ``provider`` pays in."""
    return money_text(cents, provider_currency(provider))


# --- the providers' fees: one definition for the launch estimate, the dashboard's cost and the
# budget (``services/batches/plan.py``, ``selectors/dashboard.py``) -----------------------------

#: MTurk charges 20% on top of reward and bonus ...
MTURK_COMMISSION = Decimal("0.20")
#: ... plus 20% more on the reward of HITs with 10 or more assignments, ...
MTURK_LARGE_HIT_SURCHARGE = Decimal("0.20")
MTURK_LARGE_HIT_THRESHOLD = 10
#: ... with a minimum fee of $0.01 per assignment or bonus.
MTURK_MINIMUM_FEE_CENTS = 1


def mturk_fee_cents(reward_cents: int, max_assignments: int) -> int:
    """MTurk's fee on one assignment: 20% (40% on HITs with 10+ assignments), at least 1 cent.
    A bonus pays the 20% (``max_assignments=1``)."""
    rate = MTURK_COMMISSION
    if max_assignments >= MTURK_LARGE_HIT_THRESHOLD:
        rate += MTURK_LARGE_HIT_SURCHARGE
    fee = (Decimal(reward_cents) * rate).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return max(MTURK_MINIMUM_FEE_CENTS, int(fee))


def _percent_of(cents: int, percent: Decimal) -> int:
    return int((Decimal(cents) * percent / 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def prolific_fee_cents(rewards_cents: int) -> tuple[int, int]:
    """Prolific's service fee on ``rewards_cents`` (``PROLIFIC_SERVICE_FEE_PERCENT``) and the
    VAT on that fee (``PROLIFIC_VAT_PERCENT``), each rounded to the cent."""
    fee = _percent_of(rewards_cents, Decimal(str(settings.PROLIFIC_SERVICE_FEE_PERCENT)))
    return fee, _percent_of(fee, Decimal(str(settings.PROLIFIC_VAT_PERCENT)))


def fees_cents(provider: str, *, places: Iterable[tuple[int, int, int]] = (),
               bonuses: Iterable[tuple[int, int]] = ()) -> int:
    """What ``provider`` charges on top of what workers get (its fee and the VAT on it), in its
    currency's smallest unit: ``places`` are ``(reward, max assignments of the HIT, how many)``,
    ``bonuses`` ``(amount, how many)``. MTurk: :func:`mturk_fee_cents` per assignment and per
    bonus; Prolific: :func:`prolific_fee_cents` on the total (service fee and VAT, on rewards
    and bonuses alike); local work: nothing."""
    if provider == "mturk":
        return (sum(mturk_fee_cents(reward, size) * n for reward, size, n in places)
                + sum(mturk_fee_cents(amount, 1) * n for amount, n in bonuses))
    if provider == "prolific":
        total = (sum(reward * n for reward, _, n in places)
                 + sum(amount * n for amount, n in bonuses))
        return sum(prolific_fee_cents(total))
    return 0
