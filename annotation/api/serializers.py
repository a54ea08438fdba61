from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from ..models import Annotation, Item, Project
from ..selectors.exports import ItemSourceValues, item_source
from ..selectors.qc import anonymous_worker_id
from ..services.projects import (
    EDITABLE_FIELDS,
    project_fields_validate,
    validate_flag_settings,
    validate_live_check_settings,
    validate_redundancy,
)


class ProjectSerializer(serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = ["id", "slug", "name", "kind", "instructions", "redundancy", "reward_cents",
                  "live_check_settings", "flag_settings", "estimated_minutes", "status",
                  "workers_everyone", "licence", "attribution", "gold_rate",
                  "gold_failures_stop", "budget_cents", "budget_currency", "created_at"]
        read_only_fields = ["id", "created_at"]

    def validate(self, attrs):
        if self.instance is not None:
            for frozen in ("slug", "kind"):
                if frozen in attrs and attrs[frozen] != getattr(self.instance, frozen):
                    raise serializers.ValidationError(
                        {frozen: "cannot change once the project exists"})
        # The one validation of a project's settings (the console's, the admin's, the CLI's).
        try:
            project_fields_validate({name: value for name, value in attrs.items()
                                     if name in EDITABLE_FIELDS})
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from error
        return attrs

    def validate_redundancy(self, value):
        return _django_validated(validate_redundancy, value)

    def validate_flag_settings(self, value):
        return _django_validated(validate_flag_settings, value)

    def validate_live_check_settings(self, value):
        return _django_validated(validate_live_check_settings, value)


def _django_validated(validate, value):
    """``validate(value)`` (a service's check), its Django ValidationError as DRF's (a 400)."""
    try:
        return validate(value)
    except DjangoValidationError as error:
        raise serializers.ValidationError(error.messages) from error


class ItemSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    source = serializers.SerializerMethodField()

    class Meta:
        model = Item
        fields = ["id", "project", "external_id", "split", "group_key", "position", "is_gold",
                  "source", "created_at"]
        read_only_fields = fields

    def get_source(self, item: Item) -> dict:
        """The source material the item points at, flattened for API clients (the one shape:
        ``selectors.exports.item_source``, which the Hugging Face export writes too)."""
        return item_source(ItemSourceValues(item))


class AnnotationSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    worker = serializers.SerializerMethodField()
    # An answer without a category (every kind but decontextualization) has null, one of the
    # schema's values, not "" (which the enum of categories does not hold).
    category = serializers.ChoiceField(choices=Annotation.Category.choices, allow_null=True,
                                       read_only=True)

    class Meta:
        model = Annotation
        fields = ["id", "project", "item", "worker", "source", "payload", "category", "rating",
                  "text", "skipped", "edit_operations", "started_at", "submitted_at",
                  "duration_ms", "client_warnings", "overridden_warnings", "server_warnings",
                  "review_status", "provenance", "created_at"]
        read_only_fields = fields

    def to_representation(self, annotation: Annotation) -> dict:
        data = super().to_representation(annotation)
        data["category"] = data["category"] or None
        return data

    def get_worker(self, annotation: Annotation) -> str:
        # Staff see pseudonyms too: the API is also used to build shareable exports.
        return annotation.worker.anonymous_id


class AnnotationRows:
    """``AnnotationSerializer``'s output for the plain rows of
    ``selectors.projects.annotation_rows``: the same fields, in the same order, each written as
    the serializer writes it (the times by its own ``DateTimeField``s), without a model instance
    or a field object per value. The list uses it; a test holds it equal to the serializer.
    The schema stays the serializer's."""

    TIMES = ("started_at", "submitted_at", "created_at")

    def __init__(self) -> None:
        fields = AnnotationSerializer().fields
        self._time_fields = {name: fields[name] for name in self.TIMES}
        self._pseudonyms: dict[int, str] = {}

    def _pseudonym(self, row: dict) -> str:
        worker_id = row["worker_id"]
        name = self._pseudonyms.get(worker_id)
        if name is None:
            name = self._pseudonyms[worker_id] = anonymous_worker_id(
                row["worker__provider"], row["worker__external_id"])
        return name

    def represent(self, rows: list[dict]) -> list[dict]:
        started, submitted, created = (self._time_fields[name].to_representation
                                       for name in self.TIMES)
        return [{
            "id": row["id"],
            "project": row["project__slug"],
            "item": row["item_id"],
            "worker": self._pseudonym(row),
            "source": row["source"],
            "payload": row["payload"],
            "category": row["category"] or None,
            "rating": None if row["rating"] is None else float(row["rating"]),
            "text": row["text"],
            "skipped": row["skipped"],
            "edit_operations": row["edit_operations"],
            "started_at": None if row["started_at"] is None else started(row["started_at"]),
            "submitted_at": (None if row["submitted_at"] is None
                             else submitted(row["submitted_at"])),
            "duration_ms": None if row["duration_ms"] is None else int(row["duration_ms"]),
            "client_warnings": row["client_warnings"],
            "overridden_warnings": row["overridden_warnings"],
            "server_warnings": row["server_warnings"],
            "review_status": row["review_status"],
            "provenance": row["provenance"],
            "created_at": None if row["created_at"] is None else created(row["created_at"]),
        } for row in rows]

