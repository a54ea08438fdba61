"""Who may use every URL: anonymous visitors, annotators, staff.

The table below has one row per URL pattern the project serves (Django's resolver lists them),
so a new URL without a row fails ``test_every_url_pattern_has_a_row`` and access control can
never silently regress. Each row names the request to make and the status each role gets.

Roles (issue 11, point 9: one rule, ``annotation/roles.py``, for pages and API alike):
``anonymous``; ``annotator`` (a login, no staff permission); ``staff_only`` (``is_staff`` without
a group: the admin site's door, no powers, so exactly an annotator's answers); ``reviewer`` and
``researcher`` (the groups of migrations 0007 and 0013, each with ``is_staff``); ``staff`` (a
superuser). A row's ``reviewer`` and ``researcher`` default to the superuser's status; the rows
a reviewer may not use (launching, resuming or cancelling batches, creating or changing
projects) say so.

Statuses: 200 served; 302 → a login page (anonymous visitors of pages) or back to the page
after a staff form (a logged-in user); 401 JSON naming the login page (the endpoints task pages
call with ``fetch``, which must never follow a redirect into a page); 400 refused bad input;
403 refused: a logged-in user without the permission, on a page or the API (DRF's session auth
gives 403 to anonymous callers too); 404 unknown object; 405 method not allowed. A refused
request changes nothing: ``test_refused_requests_change_nothing`` compares a snapshot of the
database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.views.generic import RedirectView

from annotation.admin import ReadOnlyWorkMixin
from annotation.models import (
    Annotation,
    Assignment,
    Batch,
    Bonus,
    Flag,
    Hit,
    Item,
    Project,
    StatusEvent,
    Worker,
)
from tests.factories import prolific_study_hit, publish_hit, sluice_project

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "annotator", "staff_only", "reviewer", "researcher", "staff")
GROUP_OF = {"reviewer": "reviewer", "researcher": "researcher"}


@dataclass(frozen=True)
class Row:
    method: str
    url: str  # formatted with the objects of ``world`` (e.g. {slug}, {assignment})
    anonymous: int
    annotator: int
    staff: int
    data: dict | None = field(default=None, hash=False)
    json: bool = False
    reviewer: int | None = None  # None: as ``staff``
    researcher: int | None = None  # None: as ``staff``
    # Staff rows whose success changes data (a decision, a bonus) are still exercised: the
    # table is about who may, and the changes are those of a valid staff request.

    def expected(self, role: str) -> int:
        if role == "staff_only":  # is_staff gives no power: an annotator's answers…
            if "{own_annotation}" in self.url and self.annotator == 200:
                return 404  # …on their own work, which the annotator's answer is not
            return self.annotator
        value = getattr(self, role)
        return self.staff if value is None else value


LOGIN = 302   # redirected to a login page
NO = 403      # a logged-in user without the permission (pages and API)
BACK = 302    # a staff form redirecting back to its page
DRF_NO = 403  # DRF refusal
LOGIN_JSON = 401  # a fetch endpoint's "log in again" answer
# Prolific ids are 24 lower-case hex digits (the study's is in ``world``).
PROLIFIC_PID = "5a9d64f5f6dfdd0001eaa73d"
PROLIFIC_STUDY = "64d3ab4de4bae1091e5de441"
PROLIFIC_SESSION = "6500aa00bb11cc22dd33ee44"

# One entry per URL pattern (as the resolver prints it), each with the requests to try.
TABLE: dict[str, list[Row]] = {
    # --- accounts -----------------------------------------------------------------------------
    "accounts/login/": [Row("GET", "/accounts/login/", 200, 200, 200),
                        # Wrong password: the form again with an error, nobody logged in.
                        Row("POST", "/accounts/login/", 200, 200, 200,
                            data={"username": "researcher", "password": "wrong"})],
    "accounts/logout/": [Row("GET", "/accounts/logout/", 405, 405, 405),
                         Row("POST", "/accounts/logout/", 302, 302, 302)],
    # --- REST API -----------------------------------------------------------------------------
    "api/": [Row("GET", "/api/", DRF_NO, 200, 200)],
    "api/<drf_format_suffix:format>": [Row("GET", "/api/.json", DRF_NO, 200, 200)],
    "api/schema/": [Row("GET", "/api/schema/", 200, 200, 200)],  # public by design
    "favicon.ico": [Row("GET", "/favicon.ico", 301, 301, 301)],  # the icon, for everyone
    "api/docs/": [Row("GET", "/api/docs/", 200, 200, 200)],
    "api/batches/": [Row("GET", "/api/batches/", DRF_NO, DRF_NO, 200),
                     Row("POST", "/api/batches/", DRF_NO, DRF_NO, 405, data={}, json=True)],
    "api/batches/launch/": [
        Row("GET", "/api/batches/launch/", DRF_NO, DRF_NO, 405, reviewer=NO),
        Row("POST", "/api/batches/launch/", DRF_NO, DRF_NO, 400, data={}, json=True,
            reviewer=NO)],
    "api/batches/<int:batch_id>/": [
        Row("GET", "/api/batches/{batch}/", DRF_NO, DRF_NO, 200),
        Row("GET", "/api/batches/999999/", DRF_NO, DRF_NO, 404)],
    # Decisions: staff only; a refused decision (400) changes nothing.
    "api/assignments/approve/": [
        Row("POST", "/api/assignments/approve/", DRF_NO, DRF_NO, 400, data={"assignments": []},
            json=True),
        Row("GET", "/api/assignments/approve/", DRF_NO, DRF_NO, 405)],
    "api/assignments/reject/": [
        Row("POST", "/api/assignments/reject/", DRF_NO, DRF_NO, 400,
            data={"assignments": [], "message": "x"}, json=True),
        Row("GET", "/api/assignments/reject/", DRF_NO, DRF_NO, 405)],
    "api/assignments/<int:pk>/approve-and-bonus/": [
        Row("POST", "/api/assignments/{assignment}/approve-and-bonus/", DRF_NO, DRF_NO, 200,
            data={"amount_cents": 25, "reason": "good work"}, json=True),
        Row("POST", "/api/assignments/{assignment}/approve-and-bonus/", DRF_NO, DRF_NO, 400,
            data={"amount_cents": 25, "reason": " "}, json=True)],
    "api/flags/dismiss/": [
        Row("POST", "/api/flags/dismiss/", DRF_NO, DRF_NO, 400, data={"flags": [999999]},
            json=True),
        Row("POST", "/api/flags/dismiss/", DRF_NO, DRF_NO, 400, data={"flags": []},
            json=True)],
    "api/assignments/<int:pk>/approve/": [
        Row("POST", "/api/assignments/{assignment}/approve/", DRF_NO, DRF_NO, 200, data={},
            json=True),
        Row("GET", "/api/assignments/{assignment}/approve/", DRF_NO, DRF_NO, 405)],
    "api/assignments/<int:pk>/reject/": [
        Row("POST", "/api/assignments/{assignment}/reject/", DRF_NO, DRF_NO, 400,
            data={"message": " "}, json=True),
        Row("POST", "/api/assignments/999999/reject/", DRF_NO, DRF_NO, 404,
            data={"message": "no"}, json=True)],
    "api/assignments/<int:pk>/bonus/": [
        Row("POST", "/api/assignments/{assignment}/bonus/", DRF_NO, DRF_NO, 200,
            data={"amount_cents": 25, "reason": "good work"}, json=True),
        Row("POST", "/api/assignments/{assignment}/bonus/", DRF_NO, DRF_NO, 400,
            data={"amount_cents": 0, "reason": "typo"}, json=True)],
    "api/annotations/<int:pk>/approve/": [
        Row("POST", "/api/annotations/{own_annotation}/approve/", DRF_NO, DRF_NO, 200, data={},
            json=True)],
    "api/annotations/<int:pk>/reject/": [
        Row("POST", "/api/annotations/{own_annotation}/reject/", DRF_NO, DRF_NO, 400,
            data={}, json=True)],
    "api/workers/<int:pk>/block/": [
        Row("POST", "/api/workers/{other_worker}/block/", DRF_NO, DRF_NO, 200,
            data={"reason": "spam"}, json=True),
        Row("POST", "/api/workers/{other_worker}/block/", DRF_NO, DRF_NO, 400, data={},
            json=True)],
    "api/workers/<int:pk>/unblock/": [
        Row("POST", "/api/workers/{other_worker}/unblock/", DRF_NO, DRF_NO, 200, data={},
            json=True)],
    "api/flags/<int:pk>/dismiss/": [
        Row("POST", "/api/flags/{flag}/dismiss/", DRF_NO, DRF_NO, 200, data={}, json=True)],
    "api/^projects/$": [
        Row("GET", "/api/projects/", DRF_NO, 200, 200),
        Row("POST", "/api/projects/", DRF_NO, DRF_NO, 400, data={"slug": "x"}, json=True,
            reviewer=NO)],
    "api/^projects\\.(?P<format>[a-z0-9]+)/?$": [
        Row("GET", "/api/projects.json", DRF_NO, 200, 200)],
    "api/^projects/(?P<slug>[^/.]+)/$": [
        Row("GET", "/api/projects/{slug}/", DRF_NO, 200, 200),
        Row("PATCH", "/api/projects/{slug}/", DRF_NO, DRF_NO, 200,
            data={"name": "Renamed by staff"}, json=True, reviewer=NO),
        # Deleting a project would cascade through its items and annotations outside any
        # service; the API does not offer it (the admin does, with its confirmation page).
        Row("DELETE", "/api/projects/{slug}/", DRF_NO, DRF_NO, 405, reviewer=NO)],
    "api/^projects/(?P<slug>[^/.]+)\\.(?P<format>[a-z0-9]+)/?$": [
        Row("GET", "/api/projects/{slug}.json", DRF_NO, 200, 200)],
    "api/^items/$": [
        Row("GET", "/api/items/", DRF_NO, DRF_NO, 200),
        Row("POST", "/api/items/", DRF_NO, DRF_NO, 405, data={}, json=True)],
    "api/^items\\.(?P<format>[a-z0-9]+)/?$": [Row("GET", "/api/items.json", DRF_NO, DRF_NO, 200)],
    "api/^items/(?P<pk>[^/.]+)/$": [
        Row("GET", "/api/items/{item}/", DRF_NO, DRF_NO, 200),
        Row("DELETE", "/api/items/{item}/", DRF_NO, DRF_NO, 405)],
    "api/^items/(?P<pk>[^/.]+)\\.(?P<format>[a-z0-9]+)/?$": [
        Row("GET", "/api/items/{item}.json", DRF_NO, DRF_NO, 200)],
    "api/^annotations/$": [
        Row("GET", "/api/annotations/", DRF_NO, 200, 200),
        Row("POST", "/api/annotations/", DRF_NO, 405, 405, data={}, json=True)],
    "api/^annotations\\.(?P<format>[a-z0-9]+)/?$": [
        Row("GET", "/api/annotations.json", DRF_NO, 200, 200)],
    "api/^annotations/(?P<pk>[^/.]+)/$": [
        # Another worker's annotation does not exist for an annotator.
        Row("GET", "/api/annotations/{others_annotation}/", DRF_NO, 404, 200),
        Row("GET", "/api/annotations/{own_annotation}/", DRF_NO, 200, 200),
        Row("PATCH", "/api/annotations/{own_annotation}/", DRF_NO, 405, 405,
            data={"rating": 1}, json=True),
        Row("DELETE", "/api/annotations/{own_annotation}/", DRF_NO, 405, 405)],
    "api/^annotations/(?P<pk>[^/.]+)\\.(?P<format>[a-z0-9]+)/?$": [
        Row("GET", "/api/annotations/{others_annotation}.json", DRF_NO, 404, 200)],
    # --- staff review ---------------------------------------------------------------------------
    "staff/review/": [Row("GET", "/staff/review/", LOGIN, NO, 200)],
    "staff/review/<slug:slug>/": [Row("GET", "/staff/review/{slug}/", LOGIN, NO, 200),
                                  Row("GET", "/staff/review/nope/", LOGIN, NO, 404)],
    "staff/review/<slug:slug>/dashboard/": [
        Row("GET", "/staff/review/{slug}/dashboard/", LOGIN, NO, 200)],
    "staff/review/<slug:slug>/export/": [
        # The console's export page (staff/projects/<slug>/export/) is the one export page.
        Row("GET", "/staff/review/{slug}/export/", LOGIN, NO, 302),
        Row("GET", "/staff/review/{slug}/export/?format=jsonl", LOGIN, NO, 302),
        Row("GET", "/staff/review/nope/export/", LOGIN, NO, 404),
        # Starts an export job (inline here) and goes to its page.
        Row("POST", "/staff/review/{slug}/export/", LOGIN, NO, 302, data={"format": "jsonl"})],
    # --- staff jobs: the permission of the page that started the job (an export: see_work) --
    "staff/jobs/<int:job_id>/": [
        Row("GET", "/staff/jobs/{job}/", LOGIN, NO, 200),
        Row("GET", "/staff/jobs/999999/", LOGIN, NO, 404)],
    "staff/jobs/<int:job_id>/progress/": [
        Row("GET", "/staff/jobs/{job}/progress/", LOGIN, NO, 200)],
    "staff/jobs/<int:job_id>/download/": [
        Row("GET", "/staff/jobs/{job}/download/", LOGIN, NO, 200),
        Row("POST", "/staff/jobs/{job}/download/", LOGIN, NO, 405, data={})],
    "staff/review/<slug:slug>/qc/": [
        Row("GET", "/staff/review/{slug}/qc/", LOGIN, NO, 405),
        Row("POST", "/staff/review/{slug}/qc/", LOGIN, NO, BACK, data={})],
    "staff/review/<slug:slug>/assignments/approve/": [
        Row("GET", "/staff/review/{slug}/assignments/approve/", LOGIN, NO, 405),
        Row("POST", "/staff/review/{slug}/assignments/approve/", LOGIN, NO, BACK, data={})],
    "staff/review/<slug:slug>/assignments/<int:assignment_id>/decide/": [
        Row("GET", "/staff/review/{slug}/assignments/{assignment}/decide/", LOGIN, NO, 405),
        Row("POST", "/staff/review/{slug}/assignments/{assignment}/decide/", LOGIN, NO, BACK,
            data={"action": "approve"})],
    "staff/review/<slug:slug>/assignments/<int:assignment_id>/bonus/": [
        Row("POST", "/staff/review/{slug}/assignments/{assignment}/bonus/", LOGIN, NO, BACK,
            data={"amount_cents": "25", "reason": "good work"})],
    "staff/review/<slug:slug>/annotations/<int:annotation_id>/decide/": [
        Row("POST", "/staff/review/{slug}/annotations/{others_annotation}/decide/", LOGIN, NO,
            BACK, data={"action": "reject", "message": "no"})],
    "staff/review/<slug:slug>/flags/<int:flag_id>/dismiss/": [
        Row("POST", "/staff/review/{slug}/flags/{flag}/dismiss/", LOGIN, NO, BACK,
            data={"note": "fine"})],
    "staff/review/<slug:slug>/workers/<int:worker_id>/block/": [
        Row("POST", "/staff/review/{slug}/workers/{other_worker}/block/", LOGIN, NO, BACK,
            data={"reason": "spam"})],
    # --- staff decisions (issue 24): a worker's page, the block that asks, held-back work ---
    "staff/workers/<int:worker_id>/": [
        Row("GET", "/staff/workers/{other_worker}/", LOGIN, NO, 200),
        Row("GET", "/staff/workers/999999/", LOGIN, NO, 404)],
    "staff/workers/<int:worker_id>/block/": [
        Row("GET", "/staff/workers/{other_worker}/block/?project={slug}", LOGIN, NO, 200),
        # Without a scope and a choice for the pending work: refused, nothing changed.
        Row("POST", "/staff/workers/{other_worker}/block/", LOGIN, NO, 400,
            data={"reason": "spam"}),
        Row("POST", "/staff/workers/999999/block/", LOGIN, NO, 404, data={})],
    "staff/workers/<int:worker_id>/unblock/": [
        Row("GET", "/staff/workers/{other_worker}/unblock/", LOGIN, NO, 405),
        Row("POST", "/staff/workers/{other_worker}/unblock/", LOGIN, NO, BACK, data={})],
    "staff/assignments/<int:assignment_id>/approve-and-bonus/": [
        Row("GET", "/staff/assignments/{assignment}/approve-and-bonus/", LOGIN, NO, 405),
        # Without an amount: refused with a message, nothing changed.
        Row("POST", "/staff/assignments/{assignment}/approve-and-bonus/", LOGIN, NO, BACK,
            data={})],
    "staff/projects/<slug:slug>/held/": [
        Row("GET", "/staff/projects/{slug}/held/", LOGIN, NO, 200),
        Row("GET", "/staff/projects/nope/held/", LOGIN, NO, 404)],
    # --- the data browser and adjudication (issue 24) ---
    "staff/projects/<slug:slug>/answers/": [
        Row("GET", "/staff/projects/{slug}/answers/", LOGIN, NO, 200),
        Row("GET", "/staff/projects/{slug}/answers/?state=nope", LOGIN, NO, 400),
        Row("GET", "/staff/projects/nope/answers/", LOGIN, NO, 404)],
    # h24rest: bulk actions on ticked answers (none ticked: refused with a message, back to
    # the page) and the download of the filtered answers (staff only).
    "staff/projects/<slug:slug>/answers/decide/": [
        Row("GET", "/staff/projects/{slug}/answers/decide/", LOGIN, NO, 405),
        Row("POST", "/staff/projects/{slug}/answers/decide/", LOGIN, NO, BACK,
            data={"action": "approve"})],
    "staff/projects/<slug:slug>/answers/download/": [
        Row("GET", "/staff/projects/{slug}/answers/download/?format=csv", LOGIN, NO, 200),
        Row("GET", "/staff/projects/{slug}/answers/download/?format=xls", LOGIN, NO, 400),
        Row("GET", "/staff/projects/nope/answers/download/", LOGIN, NO, 404)],
    "staff/projects/<slug:slug>/items/<int:item_id>/adjudicate/": [
        Row("GET", "/staff/projects/{slug}/items/{item}/adjudicate/", LOGIN, NO, 200),
        Row("GET", "/staff/projects/{slug}/items/999999/adjudicate/", LOGIN, NO, 404)],
    "staff/projects/<slug:slug>/items/<int:item_id>/adjudicate/decide/": [
        Row("GET", "/staff/projects/{slug}/items/{item}/adjudicate/decide/", LOGIN, NO, 405),
        # Neither an answer picked nor a reference written: refused with a message.
        Row("POST", "/staff/projects/{slug}/items/{item}/adjudicate/decide/", LOGIN, NO, BACK,
            data={"answer": "", "text": ""})],
    # --- staff batches --------------------------------------------------------------------------
    "staff/batches/": [Row("GET", "/staff/batches/", LOGIN, NO, 200)],
    "staff/batches/new/": [Row("GET", "/staff/batches/new/", LOGIN, NO, 200, reviewer=NO),
                           # Invalid form: shown again with errors, nothing launched.
                           Row("POST", "/staff/batches/new/", LOGIN, NO, 200, data={},
                               reviewer=NO)],
    "staff/batches/<int:batch_id>/": [Row("GET", "/staff/batches/{batch}/", LOGIN, NO, 200),
                                      Row("GET", "/staff/batches/999999/", LOGIN, NO, 404)],
    "staff/batches/<int:batch_id>/resume/": [
        Row("GET", "/staff/batches/{batch}/resume/", LOGIN, NO, 405, reviewer=NO),
        Row("POST", "/staff/batches/{batch}/resume/", LOGIN, NO, BACK, data={}, reviewer=NO)],
    "staff/batches/<int:batch_id>/cancel/": [
        Row("GET", "/staff/batches/{batch}/cancel/", LOGIN, NO, 405, reviewer=NO),
        Row("POST", "/staff/batches/{batch}/cancel/", LOGIN, NO, BACK, data={}, reviewer=NO),
        Row("POST", "/staff/batches/999999/cancel/", LOGIN, NO, 404, data={}, reviewer=NO)],
    "staff/batches/<int:batch_id>/collect/": [
        Row("GET", "/staff/batches/{batch}/collect/", LOGIN, NO, 405, reviewer=NO),
        Row("POST", "/staff/batches/{batch}/collect/", LOGIN, NO, BACK, data={}, reviewer=NO),
        Row("POST", "/staff/batches/999999/collect/", LOGIN, NO, 404, data={}, reviewer=NO)],
    "staff/batches/<int:batch_id>/manage/": [
        Row("GET", "/staff/batches/{batch}/manage/", LOGIN, NO, 405, reviewer=NO),
        # An unknown action: refused with a message, nothing queued.
        Row("POST", "/staff/batches/{batch}/manage/", LOGIN, NO, BACK,
            data={"action": "nonsense"}, reviewer=NO),
        Row("POST", "/staff/batches/999999/manage/", LOGIN, NO, 404, data={}, reviewer=NO)],
    # --- the researchers' console (frontend/staff/): projects, team, import, splits, export -----
    "staff/projects/new/": [
        Row("GET", "/staff/projects/new/", LOGIN, NO, 200, reviewer=NO),
        Row("POST", "/staff/projects/new/", LOGIN, NO, 200, data={}, reviewer=NO)],
    # --- gold items (issue 25): the rate, the advice, marking items gold ---
    "staff/projects/<slug:slug>/gold/": [
        Row("GET", "/staff/projects/{slug}/gold/", LOGIN, NO, 200, reviewer=NO),
        Row("GET", "/staff/projects/nope/gold/", LOGIN, NO, 404, reviewer=NO),
        # An empty mark form: shown again with its errors, nothing changed.
        Row("POST", "/staff/projects/{slug}/gold/", LOGIN, NO, 400, data={}, reviewer=NO)],
    "staff/projects/<slug:slug>/settings/": [
        Row("GET", "/staff/projects/{slug}/settings/", LOGIN, NO, 200, reviewer=NO),
        Row("GET", "/staff/projects/nope/settings/", LOGIN, NO, 404, reviewer=NO),
        Row("POST", "/staff/projects/{slug}/settings/", LOGIN, NO, 200, data={}, reviewer=NO)],
    "staff/projects/<slug:slug>/team/": [
        Row("GET", "/staff/projects/{slug}/team/", LOGIN, NO, 200, reviewer=NO),
        # An unknown state: refused with a message, nothing changed.
        Row("POST", "/staff/projects/{slug}/team/", LOGIN, NO, BACK, data={"status": "bogus"},
            reviewer=NO)],
    "staff/team/": [
        Row("GET", "/staff/team/", LOGIN, NO, 200, reviewer=NO),
        Row("POST", "/staff/team/", LOGIN, NO, 200, data={}, reviewer=NO)],
    "staff/team/invites/": [
        Row("GET", "/staff/team/invites/", LOGIN, NO, 200, reviewer=NO),
        Row("POST", "/staff/team/invites/", LOGIN, NO, 200, data={"role": "bogus"},
            reviewer=NO)],
    # Withdrawing an invite: POST only; an unknown one is not found, nothing written
    # (tests/console/test_invites.py withdraws real ones).
    "staff/team/invites/<int:invite_id>/revoke/": [
        Row("GET", "/staff/team/invites/999999/revoke/", LOGIN, NO, 405, reviewer=NO),
        Row("POST", "/staff/team/invites/999999/revoke/", LOGIN, NO, 404, data={},
            reviewer=NO)],
    # A forged invite token: not found for everyone, nothing written (tests/console/
    # test_invites.py has the real, expired and used links).
    "invite/<str:token>/": [
        Row("GET", "/invite/forged-token/", 404, 404, 404),
        Row("POST", "/invite/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/", 404, 404, 404,
            data={"username": "x", "password": "y", "password_again": "y"})],
    "staff/projects/<slug:slug>/import/": [
        Row("GET", "/staff/projects/{slug}/import/", LOGIN, NO, 200, reviewer=NO),
        Row("POST", "/staff/projects/{slug}/import/", LOGIN, NO, 400, data={}, reviewer=NO)],
    "staff/projects/<slug:slug>/splits/": [
        Row("GET", "/staff/projects/{slug}/splits/", LOGIN, NO, 200, reviewer=NO),
        Row("POST", "/staff/projects/{slug}/splits/", LOGIN, NO, 200, data={}, reviewer=NO)],
    "staff/projects/<slug:slug>/splits/<int:manifest_id>/": [
        Row("GET", "/staff/projects/{slug}/splits/999999/", LOGIN, NO, 404)],
    "staff/projects/<slug:slug>/export/": [
        Row("GET", "/staff/projects/{slug}/export/", LOGIN, NO, 200),
        Row("POST", "/staff/projects/{slug}/export/", LOGIN, NO, BACK, data={"format": "jsonl"}),
        Row("POST", "/staff/projects/{slug}/export/", LOGIN, NO, BACK, data={"format": "nope"})],
    "api/projects/<slug:slug>/splits/": [
        Row("GET", "/api/projects/{slug}/splits/", DRF_NO, DRF_NO, 200),
        Row("POST", "/api/projects/{slug}/splits/", DRF_NO, DRF_NO, 400, data={}, json=True,
            reviewer=NO)],
    "api/projects/<slug:slug>/imports/preview/": [
        Row("GET", "/api/projects/{slug}/imports/preview/", DRF_NO, DRF_NO, 405, reviewer=NO),
        Row("POST", "/api/projects/{slug}/imports/preview/", DRF_NO, DRF_NO, 400, data={},
            reviewer=NO)],
    "api/projects/<slug:slug>/imports/commit/": [
        Row("POST", "/api/projects/{slug}/imports/commit/", DRF_NO, DRF_NO, 400, data={},
            json=True, reviewer=NO)],
    "api/projects/<slug:slug>/export/": [
        # Starts the export job (inline here): 202 with the job; never a zip in the request.
        Row("POST", "/api/projects/{slug}/export/", DRF_NO, DRF_NO, 202,
            data={"export_format": "jsonl"}, json=True),
        Row("POST", "/api/projects/{slug}/export/", DRF_NO, DRF_NO, 400,
            data={"export_format": "nope"}, json=True),
        Row("GET", "/api/projects/{slug}/export/?export_format=jsonl", DRF_NO, DRF_NO, 405)],
    "api/jobs/<int:job_id>/": [
        Row("GET", "/api/jobs/{job}/", DRF_NO, DRF_NO, 200),
        Row("GET", "/api/jobs/999999/", DRF_NO, DRF_NO, 404)],
    "api/jobs/<int:job_id>/download/": [
        Row("GET", "/api/jobs/{job}/download/", DRF_NO, DRF_NO, 200),
        Row("POST", "/api/jobs/{job}/download/", DRF_NO, DRF_NO, 405, data={})],
    # --- annotators -----------------------------------------------------------------------------
    "": [Row("GET", "/", LOGIN, 200, 200)],
    "annotate/<slug:slug>/": [Row("GET", "/annotate/{slug}/", LOGIN, 200, 200),
                              Row("POST", "/annotate/{slug}/", LOGIN, 405, 405, data={})],
    "annotate/<slug:slug>/submit/": [
        Row("GET", "/annotate/{slug}/submit/", LOGIN_JSON, 405, 405),
        Row("POST", "/annotate/{slug}/submit/", LOGIN_JSON, 400, 400, data={"not": "valid"},
            json=True)],
    "annotate/<slug:slug>/lease/": [
        Row("GET", "/annotate/{slug}/lease/", LOGIN_JSON, 405, 405),
        Row("POST", "/annotate/{slug}/lease/", LOGIN_JSON, 200, 200, data={"item_ids": []},
            json=True)],
    "annotate/<slug:slug>/progress/": [
        Row("GET", "/annotate/{slug}/progress/", LOGIN_JSON, 200, 200),
        Row("POST", "/annotate/{slug}/progress/", LOGIN_JSON, 405, 405, data={})],
    # Going back: an annotator's own answers only (another's is a 404, staff included).
    "annotate/<slug:slug>/answers/": [
        Row("GET", "/annotate/{slug}/answers/", LOGIN, 200, 200),
        Row("POST", "/annotate/{slug}/answers/", LOGIN, 405, 405, data={})],
    "annotate/<slug:slug>/answers/previous/": [
        Row("GET", "/annotate/{slug}/answers/previous/", LOGIN, 302, 302)],
    "annotate/<slug:slug>/answers/<int:annotation_id>/": [
        Row("GET", "/annotate/{slug}/answers/{own_annotation}/", LOGIN, 200, 404),
        Row("GET", "/annotate/{slug}/answers/{others_annotation}/", LOGIN, 404, 404),
        Row("POST", "/annotate/{slug}/answers/{own_annotation}/", LOGIN, 405, 405, data={})],
    "annotate/<slug:slug>/revise/": [
        Row("GET", "/annotate/{slug}/revise/", LOGIN_JSON, 405, 405),
        Row("POST", "/annotate/{slug}/revise/", LOGIN_JSON, 400, 400, data={"not": "valid"},
            json=True)],
    # --- MTurk ExternalQuestion (no login: MTurk workers have none) ----------------------------
    "mturk/task/<slug:slug>/": [
        Row("GET", "/mturk/task/{slug}/?hitId=HIT123&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE",
            200, 200, 200),
        Row("GET", "/mturk/task/{slug}/?hitId=NOPE", 404, 404, 404),
        Row("POST", "/mturk/task/{slug}/", 405, 405, 405, data={})],
    "mturk/task/<slug:slug>/submit/": [
        Row("GET", "/mturk/task/{slug}/submit/", 405, 405, 405),
        Row("POST", "/mturk/task/{slug}/submit/", 400, 400, 400, data={"task_token": "forged"},
            json=True)],
    "mturk/task/<slug:slug>/finish/": [
        Row("POST", "/mturk/task/{slug}/finish/", 400, 400, 400, data={"task_token": "forged"},
            json=True)],
    # --- Prolific study link (no login: participants have none) --------------------------------
    "prolific/task/<slug:slug>/": [
        Row("GET", "/prolific/task/{slug}/?PROLIFIC_PID=" + PROLIFIC_PID
            + "&STUDY_ID={study}&SESSION_ID=" + PROLIFIC_SESSION, 200, 200, 200),
        Row("GET", "/prolific/task/{slug}/?PROLIFIC_PID=" + PROLIFIC_PID.upper()
            + "&STUDY_ID={study}&SESSION_ID=" + PROLIFIC_SESSION, 400, 400, 400),
        Row("GET", "/prolific/task/{slug}/?PROLIFIC_PID=" + PROLIFIC_PID + "&STUDY_ID="
            + PROLIFIC_SESSION + "&SESSION_ID=" + PROLIFIC_SESSION, 404, 404, 404),
        Row("POST", "/prolific/task/{slug}/", 405, 405, 405, data={})],
    "prolific/task/<slug:slug>/submit/": [
        Row("GET", "/prolific/task/{slug}/submit/", 405, 405, 405),
        Row("POST", "/prolific/task/{slug}/submit/", 400, 400, 400,
            data={"task_token": "forged"}, json=True)],
    "prolific/task/<slug:slug>/finish/": [
        Row("POST", "/prolific/task/{slug}/finish/", 400, 400, 400,
            data={"task_token": "forged"}, json=True)],
    # h24dash: a project's answers by what they count (staff: every worker's work).
    "api/projects/<slug:slug>/counts/": [
        Row("GET", "/api/projects/{slug}/counts/", DRF_NO, DRF_NO, 200),
        Row("POST", "/api/projects/{slug}/counts/", DRF_NO, DRF_NO, 405, data={}, json=True)],
    # h24rest: adjudication over the API (the page's rule: see_work to read, decide_annotations
    # to settle); neither an answer picked nor a reference written: 400, nothing stored.
    "api/projects/<slug:slug>/items/<int:item_id>/adjudication/": [
        Row("GET", "/api/projects/{slug}/items/{item}/adjudication/", DRF_NO, DRF_NO, 200),
        Row("GET", "/api/projects/{slug}/items/999999/adjudication/", DRF_NO, DRF_NO, 404),
        Row("POST", "/api/projects/{slug}/items/{item}/adjudication/", DRF_NO, DRF_NO, 400,
            data={"text": ""}, json=True)],
    # f24ui: the queue's bulk forms (reject the ticked assignments with one message, un-flag
    # the ticked flags); nothing ticked: refused with a message, back to the page.
    "staff/review/<slug:slug>/assignments/reject/": [
        Row("GET", "/staff/review/{slug}/assignments/reject/", LOGIN, NO, 405),
        Row("POST", "/staff/review/{slug}/assignments/reject/", LOGIN, NO, BACK,
            data={"message": "no"})],
    "staff/review/<slug:slug>/flags/dismiss/": [
        Row("GET", "/staff/review/{slug}/flags/dismiss/", LOGIN, NO, 405),
        Row("POST", "/staff/review/{slug}/flags/dismiss/", LOGIN, NO, BACK, data={})],
}


def url_patterns(patterns=None, prefix=""):
    """(route, callback) for every URL the project serves, routes as the resolver prints them."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from url_patterns(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


