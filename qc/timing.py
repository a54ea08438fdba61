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

``too_fast`` is relative to the batch: when a third of the workers click at random the batch's
median and spread move towards them and their answers escape. So there is also an
**absolute floor** per item (``under_time_floor``): ``min_item_seconds`` plus the words the
page shows for the item (``read_words``) at ``reading_words_per_minute``
(:func:`floor_seconds`; defaults 2 s and 300 words a minute, quicker than most adults read).
The same worked seconds are judged: on a page of several items, the page's worked time per
item against its items' mean floor (the page's total against their total).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from qc.flags import (
    DEFAULT_SETTINGS,
    TIMING_MISMATCH,
    UNDER_TIME_FLOOR,
    Flag,
    FlagSettings,
    _plain,
    timing_flags_from_arrays,
)


class PageTimingRow(NamedTuple):
    """One answer's timing facts. Times are seconds on the server's clock (e.g. POSIX
    timestamps); None where unknown.

    ``page_key``: answers sharing a (non-None) key were served on one page (the selector uses
    ``(assignment id, served_at)``); None = a page of its own. ``revision``: a changed answer
    (going back), not judged for speed. ``read_words``: the words the page shows for the
    item (its floor, :func:`floor_seconds`); None = unknown, the floor's fixed part only."""

    target_id: Any
    page_key: Any
    claimed_seconds: float | None
    served_at: float | None
    submitted_at: float | None
    revision: bool = False
    read_words: int | None = None


class PageTiming(NamedTuple):
    """The timing verdict inputs of one answer (see the module docstring)."""

    target_id: Any
    worked_seconds: float | None
    page_items: int


@dataclass(frozen=True)
class TimingArrays:
    """The columnar form of ``PageTimingRow`` (aligned arrays, one entry per answer): what the
    rules below compute on, so a million answers are judged without a Python object each.

    ``page_codes``: answers with the same code were served on one page (any integers);
    unknown times and claims are NaN; ``read_words``: words the page shows for each answer's
    item (NaN unknown; None: unknown for all)."""

    target_ids: np.ndarray
    page_codes: np.ndarray
    claimed_seconds: np.ndarray
    served_at: np.ndarray
    submitted_at: np.ndarray
    revision: np.ndarray
    read_words: np.ndarray | None = None

    @classmethod
    def from_rows(cls, rows: Iterable[PageTimingRow]) -> TimingArrays:
        rows = [PageTimingRow(*row) for row in rows]
        codes: dict[Any, int] = {}
        page_codes = np.fromiter(
            (codes.setdefault(row.page_key, len(codes)) if row.page_key is not None
             else -1 - k for k, row in enumerate(rows)), dtype=np.int64, count=len(rows))
        target_ids = np.empty(len(rows), dtype=object)
        target_ids[:] = [row.target_id for row in rows]

        def seconds(values) -> np.ndarray:
            return np.array([np.nan if value is None else value for value in values],
                            dtype=np.float64).reshape(len(rows))

        return cls(target_ids, page_codes,
                   seconds(row.claimed_seconds for row in rows),
                   seconds(row.served_at for row in rows),
                   seconds(row.submitted_at for row in rows),
                   np.array([bool(row.revision) for row in rows], dtype=bool).reshape(len(rows)),
                   seconds(row.read_words for row in rows))


@dataclass(frozen=True)
class _Pages:
    """Per-page figures (indexed by page number) and each answer's page number."""

    page: np.ndarray  # per answer
    size: np.ndarray  # answers on the page
    span: np.ndarray  # server seconds from serving to the last answer; NaN when unknown
    claims: np.ndarray  # answers on the page with a claimed duration
    claimed_total: np.ndarray  # their sum (0 without any)


def _pages(timings: TimingArrays) -> _Pages:
    _, page = np.unique(timings.page_codes, return_inverse=True)
    page = page.ravel()
    n_pages = int(page.max()) + 1 if len(page) else 0
    size = np.bincount(page, minlength=n_pages)
    unknown = np.isnan(timings.served_at) | np.isnan(timings.submitted_at)
    last = np.full(n_pages, -np.inf)
    np.maximum.at(last, page, np.where(unknown, -np.inf, timings.submitted_at))
    first = np.full(n_pages, np.inf)
    np.minimum.at(first, page, np.where(unknown, np.inf, timings.served_at))
    with np.errstate(invalid="ignore"):
        span = np.where(np.bincount(page, unknown, minlength=n_pages) > 0, np.nan,
                        np.maximum(last - first, 0.0))
    claimed = ~np.isnan(timings.claimed_seconds)
    return _Pages(page, size, span, np.bincount(page, claimed, minlength=n_pages),
                  np.bincount(page, np.where(claimed, timings.claimed_seconds, 0.0),
                              minlength=n_pages))


def _judged_seconds(timings: TimingArrays, pages: _Pages) -> np.ndarray:
    """Per answer, the seconds the speed rules judge (NaN: not judged), see the module doc."""
    span, total = pages.span, pages.claimed_total
    with np.errstate(invalid="ignore", divide="ignore"):
        over = ~np.isnan(span) & (pages.claims > 0) & (total != 0) & (total > span)
        scale = np.where(over, span / np.where(total != 0, total, 1.0), 1.0)
        unclaimed_share = (np.maximum(span - total * scale, 0.0)
                           / np.maximum(pages.size - pages.claims, 1))
        page = pages.page
        claimed = timings.claimed_seconds
        worked = np.where(np.isnan(claimed), unclaimed_share[page], claimed * scale[page])
        known = ~np.isnan(worked)
        n_known = np.bincount(page, known, minlength=len(pages.size))
        page_mean = np.bincount(page, np.where(known, worked, 0.0),
                                minlength=len(pages.size)) / n_known
        judged = np.where(pages.size[page] > 1, page_mean[page], worked)
    return np.where(timings.revision | ~known, np.nan, judged)


