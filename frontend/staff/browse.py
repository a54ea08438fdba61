"""The data browser and adjudication (issue 24):

* ``/staff/projects/<slug>/answers/`` — every answer of the project, newest first, keyset
  pages, filtered by split, state, worker, provider and the item's text
  (``selectors/answer_browser.py``); each row the item's text, the answer, and for text
  answers the diff against the source;
* ``/staff/projects/<slug>/items/<id>/adjudicate/`` — every answer to one item side by side
  with its diff; the reviewer picks one or writes the reference
  (``services/adjudication.item_reference_set``, the one writer).

Everything from a dataset or a worker is escaped (templates autoescape; ``diff_html`` escapes
each part it builds).
"""

from __future__ import annotations

import csv
import io
import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from annotation.models import Item, Project, TaskKind
from annotation.providers.prolific import REJECTION_CATEGORIES
from annotation.roles import may, page_requires
from annotation.selectors import adjudication as adjudication_selectors
from annotation.selectors import answer_browser
from annotation.services.adjudication import PICKABLE_STATES, item_reference_set
from annotation.services.decisions import answers_decide
from frontend.review import answer_of, diff_html, earlier_turns_of, source_of


def answer_row(answer, earlier_turns: dict, flag_reasons: dict | None = None) -> dict:
    """What one row shows: the item's context and text, the answer, its diff (text answers)."""
    seen = source_of(answer, earlier_turns)
    words = answer_of(answer)
    show_diff = answer.rating is None and not answer.problem and not answer.skipped
    return {"answer": answer, "context": seen["context"], "source": seen["source"],
            "words": words, "diff": diff_html(seen["source"], words) if show_diff else None,
            "flags": (flag_reasons or {}).get(answer.pk, [])}


@page_requires("see_work")
def answer_browser_view(request, slug: str):
    project = get_object_or_404(Project, slug=slug)
    try:
        filters = answer_browser.AnswerFilters.from_query(request.GET)
    except answer_browser.BadFilter as error:
        return HttpResponseBadRequest(f"Bad filter: {error}", content_type="text/plain")
    page = answer_browser.answer_page(project=project, filters=filters)
    earlier = earlier_turns_of(page.answers)
    reasons = answer_browser.open_flag_reasons([a.pk for a in page.answers])
    rows = [answer_row(answer, earlier, reasons) for answer in page.answers]
    query = filters.query_without_cursor()
    next_url = (f"?{urlencode({**query, 'after': page.next_after})}"
                if page.next_after is not None else "")
    unsorted = {name: value for name, value in query.items() if name != "sort"}
    return render(request, "frontend/staff/answers.html", {
        "project": project, "filters": filters, "rows": rows, "page": page,
        "next_url": next_url, "first_url": f"?{urlencode(query)}" if filters.after else "",
        "states": answer_browser.STATES, "providers": answer_browser.PROVIDERS,
        "flag_reasons": answer_browser.open_flag_reason_choices(project=project,
                                                                chosen=filters.flag),
        "text_answers": project.kind in answer_browser.TEXT_ANSWER_KINDS,
        "splits": ("train", "dev", "test"), "sorts": answer_browser.SORTS,
        "sort_label": answer_browser.SORTS[filters.sort][0],
        # A heading's link sorts by its column (the answer's toggles newest / oldest).
        "sort_urls": {sort: f"?{urlencode({**unsorted, 'sort': sort})}"
                      for sort in answer_browser.SORTS},
        "download_query": urlencode(query),
        "here": request.get_full_path(),
        "may_decide": may(request.user, "decide_annotations"),
        "rejection_categories": sorted(REJECTION_CATEGORIES),
    })


#: The permission each bulk action needs beyond ``decide_annotations`` (the page's own).
SELECTION_PERMISSIONS = {"approve": "decide_assignments", "reject": "decide_assignments",
                         "dismiss": "decide_flags"}


@page_requires("decide_annotations")
@require_POST
def answers_decide_view(request, slug: str):
    """A bulk action on the answers ticked in the browser (``decisions.answers_decide``); back
    to the page it came from with what was done, held back and not decided."""
    project = get_object_or_404(Project, slug=slug)
    action = request.POST.get("action", "")
    needed = SELECTION_PERMISSIONS.get(action)
    if needed is not None and not may(request.user, needed):
        raise PermissionDenied(f"this action needs the permission {needed}")
    back = request.POST.get("next", "")
    if not back.startswith(f"/staff/projects/{slug}/answers/"):
        back = reverse("staff:answers", kwargs={"slug": slug})
    raw = request.POST.getlist("answers")
    if not all(value.isdigit() and len(value) <= 18 for value in raw):
        messages.error(request, "answers: tick the answers listed")
        return redirect(back)
    try:
        outcome = answers_decide(project=project, answer_ids=[int(value) for value in raw],
                                 action=action, actor=request.user,
                                 message=request.POST.get("message", ""),
                                 rejection_category=request.POST.get("rejection_category", ""))
    except ValidationError as error:
        messages.error(request, "; ".join(error.messages))
    else:
        messages.success(request, outcome.summary())
    return redirect(back)