def test_every_url_pattern_has_a_row():
    served = {route for route, _ in url_patterns() if not route.startswith("admin/")}
    assert served - TABLE.keys() == set(), "URLs without an access row in TABLE"
    assert TABLE.keys() - served == set(), "rows for URLs that no longer exist"


def test_every_admin_url_belongs_to_the_admin_site():
    """Admin URLs are covered by the admin rows below because the admin site serves them all
    (``admin_view`` refuses anyone who is not active staff)."""
    admin_routes = [(route, pattern) for route, pattern in url_patterns()
                    if route.startswith("admin/")]
    assert admin_routes
    for route, pattern in admin_routes:
        module = pattern.callback.__module__
        if getattr(pattern.callback, "view_class", None) is RedirectView:
            continue  # admin/<model>/<id>/ → its change page, which the admin guards
        assert module.startswith(("django.contrib.admin", "django.contrib.auth.admin",
                                  "django.contrib.contenttypes", "annotation.admin")), route


# --- the world the requests run against -----------------------------------------------------


@pytest.fixture
def world(staff_user, annotator_user):
    from annotation.services.workers import worker_for_user

    project = sluice_project(slug="access-demo", items=2)
    hit = publish_hit(project)
    prolific_study_hit(project, study_id=PROLIFIC_STUDY)
    items = list(project.items.order_by("id"))
    other = Worker.objects.create(provider="mturk", external_id="AOTHERWORKER1")
    assignment = Assignment.objects.create(hit=hit, worker=other, provider_assignment_id="ASG1",
                                           status=Assignment.Status.SUBMITTED)
    others = Annotation.objects.create(project=project, item=items[0], worker=other,
                                       assignment=assignment, source="mturk", text="Why not?",
                                       payload={"full_question": "Why not?", "skipped": False})
    own = Annotation.objects.create(project=project, item=items[1],
                                    worker=worker_for_user(user=annotator_user), source="local",
                                    text="Why did he leave?",
                                    payload={"full_question": "Why did he leave?",
                                             "skipped": False})
    flag = Flag.objects.create(project=project, annotation=others, worker=other,
                               assignment=assignment, reason="too_fast", score=1.0,
                               fingerprint=f"too_fast:annotation:{others.pk}")
    from annotation.services.staff_jobs import job_start

    job = job_start(kind="export", project=project, params={"format": "jsonl"}).job
    return {"slug": project.slug, "batch": hit.batch_id, "item": items[0].pk, "job": job.pk,
            "study": PROLIFIC_STUDY,
            "assignment": assignment.pk, "others_annotation": others.pk,
            "own_annotation": own.pk, "flag": flag.pk, "other_worker": other.pk}


