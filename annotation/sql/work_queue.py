"""The statement that chooses a local annotator's next item (``services.work_queue``).

One statement picks the next item: ``COALESCE((A), (B1), (B2), (C))`` where each branch is a
``LIMIT 1`` sub-select and both SQLite and PostgreSQL evaluate COALESCE's arguments lazily, so
a later branch runs only when the earlier ones found nothing. LAST is the item the worker did
last in this project (the one just submitted, when the caller says so):

* A   continue LAST's group (a conversation in turn order, the other fillers of a sentence);
* B1  from LAST upwards in id order (a worker who has done nothing yet: from their pivot in the
  project's id range, so that concurrent annotators start on different items rather than all
  on the first open one);
* B2  the ids below that;
* C   (conversations only) any open item, lowest turn first -- a conversation abandoned after
  its first turns is not orphaned.

Performance contract (the annotator hot path, see docs/annotating.md "Load"): every branch walks
an index in order and stops at the first open item, so the cost grows neither with the
project's size nor with the number of items the worker has done (B1 starts after their past
work instead of walking over it) nor with the number of filled items (B1, B2 and C walk the
partial index of the items not marked filled, ``Item.filled``); the per-candidate work is two
index probes (the worker's own answer; the item's counted answers, on the (item, state)
index; its leases, on the (item, worker) unique index); LAST is one probe of the (worker,
project, id) index.

"Not done by the worker" is a scalar sub-select, not NOT EXISTS: PostgreSQL turns NOT EXISTS
into an anti-join that reads all of the worker's annotations (11,000 rows per call for a worker
with 2,000 items done, tests/frontend/test_hot_path.py); a scalar sub-select stays one index
probe per candidate, on both databases.

Only model table names and constants are formatted in; every value is a named parameter.
"""

from __future__ import annotations

from ..models import Annotation, Item, ItemLease, Split

ITEM_TABLE = Item._meta.db_table
ANNOTATION_TABLE = Annotation._meta.db_table
LEASE_TABLE = ItemLease._meta.db_table

# An item is open for the worker: not marked filled (``Item.filled``; written as the partial
# index ``item_unfilled``'s condition, so that both databases walk that index), not done by
# them, and fewer counted answers plus live leases of others (who have not answered it yet: an
# answer replaces its lease) than required: the item's stored adaptive target
# (``Item.target_answers``, ``services.adaptive``), else its split's number.
# Gold items are never open here: every worker may answer them, at the project's gold rate
# (``services.gold_queue``).
_OPEN = f"""i.project_id = %(project_id)s AND NOT i.filled AND NOT i.is_gold
  AND (SELECT d.id FROM {ANNOTATION_TABLE} d WHERE d.worker_id = %(worker_id)s
       AND d.item_id = i.id LIMIT 1) IS NULL
  AND (SELECT COUNT(*) FROM {ANNOTATION_TABLE} c
       WHERE c.item_id = i.id AND c.state = %(counted)s)
    + (SELECT COUNT(*) FROM {LEASE_TABLE} l
       WHERE l.item_id = i.id AND l.expires_at > %(now)s AND l.worker_id <> %(worker_id)s
         AND (SELECT e.id FROM {ANNOTATION_TABLE} e WHERE e.item_id = l.item_id
              AND e.worker_id = l.worker_id LIMIT 1) IS NULL)
    < COALESCE(i.target_answers, {{required}})"""  # noqa: S608
_LAST = f"""(SELECT m.item_id FROM {ANNOTATION_TABLE} m WHERE m.worker_id = %(worker_id)s
  AND m.project_id = %(project_id)s ORDER BY m.id DESC LIMIT 1)"""  # noqa: S608
_GROUP_OF = f"""i.group_key = (SELECT h.group_key FROM {ITEM_TABLE} h WHERE h.id = {{last}})"""  # noqa: S608
_PIVOT = f"""(SELECT MIN(p.id) FROM {ITEM_TABLE} p WHERE p.project_id = %(project_id)s)
  + CAST(((SELECT MAX(q.id) FROM {ITEM_TABLE} q WHERE q.project_id = %(project_id)s)
          - (SELECT MIN(r.id) FROM {ITEM_TABLE} r WHERE r.project_id = %(project_id)s))
         * %(pivot)s AS BIGINT)"""  # noqa: S608
_FIRST_OF_GROUP = f"""i.position = (SELECT MIN(f.position) FROM {ITEM_TABLE} f
  WHERE f.project_id = i.project_id AND f.group_key = i.group_key)"""  # noqa: S608
