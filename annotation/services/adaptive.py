"""Adaptive redundancy on the Django side: how many judgements an item should have now.

The rule is ``qc.redundancy.adaptive_target`` (pure, over ``needs_more``); the project's policy is
``flag_settings["adaptive_redundancy"]`` (None: fixed redundancy per split). An item's target
is the policy's ``start`` until it has that many counted answers, then one more than it has
while ``needs_more`` says its answers disagree (never above ``maximum``). Batch planning asks
for ``target - coverage`` assignments an item. Ratings (plausibility) and decontext categories
follow the policy; free-text kinds have no margin to measure and keep fixed redundancy.

The local work queue follows the same target: it is stored on the item
(``Item.target_answers``, NULL until the item has answers: the policy's ``start``), written
with the item's ``filled`` mark by every writer of counted answers
(``annotation.services.annotations``, "Filled items"), so choosing the next item compares a
column and never runs the rule.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q

from qc.redundancy import RedundancyPolicy, adaptive_target

from ..models import Annotation, Item, Project, Split, TaskKind


def adaptive_policy(project: Project) -> RedundancyPolicy | None:
    """The project's adaptive policy, or None (fixed redundancy; free-text kinds). On every
    next-item choice and submit: a project without one costs a dict lookup, and a policy is
    read once per distinct setting (``flag_settings`` is validated when written,
    ``qc.flags.FlagSettings``)."""
    values = (project.flag_settings or {}).get("adaptive_redundancy")
    if values is None or project.kind not in (TaskKind.PLAUSIBILITY, TaskKind.DECONTEXT):
        return None
    return _policy(tuple(sorted(values.items())))


@functools.lru_cache(maxsize=256)
def _policy(values: tuple) -> RedundancyPolicy:
    return RedundancyPolicy.from_dict(dict(values))


def slots_by_split(project: Project) -> dict[str, int]:
    """split -> counted answers that fill an item of it without a stored target
    (``Item.target_answers`` NULL): the policy's ``start``, or the split's fixed redundancy."""
    policy = adaptive_policy(project)
    return {split: policy.start if policy is not None else project.redundancy_for(split)
            for split in Split.values}


def _counted_answers(project: Project, item_ids) -> dict[int, list]:
    """item id -> its counted answers (ratings or categories; problem reports, which carry
    none, left out), oldest first."""
    numeric = project.kind == TaskKind.PLAUSIBILITY
    field = "rating" if numeric else "category"
    answers: dict[int, list] = defaultdict(list)
    for item_id, value in (Annotation.objects.filter(item_id__in=item_ids,
                                                     state=Annotation.State.COUNTED)
                           .exclude(**{f"{field}__isnull": True} if numeric else {field: ""})
                           .order_by("id").values_list("item_id", field)):
        answers[item_id].append(value)
    return answers


def adaptive_targets(*, project: Project, item_ids: list[int]) -> dict[int, int] | None:
    """item id -> target judgements under the project's policy; None when it has none."""
    policy = adaptive_policy(project)
    if policy is None:
        return None
    numeric = project.kind == TaskKind.PLAUSIBILITY
    answers = _counted_answers(project, item_ids)
    return {item_id: adaptive_target(answers[item_id], policy, numeric=numeric)
            for item_id in item_ids}


def item_adaptive_refresh(*, item: Item) -> None:
    """After a counted answer to ``item`` (of an adaptive project) is stored, under the Item
    row lock (the submit's): its target from its counted answers, and its ``filled`` mark
    (counted answers, problem reports included, at least the target), in one UPDATE."""
    project = item.project
    policy = adaptive_policy(project)
    numeric = project.kind == TaskKind.PLAUSIBILITY
    field = "rating" if numeric else "category"
    values = list(Annotation.objects.filter(item_id=item.pk, state=Annotation.State.COUNTED)
                  .order_by("id").values_list(field, flat=True))
    answers = [value for value in values if value is not None and value != ""]
    target = adaptive_target(answers, policy, numeric=numeric)
    Item.objects.filter(pk=item.pk).update(target_answers=target, filled=len(values) >= target)
    item.target_answers = target


#: Extra judgements an item gets beyond ``start`` under the default policy
#: (``RedundancyPolicy()``), measured by ``python3 bench/bench_crowd.py --seeds 20`` with 30%
#: spammers (docs/qc.md, "Adaptive redundancy"): the prior of the cost estimate until a
#: project has measured its own (:data:`MEASURED_ITEMS` items past ``start``).
PRIOR_EXTRA = {TaskKind.PLAUSIBILITY: 2.2, TaskKind.DECONTEXT: 1.8}
MEASURED_ITEMS = 30


@dataclass(frozen=True)
class ExpectedJudgements:
    """Judgements an item is expected to get under a policy: ``start`` + ``extra``, where
    ``extra`` is measured on the project's ``measured_items`` items that reached ``start``
    (each: its counted answers or target, whichever is more, minus ``start``), or the
    bench's prior (:data:`PRIOR_EXTRA`) while fewer than :data:`MEASURED_ITEMS` did."""

    start: int
    maximum: int
    extra: float
    measured_items: int

    @property
    def per_item(self) -> float:
        return min(float(self.maximum), self.start + self.extra)

    @property
    def measured(self) -> bool:
        return self.measured_items >= MEASURED_ITEMS


def expected_judgements(*, project: Project, policy: RedundancyPolicy) -> ExpectedJudgements:
    """The project's expected judgements an item (see :class:`ExpectedJudgements`)."""
    rows = list(Item.objects.filter(project=project, is_gold=False)
                .annotate(counted=Count("annotations",
                                        filter=Q(annotations__state=Annotation.State.COUNTED)))
                .filter(counted__gte=policy.start).values_list("counted", "target_answers"))
    if len(rows) >= MEASURED_ITEMS:
        extra = sum(max(counted, target or 0) - policy.start
                    for counted, target in rows) / len(rows)
    else:
        extra = PRIOR_EXTRA[project.kind]
    return ExpectedJudgements(start=policy.start, maximum=policy.maximum, extra=extra,
                              measured_items=len(rows))
