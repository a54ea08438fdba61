"""Annotator task pages: local annotators (``/annotate/<slug>/``), MTurk workers arriving
through an ExternalQuestion (``/mturk/task/<slug>/``) and Prolific participants arriving
through a study link (``/prolific/task/<slug>/``).

Views validate (JSON shape, payload per kind, ownership) and call services; reads come from
``annotation.selectors.annotate``. Every page embeds its data with ``json_script`` and renders
dataset text through the template engine, so nothing from a dataset or a worker is ever
interpreted as HTML.

CSRF: local pages use Django's CSRF token (the JS sends it in ``X-CSRFToken``). MTurk shows our
page in a cross-site iframe where browsers withhold our (SameSite) cookies, so the MTurk submit
endpoints are exempt from the cookie check and require instead a token signed by the server
for exactly that (assignment, HIT, worker), embedded in the page. Prolific's page is a
top-level page, yet its endpoints are exempt too, by the same token: see "Prolific study link"
below for why.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.db import transaction
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views import csrf as django_csrf
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from annotation import jsonbody
from annotation.crowd_throttle import crowd_save_limited
from annotation.csp import mturk_submit_origins
from annotation.models import Annotation, Assignment, Item, Project, Worker
from annotation.payloads import (
    MAX_TEXT,
    PayloadError,
    clean_client_time,
    clean_warnings,
    validate_payload,
)
from annotation.selectors import annotate as annotate_selectors
from annotation.selectors import providers as provider_selectors
from annotation.selectors.access import REFUSALS, work_refusal
from annotation.selectors.blocks import worker_blocked_for
from annotation.selectors.progress import annotator_progress
from annotation.services.annotations import (
    ASSIGNMENT_GRACE,
    RELEASED_ASSIGNMENT_STATUSES,
    SubmitRefused,
    annotation_editable,
    annotation_revise,
    annotation_submit,
    annotation_submit_item,
    assignment_deadline,
    assignment_get_or_create_mturk,
    assignment_get_or_create_prolific,
    assignment_mark_confirmed,
    assignment_mark_submitted,
)
from annotation.services.batches.collect import ANSWER_FIELD_META, ANSWER_FIELD_PAYLOADS
from annotation.services.work_queue import (
    LEASE_SECONDS,
    item_leases_renew,
    work_queue_next_item,
)
from annotation.services.workers import worker_for_user
from frontend.markdown import render_markdown
from qc.effort import EffortError, parse_effort
from qc.livechecks import rules_with

PREVIEW_ASSIGNMENT_ID = "ASSIGNMENT_ID_NOT_AVAILABLE"
MAX_BODY_BYTES = 200_000
MTURK_SIGNING_SALT = "unpack.mturk.task"
PROLIFIC_SIGNING_SALT = "unpack.prolific.task"
MTURK_ID = re.compile(r"[A-Z0-9]{1,64}")


class BadRequest(Exception):
    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field = field_name
        self.message = message


def _error_body(code: str, message: str, field_name: str = "") -> dict:
    return {"error": code, "message": message, "field": field_name}


#: What a refused submission asks of the annotator, by the field at fault: the answer itself
#: can be changed; anything else came from the page, which a reload renews.
_ANSWER_FIELDS = ("payload", "rewrite", "full_question", "skipped", "simple_sentences", "rating",
                  "category", "operations", "decontextualized_sentence", "problem")


def _invalid_body(field_name: str, message: str) -> dict:
    """The answer to a submission refused as invalid (400): what is wrong, where, and what to
    do about it (the page shows the message as it is)."""
    where = f"{field_name}: {message}" if field_name else message
    if field_name.split(".")[0].split("[")[0] in _ANSWER_FIELDS:
        advice = "Change your answer and save again."
    else:
        advice = "Reload the page and save again."
    return _error_body("invalid", f"This answer was not accepted ({where}). {advice}",
                       field_name)


def _error(status: int, code: str, message: str, field_name: str = "") -> JsonResponse:
    return JsonResponse(_error_body(code, message, field_name), status=status)


def _login_url(next_path: str) -> str:
    return f"{settings.LOGIN_URL}?{urlencode({'next': next_path})}"


def login_required_json(view):
    """``login_required`` for the endpoints a page calls with ``fetch``: an anonymous request
    (the session ended: logged out in another tab, or expired) gets 401 JSON naming the login
    page, never a redirect. A fetch follows a redirect to the login form's 200, which a page
    would take for a save."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            body = _error_body("login_required",
                               "Your session has ended: log in again to save this answer.")
            body["login_url"] = _login_url(reverse("frontend:annotate", args=[kwargs["slug"]]))
            return JsonResponse(body, status=401)
        return view(request, *args, **kwargs)

    return wrapped


def csrf_failure(request, reason: str = ""):
    """``CSRF_FAILURE_VIEW``: pages' fetches (``X-Requested-With: fetch``) get 403 JSON the
    page can act on (log in again, then resubmit); everything else Django's own page."""
    if request.headers.get("X-Requested-With") == "fetch":
        body = _error_body("csrf_failed",
                           "This page's security token is out of date (you logged in or out "
                           "in another tab): log in again to save this answer.")
        body["login_url"] = _login_url(request.path.removesuffix("submit/"))
        return JsonResponse(body, status=403)
    return django_csrf.csrf_failure(request, reason=reason)


def _parse_body(request) -> dict:
    if len(request.body) > MAX_BODY_BYTES:
        raise BadRequest("body", "the submission is too large")
    try:
        body = jsonbody.loads(request.body or b"{}")
    except jsonbody.BadJSON as error:
        raise BadRequest("body", str(error)) from None
    if not isinstance(body, dict):
        raise BadRequest("body", "must be a JSON object")
    return body


