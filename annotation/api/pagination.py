"""The API's pagination: DRF's limit/offset with a ceiling on ``?limit=``."""

from rest_framework.pagination import LimitOffsetPagination


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """``?limit=`` above ``max_limit`` (e.g. 9223372036854775808, which no database can take
    as a LIMIT) gives ``max_limit`` rows. An offset past the end is already an empty page
    without a query."""

    max_limit = 1000
