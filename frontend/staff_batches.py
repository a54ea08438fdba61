"""Staff pages for MTurk and Prolific batches: launch (form -> cost estimate -> confirm), list,
detail, and managing live HITs/studies (stop, pause, resume, more assignments/places)."""

from __future__ import annotations

from decimal import Decimal
from functools import partial

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from annotation.models import Batch, Project, Qualification
from annotation.money import provider_currency, provider_money_text
from annotation.roles import page_requires
from annotation.selectors.batches import (
    batch_assignment_status_counts,
    batch_events,
    batch_hit_status_counts,
    batch_hits,
    batches_with_counts,
    hit_provider_ids,
)
from annotation.services.adaptive import adaptive_policy
from annotation.services.batches.collect import batch_is_collected
from annotation.services.batches.decide import batch_manage, parse_duration_seconds
from annotation.services.batches.plan import (
    LAUNCH_PROVIDERS,
    PROLIFIC_DEVICES,
    LaunchOptions,
    adaptive_cost_lines,
    batch_launch,
    batch_plan,
)
from annotation.services.batches.publish import (
    UNFINISHED_BATCH_STATUSES,
    batch_cancel,
    batch_resume,
)
from annotation.services.jobs import enqueue_now

app_name = "staff_batches"


class DurationField(forms.CharField):
    def to_python(self, value):
        value = super().to_python(value)
        try:
            return parse_duration_seconds(value)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error


class LaunchForm(forms.Form):
    project = forms.ModelChoiceField(queryset=Project.objects.order_by("slug"),
                                     to_field_name="slug")
    title = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    splits = forms.MultipleChoiceField(choices=[("train", "train"), ("dev", "dev"),
                                                ("test", "test")],
                                       required=False, widget=forms.CheckboxSelectMultiple)
    item_ids = forms.CharField(required=False, help_text="or explicit item ids, comma-separated")
    items_per_hit = forms.IntegerField(min_value=1, max_value=50, initial=5)
    # Decimal bounds: a float 0.01 is a hair above Decimal("0.01"), so min_value=0.01
    # refused a one-cent reward.
    reward = forms.DecimalField(min_value=Decimal("0.01"), max_value=Decimal("10000"),
                                max_digits=7, decimal_places=2, initial="0.50",
                                help_text="dollars per assignment")
    assignments = forms.IntegerField(min_value=1, max_value=50, required=False,
                                     help_text="per item; default: the project's redundancy")
    lifetime = DurationField(initial="7d")
    duration = DurationField(initial="1h", help_text="time allotted per assignment")
    auto_approve = DurationField(initial="3d")
    locales = forms.CharField(required=False, initial="US,GB")
    min_approval = forms.IntegerField(min_value=0, max_value=100, required=False)
    min_approved = forms.IntegerField(min_value=0, required=False)
    qualification = forms.ModelChoiceField(queryset=Qualification.objects.all(), required=False)
    provider = forms.ChoiceField(choices=list(LAUNCH_PROVIDERS.items()))
    live = forms.BooleanField(required=False, label="Live MTurk (real money, not the sandbox)")
    # Prolific's own fields (``duration`` is the study's maximum allowed time there).
    estimated_minutes = forms.IntegerField(
        min_value=1, max_value=24 * 60, required=False,
        help_text="Prolific (required): estimated completion time in minutes")
    devices = forms.MultipleChoiceField(
        choices=[(device, device) for device in PROLIFIC_DEVICES], initial=["desktop"],
        required=False, widget=forms.CheckboxSelectMultiple,
        help_text="Prolific: devices the study admits")
    first_languages = forms.CharField(
        required=False, help_text="Prolific: first-language choice ids, comma-separated")

    #: Which fields belong to which provider, for the page's fieldsets.
    MTURK_FIELDS = ("lifetime", "auto_approve", "locales", "qualification", "live")
    PROLIFIC_FIELDS = ("estimated_minutes", "devices", "first_languages")

    def clean_item_ids(self):
        try:
            return tuple(int(part) for part in self.cleaned_data["item_ids"].split(",")
                         if part.strip())
        except ValueError as error:
            raise forms.ValidationError("item ids are comma-separated integers") from error

    def launch_options(self) -> LaunchOptions:
        data = self.cleaned_data
        return LaunchOptions(
            title=data["title"], description=data["description"],
            reward_cents=int(data["reward"] * 100), items_per_hit=data["items_per_hit"],
            splits=tuple(data["splits"]), item_ids=data["item_ids"],
            assignments=data["assignments"], lifetime_seconds=data["lifetime"],
            assignment_duration_seconds=data["duration"],
            auto_approval_delay_seconds=data["auto_approve"],
            locales=tuple(code.strip().upper() for code in data["locales"].split(",")
                          if code.strip()),
            min_percent_approved=data["min_approval"], min_hits_approved=data["min_approved"],
            qualification_id=data["qualification"].pk if data["qualification"] else None,
            provider=data["provider"], live=data["live"],
            estimated_minutes=data["estimated_minutes"],
            devices=tuple(data["devices"]) or ("desktop",),
            first_languages=tuple(code.strip() for code in data["first_languages"].split(",")
                                  if code.strip()),
        )


