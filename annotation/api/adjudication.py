"""``/api/projects/<slug>/items/<id>/adjudication/``: adjudicate one item over the API.

``GET`` lists every answer to the item (``selectors.adjudication.item_answers``, as the
adjudication page shows them) and its reference if one is settled; ``POST`` settles the
reference through ``services.adjudication.item_reference_set``, the one writer the page and
``manage.py review adjudicate`` call too: one of the answers (``answer``) or a written
``text`` / ``rating``. Staff only: reading needs ``see_work``, settling ``decide_annotations``
(as on the page). A refused reference answers 400 naming the field and changes nothing.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Item, ItemReference
from ..selectors import adjudication as adjudication_selectors
from ..services.adjudication import MAX_REFERENCE_CHARS, PICKABLE_STATES, item_reference_set
from .errors import validation_error_response
from .permissions import action_permission


class ReferenceBodySerializer(serializers.Serializer):
    answer = serializers.IntegerField(required=False, allow_null=True, default=None,
                                      min_value=1, max_value=2**63 - 1,
                                      help_text="pick this answer (counted or imported) of "
                                                "the item as its reference")
    text = serializers.CharField(required=False, allow_blank=True, default="",
                                 max_length=MAX_REFERENCE_CHARS + 1000, trim_whitespace=False,
                                 help_text="or write the reference (text kinds)")
    rating = serializers.CharField(required=False, allow_blank=True, default="", max_length=20,
                                   help_text="or write the reference rating, 1-5 "
                                             "(plausibility)")
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000,
                                 help_text="why, for the other reviewers")


class AnswerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    worker = serializers.CharField(help_text="the worker's pseudonym")
    source = serializers.CharField()
    state = serializers.CharField()
    text = serializers.CharField(help_text="the answer's words (empty for a rating)")
    rating = serializers.FloatField(allow_null=True)
    pickable = serializers.BooleanField(help_text="may be picked as the reference")


class ReferenceSerializer(serializers.Serializer):
    chosen = serializers.IntegerField(allow_null=True,
                                      help_text="the answer picked; null: written")
    text = serializers.CharField()
    rating = serializers.FloatField(allow_null=True)
    note = serializers.CharField()
    decided_by = serializers.CharField(allow_null=True)
    decided_at = serializers.DateTimeField()


class ItemAdjudicationSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    external_id = serializers.CharField()
    answers = AnswerSerializer(many=True)
    answers_total = serializers.IntegerField(help_text="answers to the item (the list shows "
                                                       "the newest when there are more)")
    reference = ReferenceSerializer(allow_null=True)


def reference_dict(reference: ItemReference | None) -> dict | None:
    if reference is None:
        return None
    return {"chosen": reference.chosen_id, "text": reference.text, "rating": reference.rating,
            "note": reference.note,
            "decided_by": reference.decided_by.get_username() if reference.decided_by else None,
            "decided_at": reference.decided_at}


class ItemAdjudication(APIView):
    permission_classes = [action_permission(GET="see_work", POST="decide_annotations")]

    def _item(self, slug: str, item_id: int) -> Item:
        return get_object_or_404(Item.objects.select_related("project"), pk=item_id,
                                 project__slug=slug)

    @extend_schema(responses=ItemAdjudicationSerializer,
                   summary="Every answer to one item and its settled reference")
    def get(self, request, slug: str, item_id: int):
        item = self._item(slug, item_id)
        answers, total = adjudication_selectors.item_answers(item)
        return Response({
            "item": item.pk, "external_id": item.external_id,
            "answers": [{"id": answer.pk, "worker": answer.worker.anonymous_id,
                         "source": answer.source, "state": answer.state,
                         "text": "" if answer.rating is not None else
                         adjudication_selectors.answer_words(answer),
                         "rating": answer.rating, "pickable": answer.state in PICKABLE_STATES}
                        for answer in answers],
            "answers_total": total,
            "reference": reference_dict(adjudication_selectors.item_reference(item)),
        })

    @extend_schema(request=ReferenceBodySerializer, responses={200: ReferenceSerializer},
                   summary="Settle one item's reference: pick an answer or write it")
    def post(self, request, slug: str, item_id: int):
        item = self._item(slug, item_id)
        body = ReferenceBodySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            reference = item_reference_set(item_id=item.pk, actor=request.user,
                                           answer_id=data["answer"], text=data["text"],
                                           rating=data["rating"], note=data["note"])
        except ValidationError as error:
            return validation_error_response(error)
        return Response(reference_dict(reference))


urlpatterns = [
    path("projects/<slug:slug>/items/<int:item_id>/adjudication/",
         ItemAdjudication.as_view(), name="api-item-adjudication"),
]
