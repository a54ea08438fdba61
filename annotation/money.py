"""Amounts of money as staff read them, in the currency the provider pays in.

Every amount is stored as a whole number of the smallest unit of its provider's currency
(``reward_cents``, ``amount_cents``): US cents for MTurk, which pays in US dollars only, and the
smallest unit of the workspace's currency for Prolific, which pays in the currency its
workspace was opened in (GBP or USD; ``PROLIFIC_CURRENCY``). Nothing stored says which, so the
provider decides it here, in one place, for every page and command that prints an amount.
Local annotators are not paid through the app: their amounts have no currency.
"""

from __future__ import annotations

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
    amount = f"{cents / 100:,.2f}"
    symbol = SYMBOLS.get(currency)
    return f"{symbol}{amount}" if symbol else f"{amount} {currency}"


def provider_money_text(cents: int, provider: str) -> str:
    """``money_text`` in what ``provider`` pays in."""
    return money_text(cents, provider_currency(provider))