#: Download formats of the browser's selection: content type and file suffix.
DOWNLOADS = {"csv": ("text/csv; charset=utf-8", "csv"),
             "jsonl": ("application/x-ndjson; charset=utf-8", "jsonl")}
#: Characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value) -> str:
    """A cell no spreadsheet runs: text starting like a formula gets a leading apostrophe."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


@page_requires("see_work")
def answers_download_view(request, slug: str):
    """Every answer that passes the browser's filters (all pages, in its sort), streamed as CSV
    or JSONL: read a page of ``DOWNLOAD_CHUNK`` at a time by the same keyset as the page, so
    memory stays flat at any size. Worker pseudonyms, never provider ids."""
    project = get_object_or_404(Project, slug=slug)
    kind = request.GET.get("format", "csv")
    if kind not in DOWNLOADS:
        return HttpResponseBadRequest("Bad filter: format: csv or jsonl",
                                      content_type="text/plain")
    try:
        filters = answer_browser.AnswerFilters.from_query(request.GET)
    except answer_browser.BadFilter as error:
        return HttpResponseBadRequest(f"Bad filter: {error}", content_type="text/plain")
    rows = answer_browser.download_rows(project=project, filters=filters)
    if kind == "csv":
        def lines():
            buffer = io.StringIO()
            writer = csv.writer(buffer)
            writer.writerow(answer_browser.DOWNLOAD_COLUMNS)
            for row in rows:
                writer.writerow([csv_cell(row[name]) for name in answer_browser.DOWNLOAD_COLUMNS])
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
            yield buffer.getvalue()
    else:
        def lines():
            for row in rows:
                yield json.dumps(row, ensure_ascii=False) + "\n"
    content_type, suffix = DOWNLOADS[kind]
    response = StreamingHttpResponse(lines(), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-answers.{suffix}"'
    return response


@page_requires("see_work")
def adjudicate_view(request, slug: str, item_id: int):
    project = get_object_or_404(Project, slug=slug)
    item = get_object_or_404(Item.objects.select_related(
        "project", "target_sentence__document", "turn__dialogue", "filler__cloze",
        "complex_sentence"), pk=item_id, project=project)
    answers, total = adjudication_selectors.item_answers(item)
    for answer in answers:  # the page's item, loaded once, for source_of
        answer.item = item
    earlier = earlier_turns_of(answers[:1])
    rows = [answer_row(answer, earlier) for answer in answers]
    seen = source_of(answers[0], earlier) if answers else {"context": "", "source": ""}
    return render(request, "frontend/staff/adjudicate.html", {
        "project": project, "item": item, "rows": rows, "total": total,
        "context": seen["context"], "source": seen["source"],
        "reference": adjudication_selectors.item_reference(item),
        "pickable": set(PICKABLE_STATES), "rating_kind": project.kind == TaskKind.PLAUSIBILITY,
        "may_decide": may(request.user, "decide_annotations"),
    })


@page_requires("decide_annotations")
@require_POST
def adjudicate_decide_view(request, slug: str, item_id: int):
    project = get_object_or_404(Project, slug=slug)
    item = get_object_or_404(Item, pk=item_id, project=project)
    answer_text = request.POST.get("answer", "").strip()
    if answer_text and not answer_text.isdigit():
        messages.error(request, "answer: pick one of the answers listed")
        return redirect("staff:adjudicate", slug=slug, item_id=item.pk)
    try:
        item_reference_set(item_id=item.pk, actor=request.user,
                           answer_id=int(answer_text) if answer_text else None,
                           text=request.POST.get("text", ""),
                           rating=request.POST.get("rating", ""),
                           note=request.POST.get("note", ""))
    except ValidationError as error:
        messages.error(request, "; ".join(f"{field}: {', '.join(problems)}" for field, problems
                                          in error.message_dict.items()))
    else:
        messages.success(request, "Reference saved: exports write it to adjudicated.jsonl.")
    return redirect("staff:adjudicate", slug=slug, item_id=item.pk)


urlpatterns = [
    path("projects/<slug:slug>/answers/", answer_browser_view, name="answers"),
    path("projects/<slug:slug>/answers/decide/", answers_decide_view, name="answers-decide"),
    path("projects/<slug:slug>/answers/download/", answers_download_view,
         name="answers-download"),
    path("projects/<slug:slug>/items/<int:item_id>/adjudicate/", adjudicate_view,
         name="adjudicate"),
    path("projects/<slug:slug>/items/<int:item_id>/adjudicate/decide/",
         adjudicate_decide_view, name="adjudicate-decide"),
]
