"""Timing flags that compare like with like, for every shape of task page.

What "time on this item" means (the browser and the server agree on it):

- The browser reports, per item, its **active time** (``duration_ms``): the milliseconds during
  which that item was the one the worker was working on -- from when it was focused or touched
  (pointer, key, input) until another item was, or the item was saved -- counted only while
  the page was visible (``frontend/static/frontend/annotate/timing.js``). A page of one item
  therefore reports roughly "shown until saved"; a page of several items saved at once on
  Submit reports each item's share of the page, never "since the page opened".
- The server cannot see inside a page; it sees when it served the page (``served_at``) and
  when each answer of that page arrived (``submitted_at``). A **page** is the answers of one
  worker that share an assignment and a ``served_at`` (an MTurk HIT or a Prolific session
  served once, answered once or question by question as in CANARD's sequential reveal); a
  local annotator's page holds one item (each item is served and saved on its own).

So the comparison is per page: the items' claimed active times **together** must fit in the
time the server saw the page open (``max(submitted_at) - served_at``), within
``max_claim_over_server`` times it plus ``claim_slack_seconds``; otherwise every answer of the
page is flagged ``timing_mismatch``. Going back to change an answer (a revision, served by no
lease) has no server measure and is never judged for speed: a correction is quick by nature.

The speed rules (``too_fast`` / ``too_slow``, :func:`qc.flags.timing_flags_from_arrays`) judge
each answer's **worked seconds**: on a page of one item, its claim, capped by what the server
saw pass; on a page of several items, the page's worked time per item (the claims, scaled down
when together they exceed what the server saw pass). The per-item split is evidence for the
reviewer, not the verdict: an honest worker who reads item 3 while item 2 still has the focus
gives item 3 half a second of "active" time and item 2 the rest, so judging items one by one
flags honest workers both ways; a random clicker is fast on the whole page, which the page's
time per item catches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from qc.flags import (
    DEFAULT_SETTINGS,
    TIMING_MISMATCH,
    Flag,
    FlagSettings,
    _plain,
    timing_flags,
)


class PageTimingRow(NamedTuple):
    """One answer's timing facts. Times are seconds on the server's clock (e.g. POSIX
    timestamps); None where unknown.

    ``page_key``: answers sharing a (non-None) key were served on one page (the selector uses
    ``(assignment id, served_at)``); None = a page of its own. ``revision``: a changed answer
    (going back), not judged for speed."""

    target_id: Any
    page_key: Any
    claimed_seconds: float | None
    served_at: float | None
    submitted_at: float | None
    revision: bool = False


class PageTiming(NamedTuple):
    """The timing verdict inputs of one answer (see the module docstring)."""

    target_id: Any
    worked_seconds: float | None
    page_items: int


def _pages(rows: list[PageTimingRow]) -> list[list[PageTimingRow]]:
    grouped: dict[Any, list[PageTimingRow]] = defaultdict(list)
    pages = []
    for row in rows:
        if row.page_key is None:
            pages.append([row])
        else:
            grouped[row.page_key].append(row)
    pages.extend(grouped.values())
    return pages


def _server_span(page: list[PageTimingRow]) -> float | None:
    """Seconds from serving the page to its last answer; None when any time is unknown."""
    if any(row.served_at is None or row.submitted_at is None for row in page):
        return None
    return max(0.0, max(row.submitted_at for row in page) - min(row.served_at for row in page))


def page_timings(rows: Iterable[PageTimingRow]) -> list[PageTiming]:
    """Worked seconds per answer (revisions get None), page by page."""
    result = []
    for page in _pages([PageTimingRow(*row) for row in rows]):
        span = _server_span(page)
        claims = [row.claimed_seconds for row in page if row.claimed_seconds is not None]
        claimed_total = float(sum(claims)) if claims else None
        scale = 1.0
        if span is not None and claimed_total and claimed_total > span:
            scale = span / claimed_total
        unclaimed_share = None
        if span is not None:
            unclaimed_share = max(span - (claimed_total or 0.0) * scale, 0.0) / max(
                len(page) - len(claims), 1)
        worked = [row.claimed_seconds * scale if row.claimed_seconds is not None
                  else unclaimed_share for row in page]
        known = [value for value in worked if value is not None]
        page_mean = float(np.mean(known)) if known else None
        for row, seconds in zip(page, worked, strict=True):
            if row.revision or seconds is None:
                judged = None
            elif len(page) > 1:
                judged = page_mean
            else:
                judged = seconds
            result.append(PageTiming(row.target_id, judged, len(page)))
    return result


def mismatch_flags(rows: Iterable[PageTimingRow],
                   settings: FlagSettings = DEFAULT_SETTINGS) -> list[Flag]:
    """``timing_mismatch`` on every answer of a page whose claimed active times add up to more
    than ``max_claim_over_server`` × the server's page time + ``claim_slack_seconds``; score =
    the seconds claimed beyond what the server saw pass."""
    flags = []
    for page in _pages([PageTimingRow(*row) for row in rows]):
        span = _server_span(page)
        claims = [row.claimed_seconds for row in page if row.claimed_seconds is not None]
        if span is None or not claims:
            continue
        claimed = float(sum(claims))
        if claimed <= span * settings.max_claim_over_server + settings.claim_slack_seconds:
            continue
        what = (f"the browser reported {claimed:.1f}s of work" if len(page) == 1 else
                f"the browser reported {claimed:.1f}s of work on the {len(page)} items of "
                f"this page")
        detail = (f"{what}; the server saw {span:.1f}s pass between serving the page and "
                  f"its last answer")
        flags.extend(Flag(_plain(row.target_id), TIMING_MISMATCH, claimed - span, detail)
                     for row in page)
    return flags


def page_timing_flags(rows: Iterable[PageTimingRow],
                      settings: FlagSettings = DEFAULT_SETTINGS) -> list[Flag]:
    """Every timing flag of ONE batch of answers: ``too_fast`` / ``too_slow`` on the worked
    seconds (:func:`page_timings`) and ``timing_mismatch`` per page (:func:`mismatch_flags`)."""
    rows = [PageTimingRow(*row) for row in rows]
    judged = [(timing.target_id, timing.worked_seconds) for timing in page_timings(rows)
              if timing.worked_seconds is not None]
    return timing_flags(judged, settings) + mismatch_flags(rows, settings)
