"""The admin's changelists at a million rows: a bounded count, exact indexed search.

Django's changelist counts its rows twice per page (the filtered count for the paginator and the
full count for "N results (M total)"): ``COUNT(*)`` of 1,000,000 answers each time. And a
``search_fields`` entry without a prefix is ``icontains``: a scan of every answer's text per
search (issue 21). Here:

* ``BoundedCountPaginator`` counts at most ``COUNT_LIMIT`` + 1 rows (``SELECT COUNT(*) FROM
  (… LIMIT n)``); past that the changelist says "more than 10,000" (its pagination template,
  ``admin/annotation/pagination.html``), and its pages stop there: narrow the list with a
  filter or a search to reach the rest;
* ``ScaledChangeListMixin`` turns the full count off (``show_full_result_count``) and uses it.

Search of the big tables (answers, flags, status events) matches whole values on indexed
columns only (see each admin's ``get_search_results``).
"""

from __future__ import annotations

from functools import cached_property

from django.core.paginator import Paginator

#: Rows a changelist counts at most.
COUNT_LIMIT = 10_000


class BoundedCountPaginator(Paginator):
    """A paginator whose count stops at ``COUNT_LIMIT`` + 1 (``capped`` says it did)."""

    limit = COUNT_LIMIT

    @cached_property
    def count(self) -> int:
        return self.object_list[:self.limit + 1].count()

    @property
    def capped(self) -> bool:
        return self.count > self.limit


class ScaledChangeListMixin:
    """For the admins of tables that grow with the work (answers, flags, status events…)."""

    paginator = BoundedCountPaginator
    show_full_result_count = False
