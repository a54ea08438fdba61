"""Staff review pages: the flag queue (by HIT or by worker), decisions, the project dashboard.

Views validate and render; decisions go through ``annotation.services.decisions``. Everything a
worker wrote or a dataset contained is escaped: the templates autoescape, and the two pieces
of HTML built here (the diff and the SVG plots) escape every text they include.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from itertools import pairwise

from diff_match_patch import diff_match_patch
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.utils.html import escape, format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST

from annotation.models import Annotation, Assignment, DialogueTurn, Flag, Job, Project, Worker
from annotation.roles import page_requires
from annotation.selectors import batches as review_selectors
from annotation.selectors import dashboard as dashboard_selectors
from annotation.selectors import projects as project_selectors
from annotation.selectors import qc as qc_selectors
from annotation.selectors import review_queue
from annotation.selectors.adjudication import answer_words
from annotation.selectors.bonuses import bonus_report
from annotation.services import decisions
from frontend.staff import dashboard as staff_dashboard
from frontend.staff_jobs import approvals_summary, qc_summary
from frontend.staff_jobs import start_job_from_page as _start_job

GAP = "______"
#: What ``source_of`` reads of an answer's item, to load with it.
ITEM_TEXT_RELATIONS = ("item__target_sentence__document", "item__turn__dialogue",
                       "item__filler__cloze", "item__complex_sentence")
PLOT_WIDTH, PLOT_HEIGHT, PLOT_MARGIN = 420, 180, 28
MAX_WORKER_BARS = 40


# --- rendering helpers ------------------------------------------------------------------------


def diff_html(source: str, text: str) -> SafeString:
    """Word-level-ish diff of a worker's text against its source as escaped <ins>/<del>."""
    engine = diff_match_patch()
    diffs = engine.diff_main(source or "", text or "")
    engine.diff_cleanupSemantic(diffs)
    parts = []
    for operation, chunk in diffs:
        if operation == engine.DIFF_INSERT:
            parts.append(format_html("<ins>{}</ins>", chunk))
        elif operation == engine.DIFF_DELETE:
            parts.append(format_html("<del>{}</del>", chunk))
        else:
            parts.append(escape(chunk))
    return mark_safe("".join(parts))  # noqa: S308 — every part was escaped above


def source_of(annotation: Annotation, earlier_turns: dict | None = None) -> dict:
    """What the worker saw and the text their answer should be compared with.

    ``earlier_turns`` maps a dialogue turn id to the (question, answer) just before it: a sluice
    (Q2 "Why?") means nothing without its Q1 and A1, so the queue shows them as the context.
    """
    item = annotation.item
    if item.turn_id:
        turn = item.turn
        previous = (earlier_turns or {}).get(turn.pk)
        if previous is not None:
            return {"context": f"Q1: {previous[0]} · A1: {previous[1]}",
                    "source": turn.question}
        heading = [part for part in (turn.dialogue.title, turn.dialogue.section_title) if part]
        return {"context": " — ".join(heading), "source": turn.question}
    if item.target_sentence_id:
        target = item.target_sentence
        return {"context": target.document.title, "source": target.text}
    if item.complex_sentence_id:
        return {"context": "", "source": item.complex_sentence.text}
    if item.filler_id:
        filler = item.filler
        return {"context": filler.cloze.article_title,
                "source": filler.cloze.sentence.replace(GAP, f"[{filler.text}]", 1)}
    return {"context": "", "source": ""}


def answer_of(annotation: Annotation) -> str:
    if annotation.problem:
        return f"(no answer: problem reported, {Annotation.Problem(annotation.problem).label})"
    if annotation.rating is not None:
        return f"rating {annotation.rating:g}"
    if annotation.skipped:
        return "(skipped)"
    if annotation.category and annotation.category != Annotation.Category.DONE:
        return annotation.category
    return answer_words(annotation)


def newer_version(annotation: Annotation) -> Annotation | None:
    """The version that replaced ``annotation`` (the annotator changed it), or None."""
    try:
        return annotation.superseded_by
    except Annotation.superseded_by.RelatedObjectDoesNotExist:
        return None


def previous_turns(flags: list[Flag]) -> dict[int, tuple[str, str]]:
    """turn id → (question, answer) of the turn before it, for the flagged sluice answers.

    One query for the whole queue (the turns of the flagged dialogues), none without sluices.
    """
    return earlier_turns_of([flag.annotation for flag in flags])


