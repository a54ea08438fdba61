"""Staff-only decision endpoints: the same services as the review pages, the ``review``
command and the admin (``annotation.services.decisions``).

``POST /api/assignments/{id}/approve/`` · ``…/reject/`` (the whole HIT) · ``…/bonus/``;
``POST /api/assignments/approve/`` (many at once; Prolific: one bulk call; never a blocked
worker's) · ``…/reject/`` (many, one message); ``POST /api/assignments/{id}/approve-and-bonus/``;
``POST /api/flags/dismiss/`` (many);
``POST /api/annotations/{id}/approve/`` · ``…/reject/`` (work outside a HIT);
``POST /api/workers/{id}/block/`` · ``…/unblock/``; ``POST /api/flags/{id}/dismiss/``.
A refused decision answers 400 with the reason and changes nothing.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Annotation, Assignment, Flag, Project, Worker
from ..selectors.bonuses import bonus_report
from ..services import decisions
from .errors import validation_error_response
from .permissions import DecidesItsModel


class MessageSerializer(serializers.Serializer):
    message = serializers.CharField(required=False, allow_blank=True, default="",
                                    max_length=4000, help_text="what the worker reads")


class RejectionSerializer(serializers.Serializer):
    message = serializers.CharField(max_length=4000, help_text=(
        "what the worker reads (Prolific: at least 100 characters)"))
    rejection_category = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=32,
        help_text="Prolific (required there): one of its rejection categories, e.g. "
                  "TOO_QUICKLY, FAILED_INSTRUCTIONS, LOW_EFFORT, NO_DATA, OTHER")


class BulkApproveSerializer(serializers.Serializer):
    assignments = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        min_length=1, max_length=1000, help_text="assignment ids")
    message = serializers.CharField(required=False, allow_blank=True, default="",
                                    max_length=4000)


class BulkDecisionSerializer(serializers.Serializer):
    approved = serializers.ListField(child=serializers.IntegerField())


class BulkRejectedSerializer(serializers.Serializer):
    rejected = serializers.ListField(child=serializers.IntegerField())


class BulkDismissedSerializer(serializers.Serializer):
    dismissed = serializers.ListField(child=serializers.IntegerField())


class BonusSerializer(serializers.Serializer):
    amount_cents = serializers.IntegerField(min_value=1, max_value=decisions.MAX_BONUS_CENTS)
    reason = serializers.CharField(max_length=4000, help_text="what the worker reads")
    again = serializers.BooleanField(default=False, help_text=(
        "pay a second bonus for an assignment that already got one"))


class BlockSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=4000, help_text="the provider shows it")
    scope = serializers.ChoiceField(choices=decisions.BLOCK_SCOPES, default="everywhere",
                                    help_text="everywhere (and the provider's block list) or "
                                              "one project")
    project = serializers.SlugField(required=False, allow_blank=True, default="",
                                    help_text="with scope=project: the project's slug")
    pending = serializers.ChoiceField(choices=decisions.PENDING_CHOICES, default="leave",
                                      help_text="the worker's submitted, undecided work in the "
                                                "scope: reject it or leave it for review")
    message = serializers.CharField(required=False, allow_blank=True, default="",
                                    max_length=4000, help_text=(
                                        "with pending=reject: what the worker reads "
                                        "(Prolific: at least 100 characters)"))
    rejection_category = serializers.CharField(required=False, allow_blank=True, default="",
                                               max_length=32)


class UnblockSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)
    project = serializers.SlugField(required=False, allow_blank=True, default="",
                                    help_text="lift the block from this project only")


class NoteSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)


class DecisionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()


class BonusResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    amount_cents = serializers.IntegerField()
    resent = serializers.BooleanField(
        help_text="an unpaid earlier bonus was asked for again (checked, paid at most once)")
    paid = serializers.BooleanField(help_text="the provider has paid it (sent or found paid)")
    message = serializers.CharField(help_text="exactly what became of it, for a person")


class WorkerStateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    is_blocked = serializers.BooleanField(help_text="blocked everywhere")


class BlockResultSerializer(WorkerStateSerializer):
    scope = serializers.CharField()
    rejected_assignments = serializers.ListField(child=serializers.IntegerField())
    rejected_answers = serializers.ListField(child=serializers.IntegerField())
    left_for_review = serializers.IntegerField()
    unconfirmed_left = serializers.IntegerField()
    summary = serializers.CharField()


class DecisionView(APIView):
    """One decision: validate the body, call the service, answer the new state. A refusal by
    the service is a 400 with its reason."""

    permission_classes = [DecidesItsModel]
    model = None
    body = MessageSerializer

    def decide(self, request, obj, data):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def answer(self, result) -> dict:
        return {"id": result.pk, "status": result.status}

    def handle(self, request, pk: int) -> Response:
        obj = get_object_or_404(self.model, pk=pk)
        body = self.body(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            result = self.decide(request, obj, body.validated_data)
        except ValidationError as error:
            return validation_error_response(error)
        return Response(self.answer(result))


class AssignmentApproveView(DecisionView):
    model = Assignment

    def decide(self, request, obj, data):
        return decisions.assignment_approve(assignment_id=obj.pk, actor=request.user,
                                            message=data["message"])

    @extend_schema(request=MessageSerializer, responses={200: DecisionSerializer},
                   summary="Approve a worker's whole HIT (their assignment)")
    def post(self, request, pk: int):
        return self.handle(request, pk)


class AssignmentRejectView(DecisionView):
    model = Assignment
    body = RejectionSerializer

    def decide(self, request, obj, data):
        return decisions.assignment_reject(assignment_id=obj.pk, actor=request.user,
                                           message=data["message"],
                                           rejection_category=data["rejection_category"])

    @extend_schema(request=RejectionSerializer, responses={200: DecisionSerializer},
                   summary="Reject a worker's whole HIT (every answer in the assignment)")
    def post(self, request, pk: int):
        return self.handle(request, pk)


class AssignmentsApproveView(APIView):
    """Approve many assignments at once: all or none (a refusal is a 400 and changes nothing)."""

    permission_classes = [DecidesItsModel]
    model = Assignment

    @extend_schema(request=BulkApproveSerializer, responses={200: BulkDecisionSerializer},
                   operation_id="assignments_bulk_approve",
                   summary="Approve many assignments at once (Prolific: one bulk call)")
    def post(self, request):
        body = BulkApproveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            decided = decisions.assignments_approve(
                assignment_ids=body.validated_data["assignments"], actor=request.user,
                message=body.validated_data["message"])
        except ValidationError as error:
            return validation_error_response(error)
        return Response({"approved": [assignment.pk for assignment in decided]})


class BulkRejectSerializer(RejectionSerializer):
    assignments = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        min_length=1, max_length=1000, help_text="assignment ids")


class BulkDismissSerializer(NoteSerializer):
    flags = serializers.ListField(child=serializers.IntegerField(min_value=1,
                                                                 max_value=2**63 - 1),
                                  min_length=1, max_length=1000, help_text="flag ids")


class ApproveAndBonusSerializer(BonusSerializer):
    message = serializers.CharField(required=False, allow_blank=True, default="",
                                    max_length=4000, help_text="the approval's feedback")
    again = None


class AssignmentsRejectView(APIView):
    """Reject many assignments with one message: all or none."""

    permission_classes = [DecidesItsModel]
    model = Assignment

    @extend_schema(request=BulkRejectSerializer, responses={200: BulkRejectedSerializer},
                   operation_id="assignments_bulk_reject",
                   summary="Reject many assignments with one message (all or none)")
    def post(self, request):
        body = BulkRejectSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            decided = decisions.assignments_reject(
                assignment_ids=data["assignments"], actor=request.user,
                message=data["message"], rejection_category=data["rejection_category"])
        except ValidationError as error:
            return validation_error_response(error)
        return Response({"rejected": [assignment.pk for assignment in decided]})


class FlagsDismissView(APIView):
    """Dismiss many flags at once: all or none."""

    permission_classes = [DecidesItsModel]
    model = Flag

    @extend_schema(request=BulkDismissSerializer, responses={200: BulkDismissedSerializer},
                   operation_id="flags_bulk_dismiss", summary="Dismiss many flags at once")
    def post(self, request):
        body = BulkDismissSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            dismissed = decisions.flags_dismiss(flag_ids=body.validated_data["flags"],
                                                actor=request.user,
                                                note=body.validated_data["note"])
        except ValidationError as error:
            return validation_error_response(error)
        return Response({"dismissed": [flag.pk for flag in dismissed]})


class ApproveAndBonusView(DecisionView):
    model = Assignment
    body = ApproveAndBonusSerializer

    def decide(self, request, obj, data):
        return decisions.assignment_approve_and_bonus(
            assignment_id=obj.pk, actor=request.user, amount_cents=data["amount_cents"],
            reason=data["reason"], message=data["message"])

    def answer(self, result) -> dict:
        return {"id": result.bonus.pk, "amount_cents": result.bonus.amount_cents,
                "resent": result.resent}

    @extend_schema(request=ApproveAndBonusSerializer, responses={200: BonusResultSerializer},
                   summary="Approve a worker's HIT and pay a bonus in one step (both or neither)")
    def post(self, request, pk: int):
        return self.handle(request, pk)


class BonusView(DecisionView):
    model = Assignment
    body = BonusSerializer

    def decide(self, request, obj, data):
        return decisions.bonus_create(assignment_id=obj.pk, actor=request.user, **data)

    def answer(self, result) -> dict:
        _, message = bonus_report(result.bonus.pk)
        result.bonus.refresh_from_db()
        return {"id": result.bonus.pk, "amount_cents": result.bonus.amount_cents,
                "resent": result.resent, "paid": result.bonus.sent_at is not None,
                "message": message}

    @extend_schema(request=BonusSerializer, responses={200: BonusResultSerializer},
                   summary="Pay a bonus for an assignment (re-sends an unpaid one)")
    def post(self, request, pk: int):
        return self.handle(request, pk)


class AnnotationApproveView(DecisionView):
    model = Annotation

    def decide(self, request, obj, data):
        return decisions.annotation_approve(annotation_id=obj.pk, actor=request.user,
                                            message=data["message"])

    def answer(self, result) -> dict:
        return {"id": result.pk, "status": result.review_status}

    @extend_schema(request=MessageSerializer, responses={200: DecisionSerializer},
                   summary="Approve an answer (inside a HIT: the whole HIT)")
    def post(self, request, pk: int):
        return self.handle(request, pk)


class AnnotationRejectView(AnnotationApproveView):
    body = RejectionSerializer

    def decide(self, request, obj, data):
        return decisions.annotation_reject(annotation_id=obj.pk, actor=request.user,
                                           message=data["message"],
                                           rejection_category=data["rejection_category"])

    @extend_schema(request=RejectionSerializer, responses={200: DecisionSerializer},
                   summary="Reject an answer (inside a HIT: the whole HIT)")
    def post(self, request, pk: int):
        return self.handle(request, pk)


class WorkerBlockView(DecisionView):
    model = Worker
    body = BlockSerializer

    def decide(self, request, obj, data):
        return decisions.worker_block(
            worker_id=obj.pk, actor=request.user, reason=data["reason"], scope=data["scope"],
            project_id=_project_id(data["project"]), pending=data["pending"],
            message=data["message"], rejection_category=data["rejection_category"])

    def answer(self, result) -> dict:
        return {"id": result.pk, "is_blocked": result.worker.is_blocked, "scope": result.scope,
                "rejected_assignments": list(result.rejected_assignments),
                "rejected_answers": list(result.rejected_answers),
                "left_for_review": result.left_for_review,
                "unconfirmed_left": result.unconfirmed_left, "summary": result.summary()}

    @extend_schema(request=BlockSerializer, responses={200: BlockResultSerializer},
                   summary="Block a worker everywhere or from one project, rejecting their "
                           "pending work or leaving it for review")
    def post(self, request, pk: int):
        return self.handle(request, pk)


def _project_id(slug: str) -> int | None:
    """The id of the project ``slug`` (None when no slug); an unknown slug is refused."""
    if not slug:
        return None
    project = Project.objects.filter(slug=slug).values_list("pk", flat=True).first()
    if project is None:
        raise ValidationError({"project": f"no project {slug!r}"})
    return project


class WorkerUnblockView(DecisionView):
    model = Worker
    body = UnblockSerializer

    def decide(self, request, obj, data):
        return decisions.worker_unblock(worker_id=obj.pk, actor=request.user,
                                        reason=data["note"],
                                        project_id=_project_id(data["project"]))

    def answer(self, result) -> dict:
        return {"id": result.pk, "is_blocked": result.is_blocked}

    @extend_schema(request=UnblockSerializer, responses={200: WorkerStateSerializer},
                   summary="Lift a worker's block (everywhere, or from one project)")
    def post(self, request, pk: int):
        return self.handle(request, pk)


class FlagDismissView(DecisionView):
    model = Flag
    body = NoteSerializer

    def decide(self, request, obj, data):
        return decisions.flag_dismiss(flag_id=obj.pk, actor=request.user, note=data["note"])

    @extend_schema(request=NoteSerializer, responses={200: DecisionSerializer},
                   summary="Dismiss a flag: the work was looked at and is fine")
    def post(self, request, pk: int):
        return self.handle(request, pk)


urlpatterns = [
    path("assignments/approve/", AssignmentsApproveView.as_view(),
         name="api-assignments-approve"),
    path("assignments/reject/", AssignmentsRejectView.as_view(),
         name="api-assignments-reject"),
    path("assignments/<int:pk>/approve-and-bonus/", ApproveAndBonusView.as_view(),
         name="api-assignment-approve-and-bonus"),
    path("flags/dismiss/", FlagsDismissView.as_view(), name="api-flags-dismiss"),
    path("assignments/<int:pk>/approve/", AssignmentApproveView.as_view(),
         name="api-assignment-approve"),
    path("assignments/<int:pk>/reject/", AssignmentRejectView.as_view(),
         name="api-assignment-reject"),
    path("assignments/<int:pk>/bonus/", BonusView.as_view(), name="api-assignment-bonus"),
    path("annotations/<int:pk>/approve/", AnnotationApproveView.as_view(),
         name="api-annotation-approve"),
    path("annotations/<int:pk>/reject/", AnnotationRejectView.as_view(),
         name="api-annotation-reject"),
    path("workers/<int:pk>/block/", WorkerBlockView.as_view(), name="api-worker-block"),
    path("workers/<int:pk>/unblock/", WorkerUnblockView.as_view(), name="api-worker-unblock"),
    path("flags/<int:pk>/dismiss/", FlagDismissView.as_view(), name="api-flag-dismiss"),
]