def _add_errors(form: forms.Form, error: ValidationError) -> None:
    if hasattr(error, "error_dict"):
        for name, field_errors in error.message_dict.items():
            form.add_error(name if name in form.fields else None,
                           [f"{name}: {message}" for message in field_errors]
                           if name not in form.fields else field_errors)
    else:
        form.add_error(None, error.messages)


def launch_defaults(project: Project | None) -> dict:
    """The launch form's starting values for ``project`` (``?project=SLUG``): the project, its
    reward (``Project.reward_cents``, when set) and its time estimate (``estimated_minutes``)."""
    if project is None:
        return {}
    initial: dict = {"project": project.slug}
    if project.reward_cents:
        initial["reward"] = Decimal(project.reward_cents) / 100
    if project.estimated_minutes:
        initial["estimated_minutes"] = project.estimated_minutes
    return initial


@page_requires("see_batches")
def batch_list(request):
    return render(request, "frontend/staff/batch_list.html",
                  {"batches": batches_with_counts()[:200]})


def _new_page(request, form: LaunchForm, **context):
    """The launch page: the shared fields, then MTurk's and Prolific's own in fieldsets."""
    own = set(LaunchForm.MTURK_FIELDS) | set(LaunchForm.PROLIFIC_FIELDS)
    return render(request, "frontend/staff/batch_new.html", {
        "form": form,
        "common_fields": [form[name] for name in form.fields if name not in own],
        "mturk_fields": [form[name] for name in LaunchForm.MTURK_FIELDS],
        "prolific_fields": [form[name] for name in LaunchForm.PROLIFIC_FIELDS],
        **context})


