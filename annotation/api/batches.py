"""Staff-only REST endpoints for MTurk and Prolific batches: list, detail, and launch with a
cost estimate.

``POST /api/batches/launch/`` without ``"confirm": true`` only answers the plan's estimate;
with it (and ``confirmed_total_cents`` equal to that estimate) the batch is launched.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Batch, Project, Split
from ..selectors.batches import (
    batch_assignment_status_counts,
    batch_events,
    batch_hit_status_counts,
    batches_with_counts,
)
from ..services.batches.common import DEFAULT_LOCALES
from ..services.batches.plan import (
    LAUNCH_PROVIDERS,
    PROLIFIC_DEVICES,
    LaunchOptions,
    batch_launch,
    batch_plan,
)
from .errors import validation_error_response
from .permissions import action_permission

INT32 = 2**31 - 1
MAX_REWARD_CENTS = 1_000_000  # $10,000 per assignment


class BatchSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    hit_count = serializers.IntegerField(read_only=True)
    published_hit_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Batch
        fields = ["id", "project", "provider", "live", "status", "title", "reward_cents",
                  "items_per_hit", "provider_hit_type_id", "error", "selection",
                  "qualification_requirements", "estimated_minutes", "participant_filters",
                  "device_compatibility", "hit_count", "published_hit_count",
                  "created_at", "updated_at"]


class LaunchSerializer(serializers.Serializer):
    project = serializers.SlugRelatedField(slug_field="slug", queryset=Project.objects.all())
    title = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    keywords = serializers.CharField(required=False, allow_blank=True, default="")
    # Bounds wider than LaunchOptions.validate's rules, which name the field in their answer;
    # these only keep numbers a database column or a timedelta cannot hold out of the plan.
    reward_cents = serializers.IntegerField(min_value=1, max_value=MAX_REWARD_CENTS)
    items_per_hit = serializers.IntegerField(min_value=1, max_value=INT32, default=5)
    splits = serializers.ListField(child=serializers.ChoiceField(Split.choices),
                                   required=False, default=list)
    item_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1), required=False,
        default=list, max_length=100_000)
    assignments = serializers.IntegerField(required=False, allow_null=True, default=None,
                                           min_value=1, max_value=INT32)
    lifetime_seconds = serializers.IntegerField(default=7 * 24 * 3600, min_value=0,
                                                max_value=INT32)
    assignment_duration_seconds = serializers.IntegerField(default=3600, min_value=0,
                                                           max_value=INT32)
    auto_approval_delay_seconds = serializers.IntegerField(default=3 * 24 * 3600, min_value=0,
                                                           max_value=INT32)
    locales = serializers.ListField(child=serializers.CharField(max_length=2), required=False,
                                    default=list(DEFAULT_LOCALES), max_length=300)
    min_percent_approved = serializers.IntegerField(required=False, allow_null=True,
                                                    default=None, min_value=0, max_value=100)
    min_hits_approved = serializers.IntegerField(required=False, allow_null=True, default=None,
                                                 min_value=0, max_value=INT32)
    qualification_id = serializers.IntegerField(required=False, allow_null=True, default=None,
                                                min_value=1, max_value=2**63 - 1)
    provider = serializers.ChoiceField(
        [*LAUNCH_PROVIDERS, "local"], default="mturk",
        help_text="mturk or prolific (local annotators need no batch; refused with a reason)")
    live = serializers.BooleanField(default=False)
    estimated_minutes = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=INT32,
        help_text="Prolific (required there): the study's estimated completion time in "
                  "minutes; assignment_duration_seconds is its maximum allowed time")
    devices = serializers.ListField(
        child=serializers.ChoiceField(PROLIFIC_DEVICES), required=False,
        default=["desktop"], max_length=3, help_text="Prolific: the devices a study admits")
    first_languages = serializers.ListField(
        child=serializers.CharField(max_length=20), required=False, default=list,
        max_length=100,
        help_text="Prolific: ids of the first-language filter's choices participants must have")
    confirm = serializers.BooleanField(default=False)
    confirmed_total_cents = serializers.IntegerField(required=False, allow_null=True,
                                                     default=None, min_value=0,
                                                     max_value=2**63 - 1)

    def launch_options(self) -> LaunchOptions:
        data = dict(self.validated_data)
        for name in ("project", "confirm", "confirmed_total_cents"):
            data.pop(name)
        data["splits"] = tuple(data["splits"])
        data["item_ids"] = tuple(data["item_ids"])
        data["locales"] = tuple(code.upper() for code in data["locales"])
        data["devices"] = tuple(data["devices"])
        data["first_languages"] = tuple(data["first_languages"])
        return LaunchOptions(**data)


class BatchEventSerializer(serializers.Serializer):
    kind = serializers.CharField()
    old_status = serializers.CharField()
    new_status = serializers.CharField()
    hit = serializers.IntegerField(allow_null=True)
    assignment = serializers.IntegerField(allow_null=True)
    detail = serializers.JSONField()
    at = serializers.DateTimeField()


class BatchDetailSerializer(BatchSerializer):
    """A batch with its HITs and assignments counted by status and its last 100 events."""

    hit_statuses = serializers.DictField(child=serializers.IntegerField(), read_only=True)
    assignment_statuses = serializers.DictField(child=serializers.IntegerField(),
                                                read_only=True)
    events = BatchEventSerializer(many=True, read_only=True)

    class Meta(BatchSerializer.Meta):
        fields = [*BatchSerializer.Meta.fields, "hit_statuses", "assignment_statuses", "events"]


class AdaptiveCostSerializer(serializers.Serializer):
    """With adaptive redundancy: what finishing the batch's items is expected to cost, and
    costs at most (``annotation.services.batches.plan.AdaptiveCost``)."""

    start = serializers.IntegerField()
    maximum = serializers.IntegerField()
    expected_per_item = serializers.FloatField(
        help_text="judgements an item is expected to end at: start + the extra rate")
    measured_items = serializers.IntegerField(
        help_text="the project's items past start the extra rate is measured on")
    measured = serializers.BooleanField(
        help_text="false: too few measured items, the bench's prior is used")
    items = serializers.IntegerField()
    planned_judgements = serializers.IntegerField(help_text="judgements this batch asks")
    expected_judgements = serializers.FloatField()
    maximum_judgements = serializers.IntegerField()
    expected_cents = serializers.IntegerField(
        help_text="at this batch's cost per judgement (total_cents / planned_judgements)")
    maximum_cents = serializers.IntegerField()


class EstimateSerializer(serializers.Serializer):
    """The plan's cost estimate (``CostEstimate.as_dict``) and the items it skips."""

    hits = serializers.IntegerField()
    assignments = serializers.IntegerField()
    reward_cents = serializers.IntegerField()
    fee_cents = serializers.IntegerField(help_text="MTurk's commission or Prolific's service fee")
    vat_cents = serializers.IntegerField(help_text="VAT on Prolific's service fee (0 on MTurk)")
    provider = serializers.CharField()
    total_cents = serializers.IntegerField()
    total_dollars = serializers.CharField()
    skipped_items = serializers.IntegerField()
    adaptive = AdaptiveCostSerializer(
        allow_null=True, help_text="null without an adaptive redundancy policy")


