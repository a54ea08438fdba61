"""Adaptive redundancy on the Django side: how many judgements an item should have now.

The rule is ``qc.redundancy.needs_more`` (pure); the project's policy is
``flag_settings["adaptive_redundancy"]`` (None: fixed redundancy per split). An item's target
is the policy's ``start`` until it has that many counted answers, then one more than it has
while ``needs_more`` says its answers disagree (never above ``maximum``). Batch planning asks
for ``target - coverage`` assignments an item. Ratings (plausibility) and decontext categories
follow the policy; free-text kinds have no margin to measure and keep fixed redundancy.
"""

from __future__ import annotations

from collections import defaultdict

from qc.flags import FlagSettings
from qc.redundancy import RedundancyPolicy, needs_more

from ..models import Annotation, Project, TaskKind


def adaptive_policy(project: Project) -> RedundancyPolicy | None:
    """The project's adaptive policy, or None (fixed redundancy; free-text kinds)."""
    values = FlagSettings.from_dict(project.flag_settings).adaptive_redundancy
    if values is None or project.kind not in (TaskKind.PLAUSIBILITY, TaskKind.DECONTEXT):
        return None
    return RedundancyPolicy.from_dict(values)


def adaptive_target(answers: list, policy: RedundancyPolicy, *, numeric: bool) -> int:
    """Judgements an item with these counted ``answers`` should have (see the docstring)."""
    if len(answers) < policy.start:
        return policy.start
    return len(answers) + 1 if needs_more(answers, policy, numeric=numeric) else len(answers)


def adaptive_targets(*, project: Project, item_ids: list[int]) -> dict[int, int] | None:
    """item id -> target judgements under the project's policy; None when it has none."""
    policy = adaptive_policy(project)
    if policy is None:
        return None
    numeric = project.kind == TaskKind.PLAUSIBILITY
    field = "rating" if numeric else "category"
    answers: dict[int, list] = defaultdict(list)
    for item_id, value in (Annotation.objects.filter(item_id__in=item_ids,
                                                     state=Annotation.State.COUNTED)
                           .exclude(**{f"{field}__isnull": True} if numeric else {field: ""})
                           .order_by("id").values_list("item_id", field)):
        answers[item_id].append(value)
    return {item_id: adaptive_target(answers[item_id], policy, numeric=numeric)
            for item_id in item_ids}
