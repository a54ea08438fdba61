"""Reads for the project dashboard.

Every figure that reads the project's answers (counts, progress, plots, the worker table, the
cost) is computed once by the QC run (``dashboard_figures``, stored as the report's
``dashboard`` part of the QC job) and the page shows the latest finished QC job's figures with
the time they were computed (``latest_qc_job``): each is one grouped statement, but at
1,000,000 answers the few of them took seconds, far beyond what a page may take. The page
itself reads only bounded things live: the open flags by reason, the stored-answer total and
the status of the workers it lists. Which answers count is ``selectors.counts``'s; the plots
read ``qc_annotations``.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, timedelta

import numpy as np
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate

from qc.agreement import RatingTable
from qc.worker_stats import hourly_rate, median_by_worker_arrays

from ..models import Annotation, Assignment, Batch, Bonus, Flag, Hit, Job, Project
from ..money import fees_cents, provider_currency
from .counts import AnswerCounts, answer_counts
from .qc import (
    REVIEW_CODES,
    AnswerColumns,
    name_workers,
    numeric_columns,
    progress_by_split,
    qc_annotations,
    worker_names,
)

TIME_BINS = 20

#: The agreement the papers report for their own crowd, shown beside the project's (TASKS.md).
PAPER_AGREEMENT = {
    "decontext": {"fleiss_kappa": (0.30, "Fleiss' κ of the crowd (0.51 between experts)"),
                  "binary_agreement": (0.85, "binary agreement, feasible or not")},
    "rewrite": {"bleu": (59.92, "BLEU between two people's rewrites (dev)")},
    "sluice": {"gleu": (0.570, "GLEU between two annotations (ANN AGREE)"),
               "bleu": (0.589, "BLEU between two annotations (ANN AGREE)"),
               "chrf": (0.712, "chrF between two annotations (ANN AGREE)")},
}

__all__ = ["PAPER_AGREEMENT", "dashboard_figures", "duration_histogram", "latest_qc_job",
           "progress_by_split", "rating_counts"]


def rating_counts(*, project: Project) -> dict[int, int]:
    """Crowd ratings (imported means excluded) per rounded value 1-5: one grouped statement
    over the distinct stored values, rounded here as the plot always did (``round``)."""
    per_value = (qc_annotations(project=project).filter(rating__isnull=False)
                 .exclude(source=Annotation.Source.IMPORT)
                 .values("rating").annotate(n=Count("id")).order_by()
                 .values_list("rating", "n"))
    counts: dict[int, int] = defaultdict(int)
    for rating, n in per_value:
        counts[round(rating)] += n
    return {value: counts.get(value, 0) for value in range(1, 6)}


def duration_histogram(*, project: Project, bins: int = TIME_BINS,
                       durations: np.ndarray | None = None) -> dict | None:
    """Time per answer (the browser's claim, ``duration_ms``) in ``bins`` equal bins up to
    the 99th percentile (the last bin takes everything above): ``{"width_ms", "counts",
    "n"}``, or None without durations. ``durations``: the milliseconds of the project's QC
    answers that have one, when the caller has read them (``dashboard_figures`` reads them
    once for this and the workers' medians); otherwise read here as one array."""
    if durations is None:
        durations = numeric_columns(qc_annotations(project=project)
                                    .filter(duration_ms__isnull=False).order_by()
                                    .values_list("duration_ms"))[:, 0]
    n = len(durations)
    if not n:
        return None
    # The value at the 99th percentile's position (counted from the bottom).
    top = int(np.partition(durations, min(n - 1, int(0.99 * n)))[min(n - 1, int(0.99 * n))])
    width = max(top, 1) / bins
    index = np.minimum(np.floor(durations / width), bins - 1).astype(np.int64)
    index[index < 0] += bins  # a negative claim: counted from the end, as it always was
    counts = np.bincount(np.clip(index, 0, bins - 1), minlength=bins)
    return {"width_ms": width, "counts": [int(count) for count in counts], "n": n}


def latest_qc_job(*, project: Project) -> Job | None:
    """The project's latest finished QC job (its report has the per-worker agreement)."""
    return (Job.objects.filter(project=project, kind=Job.Kind.QC, state=Job.State.DONE)
            .order_by("-finished_at", "-id").first())


def answers_by_day(*, project: Project, answers: AnswerColumns | None = None) -> list[dict]:
    """Counted answers per day of submission (UTC), oldest first: progress over time.
    ``answers``: the QC run's ``qc_answer_columns`` (the days counted from their submission
    seconds), else one grouped statement."""
    if answers is not None:
        submitted = answers.submitted_s[answers.counted() & ~np.isnan(answers.submitted_s)]
        days, n = np.unique(np.floor(submitted / 86400.0).astype(np.int64), return_counts=True)
        return [{"day": (EPOCH + timedelta(days=day)).isoformat(), "answers": count}
                for day, count in zip(days.tolist(), n.tolist(), strict=True)]
    rows = (Annotation.objects.filter(project=project, state=Annotation.State.COUNTED,
                                      submitted_at__isnull=False)
            .annotate(day=TruncDate("submitted_at", tzinfo=UTC)).values("day")
            .annotate(n=Count("id")).order_by("day").values_list("day", "n"))
    return [{"day": day.isoformat(), "answers": n} for day, n in rows]


EPOCH = date(1970, 1, 1)


#: HITs whose places may still be taken (a finished, expired or failed HIT takes no one new).
OPEN_HIT_STATUSES = (Hit.Status.PENDING, Hit.Status.ASSIGNABLE, Hit.Status.UNASSIGNABLE)
#: Assignments that hold a place (returned and abandoned ones gave it back).
PLACE_TAKEN = (Assignment.Status.ACCEPTED, Assignment.Status.SUBMITTED,
               Assignment.Status.APPROVED, Assignment.Status.REJECTED)


def cost_by_currency(*, project: Project) -> list[dict]:
    """Per provider (so per currency, ``annotation.money``), in its smallest unit, the
    provider's fees included (``money.fees_cents``, the rule the launch estimate uses):

    * ``spent``: rewards of approved assignments + bonuses paid;
    * ``committed``: rewards of places taken and not decided yet (accepted or submitted), of
      places still open on HITs that can be taken (launched, not finished, expired or
      cancelled) + bonuses asked for and neither paid nor refused.

    Each has its fees part (``spent_fees_cents``, ``committed_fees_cents``). Grouped by
    (provider, reward, HIT size): a few rows whatever the number of assignments."""
    group = ("hit__batch__provider", "hit__batch__reward_cents", "hit__max_assignments")
    live_hits = Q(hit__status__in=OPEN_HIT_STATUSES) & ~Q(hit__batch__status__in=(
        Batch.Status.CANCELLED, Batch.Status.FAILED))
    taken = (Assignment.objects.filter(hit__batch__project=project).values(*group)
             .annotate(spent=Count("id", filter=Q(status=Assignment.Status.APPROVED)),
                       undecided=Count("id", filter=Q(status__in=(
                           Assignment.Status.ACCEPTED, Assignment.Status.SUBMITTED))),
                       holding_open=Count("id", filter=live_hits
                                          & Q(status__in=PLACE_TAKEN)))
             .order_by().values_list(*group, "spent", "undecided", "holding_open"))
    places = (Hit.objects.filter(batch__project=project, status__in=OPEN_HIT_STATUSES)
              .exclude(batch__status__in=(Batch.Status.CANCELLED, Batch.Status.FAILED))
              .values("batch__provider", "batch__reward_cents", "max_assignments")
              .annotate(places=Sum("max_assignments")).order_by()
              .values_list("batch__provider", "batch__reward_cents", "max_assignments",
                           "places"))
    bonuses = (Bonus.objects.filter(assignment__hit__batch__project=project)
               .values("assignment__hit__batch__provider", "amount_cents")
               .annotate(spent=Count("id", filter=Q(sent_at__isnull=False)),
                         committed=Count("id", filter=Q(sent_at__isnull=True, error="")))
               .order_by().values_list("assignment__hit__batch__provider", "amount_cents",
                                       "spent", "committed"))
    spent_places: dict[str, list] = defaultdict(list)
    committed_places: dict[str, list] = defaultdict(list)
    open_places: dict[tuple, int] = defaultdict(int)
    for provider, reward, size, n_places in places:
        open_places[(provider, reward, size)] += n_places or 0
    for provider, reward, size, spent, undecided, holding_open in taken:
        spent_places[provider].append((reward, size, spent))
        committed_places[provider].append((reward, size, undecided))
        open_places[(provider, reward, size)] -= holding_open
    for (provider, reward, size), n_open in open_places.items():
        committed_places[provider].append((reward, size, max(n_open, 0)))
    spent_bonuses: dict[str, list] = defaultdict(list)
    committed_bonuses: dict[str, list] = defaultdict(list)
    for provider, amount, spent, committed in bonuses:
        spent_bonuses[provider].append((amount, spent))
        committed_bonuses[provider].append((amount, committed))
    rows = []
    for provider in sorted({*spent_places, *committed_places, *spent_bonuses}):
        row = {"provider": provider, "currency": provider_currency(provider)}
        for part, paid_places, paid_bonuses in (
                ("spent", spent_places[provider], spent_bonuses[provider]),
                ("committed", committed_places[provider], committed_bonuses[provider])):
            fees = fees_cents(provider, places=paid_places, bonuses=paid_bonuses)
            row[f"{part}_cents"] = (sum(reward * n for reward, _, n in paid_places)
                                    + sum(amount * n for amount, n in paid_bonuses) + fees)
            row[f"{part}_fees_cents"] = fees
        rows.append(row)
    return rows


def budget_figures(*, project: Project, cost: list[dict]) -> dict | None:
    """The project's budget against ``cost`` (``cost_by_currency``): what is spent, committed
    and left in the budget's currency, fees included; None without a budget. Cost in another
    currency is not in the budget: it is named in ``other_currencies``."""
    if project.budget_cents is None:
        return None
    currency = project.budget_currency or None
    spent = sum(row["spent_cents"] for row in cost if row["currency"] == currency)
    committed = sum(row["committed_cents"] for row in cost if row["currency"] == currency)
    return {"currency": currency, "budget_cents": project.budget_cents, "spent_cents": spent,
            "committed_cents": committed,
            "left_cents": project.budget_cents - spent - committed,
            "other_currencies": sorted({row["currency"] or "none" for row in cost
                                        if row["currency"] != currency
                                        and (row["spent_cents"] or row["committed_cents"])})}


def _flag_counts_by_worker(*, project: Project) -> dict[int, dict[str, int]]:
    """worker id -> {"flags": every flag on them or their answers, "open": those still open}."""
    counts: dict[int, dict[str, int]] = defaultdict(lambda: {"flags": 0, "open": 0})
    on_worker = (Flag.objects.filter(project=project, worker__isnull=False)
                 .values("worker").annotate(n=Count("id"),
                                            open=Count("id", filter=Q(status=Flag.Status.OPEN)))
                 .order_by().values_list("worker", "n", "open"))
    on_answers = (Flag.objects.filter(project=project, worker__isnull=True,
                                      annotation__isnull=False)
                  .values("annotation__worker")
                  .annotate(n=Count("id"), open=Count("id", filter=Q(status=Flag.Status.OPEN)))
                  .order_by().values_list("annotation__worker", "n", "open"))
    for worker, n, n_open in (*on_worker, *on_answers):
        counts[worker]["flags"] += n
        counts[worker]["open"] += n_open
    return counts


def timed_answers(*, project: Project) -> np.ndarray:
    """``(worker, duration_ms)`` of the project's QC answers that have a duration, as one
    array of two columns (``numeric_columns``: a million rows without a tuple each)."""
    return numeric_columns(qc_annotations(project=project).filter(duration_ms__isnull=False)
                           .order_by().values_list("worker", "duration_ms"))


def worker_figures(*, project: Project, agreement: dict[int, float | None],
                   reliability: dict[int, float],
                   timed: np.ndarray | None = None,
                   answers: AnswerColumns | None = None) -> list[dict]:
    """One row per worker with answers in QC: answers, agreement with the others
    (``agreement``: the QC report's leave-one-out agreement), estimated reliability (the
    worker-quality model's, when it ran), median seconds per answer (the browser's measure),
    pay per hour (rewards of approved assignments and bonuses paid, over the measured time of
    the answers in those assignments), flags and the share of decided answers approved.
    ``timed``: ``timed_answers``, ``answers``: the QC run's ``qc_answer_columns``, when the
    caller has read them."""
    in_qc = qc_annotations(project=project)
    if answers is not None:
        per_worker = _answers_per_worker(answers)
    else:
        per_worker = (in_qc.values("worker").annotate(
            answers=Count("id"),
            approved=Count("id", filter=Q(review_status=Annotation.Review.APPROVED)),
            rejected=Count("id", filter=Q(review_status=Annotation.Review.REJECTED)))
            .order_by().values_list("worker", "answers", "approved", "rejected"))
    if timed is None:
        timed = timed_answers(project=project)
    medians = median_by_worker_arrays(timed[:, 0], timed[:, 1])
    worked = dict(in_qc.filter(assignment__status=Assignment.Status.APPROVED,
                                 duration_ms__isnull=False)
                  .values("worker").annotate(ms=Sum("duration_ms")).order_by()
                  .values_list("worker", "ms"))
    earned: dict[int, int] = defaultdict(int)
    for worker, cents in (Assignment.objects.filter(hit__batch__project=project,
                                                    status=Assignment.Status.APPROVED)
                          .values("worker").annotate(cents=Sum("hit__batch__reward_cents"))
                          .order_by().values_list("worker", "cents")):
        earned[worker] += cents or 0
    for worker, cents in (Bonus.objects.filter(assignment__hit__batch__project=project,
                                               sent_at__isnull=False)
                          .values("assignment__worker").annotate(cents=Sum("amount_cents"))
                          .order_by().values_list("assignment__worker", "cents")):
        earned[worker] += cents or 0
    flags = _flag_counts_by_worker(project=project)
    rows = []
    for worker, n_answers, approved, rejected in per_worker:
        median_ms = medians.get(worker)
        decided = approved + rejected
        rows.append({
            "worker": worker, "answers": n_answers,
            "agreement": agreement.get(worker), "reliability": reliability.get(worker),
            "median_seconds": None if median_ms is None else round(median_ms / 1000, 3),
            "earned_cents": earned.get(worker, 0),
            "hourly_cents": (None if worker not in earned else
                             _rounded(hourly_rate(earned[worker], worked.get(worker) or 0))),
            "flags": flags[worker]["flags"] if worker in flags else 0,
            "open_flags": flags[worker]["open"] if worker in flags else 0,
            "approved": approved, "rejected": rejected,
            "approval_rate": round(approved / decided, 4) if decided else None,
        })
    # The name staff see everywhere (issue 24) and the provider: one query for every worker.
    names = worker_names(worker_ids=[row["worker"] for row in rows])
    name_workers(rows, names)
    for row in rows:
        row["provider"] = names.get(row["worker"], {}).get("provider", "")
        row["currency"] = provider_currency(row["provider"])
    rows.sort(key=lambda row: row["worker"])
    return rows


def _answers_per_worker(answers: AnswerColumns) -> list[tuple[int, int, int, int]]:
    """``(worker, answers, approved, rejected)`` per worker with answers, from the columns."""
    workers, codes = np.unique(answers.worker_ids, return_inverse=True)
    per_review = [np.bincount(codes[answers.review == REVIEW_CODES.index(status)],
                              minlength=len(workers))
                  for status in (Annotation.Review.APPROVED, Annotation.Review.REJECTED)]
    return list(zip(workers.tolist(), np.bincount(codes, minlength=len(workers)).tolist(),
                    per_review[0].tolist(), per_review[1].tolist(), strict=True))


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def ratings_by_value(table: RatingTable) -> dict[int, int]:
    """``rating_counts`` of a rating table that holds the same ratings (every crowd rating
    QC sees): its labels' counts, each label rounded as ``rating_counts`` rounds it."""
    per_label = np.bincount(table.label_codes, minlength=len(table.labels))
    counts: dict[int, int] = defaultdict(int)
    for rating, n in zip(table.labels.tolist(), per_label.tolist(), strict=True):
        counts[round(rating)] += n
    return {value: counts.get(value, 0) for value in range(1, 6)}


def dashboard_figures(*, project: Project, report: dict,
                      rating_table: RatingTable | None = None,
                      counts: AnswerCounts | None = None,
                      answers: AnswerColumns | None = None) -> dict:
    """The dashboard's figures that read every answer, for the QC report (module docstring).
    ``report`` is the QC report so far: its per-worker agreement and worker-quality model;
    ``rating_table``: the QC run's table of every crowd rating it sees (gold items' too),
    when it has one (the plot of ratings by value is then counted from it, not read again);
    ``counts``: the QC run's ``answer_counts``, read at its start (one reading for the report's
    count and its dashboard's, so the two agree); ``answers``: the QC run's
    ``qc_answer_columns`` (the times, days and per-worker counts come from them, not from
    statements of their own)."""
    agreement = {row["worker"]: row["agreement"]
                 for row in report.get("agreement", {}).get("per_worker", [])}
    reliability = {row["worker"]: row["reliability"]
                   for row in report.get("worker_quality", {}).get("workers", [])}
    if project.kind != "plausibility":
        ratings = None
    elif rating_table is not None:  # the QC run's crowd ratings (gold items' too), as read
        ratings = ratings_by_value(rating_table)
    else:
        ratings = rating_counts(project=project)
    # The durations, for the time plot and the workers' medians.
    if answers is not None:
        with_duration = ~np.isnan(answers.duration_ms)
        timed = np.column_stack([answers.worker_ids[with_duration],
                                 answers.duration_ms[with_duration]]).astype(np.float64)
    else:
        timed = timed_answers(project=project)
    return {
        "answer_counts": (counts if counts is not None
                          else answer_counts(project=project)).to_dict(),
        "progress_by_split": progress_by_split(project=project),
        "answers_by_day": answers_by_day(project=project, answers=answers),
        "ratings_by_value": ({str(value): n for value, n in ratings.items()}
                             if ratings is not None else None),
        "time_per_answer": duration_histogram(project=project, durations=timed[:, 1]),
        "cost": (cost := cost_by_currency(project=project)),
        "budget": budget_figures(project=project, cost=cost),
        "workers": worker_figures(project=project, agreement=agreement,
                                  reliability=reliability, timed=timed, answers=answers),
    }