@page_requires("launch_batches")
def batch_new(request):
    """GET: the form. POST: the estimate to confirm; POST with confirm: launch."""
    if request.method != "POST":
        return _new_page(request, LaunchForm(initial=launch_defaults(
            Project.objects.filter(slug=request.GET.get("project", "")).first())))
    form = LaunchForm(request.POST)
    if not form.is_valid():
        return _new_page(request, form)
    project = form.cleaned_data["project"]
    options = form.launch_options()
    try:
        plan = batch_plan(project=project, options=options)
    except ValidationError as error:
        _add_errors(form, error)
        return _new_page(request, form)
    if request.POST.get("confirm") == "yes":
        try:
            confirmed = int(request.POST.get("confirmed_total_cents", ""))
            batch = batch_launch(project=project, options=options,
                                 confirmed_total_cents=confirmed, created_by=request.user)
        except ValueError:
            form.add_error(None, "the confirmed estimate is missing; review it again")
        except ValidationError as error:
            _add_errors(form, error)
        else:
            batch.refresh_from_db()
            if batch.status == Batch.Status.FAILED or batch.error:
                messages.error(request, f"Batch {batch.pk} was launched but could not publish: "
                                        f"{batch.error}")
            else:
                what = "studies" if batch.provider == "prolific" else "HITs"
                messages.success(request,
                                 f"Batch {batch.pk} launched; its {what} are being published.")
            return redirect("staff_batches:detail", batch_id=batch.pk)
    return _new_page(request, form, **{
        "plan": plan, "estimate": plan.estimate, "options": options,
        "project": project,
        # In the provider's currency (annotation.money): a Prolific workspace may pay in GBP.
        "dollars": {name: provider_money_text(cents, options.provider) for name, cents in (
            ("rewards", plan.estimate.reward_cents), ("fee", plan.estimate.fee_cents),
            ("vat", plan.estimate.vat_cents), ("total", plan.estimate.total_cents))},
        "prolific_fee_percent": settings.PROLIFIC_SERVICE_FEE_PERCENT,
        "prolific_vat_percent": settings.PROLIFIC_VAT_PERCENT,
        "adaptive_lines": adaptive_cost_lines(plan.estimate.adaptive, partial(
            provider_money_text, provider=options.provider))
        if plan.estimate.adaptive is not None else [],
    })


@page_requires("see_batches")
def batch_detail(request, batch_id: int):
    batch = get_object_or_404(batches_with_counts(), pk=batch_id)
    return render(request, "frontend/staff/batch_detail.html", {
        "batch": batch,
        "hit_statuses": sorted(batch_hit_status_counts(batch=batch).items()),
        "assignment_statuses": sorted(batch_assignment_status_counts(batch=batch).items()),
        "hits": batch_hits(batch=batch, limit=200),
        "events": batch_events(batch=batch, limit=200),
        "can_resume": batch.status in UNFINISHED_BATCH_STATUSES,
        "can_collect": batch_is_collected(batch),
        # A Prolific batch is read in Prolific's words: studies, places and sessions.
        "words": PROLIFIC_WORDS if batch.provider == "prolific" else MTURK_WORDS,
        # Adaptive redundancy: the studies' places can follow the answers.
        "adaptive_places": batch.provider == "prolific"
        and adaptive_policy(batch.project) is not None,
        # The events' amounts read in what this batch's provider pays in.
        "currency": provider_currency(batch.provider),
    })


@page_requires("run_batches")
@require_POST
def batch_resume_view(request, batch_id: int):
    get_object_or_404(Batch, pk=batch_id)
    try:
        batch = batch_resume(batch_id=batch_id, actor=request.user)
    except ValidationError as error:
        messages.error(request, "; ".join(error.messages))
    else:
        # Inline (no broker) publishing already ran: say how it ended, not just that it began.
        if batch.status == Batch.Status.PUBLISHED:
            messages.success(request, "Publishing resumed: every HIT is published.")
        elif batch.error:
            messages.error(request, f"Publishing did not finish: {batch.error}")
        else:
            messages.success(request, "Publishing resumed.")
    return redirect("staff_batches:detail", batch_id=batch_id)


@page_requires("run_batches")
@require_POST
def batch_manage_view(request, batch_id: int):
    """Stop, pause or resume the batch's published HITs (Prolific: studies), or add
    assignments (places) to them: all of them, or the one named by ``hit``."""
    batch = get_object_or_404(Batch, pk=batch_id)
    action = request.POST.get("action", "")
    hit = request.POST.get("hit", "").strip()
    count_text = request.POST.get("count", "").strip()
    try:
        if (hit and not hit.isdigit()) or (count_text and not count_text.isdigit()):
            raise ValidationError("hit and count must be whole numbers")
        queued = batch_manage(batch_id=batch_id, action=action,
                              hit_ids=[int(hit)] if hit else [],
                              count=int(count_text) if count_text else None,
                              actor=request.user)
    except ValidationError as error:
        messages.error(request, "; ".join(error.messages))
    else:
        messages.success(request, manage_requested_words(batch, action, queued, count_text))
    return redirect("staff_batches:detail", batch_id=batch_id)