def page_timings(rows: Iterable[PageTimingRow]) -> list[PageTiming]:
    """Worked seconds per answer (revisions get None), in the rows' order."""
    timings = TimingArrays.from_rows(rows)
    pages = _pages(timings)
    judged = _judged_seconds(timings, pages)
    return [PageTiming(_plain(target), None if np.isnan(seconds) else float(seconds),
                       int(pages.size[page]))
            for target, seconds, page in zip(timings.target_ids.tolist(), judged.tolist(),
                                             pages.page.tolist(), strict=True)]


def _mismatch_flags(timings: TimingArrays, pages: _Pages, settings: FlagSettings) -> list[Flag]:
    span, claimed = pages.span, pages.claimed_total
    with np.errstate(invalid="ignore"):
        mismatched = (~np.isnan(span) & (pages.claims > 0)
                      & (claimed > span * settings.max_claim_over_server
                         + settings.claim_slack_seconds))
    flags = []
    for k in np.flatnonzero(mismatched[pages.page]).tolist():
        page = pages.page[k]
        page_claimed, page_span, size = float(claimed[page]), float(span[page]), pages.size[page]
        what = (f"the browser reported {page_claimed:.1f}s of work" if size == 1 else
                f"the browser reported {page_claimed:.1f}s of work on the {size} items of "
                f"this page")
        detail = (f"{what}; the server saw {page_span:.1f}s pass between serving the page and "
                  f"its last answer")
        flags.append(Flag(_plain(timings.target_ids[k]), TIMING_MISMATCH,
                          page_claimed - page_span, detail))
    return flags


def mismatch_flags(rows: Iterable[PageTimingRow],
                   settings: FlagSettings = DEFAULT_SETTINGS) -> list[Flag]:
    """``timing_mismatch`` on every answer of a page whose claimed active times add up to more
    than ``max_claim_over_server`` × the server's page time + ``claim_slack_seconds``; score =
    the seconds claimed beyond what the server saw pass."""
    timings = TimingArrays.from_rows(rows)
    return _mismatch_flags(timings, _pages(timings), settings)


def floor_seconds(read_words, settings: FlagSettings = DEFAULT_SETTINGS) -> np.ndarray:
    """The least time an honest answer takes, per item: ``min_item_seconds`` plus
    ``read_words`` (NaN: unknown, counted as none) at ``reading_words_per_minute`` (0 or
    less: words not counted)."""
    words = np.nan_to_num(np.asarray(read_words, dtype=np.float64), nan=0.0)
    per_word = (60.0 / settings.reading_words_per_minute
                if settings.reading_words_per_minute > 0 else 0.0)
    return settings.min_item_seconds + np.maximum(words, 0.0) * per_word


def _floor_flags(timings: TimingArrays, pages: _Pages, judged: np.ndarray,
                 settings: FlagSettings) -> list[Flag]:
    """``under_time_floor`` where the judged seconds are under the floor: an answer's own
    floor on a page of one item, the page's items' mean floor on a page of several (the
    worked time per item is the page's mean too); score = judged seconds / floor."""
    n_answers = len(timings.target_ids)
    words = (timings.read_words if timings.read_words is not None
             else np.full(n_answers, np.nan))
    floors = floor_seconds(words, settings)
    page = pages.page
    page_floor = (np.bincount(page, floors, minlength=len(pages.size))
                  / np.maximum(pages.size, 1))
    floor = np.where(pages.size[page] > 1, page_floor[page], floors)
    with np.errstate(invalid="ignore"):
        under = ~np.isnan(judged) & (floor > 0) & (judged < floor)
    flags = []
    for k in np.flatnonzero(under).tolist():
        of_page = ("" if pages.size[page[k]] == 1 else
                   f" (the mean of the {pages.size[page[k]]} items of its page)")
        words_read = ("" if np.isnan(words[k]) or settings.reading_words_per_minute <= 0 else
                      f" plus {int(words[k])} words at {settings.reading_words_per_minute:g} "
                      f"words a minute")
        flags.append(Flag(_plain(timings.target_ids[k]), UNDER_TIME_FLOOR,
                          float(judged[k] / floor[k]),
                          f"worked {judged[k]:.1f}s on the item, under its floor of "
                          f"{floor[k]:.1f}s{of_page}: {settings.min_item_seconds:g}s"
                          f"{words_read}"))
    return flags


def timing_arrays_flags(timings: TimingArrays,
                        settings: FlagSettings = DEFAULT_SETTINGS) -> list[Flag]:
    """Every timing flag of ONE batch of answers given as arrays: ``too_fast`` / ``too_slow``
    on the worked seconds, ``under_time_floor`` against the absolute floor and
    ``timing_mismatch`` per page."""
    pages = _pages(timings)
    judged = _judged_seconds(timings, pages)
    kept = ~np.isnan(judged)
    return (timing_flags_from_arrays(timings.target_ids[kept], judged[kept], settings)
            + _floor_flags(timings, pages, judged, settings)
            + _mismatch_flags(timings, pages, settings))


def page_timing_flags(rows: Iterable[PageTimingRow],
                      settings: FlagSettings = DEFAULT_SETTINGS) -> list[Flag]:
    """Every timing flag of ONE batch of answers: ``too_fast`` / ``too_slow`` on the worked
    seconds (:func:`page_timings`), ``under_time_floor`` (:func:`floor_seconds`) and
    ``timing_mismatch`` per page (:func:`mismatch_flags`)."""
    return timing_arrays_flags(TimingArrays.from_rows(rows), settings)
