"""Flag rules: pure functions that point a reviewer at suspicious work.

Every rule returns a list of :class:`Flag` rows ``(target_id, reason_code, score, detail)``.
``target_id`` is whatever id the caller passed in (a worker id, an annotation id, ...);
``score`` is the number the rule thresholded (documented per reason code); ``detail`` is one
human sentence for the review page. Thresholds come from :class:`FlagSettings`; a project
stores overrides as a dict and builds the settings with :meth:`FlagSettings.from_dict`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from qc import livechecks
from qc.agreement import as_table, worker_consensus_agreement
from qc.redundancy import RedundancyPolicy
from qc.worker_models import METHODS as AGGREGATION_METHODS

# The scale factor that makes the median absolute deviation estimate a normal's std.
MAD_TO_STD = 1.4826

WORKER_LOW_AGREEMENT = "worker_low_agreement"
WORKER_FAR_FROM_CONSENSUS = "worker_far_from_consensus"
TOO_FAST = "too_fast"
TOO_SLOW = "too_slow"
TIMING_MISMATCH = "timing_mismatch"
UNDER_TIME_FLOOR = "under_time_floor"
FAILED_GOLD = "failed_gold"
COPY_OF_INPUT = "copy_of_input"
WARNING_OVERRIDDEN = "warning_overridden"
IGNORES_CONTEXT = "ignores_context"


class Flag(NamedTuple):
    """One flag row."""

    target_id: Any
    reason_code: str
    score: float
    detail: str


@dataclass(frozen=True)
class FlagSettings:
    """Thresholds of the flag rules; every field has a documented default.

    - ``min_items_per_worker``: workers compared on fewer items are never flagged (too
      little evidence).
    - ``min_worker_agreement``: categorical labels; flag a worker whose mean leave-one-out
      agreement with the other raters is below this share.
    - ``max_worker_deviation_z``: numeric ratings; flag a worker whose mean absolute
      distance to the other raters' mean is more than this many robust standard deviations
      (median/MAD over workers) above the median worker.
    - ``fast_z`` / ``slow_z``: flag work whose log-duration is more than this many robust
      standard deviations below / above the batch median (3.5 is Iglewicz and Hoaglin's
      cut-off for modified z-scores).
    - ``min_duration_seconds``: durations are clamped up to this before taking logs, so
      zero or clock-skewed durations stay finite; a tenth of a second, well below any human
      answer, so that a 300 ms clicker keeps their true (very low) score.
    - ``max_claim_over_server`` / ``claim_slack_seconds``: flag work whose browser-reported
      duration is more than ``max_claim_over_server`` times the server's own measure plus
      ``claim_slack_seconds`` (network and clock jitter): a claim of more time than the
      server saw pass.
    - ``max_gold_failure_rate``: flag a worker who failed more than this share of the gold
      items they answered (``min_gold_items`` answered at least).
    - ``gold_first``: the local work queue serves each worker's first this many items from
      the gold items (at a gold rate above 0), so that the gold rule (and ``gold_failures_stop``)
      judges a spammer before they do any work; they count towards the gold rate. 0: gold
      only at the rate.
    - ``rewrite_warning_codes``: live-check codes that, found again on the server, flag an
      annotation (pronouns and ambiguous words left in rewrites by default).
    - ``aggregation``: how QC aggregates answers (``qc.worker_models``): ``plain`` (mean or
      majority vote, the default) or ``model`` (Dawid-Skene, the bias/noise rating model or
      the most supported text, used only where the gold items show it at least as accurate
      as plain; the report says which was used and why).
    - ``adaptive_redundancy``: None (fixed redundancy, the default) or a
      ``qc.redundancy.RedundancyPolicy`` as an object (e.g. ``{"start": 3, "maximum": 7}``):
      batch planning asks for ``start`` judgements an item, then one more where the current
      ones disagree, up to ``maximum``.
    - ``min_item_seconds`` / ``reading_words_per_minute``: the absolute per-item floor
      (``qc.timing``, reason ``under_time_floor``): no honest answer takes less than
      ``min_item_seconds`` (taking in the item, deciding, acting) plus the item's words read
      at ``reading_words_per_minute`` -- 300, quicker than most adults read silently (about
      240 a minute on average). Unlike ``too_fast`` it does not depend on the batch, so it
      still holds when many workers are fast. ``min_item_seconds`` 0 and
      ``reading_words_per_minute`` 0 (words not counted) turn the floor off.
    """

    min_items_per_worker: int = 5
    min_worker_agreement: float = 0.4
    max_worker_deviation_z: float = 3.0
    fast_z: float = 3.5
    slow_z: float = 3.5
    min_duration_seconds: float = 0.1
    max_claim_over_server: float = 1.5
    claim_slack_seconds: float = 2.0
    max_gold_failure_rate: float = 0.25
    min_gold_items: int = 1
    gold_first: int = 0
    rewrite_warning_codes: tuple[str, ...] = ("rewrite_pronoun_left", "rewrite_ambiguous_words")
    aggregation: str = "plain"
    adaptive_redundancy: dict | None = None
    min_item_seconds: float = 2.0
    reading_words_per_minute: float = 300.0

    @classmethod
    def from_dict(cls, overrides: Mapping[str, Any] | None) -> FlagSettings:
        """Defaults updated with ``overrides``; an unknown key or a value of the wrong type (a
        number for a number, a list of strings for a list) raises ``ValueError``."""
        if overrides is not None and not isinstance(overrides, Mapping):
            raise ValueError("must be an object of threshold overrides")
        overrides = dict(overrides or {})
        fields = {field.name: field for field in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - set(fields))
        if unknown:
            raise ValueError(f"unknown flag settings: {', '.join(unknown)}")
        converted = {}
        for name, value in overrides.items():
            default = getattr(cls, name)
            if isinstance(default, tuple):
                if not isinstance(value, list | tuple) or not all(
                        isinstance(part, str) for part in value):
                    raise ValueError(f"{name}: must be a list of strings")
                converted[name] = tuple(value)
            elif isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ValueError(f"{name}: must be true or false")
                converted[name] = value
            elif name == "adaptive_redundancy":
                try:
                    converted[name] = None if value is None else (
                        RedundancyPolicy.from_dict(value).to_dict())
                except ValueError as error:
                    raise ValueError(f"adaptive_redundancy: {error}") from None
            elif name == "aggregation":
                if value not in AGGREGATION_METHODS:
                    raise ValueError(f"aggregation: must be one of "
                                     f"{', '.join(AGGREGATION_METHODS)}")
                converted[name] = value
            elif isinstance(default, int | float):
                converted[name] = _threshold(name, value, whole=isinstance(default, int))
            else:
                converted[name] = value
        return cls(**converted)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-friendly) of every setting."""
        values = dataclasses.asdict(self)
        values["rewrite_warning_codes"] = list(self.rewrite_warning_codes)
        return values


