"""The console's project pages: create a project, its settings (with a preview of the
instructions), its team (who may work there) and the site's accounts.

Views validate and render; every change goes through ``annotation.services.projects`` (the
one validation of a project's settings, shared with the admin, the API and the CLI) and
``annotation.services.accounts``.
"""

from __future__ import annotations

import re

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path

from annotation.models import Project, Split, TaskKind
from annotation.roles import page_requires
from annotation.services.accounts import ROLES, account_create, account_role, account_role_set
from annotation.services.projects import (
    DEFAULT_REDUNDANCY,
    MAX_BUDGET_CENTS,
    project_create,
    project_settings_errors,
    project_team_set,
    project_update,
)
from frontend.markdown import render_markdown
from qc import flags, livechecks

# --- the settings form: typed fields for the JSON settings -----------------------------------


def _flag_descriptions() -> dict[str, str]:
    """What each flag threshold does, from ``qc.flags.FlagSettings``'s docstring (its one
    description)."""
    found = {}
    for names, text in re.findall(r"- ((?:``\w+``(?: / )?)+): (.*?)(?=\n\s*- ``|\Z)",
                                  flags.FlagSettings.__doc__ or "", re.S):
        for name in re.findall(r"``(\w+)``", names):
            found[name] = " ".join(text.split())
    return found


def _live_field_name(key: str) -> str:
    return "live__" + key.replace(".", "__")


def _flag_field_name(name: str) -> str:
    return "flag__" + name


