from django.urls import path

from . import annotate_views, views

app_name = "frontend"

urlpatterns = [
    path("", views.home, name="home"),
    path("annotate/<slug:slug>/", annotate_views.annotate, name="annotate"),
    path("annotate/<slug:slug>/submit/", annotate_views.annotate_submit, name="annotate-submit"),
    path("annotate/<slug:slug>/lease/", annotate_views.annotate_lease, name="annotate-lease"),
    path("annotate/<slug:slug>/progress/", annotate_views.annotate_progress,
         name="annotate-progress"),
    path("annotate/<slug:slug>/answers/", annotate_views.annotate_answers,
         name="annotate-answers"),
    path("annotate/<slug:slug>/answers/previous/", annotate_views.annotate_previous,
         name="annotate-previous"),
    path("annotate/<slug:slug>/answers/<int:annotation_id>/", annotate_views.annotate_answer,
         name="annotate-answer"),
    path("annotate/<slug:slug>/revise/", annotate_views.annotate_revise,
         name="annotate-revise"),
    path("mturk/task/<slug:slug>/", annotate_views.mturk_task, name="mturk-task"),
    path("mturk/task/<slug:slug>/submit/", annotate_views.mturk_submit, name="mturk-submit"),
    path("mturk/task/<slug:slug>/finish/", annotate_views.mturk_finish, name="mturk-finish"),
    path("prolific/task/<slug:slug>/", annotate_views.prolific_task, name="prolific-task"),
    path("prolific/task/<slug:slug>/submit/", annotate_views.prolific_submit,
         name="prolific-submit"),
    path("prolific/task/<slug:slug>/finish/", annotate_views.prolific_finish,
         name="prolific-finish"),
]