DEFAULT_SETTINGS = FlagSettings()


def _threshold(name: str, value: Any, *, whole: bool) -> int | float:
    """A numeric setting: a number (not a boolean; a numeric string such as "2.5" too) within
    ±1e9, whole if ``whole``."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"{name}: must be a number") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            -1e9 <= value <= 1e9):  # also False for NaN
        raise ValueError(f"{name}: must be a number from -1e9 to 1e9")
    if whole and value != int(value):
        raise ValueError(f"{name}: must be a whole number")
    return int(value) if whole else float(value)


def robust_z(values) -> np.ndarray:
    """(x - median) / (1.4826 * MAD); all zeros when the MAD is zero (no spread to judge)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    median = np.median(values)
    mad = np.median(np.abs(values - median)) * MAD_TO_STD
    if mad == 0:
        return np.zeros_like(values)
    return (values - median) / mad


def worker_consensus_flags(
    ratings, settings: FlagSettings = DEFAULT_SETTINGS, *, numeric: bool | None = None
) -> list[Flag]:
    """Workers far from the consensus of the other raters of the same items.

    ``ratings`` are rows ``(item_id, worker_id, label)`` or a ``RatingTable``; ``numeric``
    says whether labels are ratings on a scale (default: inferred, numbers are ratings).
    Categorical labels: reason ``worker_low_agreement``, score = leave-one-out agreement.
    Numeric ratings: reason ``worker_far_from_consensus``, score = robust z of the worker's
    mean absolute deviation from the other raters' mean (exact-match agreement would punish
    honest one-point differences on a 1-5 scale).
    """
    table = as_table(ratings)
    if numeric is None:
        numeric = table.labels.dtype.kind in "iuf"
    result = worker_consensus_agreement(table)
    enough = result.n_compared >= settings.min_items_per_worker
    flags = []
    low_agreement = result.agreement < settings.min_worker_agreement
    low = np.flatnonzero(enough & low_agreement) if not numeric else np.array([], dtype=int)
    for k in low.tolist():
        flags.append(
            Flag(
                _plain(result.workers[k]),
                WORKER_LOW_AGREEMENT,
                float(result.agreement[k]),
                f"agrees with {result.agreement[k]:.0%} of co-raters over "
                f"{result.n_compared[k]} items",
            )
        )
    if numeric and enough.any():
        z_scores = np.full(len(result.workers), np.nan)
        z_scores[enough] = robust_z(result.mean_abs_deviation[enough])
        far = np.flatnonzero(enough & (z_scores > settings.max_worker_deviation_z))
        for k in far.tolist():
            flags.append(
                Flag(
                    _plain(result.workers[k]),
                    WORKER_FAR_FROM_CONSENSUS,
                    float(z_scores[k]),
                    f"mean distance {result.mean_abs_deviation[k]:.2f} from co-raters' mean "
                    f"(robust z {z_scores[k]:.1f}) over {result.n_compared[k]} items",
                )
            )
    return flags


