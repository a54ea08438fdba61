"""How far a gold-item flag can be trusted: the binomial arithmetic behind the advice on how
many gold items each worker should answer.

The gold rule (``qc.flags.gold_flags``) flags a worker who failed more than
``max_gold_failure_rate`` of the ``n`` gold items they answered. If every answer of an honest
worker is wrong with probability ``honest_error`` and every answer of a spammer with
``spammer_error``, independently, the number failed is binomial, so

* the **false-flag rate** is P(an honest worker is flagged) = P(Binomial(n, honest_error) > rate·n),
* the **recall** is P(a spammer is flagged) = P(Binomial(n, spammer_error) > rate·n).

With the defaults (10 % honest error, 40 % spammer error, flag above 25 % failed), 20 gold
items give about 1 % false flags and 87 % recall; 10 give 7 % false flags and 83 % recall,
5 give 8 % false flags and 66 % recall.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import binom

#: What a careful worker gets wrong on a gold item, and what a random or careless one does.
HONEST_ERROR = 0.10
SPAMMER_ERROR = 0.40
#: The gold-item counts the console's table shows.
GUIDANCE_COUNTS = (5, 10, 20, 30, 50)


@dataclass(frozen=True)
class GoldReliability:
    """What the gold rule does for a worker who answered ``gold_items`` gold items."""

    gold_items: int
    min_failures: int  # the fewest failed gold items that flag the worker
    false_flag_rate: float  # share of honest workers flagged
    recall: float  # share of spammers flagged


def min_failures_flagged(gold_items: int, max_failure_rate: float) -> int:
    """The fewest failures out of ``gold_items`` that the rule flags (failed/n > rate, as
    ``gold_flags`` compares it); ``gold_items + 1`` when no count can."""
    if gold_items < 1:
        raise ValueError("gold_items must be at least 1")
    if not 0 <= max_failure_rate < 1:
        raise ValueError("max_failure_rate must be from 0 up to (not including) 1")
    return next((failed for failed in range(gold_items + 1)
                 if failed / gold_items > max_failure_rate), gold_items + 1)


def gold_reliability(gold_items: int, *, max_failure_rate: float = 0.25,
                     honest_error: float = HONEST_ERROR,
                     spammer_error: float = SPAMMER_ERROR) -> GoldReliability:
    """False-flag rate and recall of the gold rule for a worker with ``gold_items`` answered."""
    for name, value in (("honest_error", honest_error), ("spammer_error", spammer_error)):
        if not 0 <= value <= 1:
            raise ValueError(f"{name} must be a probability from 0 to 1")
    threshold = min_failures_flagged(gold_items, max_failure_rate)
    # binom.sf(k - 1) = P(X >= k).
    return GoldReliability(gold_items, threshold,
                           float(binom.sf(threshold - 1, gold_items, honest_error)),
                           float(binom.sf(threshold - 1, gold_items, spammer_error)))


def gold_items_needed(*, max_false_flags: float = 0.02, min_recall: float = 0.85,
                      max_failure_rate: float = 0.25, honest_error: float = HONEST_ERROR,
                      spammer_error: float = SPAMMER_ERROR, most: int = 500) -> int | None:
    """The fewest gold items per worker for which the rule's false-flag rate is at most
    ``max_false_flags`` and its recall at least ``min_recall``; None when no count up to
    ``most`` does (the threshold is too close to one of the error rates)."""
    for gold_items in range(1, most + 1):
        found = gold_reliability(gold_items, max_failure_rate=max_failure_rate,
                                 honest_error=honest_error, spammer_error=spammer_error)
        if found.false_flag_rate <= max_false_flags and found.recall >= min_recall:
            return gold_items
    return None


def gold_guidance(*, max_failure_rate: float = 0.25,
                  counts: tuple[int, ...] = GUIDANCE_COUNTS) -> list[GoldReliability]:
    """The console's table: the rule's reliability at each of ``counts`` gold items."""
    return [gold_reliability(n, max_failure_rate=max_failure_rate) for n in counts]


# --- serving (the app's work queue and the crowd bench follow these) -----------------------


def gold_due(*, answered: int, gold_answered: int, rate: float, first: int = 0) -> bool:
    """Whether the next item served to a worker who has ``answered`` items (``gold_answered``
    of them gold) should be gold: the k-th item served is gold when ``floor(k × rate)``
    exceeds the gold items answered (a rate of 0.1 makes every tenth one gold), and the first
    ``first`` items are gold (a spammer meets the gold rule before doing any work; they count
    towards the rate, so over a worker's ``first / rate`` items or more the share stays
    ``rate``). No gold at a rate of 0."""
    if rate <= 0:
        return False
    if gold_answered < first:
        return True
    # The epsilon keeps 0.1 × 10 from falling to 0.999….
    return math.floor((answered + 1) * rate + 1e-9) > gold_answered


def gold_item_choice(candidates: Sequence, worker_key: int):
    """The gold item to serve a worker among ``candidates`` (the gold items they have not
    answered, in id order), or None: a different order per worker (``worker_key``, their id),
    so that workers comparing notes do not see the same gold items in the same places."""
    if not candidates:
        return None
    return candidates[worker_key * 7919 % len(candidates)]