def role_user(role: str, staff_user, annotator_user):
    """The account of ``role`` (None for anonymous); the group roles and ``staff_only`` are
    ``is_staff`` accounts made on first use."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    if role == "anonymous":
        return None
    if role in ("staff", "annotator"):
        return staff_user if role == "staff" else annotator_user
    user, created = get_user_model().objects.get_or_create(
        username=f"role-{role}", defaults={"is_staff": True})
    if created and role in GROUP_OF:
        user.groups.add(Group.objects.get(name=GROUP_OF[role]))
    return user


def client_for(role: str, staff_user, annotator_user, **kwargs) -> Client:
    client = Client(**kwargs)
    user = role_user(role, staff_user, annotator_user)
    if user is not None:
        client.force_login(user)
    return client


def send(client: Client, row: Row, world: dict):
    url = row.url.format(**world)
    method = getattr(client, row.method.lower())
    if row.data is None:
        return method(url)
    if row.json:
        return method(url, json.dumps(row.data), content_type="application/json")
    if row.method == "POST":
        return method(url, row.data)
    return method(url, row.data, content_type="application/json")


def snapshot() -> dict:
    """What a refused request must not touch."""
    return {
        "projects": list(Project.objects.order_by("pk").values_list("slug", "name")),
        "items": Item.objects.count(),
        "annotations": list(Annotation.objects.order_by("pk").values_list(
            "pk", "review_status", "payload")),
        "assignments": list(Assignment.objects.order_by("pk").values_list("pk", "status")),
        "flags": list(Flag.objects.order_by("pk").values_list("pk", "status")),
        "workers": list(Worker.objects.order_by("pk").values_list("pk", "is_blocked")),
        "batches": list(Batch.objects.order_by("pk").values_list("pk", "status")),
        "hits": Hit.objects.count(), "bonuses": Bonus.objects.count(),
        "events": StatusEvent.objects.count(),
    }


CASES = [pytest.param(route, k, role, id=f"{role}-{row.method}-{row.url}")
         for route, rows in TABLE.items() for k, row in enumerate(rows) for role in ROLES]


# A logged-in annotator's 302 that goes to a page of theirs, not to the login page ("Previous"
# opens their latest answer).
REDIRECTS_ELSEWHERE = {("annotator", "annotate/<slug:slug>/answers/previous/")}


@pytest.mark.parametrize(("route", "index", "role"), CASES)
def test_access(route, index, role, world, staff_user, annotator_user):
    row = TABLE[route][index]
    client = client_for(role, staff_user, annotator_user)
    response = send(client, row, world)
    assert response.status_code == row.expected(role), (
        f"{role} {row.method} {row.url}: {response.status_code}")
    if row.expected(role) == LOGIN and role == "anonymous" and row.url.startswith(
            ("/staff/", "/annotate/", "/?")) and (role, route) not in REDIRECTS_ELSEWHERE:
        assert "login" in response["Location"]
    elif response.status_code == 302 and row.url.startswith("/staff/"):
        assert "login" not in response["Location"], "a logged-in user sent to log in again"


REFUSED = [pytest.param(route, k, role, id=f"{role}-{row.method}-{row.url}")
           for route, rows in TABLE.items() for k, row in enumerate(rows) for role in ROLES
           if row.method != "GET"
           and row.expected(role) in (LOGIN, LOGIN_JSON, DRF_NO, 400, 404, 405)
           and route != "accounts/logout/"
           # 302 is a refusal only for anonymous visitors (sent to log in); a logged-in
           # user's 302 is a staff form done (BACK).
           and not (row.expected(role) == 302 and role != "anonymous")]


@pytest.mark.parametrize(("route", "index", "role"), REFUSED)
def test_refused_requests_change_nothing(route, index, role, world, staff_user,
                                         annotator_user):
    row = TABLE[route][index]
    before = snapshot()
    send(client_for(role, staff_user, annotator_user), row, world)
    assert snapshot() == before


# --- CSRF -----------------------------------------------------------------------------------

# The only state-changing endpoints without Django's CSRF check: MTurk's iframe withholds our
# cookies, and Prolific participants hold no cookie credential at all, so these require a
# server-signed task token instead (see frontend.annotate_views).
CSRF_EXEMPT = {"mturk/task/<slug:slug>/submit/", "mturk/task/<slug:slug>/finish/",
               "prolific/task/<slug:slug>/submit/", "prolific/task/<slug:slug>/finish/"}

CSRF_CASES = [pytest.param(route, k, id=f"{row.method}-{row.url}")
              for route, rows in TABLE.items() for k, row in enumerate(rows)
              if row.method in ("POST", "PUT", "PATCH", "DELETE") and route not in CSRF_EXEMPT
              and row.staff not in (405,)]


@pytest.mark.parametrize(("route", "index"), CSRF_CASES)
def test_state_changing_requests_need_the_csrf_token(route, index, world, staff_user,
                                                     annotator_user):
    """Logged in (session cookie) but without the CSRF token: refused, nothing changes."""
    row = TABLE[route][index]
    role = "staff" if row.staff != LOGIN else "annotator"
    client = client_for(role, staff_user, annotator_user, enforce_csrf_checks=True)
    before = snapshot()
    response = send(client, row, world)
    assert response.status_code == 403
    assert snapshot() == before


# --- the admin ----------------------------------------------------------------------------


def admin_urls():
    urls = ["/admin/", "/admin/annotation/", "/admin/auth/user/"]
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        urls.append(f"/admin/{meta.app_label}/{meta.model_name}/")
        if model_admin.has_add_permission.__func__ is not ReadOnlyWorkMixin.has_add_permission:
            urls.append(f"/admin/{meta.app_label}/{meta.model_name}/add/")
    return urls


@pytest.mark.parametrize("role", ("anonymous", "annotator", "staff"))
def test_admin_is_for_staff_only(role, world, staff_user, annotator_user):
    client = client_for(role, staff_user, annotator_user)
    for url in admin_urls():
        response = client.get(url)
        if role == "staff":
            assert response.status_code == 200, url
        else:
            assert response.status_code == 302, url
            assert response["Location"].startswith("/admin/login/"), url
    refused = client.post("/admin/annotation/project/add/",
                          {"slug": "by-admin", "name": "x", "kind": "sluice"})
    if role != "staff":
        assert refused.status_code == 302
        assert not Project.objects.filter(slug="by-admin").exists()


def test_admin_decision_actions_follow_the_same_rule(world, django_user_model):
    """The admin's decision actions need what the pages and the API need (``change_<model>``,
    ``annotation/roles.py``), not just the changelist's view permission."""
    from django.contrib.auth.models import Permission


    viewer = django_user_model.objects.create_user("viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_assignment"))
    approve = {"action": "approve", "_selected_action": [world["assignment"]], "apply": "yes",
               "message": "fine"}
    looking = Client()
    looking.force_login(viewer)
    assert looking.get("/admin/annotation/assignment/").status_code == 200
    before = snapshot()
    looking.post("/admin/annotation/assignment/", approve)
    assert snapshot() == before

    reviewer = Client()
    reviewer.force_login(role_user("reviewer", None, None))
    reviewer.post("/admin/annotation/assignment/", approve)
    assert Assignment.objects.get(pk=world["assignment"]).status == "approved"