def timing_flags(
    durations: Iterable[tuple[Any, float]], settings: FlagSettings = DEFAULT_SETTINGS
) -> list[Flag]:
    """Abnormally fast or slow work: rows ``(target_id, seconds)`` of ONE batch.

    See :func:`timing_flags_from_arrays` for the rule.
    """
    rows = list(durations)
    target_ids = np.empty(len(rows), dtype=object)
    target_ids[:] = [row[0] for row in rows]
    seconds = np.fromiter((row[1] for row in rows), dtype=np.float64, count=len(rows))
    return timing_flags_from_arrays(target_ids, seconds, settings)


def timing_flags_from_arrays(
    target_ids, seconds, settings: FlagSettings = DEFAULT_SETTINGS
) -> list[Flag]:
    """Abnormally fast or slow work relative to the rest of the batch (aligned arrays).

    Score = robust z of log(max(seconds, min_duration_seconds)) over the batch; reason
    ``too_fast`` below ``-fast_z``, ``too_slow`` above ``slow_z``. Log-duration makes the
    skewed distribution of working times roughly symmetric; median/MAD ignore the outliers
    being hunted.
    """
    seconds = np.asarray(seconds, dtype=np.float64)
    if len(seconds) != len(target_ids):
        raise ValueError("target_ids and seconds must have the same length")
    log_seconds = np.log(np.maximum(seconds, settings.min_duration_seconds))
    z_scores = robust_z(log_seconds)
    median_seconds = float(np.exp(np.median(log_seconds))) if len(log_seconds) else 0.0
    flags = []
    for reason, mask in (
        (TOO_FAST, z_scores < -settings.fast_z),
        (TOO_SLOW, z_scores > settings.slow_z),
    ):
        for k in np.flatnonzero(mask).tolist():
            flags.append(
                Flag(
                    _plain(target_ids[k]),
                    reason,
                    float(z_scores[k]),
                    f"took {_seconds(seconds[k])} against a batch median of "
                    f"{_seconds(median_seconds)} (robust z {z_scores[k]:.1f})",
                )
            )
    return flags


def _seconds(value: float) -> str:
    """Seconds for a flag's detail: tenths below ten seconds (a 0.3 s answer is not "0s")."""
    return f"{value:.1f}s" if value < 10 else f"{value:.0f}s"


