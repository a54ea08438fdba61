"""The project dashboard's tables and its progress-over-time plot (``frontend.review.dashboard``).

The figures that read every answer come from the latest finished QC job's report (its
``dashboard`` part, ``annotation.selectors.dashboard.dashboard_figures``), shown with the time
it was computed, so the page stays a few bounded statements at any size; live here are only the
open flags by reason, the stored-answer total and the status of the workers listed.

The plots are inline SVG built on the server: no JavaScript library to ship, pin and keep safe
under the strict Content-Security-Policy, they render without scripts and print, and every
label goes through ``format_html`` (escaped).
"""

from __future__ import annotations

from datetime import date

from django.db.models import Count
from django.utils.html import format_html
from django.utils.safestring import SafeString

from annotation.models import Flag, Project, Worker
from annotation.money import money_text
from annotation.selectors.blocks import blocked_worker_ids
from annotation.selectors.counts import COUNT_LABELS, stored_answer_count
from annotation.selectors.dashboard import PAPER_AGREEMENT, budget_figures

#: Rows of the worker table shown (the first in the chosen order); the rest are counted.
WORKER_ROWS = 100
#: The worker table's columns that sort: (key, heading).
WORKER_COLUMNS = (
    ("worker", "Worker"), ("answers", "Answers"), ("agreement", "Agreement with others"),
    ("reliability", "Estimated reliability"), ("median_seconds", "Median s per answer"),
    ("hourly_cents", "Pay per hour"), ("flags", "Flags (open)"),
    ("approval_rate", "Approved of decided"), ("status", "Status"),
)
STATISTIC_NAMES = {
    "fleiss_kappa": "Fleiss' κ", "krippendorff_alpha_ordinal": "Krippendorff's α (ordinal)",
    "krippendorff_alpha_nominal": "Krippendorff's α (nominal)",
    "krippendorff_alpha_interval": "Krippendorff's α (interval)",
    "binary_fleiss_kappa": "Fleiss' κ, feasible or not", "binary_agreement":
    "agreement, feasible or not", "observed_agreement": "observed agreement",
    "mean_item_exact_agreement": "exact agreement per item (mean)",
    "bleu": "BLEU between two annotators (0–100)", "gleu": "GLEU between two annotators",
    "chrf": "chrF between two annotators",
    "edit_bleu": "BLEU between two annotators' edited sentences (0–100)",
    "edit_gleu": "GLEU between two annotators' edited sentences",
    "edit_chrf": "chrF between two annotators' edited sentences",
}
PLOT_WIDTH, PLOT_HEIGHT, MARGIN_LEFT, MARGIN = 420, 180, 48, 28


def agreement_rows(kind: str, agreement: dict) -> list[dict]:
    """The report's agreement as rows: each whole-project statistic with the paper's figure
    where one exists, then each split's bootstrap 95% interval (resampling items)."""
    paper = PAPER_AGREEMENT.get(kind, {})
    rows = []
    for key, value in agreement.items():
        if key in STATISTIC_NAMES and (value is None or isinstance(value, float | int)):
            figure = paper.get(key)
            rows.append({"split": "all", "name": STATISTIC_NAMES[key], "estimate": value,
                         "paper": figure[0] if figure else None,
                         "paper_note": figure[1] if figure else ""})
    for split, statistics in (agreement.get("intervals_by_split") or {}).items():
        for key, interval in statistics.items():
            rows.append({"split": split, "name": STATISTIC_NAMES.get(key, key),
                         "estimate": interval.get("estimate"), "low": interval.get("low"),
                         "high": interval.get("high"), "resamples": interval.get("n_resamples"),
                         "items": interval.get("n_items")})
    return rows


def cost_rows(cost: list[dict]) -> list[dict]:
    return [{"provider": row["provider"], "currency": row["currency"] or "not paid here",
             "spent": money_text(row["spent_cents"], row["currency"]),
             "committed": money_text(row["committed_cents"], row["currency"]),
             "spent_fees": money_text(row.get("spent_fees_cents", 0), row["currency"]),
             "committed_fees": money_text(row.get("committed_fees_cents", 0), row["currency"])}
            for row in cost]


def budget_row(budget: dict | None) -> dict | None:
    """The report's budget figures (``selectors.dashboard.budget_figures``) for people."""
    if not budget:
        return None
    currency = budget["currency"]
    return {"currency": currency, "budget": money_text(budget["budget_cents"], currency),
            "spent": money_text(budget["spent_cents"], currency),
            "committed": money_text(budget["committed_cents"], currency),
            "left": money_text(budget["left_cents"], currency),
            "over": budget["left_cents"] < 0,
            "other_currencies": budget.get("other_currencies") or []}


def _sort_key(column: str, descending: bool):
    def key(row: dict):
        value = row.get(column)
        # Missing values last whichever way the column sorts; ties by worker number.
        if value is None:
            return (1, 0, row["worker"])
        return (0, -value if descending else value, row["worker"])
    return key


