"""Launching a Prolific batch in tests, through the one launch service."""

from __future__ import annotations

from annotation.models import Batch
from annotation.services.batches.plan import LaunchOptions, batch_launch, batch_plan


def prolific_options(**overrides) -> LaunchOptions:
    values = {"title": "Rate fillers", "reward_cents": 150, "items_per_hit": 5,
              "splits": ("dev",), "provider": "prolific", "estimated_minutes": 10,
              "assignment_duration_seconds": 30 * 60, "min_percent_approved": 95}
    values.update(overrides)
    return LaunchOptions(**values)


def launch_prolific(project, capture, **overrides) -> Batch:
    """Plan, confirm and launch; the publish job runs inline when ``capture`` executes it."""
    options = prolific_options(**overrides)
    plan = batch_plan(project=project, options=options)
    with capture(execute=True):
        batch = batch_launch(project=project, options=options,
                             confirmed_total_cents=plan.estimate.total_cents)
    batch.refresh_from_db()
    return batch