def _plain(value):
    """numpy scalar -> Python scalar, so flag rows are JSON-friendly."""
    return value.item() if isinstance(value, np.generic) else value


def gold_flags(
    answers: Iterable[tuple[Any, Any, Any]],
    gold: Mapping[Any, Any],
    settings: FlagSettings = DEFAULT_SETTINGS,
) -> list[Flag]:
    """Workers who fail gold items.

    ``answers``: rows ``(worker_id, item_id, answer)``; rows on items not in ``gold`` are
    ignored. ``gold[item_id]`` is the accepted answer, a set/list/tuple of accepted answers,
    or a predicate ``answer -> bool``. Reason ``failed_gold``, score = failure rate.
    """
    answered: dict = {}
    failed: dict = {}
    for worker_id, item_id, answer in answers:
        if item_id not in gold:
            continue
        answered[worker_id] = answered.get(worker_id, 0) + 1
        if not _passes_gold(gold[item_id], answer):
            failed[worker_id] = failed.get(worker_id, 0) + 1
    flags = []
    for worker_id, n_answered in answered.items():
        rate = failed.get(worker_id, 0) / n_answered
        if n_answered >= settings.min_gold_items and rate > settings.max_gold_failure_rate:
            detail = f"failed {failed[worker_id]} of {n_answered} gold items"
            flags.append(Flag(worker_id, FAILED_GOLD, rate, detail))
    return flags


def _passes_gold(expected: Any, answer: Any) -> bool:
    if callable(expected):
        return bool(expected(answer))
    if isinstance(expected, set | frozenset | list | tuple):
        return answer in expected
    return answer == expected


def copy_flags(rows: Iterable[tuple[Any, str, str]]) -> list[Flag]:
    """Outputs that copy their input: rows ``(target_id, input_text, output_text)``.

    Copy = same live-check token sequence (case and punctuation ignored). Score 1.0.
    """
    return [
        Flag(target_id, COPY_OF_INPUT, 1.0, "the output repeats the input unchanged")
        for target_id, input_text, output_text in rows
        if livechecks.tokenize(input_text) == livechecks.tokenize(output_text)
    ]


def rewrite_warning_flags(
    rows: Iterable[tuple[Any, str, str]], settings: FlagSettings = DEFAULT_SETTINGS
) -> list[Flag]:
    """Rewrites that still trigger selected live checks on the server.

    ``rows``: ``(target_id, question, rewrite)``. One flag per warning whose code is in
    ``settings.rewrite_warning_codes``; reason = that live-check code, score 1.0.
    """
    wanted = set(settings.rewrite_warning_codes)
    return [
        Flag(target_id, warning.code, 1.0, warning.message)
        for target_id, question, rewrite in rows
        for warning in livechecks.check_rewrite(question, rewrite)
        if warning.code in wanted
    ]


def overridden_warning_flags(rows: Iterable[tuple[Any, str]]) -> list[Flag]:
    """Annotations submitted over a live-check warning: rows ``(target_id, warning_code)``.

    Reason ``warning_overridden``, score 1.0, detail names the overridden code.
    """
    return [
        Flag(target_id, WARNING_OVERRIDDEN, 1.0, f"submitted despite warning {code}")
        for target_id, code in rows
    ]


def sluice_context_flags(rows: Iterable[tuple[Any, str, str, str]]) -> list[Flag]:
    """Sluice resolutions sharing no content word with the context.

    ``rows``: ``(target_id, q1, a1, answer)``. Content words are live-check tokens minus the
    shared stopword list (which includes the wh-words); exact token match. Score 0.0 (the
    overlap found); reason ``ignores_context``.
    """
    flags = []
    for target_id, q1, a1, answer in rows:
        context = set(livechecks.content_words(q1)) | set(livechecks.content_words(a1))
        if not context.intersection(livechecks.content_words(answer)):
            flags.append(
                Flag(target_id, IGNORES_CONTEXT, 0.0, "uses no content word of Q1 or A1")
            )
    return flags