def manage_requested_words(batch: Batch, action: str, hit_ids: list[int], count: str) -> str:
    """What the manage form's success says: the HITs (studies) by the provider's id, not by
    ours ("Add places to study # 1" answered with database ids, issue 24)."""
    words = PROLIFIC_WORDS if batch.provider == "prolific" else MTURK_WORDS
    names = hit_provider_ids(hit_ids=hit_ids[:MANAGE_NAMES_SHOWN])
    what = {"add": f"{words['add_assignments']} ({count})", "stop": words["stop_all"],
            "pause": "Pause", "resume": "Resume",
            "adapt": "Add the places the answers need"}.get(action, action)
    plural = words["hits"] if len(hit_ids) != 1 else words["hit"]
    named = ", ".join(names) + (f" and {len(hit_ids) - len(names)} more"
                                if len(hit_ids) > len(names) else "")
    return f"{what}: requested for {len(hit_ids)} {plural.lower()}: {named}."


#: The HITs (studies) a manage message names one by one.
MANAGE_NAMES_SHOWN = 10

MTURK_WORDS = {"hit": "HIT", "hits": "HITs", "assignment": "assignment",
               "assignments": "Assignments", "Hit": "HIT", "Assignment": "Assignment",
               "live_hits": "Live HITs", "stop_all": "Expire every HIT",
               "add_assignments": "Add assignments", "hit_id": "MTurk HIT id", "max": "max"}
PROLIFIC_WORDS = {"hit": "study", "hits": "Studies", "assignment": "place",
                  "assignments": "Sessions", "Hit": "Study", "Assignment": "Session",
                  "live_hits": "Studies", "stop_all": "Stop every study",
                  "add_assignments": "Add places", "hit_id": "Prolific study id",
                  "max": "places"}


@page_requires("run_batches")
@require_POST
def batch_collect_view(request, batch_id: int):
    """Collect the batch's submitted work now: the same ``collect_batch`` job the periodic
    collection sends (inline when there is no broker), instead of waiting for its turn."""
    batch = get_object_or_404(Batch, pk=batch_id)
    if not batch_is_collected(batch):  # what the periodic collection visits, the page offers
        messages.error(request, f"Nothing to collect: the batch is {batch.status}.")
    elif enqueue_now("annotation.tasks.collect_batch", batch.pk):
        messages.success(request, "Collection requested: submitted work appears below as it "
                                  "is collected.")
    else:
        messages.error(request, "Collection could not start now (the job queue or the "
                                "provider is unavailable); the periodic collection retries.")
    return redirect("staff_batches:detail", batch_id=batch_id)


@page_requires("run_batches")
@require_POST
def batch_cancel_view(request, batch_id: int):
    get_object_or_404(Batch, pk=batch_id)
    try:
        batch_cancel(batch_id=batch_id, actor=request.user)
    except ValidationError as error:
        messages.error(request, "; ".join(error.messages))
    else:
        messages.success(request, "Batch cancelled: its items can be launched again; HITs "
                                  "already published are being expired.")
    return redirect("staff_batches:detail", batch_id=batch_id)


urlpatterns = [
    path("", batch_list, name="list"),
    path("new/", batch_new, name="new"),
    path("<int:batch_id>/", batch_detail, name="detail"),
    path("<int:batch_id>/resume/", batch_resume_view, name="resume"),
    path("<int:batch_id>/cancel/", batch_cancel_view, name="cancel"),
    path("<int:batch_id>/manage/", batch_manage_view, name="manage"),
    path("<int:batch_id>/collect/", batch_collect_view, name="collect"),
]