def _parse_submission(body: dict) -> dict:
    """The common, kind-independent fields of a submission, validated."""
    item_id = body.get("item_id")
    if isinstance(item_id, bool) or not isinstance(item_id, int) or not 1 <= item_id < 2**63:
        raise BadRequest("item_id", "must be an integer from 1 to 2^63 - 1")
    token = body.get("client_token")
    if not isinstance(token, str) or not 8 <= len(token) <= 64:
        raise BadRequest("client_token", "must be a string of 8 to 64 characters")
    duration = body.get("duration_ms")
    if isinstance(duration, bool) or not isinstance(duration, int) or not (
        0 <= duration < 2**31
    ):
        duration = None
    # Warnings are advice, normalised, never a reason to refuse an answer.
    client_warnings = clean_warnings(body.get("client_warnings"))
    overridden = clean_warnings(body.get("overridden_warnings"))
    # The page's summary of how the answer was written: counts only, checked strictly (the
    # page never sends anything else, and QC flags read it).
    try:
        effort = parse_effort(body.get("effort"))
    except EffortError as error:
        raise BadRequest(error.field, error.message) from None
    return {"item_id": item_id, "client_token": token, "payload": body.get("payload"),
            "started_at": clean_client_time(body.get("started_at"), now=timezone.now()),
            "duration_ms": duration, "client_warnings": client_warnings,
            "overridden_warnings": overridden,
            "effort": effort.to_dict() if effort is not None else None}


class _Rejected(Exception):
    """A submission answered with ``status`` and ``body`` before anything is stored."""

    def __init__(self, status: int, body: dict):
        super().__init__(body.get("message", ""))
        self.status = status
        self.body = body


def _refusal_answer(refused: SubmitRefused,
                    words: dict[str, str] | None = None) -> tuple[int, dict]:
    """The HTTP status and JSON answer of a refused submission: 404 for an item the project
    does not have; 409 for a conflict with the state of the work (the item or HIT is full, the
    assignment is closed); 403 for who is asking (blocked, someone else's token or
    assignment). ``words`` (a crowd door's, keyed by refusal code) replace the message."""
    message = (words or {}).get(refused.code, refused.message)
    if refused.code == "no_item":
        return 404, _error_body(refused.code, message, "item_id")
    status = 409 if refused.code in ("item_full", "hit_full", "assignment_closed",
                                     "token_reused", "paused", "closed",
                                     "misconfigured") else 403
    return status, _error_body(refused.code, message)


def _validated(*, project: Project, submission: dict, allowed_item_ids=None):
    """``(item, context, clean payload)`` of a submission, or ``_Rejected``."""
    item_id = submission["item_id"]
    if allowed_item_ids is not None and item_id not in allowed_item_ids:
        raise _Rejected(400, _error_body("wrong_item", "This item is not part of this task.",
                                         "item_id"))
    refusal = work_refusal(project=project)  # a crowd worker: the project's state alone
    if refusal is not None:
        raise _Rejected(*_refusal_answer(SubmitRefused(refusal, REFUSALS[refusal])))
    item = annotate_selectors.item_for_submit(project=project, item_id=item_id)
    if item is None:
        raise _Rejected(404, _error_body("no_item", "No such item in this project.", "item_id"))
    context = annotate_selectors.item_context(item)
    try:
        clean = validate_payload(project.kind, submission["payload"], context)
    except PayloadError as error:
        raise _Rejected(400, _invalid_body(error.field, error.message)) from None
    return item, context, clean


def _stored(valid, *, worker: Worker, submission: dict, source: str, assignment=None,
            provenance=None, assignment_deadline=None, served_at=None,
            words: dict[str, str] | None = None) -> tuple[int, dict]:
    """Store a validated submission; the HTTP status and JSON answer for the page (a refusal
    in ``words``, when given: ``_refusal_answer``)."""
    item, context, clean = valid
    try:
        result = annotation_submit(
            worker=worker, item=item, clean=clean, context=context, source=source,
            client_token=submission["client_token"], assignment=assignment,
            client_warnings=submission["client_warnings"],
            overridden_warnings=submission["overridden_warnings"],
            started_at=submission["started_at"], duration_ms=submission["duration_ms"],
            provenance=provenance, assignment_deadline=assignment_deadline,
            served_at=served_at, effort=submission["effort"],
        )
    except SubmitRefused as refused:
        return _refusal_answer(refused, words)
    return 200, _saved_body(result, client_token=submission["client_token"])


def _store_local(request, *, slug: str, worker: Worker, submission: dict
                 ) -> tuple[int, dict]:
    """Validate a local annotator's payload against its item, store it and choose their next
    item (one service call: ``annotation_submit_item(choose_next=True)``); the HTTP status and
    JSON answer for the page, with ``"next"`` (``_next_item_answer``) after a save and after a
    refusal because the item filled up meanwhile (the page then goes on with the next item: it
    comes in this answer and the page swaps it in without a request)."""
    try:
        result = annotation_submit_item(
            project_slug=slug, item_id=submission["item_id"], payload=submission["payload"],
            worker=worker, source=Annotation.Source.LOCAL,
            client_token=submission["client_token"],
            client_warnings=submission["client_warnings"],
            overridden_warnings=submission["overridden_warnings"],
            started_at=submission["started_at"], duration_ms=submission["duration_ms"],
            choose_next=True, effort=submission["effort"])
    except PayloadError as error:
        return 400, _invalid_body(error.field, error.message)
    except SubmitRefused as refused:
        if refused.code == "no_project":
            raise Http404("No such project.") from None
        status, body = _refusal_answer(refused)
        if refused.code == "item_full":
            project = _project_or_404(slug)
            following = work_queue_next_item(project=project, worker=worker,
                                             after_item_id=submission["item_id"])
            body["next"] = _next_item_answer(request, project, following)
        return status, body
    body = _saved_body(result, client_token=submission["client_token"])
    body["next"] = _next_item_answer(request, result.item.project, result.next_item)
    return 200, body