class LaunchAnswerSerializer(serializers.Serializer):
    launched = serializers.BooleanField()
    estimate = EstimateSerializer()
    batch = BatchSerializer(required=False)


class BatchListView(APIView):
    permission_classes = [action_permission(GET="see_batches")]

    @extend_schema(operation_id="batches_list", responses=BatchSerializer(many=True),
                   parameters=[OpenApiParameter("project", str, description="a project slug")])
    def get(self, request):
        batches = batches_with_counts(project_slug=request.query_params.get("project"))[:200]
        return Response(BatchSerializer(batches, many=True).data)


class BatchDetailView(APIView):
    permission_classes = [action_permission(GET="see_batches")]

    @extend_schema(responses=BatchDetailSerializer)
    def get(self, request, batch_id: int):
        batch = get_object_or_404(batches_with_counts(), pk=batch_id)
        return Response({
            **BatchSerializer(batch).data,
            "hit_statuses": batch_hit_status_counts(batch=batch),
            "assignment_statuses": batch_assignment_status_counts(batch=batch),
            "events": [{"kind": event.kind, "old_status": event.old_status,
                        "new_status": event.new_status, "hit": event.hit_id,
                        "assignment": event.assignment_id, "detail": event.detail,
                        "at": event.at} for event in batch_events(batch=batch, limit=100)],
        })


class BatchLaunchView(APIView):
    """Estimate (default) or launch (``confirm: true`` + the confirmed total) a batch."""

    permission_classes = [action_permission(POST="launch_batches")]

    @extend_schema(request=LaunchSerializer,
                   responses={200: LaunchAnswerSerializer, 201: LaunchAnswerSerializer,
                              400: OpenApiResponse(description="the fields in error")})
    def post(self, request):
        serializer = LaunchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        project = serializer.validated_data["project"]
        try:
            options = serializer.launch_options()
            plan = batch_plan(project=project, options=options)
        except ValidationError as error:
            return validation_error_response(error)
        estimate = {**plan.estimate.as_dict(), "skipped_items": len(plan.skipped_item_ids)}
        if not serializer.validated_data["confirm"]:
            return Response({"launched": False, "estimate": estimate})
        confirmed = serializer.validated_data["confirmed_total_cents"]
        if confirmed is None:
            return Response({"confirmed_total_cents": [
                "send the estimate's total_cents you confirmed"]},
                status=status.HTTP_400_BAD_REQUEST)
        try:
            batch = batch_launch(project=project, options=options,
                                 confirmed_total_cents=confirmed, created_by=request.user)
        except ValidationError as error:
            return validation_error_response(error)
        batch = batches_with_counts().get(pk=batch.pk)
        return Response({"launched": True, "estimate": estimate,
                         "batch": BatchSerializer(batch).data},
                        status=status.HTTP_201_CREATED)


urlpatterns = [
    path("batches/", BatchListView.as_view(), name="api-batches"),
    path("batches/launch/", BatchLaunchView.as_view(), name="api-batch-launch"),
    path("batches/<int:batch_id>/", BatchDetailView.as_view(), name="api-batch-detail"),
]
