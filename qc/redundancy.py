"""Adaptive redundancy: ask for another judgement only where the current ones disagree.

A policy starts every item at ``start`` judgements and asks for more, up to ``maximum``, while
the answer is uncertain:

- categories: while the leading answer leads the runner-up by fewer than ``min_margin``
  votes (1-1 or 2-1: one more; 2-0 or 3-1: done);
- 1-5 ratings: while the mean is closer to a class boundary (CLAIRE: 2.5 and 4) than
  ``boundary_se`` standard errors of the mean (the standard deviation of the ratings, at
  least ``min_sd``, over the square root of their number).

:func:`needs_more` is the one rule, :func:`adaptive_target` the judgements it asks of an item;
the work queue, batch planning and the bench call them.
Expected cost: ``start`` judgements an item when every item is clear, ``maximum`` when none
is; the bench (``bench/bench_crowd.py``) measures the mean.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The CLAIRE class boundaries of a mean rating (qc.aggregation).
RATING_BOUNDARIES = (2.5, 4.0)


@dataclass(frozen=True)
class RedundancyPolicy:
    """``start`` / ``maximum`` judgements per item, and the uncertainty thresholds (see the
    module docstring)."""

    # Defaults tuned on bench/bench_crowd.py (docs/qc.md, "Adaptive redundancy"): fixed-5
    # accuracy or better with fewer judgements on ratings and categories, clean or with 30%
    # spammers. Two agreeing answers settle an item; the third and later go where they
    # disagree.
    start: int = 2
    maximum: int = 7
    min_margin: int = 2
    boundary_se: float = 1.2
    min_sd: float = 0.5

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> RedundancyPolicy:
        """A policy from a project's settings; unknown keys or bad values raise ValueError."""
        if not isinstance(values, Mapping):
            raise ValueError("adaptive redundancy must be an object")
        names = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown adaptive redundancy settings: {', '.join(unknown)}")
        converted = {}
        for name, value in values.items():
            whole = isinstance(getattr(cls, name), int)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{name}: must be a non-negative number")
            if whole and value != int(value):
                raise ValueError(f"{name}: must be a whole number")
            converted[name] = int(value) if whole else float(value)
        policy = cls(**converted)
        if not 1 <= policy.start <= policy.maximum:
            raise ValueError("start must be at least 1 and at most maximum")
        return policy

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def needs_more(answers: Sequence, policy: RedundancyPolicy, *, numeric: bool,
               boundaries: Sequence[float] = RATING_BOUNDARIES) -> bool:
    """Whether an item with these ``answers`` (labels, or ratings when ``numeric``) needs
    another judgement under ``policy``."""
    n = len(answers)
    if n < policy.start:
        return True
    if n >= policy.maximum:
        return False
    if numeric:
        values = np.asarray(answers, dtype=np.float64)
        spread = max(float(values.std(ddof=1)) if n > 1 else 0.0, policy.min_sd)
        distance = min(abs(float(values.mean()) - boundary) for boundary in boundaries)
        return distance < policy.boundary_se * spread / np.sqrt(n)
    counts = [*sorted(Counter(answers).values(), reverse=True), 0]
    return counts[0] - counts[1] < policy.min_margin


def adaptive_target(answers: Sequence, policy: RedundancyPolicy, *, numeric: bool) -> int:
    """Judgements an item with these counted ``answers`` should have: ``start`` until it has
    that many, then one more than it has while :func:`needs_more` says they disagree. The
    app stores it on the item (``annotation.services.adaptive``); the crowd bench's
    collection follows it too."""
    if len(answers) < policy.start:
        return policy.start
    return len(answers) + 1 if needs_more(answers, policy, numeric=numeric) else len(answers)