def _saved_body(result, *, client_token: str) -> dict:
    """The answer to a submit that stored, or had already stored, an answer of this worker to
    the item. ``status``: ``saved`` (stored now), ``duplicate`` (this very answer, same token:
    a retry or a double click) or ``already_saved`` (another answer of theirs is stored, from
    another tab or earlier, perhaps under this very token -- two tabs sharing one draft; ``stored``
    says what it is, and this one was not stored)."""
    annotation = result.annotation
    if result.created:
        status = "saved"
    elif annotation.client_token == client_token and result.same_answer:
        status = "duplicate"
    else:
        status = "already_saved"
    body = {
        "status": status,
        "annotation_id": annotation.pk,
        "item_id": result.item.pk,
        "server_warnings": annotation.server_warnings,
        "reveal": annotate_selectors.revealed_after_submit(result.item),
    }
    if status == "already_saved":
        # ``editable``: the page may offer to replace it with its own answer (a new version,
        # ``annotate_revise``) while no reviewer has decided it.
        body["stored"] = {"payload": annotation.payload,
                          "summary": annotate_selectors.answer_summary(annotation),
                          "annotation_id": annotation.pk,
                          "editable": annotation_editable(annotation)}
    return body


def _project_or_404(slug: str) -> Project:
    project = annotate_selectors.project_by_slug(slug)
    if project is None:
        raise Http404("No such project.")
    return project


def _kind_template(project: Project) -> str:
    return f"frontend/annotate/kinds/{project.kind}.html"


def _page_items(items) -> list[dict]:
    return annotate_selectors.share_context(annotate_selectors.hide_unrevealed_history(
        [annotate_selectors.item_page_data(item) for item in items]))


def _page_context(*, project: Project, items, mode: str, submit_url: str, extra=None) -> dict:
    page_items = _page_items(items)
    config = {
        "mode": mode, "project": project.slug, "kind": project.kind, "submit_url": submit_url,
        "items": page_items, "rules": rules_with(project.live_check_settings),
        "max_text": MAX_TEXT,
        **(extra or {}),
    }
    return {"project": project, "items": page_items, "config": config, "mode": mode,
            "instructions_html": render_markdown(project.instructions),
            "kind_template": _kind_template(project),
            "instructions_template": f"frontend/annotate/instructions/{project.kind}.html"}


# --- local annotators ------------------------------------------------------------------------


