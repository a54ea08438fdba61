"""The API's pagination: keyset pages (``?after=``) for the lists that grow with the work
(items, annotations); DRF's limit/offset with a ceiling on ``?limit=`` for the short ones. Every
parameter is validated in one place (``annotation/api/query_params.py``)."""

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination, LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.utils.urls import remove_query_param, replace_query_param

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


class KeysetPagination(BasePagination):
    """Pages of a list ordered by id, by keyset: ``?after=<id>`` gives the rows with a greater
    id, ``?limit=`` of them (default ``PAGE_SIZE``, at most 1,000); ``next`` is the URL of the
    following page (``after`` = the last id shown), null on the last one. Any page costs the
    same: one index range from ``after``, never a count or a skip over the rows before it.

    ``?offset=`` still skips rows from the start of the (filtered) list, up to
    ``max_offset`` (10,000): skipping is a scan of every row skipped (4.9 s at offset 900,000
    of 1,000,000 answers, issue 21), so deeper pages are reached with ``after``; a larger
    offset is refused (400) rather than served slowly. The response has no ``count``: counting
    a million rows for every page was most of a page's time.
    """

    max_limit = 1000
    max_offset = 10_000
    after_query_param = "after"
    limit_query_param = "limit"
    offset_query_param = "offset"

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.limit = self._limit(request)
        after = self._integer(request, self.after_query_param, 2**63 - 1)
        offset = self._integer(request, self.offset_query_param, self.max_offset) or 0
        if after is not None:
            queryset = queryset.filter(pk__gt=after)
        rows = list(queryset.order_by("pk")[offset:offset + self.limit + 1])
        self.has_next = len(rows) > self.limit
        rows = rows[:self.limit]
        # Model instances, or plain rows (``values()``, the answers' list) keyed by "id".
        self.last_pk = (None if not rows else
                        rows[-1]["id"] if isinstance(rows[-1], dict) else rows[-1].pk)
        return rows

    def _limit(self, request) -> int:
        limit = whole_number(request, self.limit_query_param, minimum=1)
        return min(api_settings.PAGE_SIZE or 100 if limit is None else limit, self.max_limit)

    @staticmethod
    def _integer(request, name: str, highest: int) -> int | None:
        value = whole_number(request, name, minimum=0)
        if value is not None and value > highest:
            detail = (f"a whole number from 0 to {highest}" if name != "offset" else
                      f"a whole number from 0 to {highest}; page further with ?after=<id> "
                      "(the next link)")
            raise ValidationError({name: [detail]})
        return value

    def get_next_link(self) -> str | None:
        if not self.has_next:
            return None
        url = remove_query_param(self.request.build_absolute_uri(), self.offset_query_param)
        return replace_query_param(url, self.after_query_param, self.last_pk)

    def get_paginated_response(self, data):
        return Response({"next": self.get_next_link(), "results": data})

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["results"],
            "properties": {
                "next": {"type": "string", "nullable": True, "format": "uri",
                         "example": "http://api.example.org/accounts/?after=400&limit=100"},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view):
        return [
            {"name": self.limit_query_param, "required": False, "in": "query",
             "description": f"Rows per page (default {api_settings.PAGE_SIZE}, at most "
                            f"{self.max_limit}).",
             "schema": {"type": "integer", "minimum": 1}},
            {"name": self.after_query_param, "required": False, "in": "query",
             "description": "Only rows with a greater id (the `next` link sets it): any "
                            "page is as fast as the first.",
             "schema": {"type": "integer", "minimum": 0}},
            {"name": self.offset_query_param, "required": False, "in": "query",
             "description": f"Rows to skip first, at most {self.max_offset} (a skip reads "
                            "every row skipped); page further with `after`.",
             "schema": {"type": "integer", "minimum": 0, "maximum": self.max_offset}},
        ]