# --- the admin's model pages × roles, and workers' raw provider ids (issue 26, point 1) ------

RAW_ID = "AOTHERWORKER1"  # ``world``'s MTurk worker


def _admin_page_rows() -> list[tuple[str, str]]:
    """(url, model name) of every registered model's changelist, and of the change and history
    pages of the objects ``world`` makes."""
    rows = []
    for model in admin.site._registry:
        meta = model._meta
        rows.append((f"/admin/{meta.app_label}/{meta.model_name}/", meta.model_name))
    for model_name, suffix in (("worker", "{other_worker}"),
                               ("annotation", "{others_annotation}"),
                               ("assignment", "{assignment}"), ("flag", "{flag}"),
                               ("project", "{project_id}")):
        rows.append((f"/admin/annotation/{model_name}/{suffix}/change/", model_name))
        rows.append((f"/admin/annotation/{model_name}/{suffix}/history/", model_name))
    return rows


ADMIN_PAGES = _admin_page_rows()
#: The models a role may open in the admin (any of Django's view or change permissions).
ADMIN_MODELS = {
    "reviewer": {"project", "item", "annotation", "batch", "assignment", "flag", "worker"},
    "researcher": {"project", "item", "annotation", "batch", "assignment", "flag", "worker"},
}
#: Who sees a worker's raw provider id (``roles.may_see_worker_ids``: ``view_worker``).
SEES_RAW_IDS = {"researcher", "staff"}