@login_required
@require_GET
def annotate(request, slug: str):
    """The next item the logged-in annotator has not done, or a page saying there is none."""
    project = _project_or_404(slug)
    worker = worker_for_user(user=request.user)
    if worker_blocked_for(worker, project):
        return render(request, "frontend/annotate/refused.html",
                      {"project": project, "reason": "blocked", "door": "local"}, status=403)
    refusal = work_refusal(project=project, user=request.user)
    if refusal is not None:
        return render(request, "frontend/annotate/refused.html",
                      {"project": project, "reason": refusal, "door": "local",
                       "project_refusal": REFUSALS[refusal]}, status=403)
    item = work_queue_next_item(project=project, worker=worker)
    if item is None:
        # Nothing left: the page still links to the annotator's answers, when there are some.
        has_answers = annotate_selectors.previous_answer_id(
            project=project, worker=worker, before_id=None) is not None
        return render(request, "frontend/annotate/done.html",
                      {"project": project, "has_answers": has_answers})
    items = [item]
    context = _page_context(
        project=project, items=items, mode="local",
        submit_url=reverse("frontend:annotate-submit", args=[project.slug]),
        extra={"next_url": reverse("frontend:annotate", args=[project.slug]),
               "revise_url": reverse("frontend:annotate-revise", args=[project.slug]),
               "answers_url": reverse("frontend:annotate-answers", args=[project.slug]),
               "previous_url": reverse("frontend:annotate-previous", args=[project.slug]),
               "login_url": _login_url(reverse("frontend:annotate", args=[project.slug])),
               "progress_url": reverse("frontend:annotate-progress", args=[project.slug]),
               "draft_scope": f"local:{worker.pk}",
               "lease_url": reverse("frontend:annotate-lease", args=[project.slug]),
               "lease_renew_seconds": LEASE_SECONDS // 3},
    )
    return render(request, "frontend/annotate/page.html", context)


@login_required_json
@require_POST
def annotate_submit(request, slug: str):
    try:
        submission = _parse_submission(_parse_body(request))
    except BadRequest as error:
        _project_or_404(slug)  # an unknown project's URL is a 404 whatever the body
        return JsonResponse(_invalid_body(error.field, error.message), status=400)
    status, body = _store_local(request, slug=slug, worker=worker_for_user(user=request.user),
                                submission=submission)
    return JsonResponse(body, status=status)


#: Items one page may renew at once (a local page shows one, plus the next one it holds).
MAX_LEASED_ITEMS = 10


@login_required_json
@require_POST
def annotate_lease(request, slug: str):
    """Renew the leases on the items the annotator's page shows (``{"item_ids": [...]}``); the
    answer names those that can no longer be used (``{"unusable": [...]}``: other annotators
    completed them meanwhile), which the page then says before any more work goes into them."""
    project = _project_or_404(slug)
    try:
        item_ids = _parse_body(request).get("item_ids")
        if (not isinstance(item_ids, list) or len(item_ids) > MAX_LEASED_ITEMS or not all(
                isinstance(item_id, int) and not isinstance(item_id, bool)
                and 0 < item_id < 2**63 for item_id in item_ids)):
            raise BadRequest("item_ids", f"must be a list of at most {MAX_LEASED_ITEMS} item ids")
    except BadRequest as error:
        return _error(400, "invalid", error.message, error.field)
    worker = worker_for_user(user=request.user)
    if worker_blocked_for(worker, project):
        return _error(403, "blocked", "Your account cannot submit work for this project.")
    refusal = work_refusal(project=project, user=request.user)
    if refusal is not None:
        status, body = _refusal_answer(SubmitRefused(refusal, REFUSALS[refusal]))
        return JsonResponse(body, status=status)
    return JsonResponse({"unusable": item_leases_renew(project=project, worker=worker,
                                                       item_ids=item_ids)})


@login_required_json
@require_GET
def annotate_progress(request, slug: str):
    """``{"done", "left"}`` of the logged-in annotator in the project. The page asks once after
    it loads and counts its own saves after that, so neither the page nor a submit pays for
    counting."""
    project = _project_or_404(slug)
    if work_refusal(project=project) == "misconfigured":
        # Its stored settings fail the validation: no queue to count (the page says why).
        status, body = _refusal_answer(SubmitRefused("misconfigured", REFUSALS["misconfigured"]))
        return JsonResponse(body, status=status)
    progress = annotator_progress(project=project, worker=worker_for_user(user=request.user))
    return JsonResponse({"done": progress.done, "left": progress.left})


def _next_item_answer(request, project: Project, item: Item | None) -> dict | None:
    """The item the page shows next (chosen, and so leased to the worker, as a GET of the page
    would choose it): its page data and its section rendered by the same template as the full
    page (so escaped the same way); None when none is left (the page then follows its "Next
    item" link to the done page). The submit of that item re-checks capacity under the row
    lock all the same."""
    if item is None:
        return None
    [data] = _page_items([item])
    html = render_to_string("frontend/annotate/item.html", {
        "item": data, "index": 0, "count": 1, "kind_template": _kind_template(project),
    }, request=request)
    return {"item": data, "html": html}


# --- going back: a local annotator changes their recent answers -----------------------------
# A change is a new version (``annotation_revise``); the list and the answer page show only the
# annotator's own answers (another's answer is a 404, never shown).


@login_required
@require_GET
def annotate_answers(request, slug: str):
    """"Your recent answers": the annotator's latest answers in the project, each to reopen
    (and change while no reviewer has decided it)."""
    project = _project_or_404(slug)
    worker = worker_for_user(user=request.user)
    answers = [{"annotation": annotation,
                "item": annotate_selectors.item_summary(annotation.item, project.kind),
                "answer": annotate_selectors.answer_summary(annotation),
                "editable": annotation_editable(annotation)}
               for annotation in annotate_selectors.recent_answers(project=project,
                                                                   worker=worker)]
    return render(request, "frontend/annotate/answers.html",
                  {"project": project, "answers": answers,
                   "limit": annotate_selectors.RECENT_ANSWERS})


@login_required
@require_GET
def annotate_previous(request, slug: str):
    """"Previous": the annotator's answer given just before answer ``?before=`` (their latest
    without it), opened for a change; the list when there is none."""
    project = _project_or_404(slug)
    worker = worker_for_user(user=request.user)
    before = request.GET.get("before", "")
    before_id = int(before) if before.isdigit() and 0 < int(before) < 2**63 else None
    annotation_id = annotate_selectors.previous_answer_id(project=project, worker=worker,
                                                          before_id=before_id)
    if annotation_id is None:
        return redirect("frontend:annotate-answers", slug=project.slug)
    return redirect("frontend:annotate-answer", slug=project.slug, annotation_id=annotation_id)


@login_required
@require_GET
def annotate_answer(request, slug: str, annotation_id: int):
    """One of the annotator's answers on its task page, filled in: changed with Save (a new
    version) while it is pending review, read-only once reviewed. An older version redirects to
    the live one."""
    project = _project_or_404(slug)
    if work_refusal(project=project) == "misconfigured":
        # Its stored settings (the live checks the page runs among them) fail the validation.
        return render(request, "frontend/annotate/refused.html",
                      {"project": project, "reason": "misconfigured", "door": "local",
                       "project_refusal": REFUSALS["misconfigured"]}, status=403)
    worker = worker_for_user(user=request.user)
    annotation = annotate_selectors.own_answer(project=project, worker=worker,
                                               annotation_id=annotation_id)
    if annotation is None:
        raise Http404("You have no such answer in this project.")
    if annotation.pk != annotation_id:
        return redirect("frontend:annotate-answer", slug=project.slug,
                        annotation_id=annotation.pk)
    items = annotate_selectors.items_for_page(project=project, item_ids=[annotation.item_id])
    editable = annotation_editable(annotation) and not worker.is_blocked
    context = _page_context(
        project=project, items=items, mode="edit",
        submit_url=reverse("frontend:annotate-revise", args=[project.slug]),
        extra={"next_url": reverse("frontend:annotate", args=[project.slug]),
               "answers_url": reverse("frontend:annotate-answers", args=[project.slug]),
               "previous_url": reverse("frontend:annotate-previous", args=[project.slug])
               + f"?before={annotation.pk}",
               "login_url": _login_url(request.path),
               "draft_scope": f"edit:{worker.pk}:{annotation.pk}",
               "stored": {"annotation_id": annotation.pk, "payload": annotation.payload,
                          "summary": annotate_selectors.answer_summary(annotation),
                          "review_status": annotation.review_status,
                          "editable": editable}},
    )
    context["stored"] = context["config"]["stored"]
    return render(request, "frontend/annotate/page.html", context)


@login_required_json
@require_POST
def annotate_revise(request, slug: str):
    """Change one of the annotator's answers (``replaces``: its id) to the submitted one: a new
    version (``annotation_revise``); the answer page's Save and a tab's "Replace it with this
    answer". Same body and answers as ``annotate_submit`` (``status`` saved or duplicate), no
    next item; refusals: 404 ``no_answer``, 409 ``reviewed``, ``changed_meanwhile`` or
    ``item_full``, 403 ``blocked``."""
    project = _project_or_404(slug)
    try:
        body = _parse_body(request)
        submission = _parse_submission(body)
        replaces = body.get("replaces")
        if isinstance(replaces, bool) or not isinstance(replaces, int) or not (
                1 <= replaces < 2**63):
            raise BadRequest("replaces", "must be the id of the answer to change")
    except BadRequest as error:
        return JsonResponse(_invalid_body(error.field, error.message), status=400)
    refusal = work_refusal(project=project, user=request.user)
    if refusal is not None:
        status, body = _refusal_answer(SubmitRefused(refusal, REFUSALS[refusal]))
        return JsonResponse(body, status=status)
    worker = worker_for_user(user=request.user)
    try:
        result = annotation_revise(
            project=project, worker=worker, annotation_id=replaces,
            payload=submission["payload"], client_token=submission["client_token"],
            item_id=submission["item_id"], client_warnings=submission["client_warnings"],
            overridden_warnings=submission["overridden_warnings"],
            started_at=submission["started_at"], duration_ms=submission["duration_ms"],
            effort=submission["effort"])
    except PayloadError as error:
        return JsonResponse(_invalid_body(error.field, error.message), status=400)
    except SubmitRefused as refused:
        if refused.code == "no_answer":
            return _error(404, refused.code, refused.message, "replaces")
        status = 409 if refused.code in ("reviewed", "changed_meanwhile", "item_full") else 403
        return _error(status, refused.code, refused.message)
    return JsonResponse(_saved_body(result, client_token=submission["client_token"]))


# --- crowd task pages: the doors of MTurk and Prolific -----------------------------------------
# A crowd worker reaches a HIT's page through their provider: MTurk's ExternalQuestion
# (``/mturk/task/<slug>/?assignmentId&hitId&workerId&turkSubmitTo``), Prolific's study link
# (``/prolific/task/<slug>/?PROLIFIC_PID&STUDY_ID&SESSION_ID``). Both are the same session on
# our side: one HIT (a Prolific study) of items, one Assignment (a Prolific submission) per
# worker (participant), a server-signed token binding the page to those ids, the items saved
# one at a time, then "finish". A ``Door`` says what differs.


@dataclass(frozen=True)
class Door:
    """One provider's way into a HIT's task page.

    ``provider`` is the Worker provider, the answers' source and the page's mode; ``salt``
    signs its page tokens (a token of one door is worthless at the other);
    ``id_valid`` checks the ids its links carry; ``get_or_create`` is the service creating the
    session on its first save; ``batch_provider`` (when set) is the only batch provider whose
    HITs the door serves; ``words`` replaces the messages of refusals with the provider's
    terms (keyed by refusal code)."""

    provider: str
    salt: str
    id_valid: Callable[[str], bool]
    get_or_create: Callable[..., Assignment]
    submit_view: str
    finish_view: str
    batch_provider: str | None = None
    words: dict[str, str] = field(default_factory=dict)

    def refusal(self, refused: SubmitRefused) -> JsonResponse:
        status, answer = _refusal_answer(refused, self.words)
        return JsonResponse(answer, status=status)


def _mturk_id_valid(value: str) -> bool:
    """MTurk's AssignmentId, HITId and WorkerId are upper-case letters and digits, at most 64
    characters (the columns that hold them are 64 and 100 wide)."""
    return MTURK_ID.fullmatch(value) is not None


MTURK = Door(provider=Worker.Provider.MTURK, salt=MTURK_SIGNING_SALT, id_valid=_mturk_id_valid,
             get_or_create=assignment_get_or_create_mturk, submit_view="frontend:mturk-submit",
             finish_view="frontend:mturk-finish",
             words={"assignment_expired": "The time for this assignment is over; please return "
                                          "the HIT."})
def _prolific_id_valid(value: str) -> bool:
    """Prolific's PROLIFIC_PID, STUDY_ID and SESSION_ID are 24 lower-case hex digits (the
    provider module knows; imported on use, as every provider module is)."""
    from annotation.providers.prolific import is_prolific_id

    return is_prolific_id(value)


def _prolific_completion_url(code: str) -> str:
    from annotation.providers.prolific import completion_url

    return completion_url(code)


#: A session the provider says does not exist (Prolific's 404 for its SESSION_ID).
UNKNOWN_SESSION = ("Prolific does not know this session, so nothing was saved. Please open "
                   "the study from your Prolific account.")
#: Finishing a session Prolific could not confirm yet (it was unreachable).
CODE_HELD = ("Your answers are saved, but Prolific could not be reached to confirm your "
             "session, so the completion code is held until it can be checked. Please press "
             "\u201cFinish and return to Prolific\u201d again in a few minutes.")


PROLIFIC = Door(
    provider=Worker.Provider.PROLIFIC, salt=PROLIFIC_SIGNING_SALT, id_valid=_prolific_id_valid,
    get_or_create=assignment_get_or_create_prolific, submit_view="frontend:prolific-submit",
    finish_view="frontend:prolific-finish", batch_provider="prolific",
    words={
        "assignment_expired": "The time for this session is over: nothing more can be saved. "
                              "Please return your submission on Prolific.",
        "assignment_closed": "This session is finished or closed: nothing more can be saved in "
                             "it.",
        "not_yours": "This session belongs to another participant or study.",
        "unknown_session": UNKNOWN_SESSION,
    })


def _door_signature(door: Door, *, assignment_id: str, hit_id: str, worker_id: str) -> str:
    """The page's task token: its ids and when the server served the page (epoch seconds)."""
    served = int(timezone.now().timestamp())
    return signing.dumps([assignment_id, hit_id, worker_id, served], salt=door.salt,
                         compress=True)


def _door_identity(door: Door, body: dict) -> tuple[str, str, str, datetime]:
    """(assignment, hit, worker ids, when the page was served) from a signed page token of
    ``door``, or BadRequest."""
    try:
        assignment_id, hit_id, worker_id, served = signing.loads(
            str(body.get("task_token", "")), salt=door.salt)
        served_at = datetime.fromtimestamp(served, tz=UTC)
    except (signing.BadSignature, ValueError, TypeError, OverflowError):
        raise BadRequest("task_token", "this page is not a valid task page; reload it") from None
    return assignment_id, hit_id, worker_id, served_at


def _token_expired(*, hit, served_at: datetime) -> bool:
    """A token lives as long as the assignment it was served for can: the batch's assignment
    duration (counted by the provider from when the worker accepted the HIT or started the
    Prolific submission, before the page was served) plus ``ASSIGNMENT_GRACE``."""
    lifetime = timedelta(seconds=hit.batch.assignment_duration_seconds) + ASSIGNMENT_GRACE
    return timezone.now() > served_at + lifetime


def _refused(request, project: Project, reason: str, status: int, door: Door | None = None):
    """The refusal page; a project's state (``annotation.selectors.access``) in its own plain
    words, the same on every door."""
    door = door or MTURK
    return render(request, "frontend/annotate/refused.html",
                  {"project": project, "reason": reason, "door": door.provider,
                   "project_refusal": REFUSALS.get(reason, "")}, status=status)


def _door_hit(door: Door, *, project: Project, hit_id: str):
    """The HIT ``hit_id`` of ``project`` that ``door`` serves, or None."""
    hit = annotate_selectors.hit_for_task(project=project, provider_hit_id=hit_id)
    if hit is not None and door.batch_provider and hit.batch.provider != door.batch_provider:
        return None
    return hit


def _door_assignment(door: Door, *, hit, assignment_id: str, worker_id: str):
    """The existing Assignment of these ids (None before the first save; nothing is created).

    SubmitRefused ``not_yours`` when the assignment id belongs to another worker or HIT, and
    ``blocked`` when the worker is blocked."""
    assignment = annotate_selectors.assignment_by_provider_id(
        provider_assignment_id=assignment_id)
    if assignment is not None and not annotate_selectors.page_assignment_is_theirs(
            assignment, hit=hit, provider=door.provider, worker_id=worker_id):
        raise SubmitRefused("not_yours", "This assignment belongs to another worker or HIT.")
    worker = (assignment.worker if assignment is not None
              else annotate_selectors.page_worker(provider=door.provider,
                                                  external_id=worker_id))
    if worker is not None and worker_blocked_for(worker, hit.batch.project_id):
        raise SubmitRefused("blocked", "Your account cannot submit work for this project.")
    return assignment


def _door_page(door: Door, request, *, project: Project, hit, assignment, assignment_id: str,
               worker_id: str, extra: dict, preview: bool = False):
    """The task page of ``hit`` for these ids: every item of the HIT, those already saved in
    the assignment marked (their ids only: never an answer)."""
    saved = ({} if assignment is None
             else annotate_selectors.assignment_annotations(assignment=assignment))
    item_ids = annotate_selectors.hit_item_ids(hit=hit)
    items = annotate_selectors.items_for_page(project=project, item_ids=item_ids)
    extra = {
        "preview": preview,
        "saved_item_ids": sorted(saved),
        "draft_scope": f"{door.provider}:{assignment_id}",
        "finish_url": reverse(door.finish_view, args=[project.slug]),
        "task_token": "" if preview else _door_signature(
            door, assignment_id=assignment_id, hit_id=hit.provider_hit_id,
            worker_id=worker_id),
        **extra,
    }
    context = _page_context(project=project, items=items, mode=door.provider,
                            submit_url=reverse(door.submit_view, args=[project.slug]),
                            extra=extra)
    context["preview"] = preview
    return render(request, "frontend/annotate/page.html", context)


def _door_hit_and_assignment(door: Door, project: Project, body: dict):
    """``(hit, existing assignment or None, assignment id, worker id, served at)`` of a signed
    page token.

    Raises BadRequest (not a token of this door, or no such HIT in this project) or
    SubmitRefused (``assignment_expired`` once the token outlived its assignment; see
    ``_door_assignment``)."""
    assignment_id, hit_id, worker_id, served_at = _door_identity(door, body)
    hit = _door_hit(door, project=project, hit_id=hit_id)
    if hit is None:
        raise BadRequest("task_token", "no such HIT in this project")
    if _token_expired(hit=hit, served_at=served_at):
        raise SubmitRefused("assignment_expired", "The time for this assignment is over.")
    assignment = _door_assignment(door, hit=hit, assignment_id=assignment_id,
                                  worker_id=worker_id)
    return hit, assignment, assignment_id, worker_id, served_at


def _door_refusal(door: Door, refused: SubmitRefused) -> JsonResponse:
    if refused.code == "assignment_expired":
        # The page and the API know one code for "nothing more goes into this assignment".
        return _error(409, "assignment_closed", door.words["assignment_expired"])
    return door.refusal(refused)


def _door_submit(door: Door, request, slug: str) -> JsonResponse:
    """Save one item of the page's HIT. The first saved item creates the Worker and the
    Assignment (refused when the HIT has no free slot); answers are stored provisional until
    collection sees the assignment at the provider (docs/annotating.md, "Trust")."""
    project = _project_or_404(slug)
    try:
        body = _parse_body(request)
        submission = _parse_submission(body)
        hit, assignment, assignment_id, worker_id, served_at = _door_hit_and_assignment(
            door, project, body)
    except BadRequest as error:
        return JsonResponse(_invalid_body(error.field, error.message), status=400)
    except SubmitRefused as refused:
        return _door_refusal(door, refused)
    try:
        valid = _validated(project=project, submission=submission,
                           allowed_item_ids=set(annotate_selectors.hit_item_ids(hit=hit)))
    except _Rejected as rejected:
        return JsonResponse(rejected.body, status=rejected.status)
    limited = crowd_save_limited(address=request.META.get("REMOTE_ADDR", ""),
                                 provider=door.provider, hit_id=hit.provider_hit_id,
                                 new_session=assignment is None,
                                 hit_assignments=hit.max_assignments)
    if limited is not None:  # before the provider is asked or a row written
        response = _error(429, "rate_limited", limited.message)
        response["Retry-After"] = str(limited.retry_after)
        return response
    first_save = assignment is None
    if first_save:
        # Asked before anything is written: a session the provider says does not exist (an
        # invented SESSION_ID: Prolific answers 404) is refused and leaves no row; only a
        # provider that cannot be reached lets the answer be kept provisionally.
        check = provider_selectors.session_check(hit=hit, assignment_id=assignment_id,
                                                 worker_id=worker_id)
        if check is provider_selectors.SessionCheck.UNKNOWN:
            return _door_refusal(door, SubmitRefused(
                "unknown_session", "The crowd platform does not know this assignment, so "
                                   "nothing was saved."))
    # The first save creates the Worker and the Assignment (taking a HIT slot) in the same
    # transaction as the answer: if the answer is refused or fails, neither is left behind.
    with transaction.atomic():
        if first_save:
            try:
                assignment = door.get_or_create(
                    hit=hit, worker_external_id=worker_id, provider_assignment_id=assignment_id,
                    confirmed=check is provider_selectors.SessionCheck.CONFIRMED)
            except SubmitRefused as refused:
                return _door_refusal(door, refused)
        status, answer = _stored(valid, worker=assignment.worker, submission=submission,
                                 source=door.provider, assignment=assignment,
                                 provenance=annotate_selectors.page_provenance(
                                     assignment=assignment, hit=hit, provider=door.provider),
                                 assignment_deadline=assignment_deadline(assignment, hit),
                                 served_at=served_at, words=door.words)
        if first_save and status != 200:
            transaction.set_rollback(True)
    return JsonResponse(answer, status=status)


def _door_finish(door: Door, request, slug: str):
    """The checks of a finish: ``(project, hit, assignment, saved annotations by item id,
    the HIT's item ids)`` once every item of the HIT is saved in the token's assignment, or
    the JsonResponse refusing it (400 bad token, 403/409 refusals, 409 ``incomplete``)."""
    project = _project_or_404(slug)
    try:
        hit, assignment, *_ = _door_hit_and_assignment(door, project, _parse_body(request))
    except BadRequest as error:
        return _error(400, "invalid", error.message, error.field)
    except SubmitRefused as refused:
        return _door_refusal(door, refused)
    wanted = annotate_selectors.hit_item_ids(hit=hit)
    saved = ({} if assignment is None
             else annotate_selectors.assignment_annotations(assignment=assignment))
    missing = set(wanted) - saved.keys()
    if assignment is None or missing:
        return _error(409, "incomplete", f"{len(missing)} item(s) are not saved yet.")
    return project, hit, assignment, saved, wanted


# --- MTurk ExternalQuestion ------------------------------------------------------------------


def _submit_origin_allowed(turk_submit_to: str) -> bool:
    allowed = mturk_submit_origins()  # the same list the page's CSP form-action allows
    parts = urlsplit(turk_submit_to)
    return f"{parts.scheme}://{parts.netloc}" in allowed


@xframe_options_exempt
@require_GET
def mturk_task(request, slug: str):
    """The ExternalQuestion page: the HIT's items; read-only in preview mode.

    Writes nothing: the Worker and the Assignment are created on the first saved item
    (``mturk_submit``). Refused with a polite page: malformed ids or a submit host that is not
    MTurk's (400), an unknown HIT (404), a blocked worker or an AssignmentId that belongs to
    another worker or HIT (403, nothing of that assignment shown)."""
    project = _project_or_404(slug)
    assignment_id = request.GET.get("assignmentId", "")
    hit_id = request.GET.get("hitId", "")
    worker_id = request.GET.get("workerId", "")
    turk_submit_to = request.GET.get("turkSubmitTo", "")
    preview = assignment_id in ("", PREVIEW_ASSIGNMENT_ID)
    link_valid = MTURK.id_valid(hit_id) and (preview or (
        MTURK.id_valid(assignment_id) and MTURK.id_valid(worker_id)
        and _submit_origin_allowed(turk_submit_to)))
    if not link_valid:
        return _refused(request, project, "bad_link", 400)
    hit = _door_hit(MTURK, project=project, hit_id=hit_id)
    if hit is None:
        return _refused(request, project, "no_hit", 404)
    refusal = work_refusal(project=project)
    if refusal is not None:
        return _refused(request, project, refusal, 409)
    assignment = None
    if not preview:
        try:
            assignment = _door_assignment(MTURK, hit=hit, assignment_id=assignment_id,
                                          worker_id=worker_id)
        except SubmitRefused as refused:
            return _refused(request, project, refused.code, 403)
    return _door_page(MTURK, request, project=project, hit=hit, assignment=assignment,
                      assignment_id=assignment_id, worker_id=worker_id, preview=preview,
                      extra={
                          "turk_submit_to": "" if preview
                          else turk_submit_to.rstrip("/") + "/mturk/externalSubmit",
                          "assignment_id": "" if preview else assignment_id,
                      })


@csrf_exempt  # cookies are withheld in MTurk's iframe; the signed task_token replaces them
@xframe_options_exempt
@require_POST
def mturk_submit(request, slug: str):
    """Save one item of the page's HIT (``_door_submit``)."""
    return _door_submit(MTURK, request, slug)


@csrf_exempt  # see mturk_submit
@xframe_options_exempt
@require_POST
def mturk_finish(request, slug: str):
    """Called once every item is saved: marks the assignment submitted, returns the summary
    the page posts to MTurk's externalSubmit."""
    finished = _door_finish(MTURK, request, slug)
    if isinstance(finished, JsonResponse):
        return finished
    project, _, assignment, saved, wanted = finished
    assignment_mark_submitted(assignment=assignment)
    # The page posts these to MTurk too, so MTurk's copy of the assignment holds the whole
    # answer in the fields the collector reads: if our database ever lost the saved rows,
    # collection rebuilds them from MTurk instead of holding a summary it cannot use.
    stored = {str(item_id): saved[item_id] for item_id in sorted(wanted)}
    return JsonResponse({
        "status": "submitted", "saved_items": len(saved),
        "summary": f"unpack:{project.slug}:{len(saved)} items saved",
        "answer_fields": {
            ANSWER_FIELD_PAYLOADS: json.dumps(
                {key: annotation.payload for key, annotation in stored.items()},
                sort_keys=True),
            ANSWER_FIELD_META: json.dumps(
                {key: {"duration_ms": annotation.duration_ms,
                       "client_warnings": annotation.client_warnings,
                       "overridden_warnings": annotation.overridden_warnings}
                 for key, annotation in stored.items()}, sort_keys=True),
        },
    })


# --- Prolific study link ---------------------------------------------------------------------
# CSRF, decided: Prolific sends the participant's browser to our page directly (a top-level
# page, not a frame), so our cookies would reach these endpoints. But nothing here rests on a
# cookie: the participant is not logged in, and every save and finish is authorised by the
# server-signed task token alone (bound to PROLIFIC_PID, STUDY_ID, SESSION_ID, and expiring with
# the session), which a forged cross-site request cannot carry unless its author already holds
# the participant's ids — and then they could as well open the page. There is no ambient
# authority for a cross-site request to borrow, so Django's cookie check would add nothing but
# refusals for participants whose browsers block cookies; the endpoints are exempt from it, as
# MTurk's are. The bodies are JSON (a cross-site form cannot send one without a CORS preflight
# we never answer). No iframe exemption: the page keeps X-Frame-Options DENY.


@require_GET
def prolific_task(request, slug: str):
    """The page Prolific sends a participant to: the study's items (the study is one HIT).

    Writes nothing: the Worker and the Assignment (the submission, ``SESSION_ID``) are created
    on the first saved item (``prolific_submit``). Refused with a polite page: ids that are not
    Prolific's (400), an unknown study (404), a blocked participant or a SESSION_ID that belongs
    to another participant or study (403, nothing of that session shown), a session returned
    or timed out (409)."""
    project = _project_or_404(slug)
    worker_id = request.GET.get("PROLIFIC_PID", "")
    hit_id = request.GET.get("STUDY_ID", "")
    assignment_id = request.GET.get("SESSION_ID", "")
    if not all(PROLIFIC.id_valid(value) for value in (worker_id, hit_id, assignment_id)):
        return _refused(request, project, "bad_link", 400, PROLIFIC)
    hit = _door_hit(PROLIFIC, project=project, hit_id=hit_id)
    if hit is None:
        return _refused(request, project, "no_hit", 404, PROLIFIC)
    refusal = work_refusal(project=project)
    if refusal is not None:
        return _refused(request, project, refusal, 409, PROLIFIC)
    try:
        assignment = _door_assignment(PROLIFIC, hit=hit, assignment_id=assignment_id,
                                      worker_id=worker_id)
    except SubmitRefused as refused:
        return _refused(request, project, refused.code, 403, PROLIFIC)
    if assignment is not None and assignment.status in RELEASED_ASSIGNMENT_STATUSES:
        return _refused(request, project, "session_closed", 409, PROLIFIC)
    return _door_page(PROLIFIC, request, project=project, hit=hit, assignment=assignment,
                      assignment_id=assignment_id, worker_id=worker_id,
                      extra={"finish_label": "Finish and return to Prolific"})


@csrf_exempt  # the signed task_token is the only credential (see above)
@require_POST
def prolific_submit(request, slug: str):
    """Save one item of the participant's session (``_door_submit``): the first save asks
    Prolific whether the session is real (``ProlificProvider.assignment_is_live``), and only a
    session Prolific vouches for takes one of the study's places."""
    return _door_submit(PROLIFIC, request, slug)


@csrf_exempt  # see prolific_submit
@require_POST
def prolific_finish(request, slug: str):
    """Called once every item is saved: marks the session submitted and answers where the
    browser goes next, Prolific's completion URL with the study's completion code
    (``PROLIFIC_COMPLETION_URL``). Asked again (a lost answer), it answers the same; a session
    returned or timed out gets no code (409 ``assignment_closed``)."""
    finished = _door_finish(PROLIFIC, request, slug)
    if isinstance(finished, JsonResponse):
        return finished
    _, hit, assignment, saved, _ = finished
    if assignment.status in RELEASED_ASSIGNMENT_STATUSES:
        return PROLIFIC.refusal(SubmitRefused("assignment_closed", ""))
    code = hit.batch.completion_code
    if not code:
        return _error(409, "no_completion_code",
                      "This study has no completion code yet; please contact the researcher "
                      "through Prolific. Your answers are saved.")
    if assignment.confirmed_at is None:
        # The code goes only to a session Prolific confirms: one saved while Prolific could
        # not be reached is checked now, and the code is held while it still cannot be.
        check = provider_selectors.session_check(
            hit=hit, assignment_id=assignment.provider_assignment_id,
            worker_id=assignment.worker.external_id)
        if check is provider_selectors.SessionCheck.UNKNOWN:
            return PROLIFIC.refusal(SubmitRefused("unknown_session", UNKNOWN_SESSION))
        if check is not provider_selectors.SessionCheck.CONFIRMED:
            return _error(409, "code_held", CODE_HELD)
        assignment_mark_confirmed(assignment=assignment)
    assignment_mark_submitted(assignment=assignment)
    return JsonResponse({"status": "submitted", "saved_items": len(saved),
                         "redirect_url": _prolific_completion_url(code)})
