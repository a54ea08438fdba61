"""The API's pagination: DRF's limit/offset with a ceiling on ``?limit=``, its parameters
validated (``annotation/api/query_params.py``)."""

from rest_framework.pagination import LimitOffsetPagination

from .query_params import whole_number


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """``?limit=`` above ``max_limit`` (e.g. 9223372036854775807) gives ``max_limit`` rows. An
    offset past the end (any size) is an empty page without a query. A ``limit`` or ``offset``
    that is not one whole number in range is a 400 (not the first page)."""

    max_limit = 1000

    def get_limit(self, request):
        limit = whole_number(request, self.limit_query_param, minimum=1)
        return self.default_limit if limit is None else min(limit, self.max_limit)

    def get_offset(self, request):
        return whole_number(request, self.offset_query_param, minimum=0) or 0

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            minimum = 1 if parameter["name"] == self.limit_query_param else 0
            parameter["schema"] = {**parameter["schema"], "minimum": minimum}
        return parameters
