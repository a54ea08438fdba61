"""Timing flags per page shape: one item, several items saved at once, CANARD's sequential
reveal, going back; honest workers at a normal pace are never flagged, clickers are."""

import numpy as np
import pytest

from qc.flags import (
    TIMING_MISMATCH,
    TOO_FAST,
    TOO_SLOW,
    UNDER_TIME_FLOOR,
    FlagSettings,
    timing_flags,
)
from qc.timing import (
    PageTimingRow,
    floor_seconds,
    mismatch_flags,
    page_timing_flags,
    page_timings,
)


def reasons(flags, reason):
    return {flag.target_id for flag in flags if flag.reason_code == reason}


def test_claimed_durations_the_server_did_not_see_are_flagged():
    """The audit: 12 answers 10 ms apart, each claiming 15-40 s. The browser's word alone
    raised nothing; against the server's own times every answer is a mismatch."""
    claims = [15.0 + 2.5 * k for k in range(12)]
    cheat = [PageTimingRow(f"cheat{k}", None, claims[k], 100.0 * k, 100.0 * k + 0.01)
             for k in range(12)]
    honest = [PageTimingRow(f"ok{k}", None, 20.0 + k, 5000.0, 5021.0 + k) for k in range(30)]
    assert timing_flags([(row.target_id, row.claimed_seconds) for row in cheat + honest]) == []
    flags = page_timing_flags(cheat + honest)
    mismatched = reasons(flags, TIMING_MISMATCH)
    assert mismatched == {row.target_id for row in cheat}
    # The server's seconds cap the claim, so the same answers are also too fast.
    assert reasons(flags, TOO_FAST) == mismatched


def test_server_times_cap_claims_within_slack_and_fill_in_missing_ones():
    def worked(claim, served, submitted):
        [timing] = page_timings([PageTimingRow("a", None, claim, served, submitted)])
        return timing.worked_seconds

    assert worked(30.0, 0.0, 12.0) == 12.0
    assert worked(5.0, 0.0, 12.0) == 5.0  # less than the server saw: fine
    assert worked(None, 0.0, 12.0) == 12.0
    assert worked(7.0, None, None) == 7.0
    assert worked(None, None, None) is None
    within = [PageTimingRow("a", None, 3.4, 0.0, 1.0), PageTimingRow("b", None, 14.0, 0, 10),
              PageTimingRow("c", None, 9.0, None, None)]
    assert mismatch_flags(within) == []
    [flag] = mismatch_flags([PageTimingRow("d", None, 20.0, 0.0, 4.0)])
    assert flag.score == 16.0 and "server saw 4.0s" in flag.detail
    assert page_timing_flags([]) == []


def multi_item_page(worker, page, served, item_seconds, *, gap=0.05):
    """A page of ``len(item_seconds)`` items served at ``served`` and saved at once on
    Submit (the answers arrive ``gap`` seconds apart); each item claims its active time."""
    submit = served + sum(item_seconds) + 3.0  # + reading the instructions, pressing Submit
    return [PageTimingRow(f"{worker}:{page}:{k}", (worker, page), seconds, served,
                          submit + gap * k) for k, seconds in enumerate(item_seconds)]


def test_the_multi_item_page_compares_like_with_like():
    """The field report: 3 honest MTurk and 3 honest Prolific workers on 4-item pages saved at
    once, each page reporting per-item time; 109 of 150 honest answers were flagged
    ``timing_mismatch`` when the server measured "since the previous save". Now: none, and
    the random clicker (300 ms an item) is ``too_fast`` on every answer."""
    rng = np.random.default_rng(7)
    rows, clicker = [], set()
    for worker in range(8):
        for page in range(10):
            served = 10_000.0 * worker + 1000.0 * page
            if worker == 7:
                page_rows = multi_item_page(f"w{worker}", page, served,
                                            rng.uniform(0.2, 0.4, 4).tolist())
                clicker.update(row.target_id for row in page_rows)
            else:
                page_rows = multi_item_page(f"w{worker}", page, served,
                                            rng.lognormal(np.log(12), 0.5, 4).tolist())
            rows.extend(page_rows)
    flags = page_timing_flags(rows)
    assert reasons(flags, TIMING_MISMATCH) == set()
    assert reasons(flags, TOO_FAST) == clicker
    assert reasons(flags, TOO_SLOW) == set()


@pytest.mark.parametrize("order", ["in_order", "reverse", "read_all_first"])
def test_no_honest_worker_is_flagged_in_any_order_the_page_allows(order):
    """Active time goes to the item being worked on; an honest worker who reads item 3 while
    item 2 has the focus gives item 3 half a second. Speed is judged on the page's time per
    item, so such an answer is not "too fast" (nor item 2 "too slow")."""
    rng = np.random.default_rng(11)
    rows = []
    for worker in range(20):
        for page in range(5):
            seconds = rng.lognormal(np.log(12), 0.5, 4)
            if order == "read_all_first":
                # everything read (and timed) on the first item, then three quick clicks
                seconds = [float(seconds.sum()) - 1.5, 0.5, 0.5, 0.5]
            elif order == "reverse":
                seconds = seconds[::-1]
            rows.extend(multi_item_page(f"w{worker}", page, 1e5 * worker + 1e3 * page,
                                        list(seconds)))
    flags = page_timing_flags(rows)
    assert flags == []


