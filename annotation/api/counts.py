"""``GET /api/projects/<slug>/counts/``: a project's answers by what they count.

The definition the home page, the dashboard and ``qc_report --json`` share
(``annotation.selectors.counts``), each count with its label. Staff only (every worker's work).
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Project
from ..selectors.counts import COUNT_LABELS, answer_counts
from .permissions import action_permission


class AnswerCountsSerializer(serializers.Serializer):
    counts = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="answers by what they count")
    labels = serializers.DictField(child=serializers.CharField(),
                                   help_text="what each count counts")


class ProjectAnswerCounts(APIView):
    """The project's answers counted now by state (one grouped statement over its answers)."""

    permission_classes = [action_permission(GET="see_work")]

    @extend_schema(responses=AnswerCountsSerializer)
    def get(self, request, slug: str):
        project = get_object_or_404(Project, slug=slug)
        return Response({"counts": answer_counts(project=project).to_dict(),
                         "labels": COUNT_LABELS})


urlpatterns = [
    path("projects/<slug:slug>/counts/", ProjectAnswerCounts.as_view(),
         name="api-project-counts"),
]
