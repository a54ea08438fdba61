"""The researchers' console under ``/staff/``: one include per area module (each module keeps
its own ``urlpatterns``). ``/staff/review/`` and ``/staff/batches/`` are mounted before this in
``annotation/urls.py``."""

from django.urls import include, path

app_name = "staff"

urlpatterns = [
    path("", include("frontend.staff.projects")),
    path("", include("frontend.staff.splits")),
    path("", include("frontend.staff.exports")),
    path("", include("frontend.staff.imports")),
    path("", include("frontend.staff.invites")),
    path("", include("frontend.staff.browse")),
    path("", include("frontend.staff.gold")),
]
