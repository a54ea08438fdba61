"""The staff console's decision pages (issue 24), mounted at ``/staff/``: a worker's page,
the block that asks before it acts, and the work bulk approvals leave out. (Folded into
``frontend/staff/urls.py`` at merge.)"""

from django.urls import path

from . import held, workers

app_name = "staff_decisions"

urlpatterns = [
    path("workers/<int:worker_id>/", workers.worker_detail, name="worker"),
    path("workers/<int:worker_id>/block/", workers.worker_block, name="worker-block"),
    path("workers/<int:worker_id>/unblock/", workers.worker_unblock, name="worker-unblock"),
    path("projects/<slug:slug>/held/", held.held_work, name="held"),
    path("assignments/<int:assignment_id>/approve-and-bonus/",
         workers.assignment_approve_and_bonus, name="approve-and-bonus"),
]