class ProjectForm(forms.Form):
    """A project's settings as typed fields; an empty threshold means "the default", shown in
    its help text with what it does."""

    name = forms.CharField(max_length=200)
    slug = forms.SlugField(max_length=80, help_text="in every URL of the project; fixed once "
                                                     "created")
    kind = forms.ChoiceField(choices=TaskKind.choices, help_text="fixed once created")
    instructions = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 8}),
        help_text="Markdown, shown to annotators under the task's own instructions (raw HTML "
                  "is shown as text)")
    reward_cents = forms.IntegerField(
        min_value=0, max_value=1_000_000, initial=50, label="Reward per assignment (cents)",
        help_text="the batch form's default reward")
    estimated_minutes = forms.IntegerField(
        min_value=1, max_value=24 * 60, required=False, label="Time estimate (minutes)",
        help_text="the batch form's default time estimate (Prolific's estimated completion "
                  "time)")
    status = forms.ChoiceField(
        choices=Project.Status.choices, initial=Project.Status.OPEN,
        help_text="open: takes work; paused: annotators are told to come back later; closed: "
                  "takes no more work (every task page and the API say so)")
    licence = forms.CharField(max_length=200, required=False,
                              help_text="of the source data, e.g. CC BY-SA 4.0 (the Hugging "
                                        "Face export's card carries it)")
    attribution = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                  help_text="who made the source data (carried into exports)")
    budget_cents = forms.IntegerField(
        min_value=0, max_value=MAX_BUDGET_CENTS, required=False,
        label="Budget (in the currency's smallest unit: cents, pence)",
        help_text="optional: a batch whose cost with the provider's fees would take spent + "
                  "committed past it is refused (empty: no budget); the dashboard shows what "
                  "is left")
    budget_currency = forms.ChoiceField(
        required=False, label="Budget currency",
        help_text="what the provider pays in: MTurk pays in USD, Prolific in the workspace's "
                  "currency; work paid in another currency cannot be launched against it")

    def __init__(self, *args, project: Project | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        if project is not None:
            for fixed in ("slug", "kind"):
                self.fields[fixed].disabled = True
                self.fields[fixed].required = False
        currencies = sorted({"USD", settings.PROLIFIC_CURRENCY})
        stored = getattr(project, "budget_currency", "") or ""
        self.fields["budget_currency"].choices = [("", "no budget")] + [
            (code, code) for code in sorted({*currencies, *([stored] if stored else [])})]
        kind = project.kind if project is not None else TaskKind.DECONTEXT
        defaults = DEFAULT_REDUNDANCY[kind]
        for split in Split.values:
            self.fields[f"redundancy_{split}"] = forms.IntegerField(
                min_value=1, max_value=50, required=project is not None,
                label=f"Answers per {split} item",
                help_text=f"redundancy of the {split} split (the kind's default: "
                          f"{defaults[split]}; empty on a new project: the default)")
        for key, threshold in livechecks.thresholds().items():
            field_class = forms.IntegerField if threshold["type"] == "int" else forms.FloatField
            self.fields[_live_field_name(key)] = field_class(
                required=False, min_value=0, max_value=100 if threshold["type"] == "int" else 1,
                label=f"{threshold['kind']}: {key}",
                help_text=f"default {threshold['default']}. {threshold['description']}")
        descriptions = _flag_descriptions()
        for field in flags.FlagSettings.__dataclass_fields__.values():
            default = getattr(flags.FlagSettings, field.name)
            if isinstance(default, tuple):
                form_field = forms.CharField(required=False)
                shown = ", ".join(default)
            elif isinstance(default, int) and not isinstance(default, bool):
                form_field, shown = forms.IntegerField(required=False), default
            else:
                form_field, shown = forms.FloatField(required=False), default
            form_field.label = f"flag: {field.name}"
            form_field.help_text = (f"default {shown}. {descriptions.get(field.name, '')}"
                                    + (" (comma-separated codes)" if isinstance(default, tuple)
                                       else ""))
            self.fields[_flag_field_name(field.name)] = form_field

    @classmethod
    def initial_for(cls, project: Project) -> dict:
        """The form's values for a stored project (only what is valid of it is shown)."""
        initial = {name: getattr(project, name) for name in (
            "name", "slug", "kind", "instructions", "reward_cents", "estimated_minutes",
            "status", "licence", "attribution", "budget_cents", "budget_currency")}
        if isinstance(project.redundancy, dict):
            initial.update({f"redundancy_{split}": value
                            for split, value in project.redundancy.items()})
        for store, name_of in ((project.live_check_settings, _live_field_name),
                               (project.flag_settings, _flag_field_name)):
            if isinstance(store, dict):
                for key, value in store.items():
                    initial[name_of(key)] = (", ".join(value) if isinstance(value, list)
                                             else value)
        return initial

    def service_fields(self) -> dict:
        """The cleaned form as the service's fields (empty thresholds left out: defaults)."""
        data = self.cleaned_data
        fields = {name: data[name] for name in (
            "name", "instructions", "reward_cents", "estimated_minutes", "status", "licence",
            "attribution", "budget_cents", "budget_currency")}
        redundancy = {split: data[f"redundancy_{split}"] for split in Split.values
                      if data.get(f"redundancy_{split}") is not None}
        if redundancy or self.project is not None:
            fields["redundancy"] = redundancy
        fields["live_check_settings"] = {
            key: data[_live_field_name(key)] for key in livechecks.thresholds()
            if data.get(_live_field_name(key)) is not None}
        flag_settings = {}
        for name in flags.FlagSettings.__dataclass_fields__:
            value = data.get(_flag_field_name(name))
            if value in (None, ""):
                continue
            if isinstance(value, str):
                value = [code.strip() for code in value.split(",") if code.strip()]
            flag_settings[name] = value
        fields["flag_settings"] = flag_settings
        return fields

    def add_service_errors(self, error: ValidationError) -> None:
        """The service's errors beside their fields (the JSON settings' on the form)."""
        for name, field_errors in error.message_dict.items():
            self.add_error(name if name in self.fields else None, field_errors)


def _grouped(form: ProjectForm) -> dict[str, list]:
    groups: dict[str, list] = {"project": [], "redundancy": [], "live": [], "flag": []}
    for bound in form:
        prefix = bound.name.split("__")[0].split("_")[0]
        groups[{"redundancy": "redundancy", "live": "live", "flag": "flag"}.get(
            prefix, "project")].append(bound)
    return groups


def _form_page(request, form: ProjectForm, *, project: Project | None, preview=None):
    return render(request, "frontend/staff/project_form.html", {
        "form": form, "project": project, "groups": _grouped(form), "preview": preview,
        "settings_errors": project_settings_errors(project) if project else []})


@page_requires("add_projects")
def project_new(request):
    """GET: an empty form. POST: the preview of the instructions (``preview``), or the new
    project (then its settings page)."""
    if request.method != "POST":
        return _form_page(request, ProjectForm(), project=None)
    form = ProjectForm(request.POST)
    if not form.is_valid():
        return _form_page(request, form, project=None)
    if "preview" in request.POST:
        return _form_page(request, form, project=None,
                          preview=render_markdown(form.cleaned_data["instructions"]))
    try:
        project = project_create(slug=form.cleaned_data["slug"], kind=form.cleaned_data["kind"],
                                 **form.service_fields())
    except ValidationError as error:
        form.add_service_errors(error)
        return _form_page(request, form, project=None)
    messages.success(request, f"Project {project.name} created.")
    return redirect("staff:project-settings", slug=project.slug)


@page_requires("change_projects")
def project_settings(request, slug: str):
    """GET: the project's settings (a stored setting that fails validation is shown as an
    error here, never a crash). POST: preview or save through ``project_update``."""
    project = get_object_or_404(Project, slug=slug)
    if request.method != "POST":
        return _form_page(request, ProjectForm(initial=ProjectForm.initial_for(project),
                                               project=project), project=project)
    form = ProjectForm(request.POST, initial=ProjectForm.initial_for(project), project=project)
    if not form.is_valid():
        return _form_page(request, form, project=project)
    if "preview" in request.POST:
        return _form_page(request, form, project=project,
                          preview=render_markdown(form.cleaned_data["instructions"]))
    try:
        project_update(project=project, **form.service_fields())
    except ValidationError as error:
        project.refresh_from_db()
        form.add_service_errors(error)
        return _form_page(request, form, project=project)
    messages.success(request, "Settings saved.")
    return redirect("staff:project-settings", slug=project.slug)


# --- team: who may work on a project, and the accounts ------------------------------------------


class TeamForm(forms.Form):
    everyone = forms.TypedChoiceField(
        choices=[("1", "every annotator"), ("0", "only the people and groups chosen below")],
        coerce=lambda value: value == "1", widget=forms.RadioSelect, label="Who may work here")
    users = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.order_by("username"), required=False,
        widget=forms.CheckboxSelectMultiple)
    groups = forms.ModelMultipleChoiceField(queryset=Group.objects.order_by("name"),
                                            required=False, widget=forms.CheckboxSelectMultiple)


