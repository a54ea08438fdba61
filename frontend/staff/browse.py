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

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from annotation.models import Item, Project, TaskKind
from annotation.roles import may, page_requires
from annotation.selectors import adjudication as adjudication_selectors
from annotation.selectors import answer_browser
from annotation.services.adjudication import PICKABLE_STATES, item_reference_set
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
    return render(request, "frontend/staff/answers.html", {
        "project": project, "filters": filters, "rows": rows, "page": page,
        "next_url": next_url, "first_url": f"?{urlencode(query)}" if filters.after else "",
        "states": answer_browser.STATES, "providers": answer_browser.PROVIDERS,
        "splits": ("train", "dev", "test"),
    })


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
    path("projects/<slug:slug>/items/<int:item_id>/adjudicate/", adjudicate_view,
         name="adjudicate"),
    path("projects/<slug:slug>/items/<int:item_id>/adjudicate/decide/",
         adjudicate_decide_view, name="adjudicate-decide"),
]