def earlier_turns_of(annotations: list) -> dict[int, tuple[str, str]]:
    """turn id → (question, answer) of the turn before it, for ``annotations`` (None
    entries skipped): one query, none without dialogue turns."""
    dialogue_ids = {annotation.item.turn.dialogue_id for annotation in annotations
                    if annotation is not None and annotation.item.turn_id}
    if not dialogue_ids:
        return {}
    turns: dict[int, list[tuple]] = {}
    for dialogue_id, turn_id, question, answer in (
        DialogueTurn.objects.filter(dialogue_id__in=sorted(dialogue_ids))
        .order_by("dialogue_id", "order")
        .values_list("dialogue_id", "id", "question", "answer")
    ):
        turns.setdefault(dialogue_id, []).append((turn_id, question, answer))
    result = {}
    for rows in turns.values():
        for (_, question, answer), (turn_id, _, _) in pairwise(rows):
            result[turn_id] = (question, answer)
    return result


def warning_codes(warnings: list) -> str:
    """The codes of stored live-check warnings ({code, message} objects, or plain codes)."""
    return ", ".join(str(w.get("code", "")) if isinstance(w, dict) else str(w)
                     for w in warnings or [])


def flag_view(flag: Flag, earlier_turns: dict | None = None) -> dict:
    annotation = flag.annotation
    row = {"flag": flag, "annotation": annotation, "assignment": flag.assignment,
           "worker": flag.worker}
    if annotation is not None:
        row["overridden"] = warning_codes(annotation.overridden_warnings)
        seen = source_of(annotation, earlier_turns)
        answer = answer_of(annotation)
        row.update(context=seen["context"], source=seen["source"], answer=answer,
                   diff=diff_html(seen["source"], answer)
                   if annotation.rating is None and not annotation.problem else None)
        row["assignment"] = row["assignment"] or annotation.assignment
        # A problem report: the annotator's reason and own words (escaped by the template).
        if annotation.problem:
            row["problem"] = Annotation.Problem(annotation.problem).label
            row["problem_note"] = annotation.problem_note
        # The annotator changed this answer after the flag: the newer version is what counts.
        row["superseded_by"] = newer_version(annotation)
    return row


# --- SVG plots --------------------------------------------------------------------------------


def svg_bars(title: str, labels: list[str], values: list[float], *, unit: str = "",
             x_title: str = "", y_title: str = "") -> SafeString:
    """A small bar chart as inline SVG with its axis titles; every text is escaped."""
    if not values:
        return format_html('<p class="muted">{}: no data yet</p>', title)
    top = max(values) or 1.0
    inner_w = PLOT_WIDTH - 2 * PLOT_MARGIN
    inner_h = PLOT_HEIGHT - 2 * PLOT_MARGIN
    step = inner_w / len(values)
    bars = []
    for k, (label, value) in enumerate(zip(labels, values, strict=True)):
        height = inner_h * value / top
        x = PLOT_MARGIN + k * step
        bars.append(format_html(
            '<rect x="{}" y="{}" width="{}" height="{}" class="bar">'
            "<title>{}: {}{}</title></rect>",
            f"{x + 1:.1f}", f"{PLOT_MARGIN + inner_h - height:.1f}", f"{max(step - 2, 1):.1f}",
            f"{height:.1f}", label, f"{value:g}", unit,
        ))
    first, last = labels[0], labels[-1]
    return format_html(
        '<svg class="plot" role="img" aria-label="{}" width="{}" height="{}" '
        'viewBox="0 0 {} {}" xmlns="http://www.w3.org/2000/svg">'
        '<text x="{}" y="16" class="plot-title">{}</text>{}'
        '<line x1="{}" y1="{}" x2="{}" y2="{}" class="axis"/>'
        '<text x="{}" y="{}" class="tick">{}</text>'
        '<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>'
        '<text x="4" y="{}" class="tick">{}</text>'
        '<text x="{}" y="{}" class="axis-title" text-anchor="middle">{}</text>'
        '<text x="4" y="{}" class="axis-title">{}</text></svg>',
        title, PLOT_WIDTH, PLOT_HEIGHT, PLOT_WIDTH, PLOT_HEIGHT, PLOT_MARGIN, title,
        mark_safe("".join(bars)),  # noqa: S308 — bars are built with format_html
        PLOT_MARGIN, PLOT_MARGIN + inner_h, PLOT_WIDTH - PLOT_MARGIN, PLOT_MARGIN + inner_h,
        PLOT_MARGIN, PLOT_HEIGHT - 8, first, PLOT_WIDTH - PLOT_MARGIN, PLOT_HEIGHT - 8, last,
        PLOT_MARGIN + 4, f"{top:g}{unit}",
        PLOT_WIDTH // 2, PLOT_HEIGHT - 8, x_title, PLOT_MARGIN - 4, y_title,
    )


