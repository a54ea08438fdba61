from django.urls import path

from . import review

app_name = "review"

urlpatterns = [
    path("", review.project_list, name="projects"),
    path("<slug:slug>/", review.queue, name="queue"),
    path("<slug:slug>/dashboard/", review.dashboard, name="dashboard"),
    path("<slug:slug>/export/", review.export, name="export"),
    path("<slug:slug>/qc/", review.qc_run, name="qc-run"),
    path("<slug:slug>/assignments/approve/", review.assignments_approve_view,
         name="assignments-approve"),
    path("<slug:slug>/assignments/<int:assignment_id>/decide/", review.assignment_decide_view,
         name="assignment-decide"),
    path("<slug:slug>/assignments/<int:assignment_id>/bonus/", review.bonus_create_view,
         name="bonus"),
    path("<slug:slug>/annotations/<int:annotation_id>/decide/", review.annotation_decide_view,
         name="annotation-decide"),
    path("<slug:slug>/flags/<int:flag_id>/dismiss/", review.flag_dismiss_view, name="flag-dismiss"),
    path("<slug:slug>/workers/<int:worker_id>/block/", review.worker_block_view,
         name="worker-block"),
    path("<slug:slug>/assignments/reject/", review.assignments_reject_view,
         name="assignments-reject"),
    path("<slug:slug>/flags/dismiss/", review.flags_dismiss_view, name="flags-dismiss"),
]