def admin_expected(role: str, model_name: str) -> int:
    if role in ("anonymous", "annotator"):
        return 302  # to the admin's login page
    if role == "staff":
        return 200
    return 200 if model_name in ADMIN_MODELS.get(role, ()) else 403


ADMIN_CASES = [pytest.param(url, model_name, role, id=f"{role}-{url}")
               for url, model_name in ADMIN_PAGES for role in ROLES]


@pytest.mark.parametrize(("url", "model_name", "role"), ADMIN_CASES)
def test_admin_model_pages(url, model_name, role, world, staff_user, annotator_user):
    """Every admin model page, as every role: who may open it, and whether a worker's raw
    provider id shows on it (only for ``SEES_RAW_IDS``; before, reviewers saw WorkerIds on the
    worker list, change and history pages)."""
    from annotation.models import Project as ProjectModel

    client = client_for(role, staff_user, annotator_user)
    world = {**world, "project_id": ProjectModel.objects.get(slug=world["slug"]).pk}
    response = client.get(url.format(**world))
    assert response.status_code == admin_expected(role, model_name), url
    if response.status_code == 200:
        assert (RAW_ID in response.content.decode()) == (
            role in SEES_RAW_IDS and model_name == "worker" and "/history/" not in url), url


@pytest.mark.parametrize("role", ["reviewer", "researcher", "staff"])
@pytest.mark.parametrize("model_name", ["worker", "annotation", "assignment", "flag"])
def test_admin_finds_work_by_raw_id_only_for_those_who_may_see_it(model_name, role, world,
                                                                  staff_user, annotator_user):
    """Before: ``/admin/annotation/annotation/?q=<WorkerId>`` mapped a raw id to that worker's
    answers for a reviewer."""
    client = client_for(role, staff_user, annotator_user)
    pseudonym = Worker.objects.get(external_id=RAW_ID).anonymous_id
    page = client.get(f"/admin/annotation/{model_name}/", {"q": RAW_ID})
    assert page.status_code == 200
    found = page.context["cl"].result_count
    if role in SEES_RAW_IDS:
        assert found >= 1
    else:
        assert found == 0 and pseudonym not in page.content.decode()
    lookup = "external_id" if model_name == "worker" else "worker__external_id"
    filtered = client.get(f"/admin/annotation/{model_name}/", {lookup: RAW_ID})
    if role not in SEES_RAW_IDS:
        assert filtered.status_code == 400
