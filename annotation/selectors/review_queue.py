"""The review queue, one page at a time: open flags grouped by assignment (``hit``), by worker,
or by answer, each group with its totals, the groups of highest score first.

The queue used to render every open flag of the project on one page (11,299 flags, 15.5 MB of
HTML and 8 s at 1,000,000 answers, issue 21). Now one statement reads the project's open flags
through ``flag_project_status`` (their number, not the answers', bounds it), groups them, and
returns the ``PAGE_GROUPS`` groups after the keyset cursor with the ids of their
``FLAGS_PER_GROUP`` highest flags; a second statement loads those flags with everything the page
renders. Keyset, not OFFSET: the page after ``(score, key)`` is the groups whose highest score is
lower, or equal with a greater key; any page costs the same.

Group keys (integers, so a cursor is two numbers):

* ``hit``: the assignment of the flag or of its answer; 0 for work outside a HIT and
  worker-level flags;
* ``worker``: the flag's worker or its answer's; 0 for none;
* ``answer``: the flagged answer (every flag on it in one row); a flag on no answer (a worker
  or an assignment) is a group of its own, keyed by minus its id.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection

from ..models import Flag, Project
from .annotate import SOURCE_RELATIONS

GROUPINGS = ("hit", "worker", "answer")
#: Groups on one page of the queue.
PAGE_GROUPS = 20
#: Flags shown in one group (its highest scores); its totals count them all.
FLAGS_PER_GROUP = 10

# The answer's column is read by primary key, one probe per flag, in a scalar subquery: as a
# join the planner hashed every answer of the table (a sequential scan of 1,000,000 rows).
_ANSWER = "(SELECT a.{column} FROM annotation_annotation a WHERE a.id = f.annotation_id)"
_KEYS = {
    "hit": f"COALESCE(f.assignment_id, {_ANSWER.format(column='assignment_id')}, 0)",
    "worker": f"COALESCE(f.worker_id, {_ANSWER.format(column='worker_id')}, 0)",
    "answer": "COALESCE(f.annotation_id, -f.id)",
}


class BadCursor(ValueError):
    """``?after=`` is not ``<score>:<key>``."""


@dataclass(frozen=True)
class Cursor:
    score: float
    key: int

    @classmethod
    def parse(cls, text: str) -> Cursor:
        score, sep, key = text.partition(":")
        try:
            if not sep:
                raise ValueError
            cursor = cls(float(score), int(key))
        except ValueError:
            raise BadCursor(f"after={text!r} is not a page of the queue "
                            "(<score>:<key>, from a Next link)") from None
        if cursor.score != cursor.score or abs(cursor.score) == float("inf"):
            raise BadCursor(f"after={text!r} is not a page of the queue (a finite score)")
        return cursor

    def __str__(self) -> str:
        return f"{self.score!r}:{self.key}"


@dataclass
class QueueGroup:
    key: int
    top_score: float
    flag_total: int  # open flags in the group
    answer_total: int  # flagged answers in the group
    flags: list[Flag] = field(default_factory=list)  # the FLAGS_PER_GROUP highest

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.top_score, self.key)


@dataclass
class QueuePage:
    groups: list[QueueGroup]
    group_total: int  # groups in the whole queue
    flag_total: int  # open flags in the whole queue
    next_cursor: Cursor | None  # None on the last page


def open_flag_page(*, project: Project, by: str, after: Cursor | None = None,
                   size: int = PAGE_GROUPS, per_group: int = FLAGS_PER_GROUP,
                   worker_id: int | None = None) -> QueuePage:
    """One page of the open-flag queue (two statements at any size; one when it is empty);
    with ``worker_id``, only the flags on that worker or their answers (the dashboard's
    worker table links here)."""
    if by not in GROUPINGS:
        raise ValueError(f"group the queue by one of {', '.join(GROUPINGS)}, not {by!r}")
    key = _KEYS[by]
    worker_sql, worker_params = "", []
    if worker_id is not None:
        worker_sql, worker_params = f"AND {_KEYS['worker']} = %s", [worker_id]
    after_sql, after_params = "", []
    if after is not None:
        after_sql = "WHERE g.top < %s OR (g.top = %s AND g.k > %s)"
        after_params = [after.score, after.score, after.key]
    page_sql = _page_sql_postgresql if connection.vendor == "postgresql" else _page_sql_portable
    sql, shown_params = page_sql(key=key, worker_sql=worker_sql, after_sql=after_sql)
    params = [project.pk, Flag.Status.OPEN, *worker_params, *shown_params(
        after_params=after_params, limit=size + 1, per_group=per_group)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    groups: dict[int, QueueGroup] = {}
    group_total, flag_total = rows[0][:2]  # totals LEFT JOIN the page: at least one row
    for _, _, k, top, flags, answers, shown in rows:
        if k is None:  # the page is empty (no open flag, or a cursor past the last group)
            continue
        group = groups.get(k)
        if group is None:
            group = groups[k] = QueueGroup(key=k, top_score=top, flag_total=flags,
                                           answer_total=answers)
        # PostgreSQL: one row per group, its shown flags' ids in an array; portable: one row
        # per shown flag.
        group.flags.extend(shown if isinstance(shown, list) else
                           [shown] if shown is not None else [])
    ordered = list(groups.values())
    more = len(ordered) > size
    ordered = ordered[:size]
    wanted = [flag_id for group in ordered for flag_id in group.flags]
    loaded = _flags_for_page(wanted, project.kind) if wanted else {}
    for group in ordered:
        group.flags = [loaded[flag_id] for flag_id in group.flags if flag_id in loaded]
    return QueuePage(groups=ordered, group_total=int(group_total or 0),
                     flag_total=int(flag_total or 0),
                     next_cursor=ordered[-1].cursor if more else None)


def _flags_for_page(ids: list[int], kind: str) -> dict[int, Flag]:
    """The page's flags with everything the queue renders (one statement, ≤ a page of ids).

    Only the source material of the project's kind is joined (``SOURCE_RELATIONS``, as the
    task pages do): the other kinds' five tables were joined for nothing, and planning the
    25-table statement took 16–25 ms, as long as running it (135 flags, load ~9)."""
    sources = SOURCE_RELATIONS.get(kind) or sorted({
        relation for relations in SOURCE_RELATIONS.values() for relation in relations})
    return Flag.objects.filter(pk__in=ids).select_related(
        "worker__user",
        "assignment__worker__user",
        "assignment__hit__batch",
        "annotation__worker__user",
        "annotation__superseded_by",
        "annotation__assignment__worker__user",
        "annotation__assignment__hit__batch",
        *(f"annotation__item__{relation}" for relation in sources),
    ).in_bulk()


# The CTE reads the project's open flags once (flag_project_status); ``g`` groups them.
_OPEN_FLAGS = """
        WITH open_flags AS (
            SELECT f.id, f.score, f.annotation_id, {key} AS k
            FROM {table} f
            WHERE f.project_id = %s AND f.status = %s {worker_sql}
        ), g AS (
            SELECT k, MAX(score) AS top, COUNT(*) AS flags,
                   COUNT(DISTINCT annotation_id) AS answers{shown}
            FROM open_flags GROUP BY k
        ), totals AS (
            SELECT COUNT(*) AS group_total, COALESCE(SUM(flags), 0) AS flag_total FROM g
        )"""


def _open_flags(*, key: str, worker_sql: str, shown: str) -> str:
    return _OPEN_FLAGS.format(key=key, table=Flag._meta.db_table, worker_sql=worker_sql,
                              shown=shown)


def _page_sql_postgresql(*, key: str, worker_sql: str, after_sql: str):
    """(statement, the parameters after the project's and the worker's as a function): one
    row per group of the page, the ids of its ``per_group`` highest flags in an array
    taken while grouping: no second pass over the open flags. The portable statement's
    second pass (the page's groups' flags ranked) was planned as a nested loop of every open
    flag against every group of the page when ``annotation_flag`` had no statistics (87 of
    the 122 ms of the queue by worker at 12,554 open flags, issue 21)."""
    shown = ",\n                   (ARRAY_AGG(id ORDER BY score DESC, id))[1:%s] AS shown"
    sql = f"""{_open_flags(key=key, worker_sql=worker_sql, shown=shown)}
        , page AS (
            SELECT g.k, g.top, g.flags, g.answers, g.shown FROM g {after_sql}
            ORDER BY g.top DESC, g.k LIMIT %s
        )
        SELECT totals.group_total, totals.flag_total, page.k, page.top, page.flags,
               page.answers, page.shown
        FROM totals LEFT JOIN page ON TRUE
        ORDER BY page.top DESC, page.k
    """  # noqa: S608 — the key expressions are _KEYS', every value a parameter
    return sql, lambda *, after_params, limit, per_group: [per_group, *after_params, limit]


def _page_sql_portable(*, key: str, worker_sql: str, after_sql: str):
    """(statement, parameters as ``_page_sql_postgresql``'s): one row per shown flag (SQLite
    has no ordered array aggregate): the page's groups, then their flags ranked by a window."""
    sql = f"""{_open_flags(key=key, worker_sql=worker_sql, shown="")}
        , page AS (
            SELECT g.k, g.top, g.flags, g.answers FROM g {after_sql}
            ORDER BY g.top DESC, g.k LIMIT %s
        ), ranked AS (
            SELECT o.id, o.k, ROW_NUMBER() OVER (PARTITION BY o.k ORDER BY o.score DESC, o.id)
                   AS rank
            FROM open_flags o WHERE o.k IN (SELECT k FROM page)
        )
        SELECT totals.group_total, totals.flag_total, shown.k, shown.top, shown.flags,
               shown.answers, shown.id
        FROM totals LEFT JOIN (
            SELECT page.k, page.top, page.flags, page.answers, ranked.id, ranked.rank
            FROM page LEFT JOIN ranked ON ranked.k = page.k AND ranked.rank <= %s
        ) shown ON 1 = 1
        ORDER BY shown.top DESC, shown.k, shown.rank
    """  # noqa: S608 — the key expressions are _KEYS', every value a parameter
    return sql, lambda *, after_params, limit, per_group: [*after_params, limit, per_group]
