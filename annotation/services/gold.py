"""Gold items: items with a known answer that check the workers.

A researcher marks them (an import column, ``docs/importing.md``; the console's gold form),
``gold_answer_validate`` checks the answer against the task; they are

* served to every worker at the project's ``gold_rate`` (:func:`gold_item_due`,
  :func:`gold_item_for`; the work queue asks, ``services.work_queue``) and never fill
  (``services.annotations.slots_required``): each worker may answer each gold item once;
* never exported as data and never counted as progress (the export and progress selectors
  leave them out);
* checked by the gold rule (``qc.flags.gold_flags`` over ``services.qc.gold_rows``): a QC run
  flags a worker who failed too many, and with ``gold_failures_stop`` the worker is stopped
  in the project as soon as an answer of theirs makes the rule flag them
  (:func:`gold_answer_checked`, called by every submit of a gold item).
"""

from __future__ import annotations

import math

from django.db.models import Count, Q

from qc import flags
from qc.gold import gold_due, gold_item_choice

from ..models import Annotation, Flag, Item, Project, Worker, WorkerProjectBlock
from .audit import record_status_event

#: Why the gold rule stopped a worker (the block's reason, before the rule's evidence).
STOPPED_REASON = "failed gold items"


# --- serving ----------------------------------------------------------------------------------


def _answer_counts(project: Project, worker: Worker) -> tuple[int, int]:
    """(answers, answers to gold items) of ``worker`` in ``project`` (latest versions)."""
    counts = (Annotation.objects.filter(worker=worker, project=project)
              .exclude(state=Annotation.State.SUPERSEDED)
              .aggregate(total=Count("pk"), gold=Count("pk", filter=Q(item__is_gold=True))))
    return counts["total"], counts["gold"]


def gold_item_due(*, project: Project, worker: Worker, answering: int | None = None) -> bool:
    """Whether the next item served to ``worker`` should be gold: the k-th item a worker is
    served is gold when ``floor(k × gold_rate)`` exceeds the gold items they answered (a rate
    of 0.1 makes every tenth one gold), and so are their first ``gold_first`` items
    (``flag_settings``; ``qc.gold.gold_due``). ``answering``: the id of an item whose answer
    is being stored and counts already. One query (two with ``answering``); none when the project
    serves no gold."""
    if project.gold_rate <= 0:
        return False
    total, gold = _answer_counts(project, worker)
    if answering is not None:
        total += 1
        gold += Item.objects.filter(pk=answering, is_gold=True).exists()
    first = (project.flag_settings or {}).get("gold_first", flags.FlagSettings.gold_first)
    return gold_due(answered=total, gold_answered=gold, rate=project.gold_rate, first=first)


def gold_item_for(*, project: Project, worker: Worker, excluding: int | None = None
                  ) -> int | None:
    """The id of a gold item of ``project`` that ``worker`` has not answered (nor
    ``excluding``), or None: a different order per worker, so that workers comparing notes
    do not see the same gold items in the same places."""
    answered = Annotation.objects.filter(worker=worker, project=project,
                                         item__is_gold=True).values("item_id")
    candidates = list(Item.objects.filter(project=project, is_gold=True)
                      .exclude(pk__in=answered).exclude(pk=excluding)
                      .order_by("pk").values_list("pk", flat=True))
    return gold_item_choice(candidates, worker.pk or 0)


def gold_items_per_page(*, project: Project) -> list[int]:
    """The gold items a batch mixes into its HITs and Prolific places (none at rate 0)."""
    if project.gold_rate <= 0:
        return []
    return list(Item.objects.filter(project=project, is_gold=True).order_by("pk")
                .values_list("pk", flat=True))


def with_gold_items(item_ids: list[int], gold_pool: list[int], *, rate: float,
                    items_before: int, gold_before: int) -> tuple[int, ...]:
    """The items of one HIT (or Prolific place): ``item_ids`` with gold items mixed in, spread
    among them rather than at the end, so that over the batch gold items are ``rate`` of all
    the items placed (``items_before`` of the batch's own items and ``gold_before`` gold
    items went into its earlier pages; a page holds each gold item at most once). Consecutive
    pages take the next gold items of ``gold_pool``."""
    if not gold_pool or rate <= 0:
        return tuple(item_ids)
    owed = math.floor((items_before + len(item_ids)) * rate / (1 - rate) + 1e-9) - gold_before
    count = max(0, min(owed, len(gold_pool)))
    chosen = [gold_pool[(gold_before + index) % len(gold_pool)] for index in range(count)]
    mixed = list(item_ids)
    for index, gold_id in enumerate(chosen):
        mixed.insert((index + 1) * len(item_ids) // (count + 1) + index, gold_id)
    return tuple(mixed)


# --- checking ---------------------------------------------------------------------------------


def gold_answer_checked(*, annotation: Annotation) -> bool:
    """After ``annotation`` (an answer to a gold item) is stored: when the gold rule now flags
    its worker, raise their ``failed_gold`` flag with the evidence (how many gold items they
    answered and failed; a QC run keeps the same flag) and, if the project says so and no
    reviewer dismissed that flag, stop them in the project (a project block whose reason
    carries the same evidence). Whether the worker is stopped in the project now."""
    # Imported here: services.qc imports services.splits, which imports the submit service,
    # which imports this module (through the work queue).
    from .qc import WORKER, FlagCandidate, gold_rows

    project = Project.objects.get(pk=annotation.project_id)
    worker = annotation.worker
    answers, gold = gold_rows(project, worker=worker)
    found = flags.gold_flags(answers, gold, flags.FlagSettings.from_dict(project.flag_settings))
    if not found:
        return False
    rule = found[0]
    candidate = FlagCandidate(WORKER, worker.pk, rule.reason_code, float(rule.score), rule.detail)
    flag, _ = Flag.objects.update_or_create(
        project=project, fingerprint=candidate.fingerprint,
        defaults={"worker": worker, "reason": candidate.reason, "score": candidate.score,
                  "detail": candidate.detail, "raised_by": Flag.RaisedBy.QC})
    # A reviewer who dismissed the flag has decided: the worker is not stopped for it.
    if not project.gold_failures_stop or flag.status == Flag.Status.DISMISSED:
        return False
    reason = f"{STOPPED_REASON}: {rule.detail}"
    _, created = WorkerProjectBlock.objects.get_or_create(worker=worker, project=project,
                                                          defaults={"reason": reason})
    if created:
        record_status_event(kind="worker_blocked", worker=worker, old="unblocked",
                            new="blocked", detail={"reason": reason, "project": project.slug})
    return True