def rating_plot(counts: dict[int, int]) -> SafeString:
    """Crowd ratings per value 1-5 (``selectors.dashboard.rating_counts``)."""
    return svg_bars("Ratings (1–5)", [str(v) for v in range(1, 6)],
                    [counts[v] for v in range(1, 6)] if sum(counts.values()) else [],
                    x_title="rating (1 very implausible – 5 very plausible)",
                    y_title="ratings")


def worker_agreement_plot(per_worker: list[dict]) -> SafeString:
    """The lowest per-worker agreements of a QC report (``report["agreement"]["per_worker"]``:
    worker pk, agreement), named by the anonymous id the queue shows."""
    pairs = [(row["agreement"], row["worker"]) for row in per_worker
             if row.get("agreement") is not None][:MAX_WORKER_BARS]
    if not pairs:
        return svg_bars("Per-worker agreement", [], [])
    names = {pk: qc_selectors.anonymous_worker_id(provider, external_id)
             for pk, provider, external_id in Worker.objects.filter(
                 pk__in=[worker for _, worker in pairs]).values_list("pk", "provider",
                                                                     "external_id")}
    # The anonymous id the queue shows, never the pk or the MTurk WorkerId.
    return svg_bars("Per-worker leave-one-out agreement (lowest first)",
                    [f"worker {names.get(worker, worker)}" for _, worker in pairs],
                    [round(value, 3) for value, _ in pairs],
                    x_title="workers, lowest agreement first", y_title="agreement (0–1)")