class AccountForm(forms.Form):
    username = forms.CharField(max_length=150)
    password = forms.CharField(widget=forms.PasswordInput(render_value=False), strip=False,
                               help_text="give it to the person; they log in with it")
    role = forms.ChoiceField(choices=[(role, role) for role in ROLES], initial="annotator")


@page_requires("change_projects")
def project_team(request, slug: str):
    """Who may work on the project (every annotator, or chosen people and groups) and whether
    it is open, paused or closed."""
    project = get_object_or_404(Project, slug=slug)
    form = TeamForm(request.POST or None, initial={
        "everyone": "1" if project.workers_everyone else "0",
        "users": project.allowed_users.all(), "groups": project.allowed_groups.all()})
    if request.method == "POST":
        status = request.POST.get("status")
        if status is not None:
            try:
                project_update(project=project, status=status)
            except ValidationError as error:
                messages.error(request, "; ".join(error.messages))
            else:
                messages.success(request, f"The project is {project.get_status_display()}.")
            return redirect("staff:project-team", slug=project.slug)
        if form.is_valid():
            project_team_set(project=project, everyone=form.cleaned_data["everyone"],
                             users=form.cleaned_data["users"],
                             groups=form.cleaned_data["groups"])
            messages.success(request, "The team is saved.")
            return redirect("staff:project-team", slug=project.slug)
    return render(request, "frontend/staff/project_team.html", {
        "project": project, "form": form, "statuses": Project.Status.choices})


@page_requires("manage_team")
def accounts(request):
    """The site's accounts with their roles; create one (annotator, reviewer or researcher)
    or change a role."""
    user_model = get_user_model()
    form = AccountForm()
    if request.method == "POST" and "role_of" in request.POST:
        user = get_object_or_404(user_model, pk=request.POST.get("role_of", "").strip() or 0)
        try:
            account_role_set(user=user, role=request.POST.get("role", ""))
        except ValidationError as error:
            messages.error(request, "; ".join(error.messages))
        else:
            messages.success(request, f"{user.username} is now a {account_role(user)}.")
        return redirect("staff:accounts")
    if request.method == "POST":
        form = AccountForm(request.POST)
        if form.is_valid():
            try:
                user = account_create(**form.cleaned_data)
            except ValidationError as error:
                for name, field_errors in error.message_dict.items():
                    form.add_error(name if name in form.fields else None, field_errors)
            else:
                messages.success(request, f"Account {user.username} created "
                                          f"({account_role(user)}).")
                return redirect("staff:accounts")
    people = [{"user": user, "role": account_role(user)}
              for user in user_model.objects.order_by("username").prefetch_related("groups")]
    return render(request, "frontend/staff/accounts.html",
                  {"form": form, "people": people, "roles": ROLES})


urlpatterns = [
    path("projects/new/", project_new, name="project-new"),
    path("projects/<slug:slug>/settings/", project_settings, name="project-settings"),
    path("projects/<slug:slug>/team/", project_team, name="project-team"),
    path("team/", accounts, name="accounts"),
]