def worker_table(*, project: Project, workers: list[dict], sort: str, descending: bool
                 ) -> dict:
    """The first ``WORKER_ROWS`` workers in the chosen order with their status now and their
    pseudonym (three statements: who is blocked everywhere, who from this project, the listed
    workers)."""
    if sort not in {key for key, _ in WORKER_COLUMNS}:
        sort = "worker"
    everywhere = set(Worker.objects.filter(pk__in=[row["worker"] for row in workers],
                                           is_blocked=True).values_list("pk", flat=True))
    here = blocked_worker_ids(project)
    rows = []
    for row in workers:
        status = ("blocked everywhere" if row["worker"] in everywhere else
                  "blocked from this project" if row["worker"] in here else "active")
        # 1 for blocked, so "status" sorts like a number: descending puts the blocked first.
        rows.append({**row, "status": status, "blocked": int(status != "active")})
    column = {"worker": "worker", "status": "blocked"}.get(sort, sort)
    if column == "worker":
        rows.sort(key=lambda row: row["worker"], reverse=descending)
    else:
        rows.sort(key=_sort_key(column, descending))
    shown = rows[:WORKER_ROWS]
    # The user too: the name cell shows a local annotator's username (``_worker_name.html``).
    people = Worker.objects.select_related("user").in_bulk([row["worker"] for row in shown])
    for row in shown:
        row["person"] = people.get(row["worker"])
        row["hourly"] = (money_text(round(row["hourly_cents"]), row["currency"])
                         if row.get("hourly_cents") is not None else None)
    return {"rows": shown, "total": len(workers), "sort": sort, "descending": descending,
            "columns": WORKER_COLUMNS}


def open_flags_by_reason(*, project: Project) -> list[tuple[str, int]]:
    """Open flags per reason, the most first (one grouped statement over the open flags)."""
    return list(Flag.objects.filter(project=project, status=Flag.Status.OPEN)
                .values("reason").annotate(n=Count("id")).order_by("-n", "reason")
                .values_list("reason", "n"))


def progress_plot(by_day: list[dict]) -> SafeString:
    """Counted answers so far against the day they were submitted, as an inline SVG line."""
    title = "Progress over time (counted answers, cumulative)"
    if not by_day:
        return format_html('<p class="muted">{}: no data yet</p>', title)
    days = [date.fromisoformat(row["day"]) for row in by_day]
    totals, running = [], 0
    for row in by_day:
        running += row["answers"]
        totals.append(running)
    first, span = days[0], max((days[-1] - days[0]).days, 1)
    inner_w, inner_h = PLOT_WIDTH - MARGIN_LEFT - MARGIN, PLOT_HEIGHT - 2 * MARGIN
    top = totals[-1] or 1
    points = " ".join(
        f"{MARGIN_LEFT + inner_w * (day - first).days / span:.1f},"
        f"{MARGIN + inner_h * (1 - total / top):.1f}" for day, total in zip(days, totals,
                                                                          strict=True))
    bottom = MARGIN + inner_h
    return format_html(
        '<svg class="plot" role="img" aria-label="{}" width="{}" height="{}" '
        'viewBox="0 0 {} {}" xmlns="http://www.w3.org/2000/svg">'
        '<text x="{}" y="16" class="plot-title">{}</text>'
        '<polyline points="{}" class="line" fill="none"/>'
        '<line x1="{}" y1="{}" x2="{}" y2="{}" class="axis"/>'
        '<line x1="{}" y1="{}" x2="{}" y2="{}" class="axis"/>'
        '<text x="{}" y="{}" class="tick">{}</text>'
        '<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>'
        '<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>'
        '<text x="{}" y="{}" class="tick" text-anchor="end">0</text>'
        '<text x="{}" y="{}" class="axis-title" text-anchor="middle">{}</text>'
        '<text x="4" y="{}" class="axis-title">{}</text></svg>',
        title, PLOT_WIDTH, PLOT_HEIGHT, PLOT_WIDTH, PLOT_HEIGHT, MARGIN_LEFT, title, points,
        MARGIN_LEFT, bottom, PLOT_WIDTH - MARGIN, bottom, MARGIN_LEFT, MARGIN, MARGIN_LEFT,
        bottom, MARGIN_LEFT, PLOT_HEIGHT - 8, days[0].isoformat(), PLOT_WIDTH - MARGIN,
        PLOT_HEIGHT - 8, days[-1].isoformat(), MARGIN_LEFT - 4, MARGIN + 4, f"{top:,}",
        MARGIN_LEFT - 4, bottom, PLOT_WIDTH // 2 + MARGIN, PLOT_HEIGHT - 8,
        "day submitted (UTC)", MARGIN - 10, "answers",
    )


def count_rows(counts: dict) -> list[dict]:
    """The QC report's answer counts, each with what it counts (``selectors.counts``)."""
    return [{"name": name, "label": COUNT_LABELS[name], "n": counts[name]}
            for name in COUNT_LABELS if name in counts]


def dashboard_context(*, project: Project, report: dict, sort: str, descending: bool) -> dict:
    """What the dashboard shows besides its bar plots (``frontend.review.dashboard``)."""
    figures = report.get("dashboard") or {}
    return {
        "figures": figures,
        "counts": count_rows(figures.get("answer_counts") or {}),
        "stored_now": stored_answer_count(project=project),
        "agreement_rows": agreement_rows(project.kind, report.get("agreement") or {}),
        "cost": cost_rows(figures.get("cost") or []),
        # The budget as set now against the report's cost (the same figures as the report's
        # while the budget is unchanged).
        "budget": budget_row(budget_figures(project=project, cost=figures["cost"])
                             if figures.get("cost") is not None else None),
        "workers": worker_table(project=project, workers=figures.get("workers") or [],
                                sort=sort, descending=descending),
        "flag_reasons": open_flags_by_reason(project=project),
        "progress_plot": progress_plot(figures["answers_by_day"])
        if figures.get("answers_by_day") is not None else None,
    }