def seconds_label(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


def time_plot(histogram: dict | None) -> SafeString:
    """Answers per time bin (``selectors.dashboard.duration_histogram``), the last bin open
    ended. Labels carry as many decimals as the bin width needs, so no bin reads "0–0 s"."""
    if not histogram:
        return svg_bars("Time per item", [], [])
    width = histogram["width_ms"] / 1000.0
    decimals = 0 if width >= 1 else min(3, max(1, -math.floor(math.log10(width))))
    counts = histogram["counts"]
    labels = [f"{seconds_label(k * width, decimals)}–{seconds_label((k + 1) * width, decimals)} s"
              for k in range(len(counts) - 1)]
    labels.append(f"≥ {seconds_label((len(counts) - 1) * width, decimals)} s")
    return svg_bars("Time per item (seconds, 99th percentile and above in the last bin)",
                    labels, counts, x_title="seconds per answer (browser's measure)",
                    y_title="answers")


# --- views ------------------------------------------------------------------------------------


#: How many unflagged submitted assignments the review page lists one by one.
UNFLAGGED_SHOWN = 20
#: The page counts the unflagged submitted assignments up to this many ("more than" past it):
#: counting 100,000 of them for every page view took a second (issue 21).
UNFLAGGED_COUNTED = 1000


def answer_rows(flags: list[Flag], earlier_turns: dict) -> list[dict]:
    """One row per flagged answer with every flag on it (``row["flags"]``), highest first; a
    flag on no answer (a worker, an assignment) is a row of its own."""
    rows: dict[tuple, dict] = {}
    for flag in flags:
        key = ("answer", flag.annotation_id) if flag.annotation_id else ("flag", flag.pk)
        row = rows.get(key)
        if row is None:
            row = rows[key] = flag_view(flag, earlier_turns)
            row["flags"] = []
        row["flags"].append(flag)
    return list(rows.values())


def queue_group_view(group: review_queue.QueueGroup, by: str, earlier_turns: dict) -> dict:
    """A group of the queue page as the template shows it: its label, the assignment or worker
    its decisions act on, its totals and its rows."""
    rows = answer_rows(group.flags, earlier_turns)
    first = rows[0] if rows else {"assignment": None, "worker": None, "annotation": None}
    view = {"key": group.key, "rows": rows, "flag_total": group.flag_total,
            "answer_total": group.answer_total, "shown": len(group.flags)}
    # ``label_worker``: the template names the worker with the shared ``_worker_name.html``
    # (pseudonym, local username for staff, "blocked") after the label's text.
    if by == "worker":
        worker = first["worker"] or (first["annotation"].worker if first["annotation"] else None)
        view.update(worker=worker, label="worker" if worker else "no worker",
                    label_worker=worker)
    elif by == "hit":
        assignment = first["assignment"]
        hit = assignment.hit if assignment else None
        if assignment is None:
            label = "work outside a HIT (local or imported) and worker-level flags"
        elif hit.batch.provider == "prolific":
            label = f"Prolific study {hit} · session {assignment} · worker"
        else:
            label = f"HIT {hit} · assignment {assignment} · worker"
        view.update(assignment=assignment, label=label,
                    label_worker=assignment.worker if assignment else None)
    else:
        annotation = first["annotation"]
        view.update(assignment=first["assignment"] if annotation else None,
                    label=(f"answer {annotation.pk} · worker" if annotation
                           else f"{first['flags'][0].reason} (no answer)"),
                    label_worker=annotation.worker if annotation else None)
    return view


@page_requires("see_work")
def queue(request, slug: str):
    """A page of open flags grouped by HIT (default), by worker or by answer, the groups of
    highest score first, each with its totals (``selectors.review_queue``); above them the
    submitted assignments without a flag, each with its decisions."""
    project = get_object_or_404(Project, slug=slug)
    group_by = request.GET.get("by", "hit")
    if group_by not in review_queue.GROUPINGS:
        group_by = "hit"
    try:
        after = (review_queue.Cursor.parse(request.GET["after"])
                 if request.GET.get("after") else None)
    except review_queue.BadCursor as error:
        return HttpResponseBadRequest(str(error), content_type="text/plain")
    # ?worker=<id>: the flags of one worker (the dashboard's worker table links here).
    worker_filter = request.GET.get("worker", "")
    if worker_filter and not worker_filter.isdigit():
        return HttpResponseBadRequest("worker must be a worker's number", content_type="text/plain")
    worker_id = int(worker_filter) if worker_filter else None
    page = review_queue.open_flag_page(project=project, by=group_by, after=after,
                                       worker_id=worker_id)
    flags = [flag for group in page.groups for flag in group.flags]
    earlier_turns = previous_turns(flags) if project.kind == "sluice" else {}
    groups = [queue_group_view(group, group_by, earlier_turns) for group in page.groups]
    from annotation.providers.prolific import REJECTION_CATEGORIES

    # One statement for the count and the ones shown: the ids up to the count's ceiling (the
    # open-flag anti-join ran twice when they were counted and listed apart).
    unflagged_ids = list(review_selectors.unflagged_submitted_assignment_ids(project=project)
                         [:UNFLAGGED_COUNTED + 1])
    unflagged_count = len(unflagged_ids)
    # Each submitted assignment without a flag, with its answers, so one can be rejected,
    # bonused or its worker blocked here too (not only approved in bulk).
    unflagged = list(Assignment.objects.filter(pk__in=unflagged_ids[:UNFLAGGED_SHOWN])
                     .select_related("worker__user", "hit__batch")
                     .prefetch_related(Prefetch("annotations", queryset=Annotation.objects
                                                .select_related(*ITEM_TEXT_RELATIONS)))
                     .order_by("pk"))
    unflagged_answers = [a for assignment in unflagged for a in assignment.annotations.all()]
    unflagged_turns = earlier_turns_of(unflagged_answers) if project.kind == "sluice" else {}
    for annotation in unflagged_answers:
        annotation.answer = answer_of(annotation)
        # Staff read the item's text, not its database id ("ITEM 195 rating 3", issue 24).
        annotation.item_text = source_of(annotation, unflagged_turns)["source"]
    return render(request, "frontend/review/queue.html", {
        "project": project, "groups": groups, "group_by": group_by, "page": page,
        "after": after, "next_after": str(page.next_cursor) if page.next_cursor else None,
        "worker_filter": Worker.objects.filter(pk=worker_id).first() if worker_id else None,
        "flag_counts": qc_selectors.flag_counts(project=project),
        "unflagged_count": min(unflagged_count, UNFLAGGED_COUNTED),
        "unflagged_more": unflagged_count > UNFLAGGED_COUNTED,
        "unflagged": unflagged,
        "rejection_categories": sorted(REJECTION_CATEGORIES),
    })


def _back(request, slug: str):
    """Back to the page the form was on; only a path on this site (no open redirect)."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = f"/staff/review/{slug}/"
    return redirect(target)


@page_requires("decide_flags")
@require_POST
def qc_run(request, slug: str):
    """Start QC for the project as a job (``services.staff_jobs``, kind ``qc``).

    The request only starts it: with a worker, the reviewer goes to the job's page, which
    follows its progress and shows the report; inline (no broker) the job has finished when
    ``job_start`` returns, so the reviewer goes back to the page with its summary."""
    project = get_object_or_404(Project, slug=slug)
    job, refused = _start_job(request, kind=Job.Kind.QC, project=project, params={})
    if job is None:
        messages.error(request, f"QC did not run: {refused}")
    elif job.state == Job.State.DONE:
        messages.success(request, qc_summary(job.result))
    elif job.state == Job.State.FAILED:
        messages.error(request, f"QC did not run: {job.error}")
    else:
        return redirect("staff_jobs:detail", job_id=job.pk)
    return _back(request, slug)


def _apply(request, slug: str, change: Callable[[], object], done: str):
    """Run one review decision (a service call); report it as a message and go back.

    A service refuses with ValidationError (e.g. a rejection without a message): the reviewer
    reads why, and nothing changed.
    """
    try:
        change()
    except ValidationError as error:
        messages.error(request, "; ".join(error.messages))
    else:
        messages.success(request, done)
    return _back(request, slug)


#: What the reviewer reads once a decision went through ("rejectd" was shown before).
DONE = {"approve": "approved", "reject": "rejected"}


@page_requires("decide_assignments")
@require_POST
def assignment_decide_view(request, slug: str, assignment_id: int):
    """Approve or reject a worker's whole HIT."""
    assignment = get_object_or_404(Assignment, pk=assignment_id, hit__batch__project__slug=slug)
    action = request.POST.get("action")
    decide = {"approve": decisions.assignment_approve,
              "reject": decisions.assignment_reject}.get(action)
    if decide is None:
        messages.error(request, "unknown action")
        return _back(request, slug)
    extra = ({"rejection_category": request.POST.get("rejection_category", "")}
             if action == "reject" else {})
    return _apply(request, slug,
                  lambda: decide(assignment_id=assignment.pk, actor=request.user,
                                 message=request.POST.get("message", ""), **extra),
                  f"Assignment {assignment} {DONE[action]}.")


@page_requires("decide_assignments")
@require_POST
def assignments_approve_view(request, slug: str):
    """Approve every submitted assignment of the project that has no open flag (the flagged
    ones wait on this page) as an ``approvals`` job (``services.staff_jobs``): many thousands
    are decided in transactions of 500, never inside the request with a worker; inline (no
    broker) it has finished when the page answers, which says how many were approved and how
    many held back. Prolific's go out in one bulk call per 500."""
    project = get_object_or_404(Project, slug=slug)
    if not review_selectors.unflagged_submitted_assignment_ids(project=project).exists():
        messages.error(request, "No submitted assignment without an open flag is waiting.")
        return _back(request, slug)
    job, refused = _start_job(request, kind=Job.Kind.APPROVALS, project=project,
                              params={"message": request.POST.get("message", "")})
    if job is None:
        messages.error(request, f"Nothing was approved: {refused}")
    elif job.state == Job.State.DONE:
        messages.success(request, approvals_summary(job.result))
    elif job.state == Job.State.FAILED:
        # Its transactions of 500 that finished stay approved: the job page says how far.
        messages.error(request, f"The approval stopped: {job.error} (job {job.pk} shows how "
                                "far it went).")
    else:
        return redirect("staff_jobs:detail", job_id=job.pk)
    return _back(request, slug)


@page_requires("decide_annotations")
@require_POST
def annotation_decide_view(request, slug: str, annotation_id: int):
    annotation = get_object_or_404(Annotation, pk=annotation_id, project__slug=slug)
    approve = request.POST.get("action") == "approve"
    decide = decisions.annotation_approve if approve else decisions.annotation_reject
    return _apply(request, slug,
                  lambda: decide(annotation_id=annotation.pk, actor=request.user,
                                 message=request.POST.get("message", "")),
                  f"Annotation {annotation.pk} {'approved' if approve else 'rejected'}.")


@page_requires("decide_flags")
@require_POST
def flag_dismiss_view(request, slug: str, flag_id: int):
    flag = get_object_or_404(Flag, pk=flag_id, project__slug=slug)
    return _apply(request, slug,
                  lambda: decisions.flag_dismiss(flag_id=flag.pk, actor=request.user,
                                                 note=request.POST.get("note", "")),
                  f"Flag {flag.reason} dismissed.")


def _ticked_ids(request, field: str) -> list[int] | None:
    """The ids ticked in a bulk form (``field`` repeated), or None when one is not a number."""
    values = request.POST.getlist(field)
    if not all(value.isdigit() for value in values):
        return None
    return sorted({int(value) for value in values})


@page_requires("decide_assignments")
@require_POST
def assignments_reject_view(request, slug: str):
    """Reject the ticked assignments of the queue with one message (``decisions.
    assignments_reject``: all or none; Prolific's need a category and 100+ characters)."""
    project = get_object_or_404(Project, slug=slug)
    ids = _ticked_ids(request, "assignment")
    if ids is None:
        messages.error(request, "Nothing was rejected: an assignment must be given by its number.")
        return _back(request, slug)
    if not ids:
        messages.error(request, "Nothing was rejected: tick at least one assignment.")
        return _back(request, slug)
    ticked = list(Assignment.objects.filter(pk__in=ids, hit__batch__project=project)
                  .order_by("pk"))
    if len(ticked) != len(ids):
        messages.error(request, f"Nothing was rejected: no assignment "
                                f"{sorted(set(ids) - {a.pk for a in ticked})} in {project.slug}.")
        return _back(request, slug)
    already = {a.pk for a in ticked if a.status == Assignment.Status.REJECTED}
    try:
        decisions.assignments_reject(
            assignment_ids=ids, message=request.POST.get("message", ""), actor=request.user,
            rejection_category=request.POST.get("rejection_category", ""))
    except ValidationError as error:
        messages.error(request, "Nothing was rejected: " + "; ".join(error.messages))
        return _back(request, slug)
    rejected = [a for a in ticked if a.pk not in already]
    text = (f"Rejected {len(rejected)} assignment{pluralize(len(rejected))} with one message: "
            + ", ".join(str(a) for a in rejected) + "." if rejected else "Nothing to reject.")
    if already:
        text += (f" {len(already)} ticked assignment{pluralize(len(already))} had been "
                 "rejected already.")
    messages.success(request, text)
    return _back(request, slug)


@page_requires("decide_flags")
@require_POST
def flags_dismiss_view(request, slug: str):
    """Un-flag the ticked open flags of the queue (``decisions.flags_dismiss``: all or none);
    the answers themselves are unchanged."""
    project = get_object_or_404(Project, slug=slug)
    ids = _ticked_ids(request, "flag")
    if ids is None:
        messages.error(request, "Nothing was un-flagged: a flag must be given by its number.")
        return _back(request, slug)
    if not ids:
        messages.error(request, "Nothing was un-flagged: tick at least one flag.")
        return _back(request, slug)
    found = set(Flag.objects.filter(pk__in=ids, project=project).values_list("pk", flat=True))
    if found != set(ids):
        messages.error(request, f"Nothing was un-flagged: no flag {sorted(set(ids) - found)} "
                                f"in {project.slug}.")
        return _back(request, slug)
    try:
        dismissed = decisions.flags_dismiss(flag_ids=ids, actor=request.user,
                                            note=request.POST.get("note", ""))
    except ValidationError as error:
        messages.error(request, "Nothing was un-flagged: " + "; ".join(error.messages))
        return _back(request, slug)
    reasons = Counter(flag.reason for flag in dismissed)
    messages.success(request, (
        f"Un-flagged {len(dismissed)} flag{pluralize(len(dismissed))} ("
        + ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
        + "); the answers themselves are unchanged."))
    return _back(request, slug)


@page_requires("decide_workers")
@require_POST
def worker_block_view(request, slug: str, worker_id: int):
    """Block (``action=block``, the default; the form of ``frontend/staff/workers.py`` asks
    the scope, ``everywhere`` or ``project`` (this one), and what to do with the pending work,
    ``reject`` or ``leave``) or unblock a worker (``scope=project``: from this project)."""
    project = get_object_or_404(Project, slug=slug)
    worker = get_object_or_404(Worker, pk=worker_id)
    scope = request.POST.get("scope", "")
    project_id = project.pk if scope == "project" else None
    if request.POST.get("action") == "unblock":
        where = f" from {project.slug}" if project_id else ""
        return _apply(request, slug,
                      lambda: decisions.worker_unblock(worker_id=worker.pk, actor=request.user,
                                                       project_id=project_id),
                      f"Worker {worker.anonymous_id} unblocked{where}.")
    try:
        outcome = decisions.worker_block(
            worker_id=worker.pk, actor=request.user, reason=request.POST.get("reason", ""),
            scope=scope, project_id=project_id, pending=request.POST.get("pending", ""),
            message=request.POST.get("message", ""),
            rejection_category=request.POST.get("rejection_category", ""))
    except ValidationError as error:
        messages.error(request, "; ".join(error.messages))
    else:
        messages.success(request, outcome.summary())
    return _back(request, slug)


@page_requires("decide_assignments")
@require_POST
def bonus_create_view(request, slug: str, assignment_id: int):
    assignment = get_object_or_404(Assignment, pk=assignment_id, hit__batch__project__slug=slug)
    try:
        amount = int(request.POST.get("amount_cents", ""))
    except ValueError:
        messages.error(request, "The bonus amount must be a whole number of the currency's "
                                "smallest unit (cents, pence).")
        return _back(request, slug)
    try:
        outcome = decisions.bonus_create(assignment_id=assignment.pk, amount_cents=amount,
                                         reason=request.POST.get("reason", ""),
                                         actor=request.user,
                                         again=request.POST.get("again") == "on")
    except ValidationError as error:
        messages.error(request, "; ".join(error.messages))
    else:
        # What became of it, read back after its job (selectors.bonuses): never "queued"
        # for a bonus already settled, nor "sent again" for one the provider had paid.
        done, text = bonus_report(outcome.bonus.pk)
        (messages.success if done else messages.warning)(request, text)
    return _back(request, slug)


@page_requires("see_work")
def dashboard(request, slug: str):
    """Agreement, progress, cost, workers and flags of a project. Every figure that reads the
    answers comes from the latest finished QC job's report, shown with when it ran
    (``frontend.staff.dashboard``); ``?sort=<column>&order=asc|desc`` orders the worker table."""
    project = get_object_or_404(Project, slug=slug)
    qc_job = dashboard_selectors.latest_qc_job(project=project)
    report = (qc_job.result or {}) if qc_job else {}
    figures = report.get("dashboard")
    context = staff_dashboard.dashboard_context(
        project=project, report=report, sort=request.GET.get("sort", "worker"),
        descending=request.GET.get("order") == "desc")
    ratings = (figures or {}).get("ratings_by_value")
    per_worker = report.get("agreement", {}).get("per_worker")
    return render(request, "frontend/review/dashboard.html", {
        **context, "project": project, "qc_job": qc_job if figures is not None else None,
        "flag_counts": qc_selectors.flag_counts(project=project),
        "rating_plot": rating_plot({int(value): n for value, n in ratings.items()})
        if ratings is not None else None,
        "worker_plot": worker_agreement_plot(per_worker) if per_worker else None,
        "time_plot": time_plot(figures.get("time_per_answer")) if figures else None,
    })


@page_requires("see_work")
def export(request, slug: str):
    """GET: the project's export page (``staff:exports``: one page lists the formats, the
    latest export of each and its warnings). POST with ``format``: start the export as a job
    (``services.staff_jobs``, kind ``export``: what ``manage.py export_data`` writes, as one zip
    on disk) and go to the job's page, which offers the download when it is done."""
    project = get_object_or_404(Project, slug=slug)
    if request.method != "POST":
        return redirect("staff:exports", slug=project.slug)
    job, refused = _start_job(request, kind=Job.Kind.EXPORT, project=project,
                              params={"format": request.POST.get("format", "")})
    if job is None:
        messages.error(request, refused)
        return redirect("staff:exports", slug=slug)
    return redirect("staff_jobs:detail", job_id=job.pk)


@page_requires("see_work")
def project_list(request):
    return render(request, "frontend/review/projects.html",
                  {"projects": project_selectors.project_list_with_progress()})
