"""The console's splits page: choose the rule and seed, see the counts per split and the
leakage check before freezing (``split_preview`` as a ``splits`` job with ``preview``, nothing
written: it reads every item), freeze (a ``splits`` job,
``services.staff_jobs``, which runs ``project_split``, the one service that makes manifests),
and read the manifests.

Freezing moves up to every item of the project (200,000 in a few tens of seconds), so the
request only starts the job: with a worker the page goes to the job's page, which follows the
items moved; inline (no broker) the job has finished when it returns, and the page goes to
the new manifest with the same summary the job page shows."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_GET

from annotation.models import Job, Project, SplitManifest
from annotation.roles import page_requires
from annotation.services import staff_jobs
from annotation.services.jobs import JobQueueUnavailable
from annotation.services.splits import RULES

RULE_HELP = {
    "group": "a seeded split by the items' group (page, article, dialogue): a group never "
             "straddles two splits",
    "websplit": "complex sentences sharing an RDF triple stay together; every relation is in "
                "train (split-and-rephrase projects)",
    "canard": "by dialogue: QuAC dev dialogues to test, a seeded share of QuAC train to dev; "
              "CANARD's own dialogues keep their released split (rewrite projects)",
    "sluice": "each item keeps its split, but a context in several splits moves wholly into the "
              "most held-out one (sluice projects; seed and fractions play no part)",
}


class SplitForm(forms.Form):
    rule = forms.ChoiceField(choices=[(rule, f"{rule} — {RULE_HELP[rule]}") for rule in RULES],
                             widget=forms.RadioSelect, initial="group")
    seed = forms.IntegerField(initial=13, min_value=-(2**31), max_value=2**31 - 1)
    train = forms.FloatField(min_value=0, initial=0.8)
    dev = forms.FloatField(min_value=0, initial=0.1)
    test = forms.FloatField(min_value=0, initial=0.1)
    force = forms.BooleanField(required=False, label="Replace the frozen manifest and move "
                                                     "annotated items")

    def clean(self):
        data = super().clean()
        if all(name in data for name in ("train", "dev", "test")) and not (
                data["train"] + data["dev"] + data["test"] > 0):
            raise forms.ValidationError("the fractions must add up to more than 0")
        return data

    def fractions(self) -> dict[str, float]:
        return {name: self.cleaned_data[name] for name in ("train", "dev", "test")}


def split_summary(result: dict) -> str:
    """One line on a finished split job (its ``result``): the inline message and the job page."""
    if result.get("preview"):
        counts = ", ".join(f"{split} {n}" for split, n in result["counts"].items())
        return (f"Preview ready ({counts}); {result['moved_items']} item(s) would move. "
                "Nothing was written.")
    if result["unchanged"]:
        return "Unchanged: the frozen manifest is this split already."
    counts = ", ".join(f"{split} {n}" for split, n in result["counts"].items())
    return f"Split frozen ({counts}); {result['moved_items']} item(s) moved."


def _freeze(request, project: Project, form: SplitForm):
    """Start the ``splits`` job; a response, or None with the reason on the form."""
    data = form.cleaned_data
    try:
        started = staff_jobs.job_start(
            kind=Job.Kind.SPLITS, project=project, user=request.user,
            params={"rule": data["rule"], "seed": data["seed"], "force": data["force"],
                    "fractions": form.fractions()})
    except (staff_jobs.JobRefused, JobQueueUnavailable) as error:
        form.add_error(None, f"The split did not start: {error}")
        return None
    job = started.job
    if job.state == Job.State.FAILED:
        form.add_error(None, job.error)
        return None
    if not started.created:
        messages.info(request, f"This split is already {job.state} (job {job.pk}); it was "
                               "not started a second time.")
    if job.state == Job.State.DONE:
        messages.success(request, split_summary(job.result))
        return redirect("staff:split-manifest", slug=project.slug,
                        manifest_id=job.result["manifest"])
    return redirect("staff_jobs:detail", job_id=job.pk)


def _preview(request, project: Project, form: SplitForm):
    """Start the ``splits`` job with ``preview`` (it reads every item: seconds at 200,000);
    ``(response, None)`` to go to the job's page, ``(None, result)`` when it has finished
    (inline), or ``(None, None)`` with the reason on the form."""
    data = form.cleaned_data
    try:
        started = staff_jobs.job_start(
            kind=Job.Kind.SPLITS, project=project, user=request.user,
            params={"rule": data["rule"], "seed": data["seed"], "preview": True,
                    "fractions": form.fractions()})
    except (staff_jobs.JobRefused, JobQueueUnavailable) as error:
        form.add_error(None, f"The preview did not start: {error}")
        return None, None
    job = started.job
    if job.state == Job.State.FAILED:
        form.add_error(None, job.error)
        return None, None
    if job.state == Job.State.DONE:
        return None, job.result
    return redirect("staff_jobs:detail", job_id=job.pk), None


def _finished_preview(project: Project, job_id: str) -> Job | None:
    """The finished preview job ``?preview=<id>`` names, of this project (else None)."""
    if not job_id.isdigit():
        return None
    return Job.objects.filter(pk=int(job_id), project=project, kind=Job.Kind.SPLITS,
                              state=Job.State.DONE, params__preview=True).first()


@page_requires("change_projects")
def splits(request, slug: str):
    """GET: the form and the manifests (``?preview=<job id>``: a finished preview job's
    outcome, with its choices in the form). POST ``preview``: start the job that computes what
    the split would do. POST ``freeze``: start the job that makes the split and freezes its
    manifest."""
    project = get_object_or_404(Project, slug=slug)
    form = SplitForm(request.POST or None)
    preview = None
    if request.method == "POST" and form.is_valid():
        if "freeze" in request.POST:
            response = _freeze(request, project, form)
        else:
            response, preview = _preview(request, project, form)
        if response is not None:
            return response
    elif request.method == "GET" and (job := _finished_preview(
            project, request.GET.get("preview", ""))) is not None:
        preview = job.result
        form = SplitForm(initial={"rule": job.params["rule"], "seed": job.params["seed"],
                                  **job.params["fractions"]})
    return render(request, "frontend/staff/splits.html", {
        "project": project, "form": form, "preview": preview,
        "leaks": sorted(preview["leaks"].items())[:20] if preview else [],
        "manifests": SplitManifest.objects.filter(project=project).order_by("-created_at",
                                                                              "-id")[:50]})


@require_GET
@page_requires("see_projects")
def split_manifest(request, slug: str, manifest_id: int):
    """One manifest: rule, seed, fractions, counts; ``?format=json`` its group → split map."""
    project = get_object_or_404(Project, slug=slug)
    manifest = get_object_or_404(SplitManifest, pk=manifest_id, project=project)
    if request.GET.get("format") == "json":
        response = JsonResponse({
            "project": project.slug, "rule": manifest.rule, "seed": manifest.seed,
            "fractions": manifest.fractions, "counts": manifest.counts,
            "frozen": manifest.frozen, "created_at": manifest.created_at.isoformat(),
            "group_splits": manifest.group_splits})
        response["Content-Disposition"] = (
            f'attachment; filename="{project.slug}-manifest-{manifest.pk}.json"')
        return response
    groups = sorted(manifest.group_splits.items())
    return render(request, "frontend/staff/split_manifest.html", {
        "project": project, "manifest": manifest, "groups": groups[:200],
        "more_groups": max(0, len(groups) - 200)})


urlpatterns = [
    path("projects/<slug:slug>/splits/", splits, name="splits"),
    path("projects/<slug:slug>/splits/<int:manifest_id>/", split_manifest,
         name="split-manifest"),
]