# The default of the item's split (fixed redundancy, or the adaptive policy's ``start``), from
# one parameter per split.
_REQUIRED = ("CASE i.split "
             + " ".join(f"WHEN '{split}' THEN %(required_{split})s" for split in Split.values)
             + " ELSE 1 END")


def open_item_condition() -> str:
    """The condition on an item aliased ``i``: open for worker ``%(worker_id)s`` in project
    ``%(project_id)s`` (parameters ``counted``, ``now`` and ``required_<split>`` as below)."""
    return _OPEN.format(required=_REQUIRED)


def next_item_id(*, conversation: bool, lock: bool, after_given: bool,
                 skip_after: bool = False) -> str:
    """SQL for the id of the worker's next item (NULL when none), with the named parameters
    ``project_id``, ``worker_id``, ``counted`` (``Annotation.State.COUNTED``), ``now`` (leases
    expiring before it are over), ``pivot`` (the
    worker's fraction of the id range), ``required_<split>`` per split and, when
    ``after_given``, ``after_item_id`` (LAST; otherwise read from the worker's latest answer).

    ``conversation``: new conversations start at their first turn, and branch C is added.
    ``lock``: the chosen Item row is locked while the statement runs (PostgreSQL, SKIP LOCKED:
    simultaneous choosers get different items). ``skip_after`` (with ``after_given``): LAST
    itself is never chosen — the choice is made before the worker's answer to it is stored,
    and chooses what it would choose after."""
    open_sql = open_item_condition()
    if skip_after:
        open_sql = f"{open_sql} AND i.id <> %(after_item_id)s"
    last = "%(after_item_id)s" if after_given else _LAST
    # From after LAST; from the worker's pivot when there is no LAST (the pivot sub-selects run
    # only then: COALESCE is lazy).
    start = f"COALESCE({last} + 1, {_PIVOT})"
    suffix = " LIMIT 1" + (" FOR UPDATE OF i SKIP LOCKED" if lock else "")
    first = f" AND {_FIRST_OF_GROUP}" if conversation else ""

    def branch(condition: str, order: str) -> str:
        return (f"(SELECT i.id FROM {ITEM_TABLE} i WHERE {open_sql} AND {condition} "  # noqa: S608
                f"ORDER BY {order}{suffix})")

    branches = [
        branch(_GROUP_OF.format(last=last), "i.position, i.id"),
        branch(f"i.id >= {start}{first}", "i.id"),
        branch(f"i.id < {start}{first}", "i.id"),
    ]
    if conversation:
        branches.append(branch("1 = 1", "i.position, i.id"))
    return f"COALESCE({', '.join(branches)})"


#: Lease item ``%(item_id)s`` to worker ``%(worker_id)s`` until ``%(expires_at)s``, served to them
#: at ``%(served_at)s``, or move their lease's end and serving there (PostgreSQL and SQLite >=
#: 3.24 both take ON CONFLICT … DO UPDATE): one statement whether the lease is new or not.
LEASE = f"""INSERT INTO {LEASE_TABLE} (item_id, worker_id, expires_at, served_at)
VALUES (%(item_id)s, %(worker_id)s, %(expires_at)s, %(served_at)s)
ON CONFLICT (item_id, worker_id) DO UPDATE
SET expires_at = excluded.expires_at, served_at = excluded.served_at"""  # noqa: S608

#: The alias under which ``chosen_and_leased`` offers the leased item's id.
LEASED = "leased"


def chosen_and_leased(choose: str) -> str:
    """PostgreSQL: a WITH clause that chooses (``choose``: ``next_item_id``'s SQL, with row
    locks) and leases the chosen item as LEASE does, in the statement it prefixes (whose
    condition reads the id as ``(SELECT item_id FROM leased)``). One statement in autocommit
    instead of BEGIN, choose, lease, COMMIT: the chosen row stays locked until the statement
    ends, by which time its lease is committed with it."""
    return (f"WITH {LEASED} AS (INSERT INTO {LEASE_TABLE} "  # noqa: S608
            f"(item_id, worker_id, expires_at, served_at) "
            f"SELECT chosen.id, %(worker_id)s, %(expires_at)s, %(served_at)s "
            f"FROM (SELECT {choose} AS id) chosen WHERE chosen.id IS NOT NULL "
            f"ON CONFLICT (item_id, worker_id) DO UPDATE "
            f"SET expires_at = excluded.expires_at, served_at = excluded.served_at "
            f"RETURNING item_id) ")
