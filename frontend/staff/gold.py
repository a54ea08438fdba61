"""The console's gold page: how often each worker is served a gold item (and whether failing
them stops the worker), with the binomial advice on how many gold items make a flag
trustworthy beside it, and the items marked gold (mark one, or make it ordinary again).

Views validate and render; changes go through ``annotation.services.projects.project_update``
(the one validation of a project's settings) and ``annotation.services.gold_items``.
"""

from __future__ import annotations

import json

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path

from annotation.models import Item, Project
from annotation.roles import page_requires
from annotation.services.gold_items import gold_answer_from_text, item_gold_set
from annotation.services.projects import (
    MAX_GOLD_RATE,
    project_settings_errors,
    project_update,
)
from qc import flags
from qc.gold import gold_guidance, gold_items_needed

#: Gold items listed on the page (a project has few: they are checks, not the dataset).
GOLD_ITEMS_SHOWN = 200


class GoldSettingsForm(forms.Form):
    gold_rate = forms.FloatField(
        label="Share of each worker's items that are gold", min_value=0,
        max_value=MAX_GOLD_RATE,
        help_text=f"0 serves none; 0.1 makes every tenth item a gold item (at most "
                  f"{MAX_GOLD_RATE}).")
    gold_failures_stop = forms.BooleanField(
        label="Stop a worker as soon as the gold rule flags them", required=False)


class MarkGoldForm(forms.Form):
    external_id = forms.CharField(label="Item id (as imported)", max_length=200)
    answer = forms.CharField(
        label="Known answer", max_length=5000,
        help_text="A rating 1–5 (plausibility), DONE / IMPOSSIBLE / UNNECESSARY (decontext) "
                  "or the expected text; several accepted ratings or categories separated "
                  "by |.")


def _page(request, project: Project, *, settings_form=None, mark_form=None, status=200):
    gold = Item.objects.filter(project=project, is_gold=True).order_by("external_id")
    context = {
        "project": project,
        "settings_form": settings_form or GoldSettingsForm(initial={
            "gold_rate": project.gold_rate, "gold_failures_stop": project.gold_failures_stop}),
        "mark_form": mark_form or MarkGoldForm(),
        "gold_items": [(item, json.dumps(item.gold_answer, ensure_ascii=False))
                       for item in gold[:GOLD_ITEMS_SHOWN]],
        "gold_count": gold.count(), "shown_limit": GOLD_ITEMS_SHOWN,
        "settings_errors": project_settings_errors(project),
    }
    if context["settings_errors"]:
        # Stored settings failing the validation: no gold rule to describe (the page says
        # what to fix, as the settings page does).
        return render(request, "frontend/staff/gold.html", context, status=status)
    threshold = flags.FlagSettings.from_dict(project.flag_settings)
    return render(request, "frontend/staff/gold.html", {
        **context,
        "max_failure_rate": threshold.max_gold_failure_rate,
        "min_gold_items": threshold.min_gold_items,
        "gold_first": threshold.gold_first,
        # Percentages as the docs and the advice word them (1.1%, 87%).
        "guidance": [{"gold_items": row.gold_items, "min_failures": row.min_failures,
                      "false_flags": f"{row.false_flag_rate:.1%}", "recall": f"{row.recall:.0%}"}
                     for row in gold_guidance(max_failure_rate=threshold.max_gold_failure_rate)],
        "needed": gold_items_needed(max_failure_rate=threshold.max_gold_failure_rate),
        "served_for_needed": _served_for(project.gold_rate, threshold.max_gold_failure_rate),
    }, status=status)


def _served_for(rate: float, max_failure_rate: float) -> int | None:
    """Items a worker must be served to answer the advised number of gold items at ``rate``."""
    needed = gold_items_needed(max_failure_rate=max_failure_rate)
    if needed is None or rate <= 0:
        return None
    return -(-needed * 1_000_000 // round(rate * 1_000_000))  # ceil without float error


@page_requires("change_projects")
def project_gold(request, slug: str):
    """GET: the page. POST ``settings``: save the rate and the stop setting; ``mark``: make an
    item gold with its answer; ``unmark``: make item ``item_id`` ordinary again."""
    project = get_object_or_404(Project, slug=slug)
    if request.method != "POST":
        return _page(request, project)
    if "settings" in request.POST:
        form = GoldSettingsForm(request.POST)
        if not form.is_valid():
            return _page(request, project, settings_form=form, status=400)
        try:
            project_update(project=project, **form.cleaned_data)
        except ValidationError as error:
            project.refresh_from_db()
            for name, field_errors in error.message_dict.items():
                form.add_error(name if name in form.fields else None, field_errors)
            return _page(request, project, settings_form=form, status=400)
        messages.success(request, "Gold settings saved.")
    elif "unmark" in request.POST:
        item = get_object_or_404(Item, project=project, pk=request.POST.get("unmark"),
                                 is_gold=True)
        item_gold_set(item=item, answer=None, actor=request.user)
        messages.success(request, f"Item {item.external_id} is an ordinary item again.")
    else:
        form = MarkGoldForm(request.POST)
        if not form.is_valid():
            return _page(request, project, mark_form=form, status=400)
        item = Item.objects.filter(project=project,
                                   external_id=form.cleaned_data["external_id"]).first()
        if item is None:
            form.add_error("external_id", "No item with this id in the project.")
            return _page(request, project, mark_form=form, status=400)
        try:
            answer = gold_answer_from_text(project.kind, form.cleaned_data["answer"])
            item_gold_set(item=item, answer=answer, actor=request.user)
        except (ValueError, ValidationError) as error:
            messages_of = error.messages if isinstance(error, ValidationError) else [str(error)]
            form.add_error("answer", messages_of)
            return _page(request, project, mark_form=form, status=400)
        messages.success(request, f"Item {item.external_id} is a gold item.")
    return redirect("staff:project-gold", slug=project.slug)


urlpatterns = [
    path("projects/<slug:slug>/gold/", project_gold, name="project-gold"),
]
