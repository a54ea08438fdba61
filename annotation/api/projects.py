"""The REST API under /api/ (schema at /api/schema/).

Everyone logged in can list projects and their own annotations; items, other workers'
annotations and every write need the model permission (``annotation.api.permissions``: the
``researcher`` and ``reviewer`` groups, or a superuser).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import permissions, routers, serializers, viewsets

from ..models import Annotation, Project
from ..roles import may
from ..selectors import projects as project_selectors
from ..selectors.access import work_refusal
from ..services.projects import project_create, project_update
from .pagination import KeysetPagination
from .permissions import action_permission
from .serializers import (
    AnnotationRows,
    AnnotationSerializer,
    ItemSerializer,
    ProjectSerializer,
)


class ProjectViewSet(viewsets.ModelViewSet):
    """Projects (datasets being built). Writes are for staff; there is no DELETE: removing a
    project cascades through its items and annotations, which the admin does with a
    confirmation page listing everything it removes, never one API call."""

    http_method_names = ["get", "post", "put", "patch", "head", "options"]
    serializer_class = ProjectSerializer
    permission_classes = [action_permission(GET=None, POST="add_projects",
                                            PUT="change_projects", PATCH="change_projects")]
    lookup_field = "slug"

    def get_queryset(self):
        projects = Project.objects.order_by("slug")
        user = self.request.user
        if getattr(self, "swagger_fake_view", False) or may(user, "see_projects"):
            return projects
        # An annotator sees the projects they may work on now (annotation/selectors/access.py).
        return projects.filter(pk__in=[project.pk for project in projects
                                       if work_refusal(project=project, user=user) is None])

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        slug, kind = data.pop("slug"), data.pop("kind")
        name = data.pop("name", None) or slug.replace("-", " ").capitalize()
        try:
            serializer.instance = project_create(slug=slug, kind=kind, name=name, **data)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from error

    def perform_update(self, serializer):
        fields = {name: value for name, value in serializer.validated_data.items()
                  if name not in ("slug", "kind")}
        try:
            serializer.instance = project_update(project=serializer.instance, **fields)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from error


PROJECT_FILTER = OpenApiParameter("project", str, description="only this project's (a slug)")


def _project_id(slug: str) -> int | None:
    """The id of the project ``slug`` names (None: no such project, and so an empty list).

    Lists filter on the id, not on a join to the slug: joined, the planner estimated the rows
    of an unknown project (3,333 of 200,000 items), sorted every item of the project and
    spilled to disk for ``?offset=10000`` (1.5 s at 1,000,000 answers, issue 21); with the id,
    it walks the primary key to the page."""
    return Project.objects.filter(slug=slug).values_list("pk", flat=True).first()


@extend_schema_view(list=extend_schema(parameters=[
    PROJECT_FILTER,
    OpenApiParameter("split", str, description="only items of this split (train, dev, test)")]))
class ItemViewSet(viewsets.ReadOnlyModelViewSet):
    """Items, filterable with ``?project=<slug>&split=<split>``; staff only. Paged by id
    (``?after=``, ``annotation.api.pagination.KeysetPagination``).

    Items are created by importers and moved between splits by split manifests, never here.
    """

    serializer_class = ItemSerializer
    permission_classes = [action_permission(GET="see_items")]
    pagination_class = KeysetPagination

    def get_queryset(self):
        items = project_selectors.item_list(split=self.request.query_params.get("split"))
        project = self.request.query_params.get("project")
        if project:
            items = items.filter(project_id=_project_id(project))
        return items


@extend_schema_view(list=extend_schema(parameters=[PROJECT_FILTER]))
class AnnotationViewSet(viewsets.ReadOnlyModelViewSet):
    """Annotations, filterable with ``?project=<slug>``, paged by id (``?after=``). Workers
    see only their own; staff see all. Annotations are written by the task pages and MTurk
    collection, and reviewed in the review queue, never edited here."""

    serializer_class = AnnotationSerializer
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = KeysetPagination

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular reading the types
            return Annotation.objects.none()
        annotations = project_selectors.annotation_list()
        user = self.request.user
        if not may(user, "see_work"):
            annotations = annotations.filter(Q(worker__user=user))
        project = self.request.query_params.get("project")
        if project:
            annotations = annotations.filter(project_id=_project_id(project))
        return annotations

    def list(self, request, *args, **kwargs):
        """A page of answers read as plain rows and written by ``AnnotationRows`` (exactly
        ``AnnotationSerializer``'s output, without a model instance per answer)."""
        rows = self.paginate_queryset(project_selectors.annotation_rows(
            self.filter_queryset(self.get_queryset())))
        return self.get_paginated_response(AnnotationRows().represent(rows))


router = routers.DefaultRouter()
router.register("projects", ProjectViewSet, basename="project")
router.register("items", ItemViewSet, basename="item")
router.register("annotations", AnnotationViewSet, basename="annotation")

urlpatterns = router.urls