def test_canard_sequential_reveal_is_one_page_saved_question_by_question():
    """Question k appears once k-1 is saved: the answers of the page arrive one by one, and
    the claims add up to (a little less than) the page's server time."""
    rows = []
    for worker in range(10):
        served = 1e4 * worker
        clock = served
        for question in range(6):
            active = 20.0 + 3 * question + worker
            clock += active + 0.4  # the reveal and the round trip are not the question's time
            rows.append(PageTimingRow(f"{worker}:{question}", (worker, served), active, served,
                                      clock))
    assert page_timing_flags(rows) == []
    # "since the previous save" was the right measure only here; the page sum agrees with it.
    [timing] = [t for t in page_timings(rows) if t.target_id == "0:0"]
    assert timing.page_items == 6 and timing.worked_seconds == pytest.approx(20 + 7.5)


def test_a_page_claiming_more_than_it_was_open_is_flagged_on_every_answer():
    rows = [PageTimingRow(k, "page", 30.0, 0.0, 20.0 + 0.05 * k) for k in range(4)]
    flags = mismatch_flags(rows)
    assert [flag.target_id for flag in flags] == [0, 1, 2, 3]
    assert "120.0s of work on the 4 items of this page" in flags[0].detail
    assert "server saw 20.1s" in flags[0].detail


def test_a_300_ms_clicker_is_not_rounded_up_to_one_second():
    """``too_fast`` clamped durations below 1 s up to 1 s, which left a 300 ms clicker at
    z -3 (short of the -3.5 threshold) among honest 8-30 s answers."""
    rng = np.random.default_rng(3)
    honest = [(f"h{k}", float(s)) for k, s in enumerate(rng.lognormal(np.log(12), 0.85, 60))]
    rows = [*honest, ("clicker", 0.3)]
    assert reasons(timing_flags(rows), TOO_FAST) == {"clicker"}
    [flag] = [f for f in timing_flags(rows) if f.target_id == "clicker"]
    assert "took 0.3s" in flag.detail
    old = FlagSettings(min_duration_seconds=1.0)
    assert reasons(timing_flags(rows, old), TOO_FAST) == set()


def test_going_back_is_not_judged_for_speed():
    rows = [PageTimingRow(f"h{k}", None, 15.0 + k % 7, 100.0 * k, 100.0 * k + 16 + k % 7)
            for k in range(30)]
    rows.append(PageTimingRow("revision", None, 0.4, None, None, True))
    assert page_timing_flags(rows) == []


# --- the absolute per-item floor (under_time_floor) -----------------------------------------


def crowd_pages(n_honest: int, n_clickers: int, *, seed: int = 0, words: int = 20):
    """MTurk-like pages of 4 items saved at once: honest workers read (2.5 words a second at
    most) and answer in 8-40 s an item; random clickers spend 0.4-2.5 s an item."""
    rng = np.random.default_rng(seed)
    rows = []
    for worker in range(n_honest + n_clickers):
        honest = worker < n_honest
        served = 1e4 * worker
        clock = served + 3.0
        for k in range(4):
            active = (words / 2.5 + rng.uniform(0, 30)) if honest else rng.uniform(0.4, 2.5)
            clock += active
            rows.append((f"{'h' if honest else 'r'}{worker}:{k}", (worker, served), active,
                         served, clock))
    return [PageTimingRow(*row, read_words=words) for row in rows]


def test_the_floor_catches_random_clickers_the_batch_relative_rule_lets_through():
    """Half the workers click at random: the batch's median moves to them, so ``too_fast``
    (relative to the batch) misses every one; the floor does not, and no honest worker is
    under it."""
    rows = crowd_pages(10, 10)
    flags = page_timing_flags(rows)
    clickers = {row.target_id for row in rows if row.target_id.startswith("r")}
    assert len(clickers) == 40 and reasons(flags, TOO_FAST) == set()
    assert reasons(flags, UNDER_TIME_FLOOR) == clickers
    [flag] = [f for f in flags if f.target_id == "r10:0" and f.reason_code == UNDER_TIME_FLOOR]
    assert flag.detail.startswith("worked ") and "under its floor of 6.0s (the mean of the 4 " \
        "items of its page): 2s plus 20 words at 300 words a minute" in flag.detail
    assert 0 < flag.score < 1


def test_floor_seconds_and_its_settings():
    assert floor_seconds([0, 30, np.nan]).tolist() == [2.0, 8.0, 2.0]
    slower = FlagSettings.from_dict({"min_item_seconds": 1, "reading_words_per_minute": 600})
    assert floor_seconds([30], slower).tolist() == [4.0]
    off = FlagSettings.from_dict({"min_item_seconds": 0, "reading_words_per_minute": 0})
    assert floor_seconds([30], off).tolist() == [0.0]
    assert reasons(page_timing_flags(crowd_pages(5, 5), off), UNDER_TIME_FLOOR) == set()
    with pytest.raises(ValueError, match="min_item_seconds: must be a number"):
        FlagSettings.from_dict({"min_item_seconds": "fast"})


def test_a_one_item_page_is_judged_against_its_own_floor():
    rows = [PageTimingRow("short", None, 3.0, 0.0, 3.5, read_words=3),  # floor 2.6 s
            PageTimingRow("long", None, 3.0, 0.0, 3.5, read_words=30),  # floor 8 s
            PageTimingRow("unknown", None, 2.5, 0.0, 3.0),  # floor 2 s
            PageTimingRow("revision", None, 0.5, None, None, True, 30)]  # never judged
    [flag] = [f for f in page_timing_flags(rows) if f.reason_code == UNDER_TIME_FLOOR]
    assert flag.target_id == "long" and flag.score == pytest.approx(3.0 / 8.0)
    assert "under its floor of 8.0s: 2s plus 30 words at 300 words a minute" in flag.detail
