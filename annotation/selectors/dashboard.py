"""Reads for the project dashboard, bounded however many answers a project has.

Every figure is one grouped statement whose result has a handful of rows (per split and
answer count, per rating value, per time bin), never one row per answer; the figure that
needs every rating at once (per-worker leave-one-out agreement) is read from the latest
finished QC job's report instead, with the time it was computed (``latest_qc_job``).
Which answers count is ``selectors.qc``'s: ``counted`` for progress, ``qc_annotations`` for
the plots.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, F, FloatField, Func, IntegerField, Value
from django.db.models.functions import Cast, Least

from ..models import Annotation, Job, Project
from .qc import progress_by_split, qc_annotations

TIME_BINS = 20

__all__ = ["duration_histogram", "latest_qc_job", "progress_by_split", "rating_counts"]


def rating_counts(*, project: Project) -> dict[int, int]:
    """Crowd ratings (imported means excluded) per rounded value 1-5: one grouped statement
    over the distinct stored values, rounded here as the plot always did (``round``)."""
    per_value = (qc_annotations(project=project).filter(rating__isnull=False)
                 .exclude(source=Annotation.Source.IMPORT)
                 .values("rating").annotate(n=Count("id")).order_by()
                 .values_list("rating", "n"))
    counts: dict[int, int] = defaultdict(int)
    for rating, n in per_value:
        counts[round(rating)] += n
    return {value: counts.get(value, 0) for value in range(1, 6)}


def duration_histogram(*, project: Project, bins: int = TIME_BINS) -> dict | None:
    """Time per answer (the browser's claim, ``duration_ms``) in ``bins`` equal bins up to
    the 99th percentile (the last bin takes everything above): ``{"width_ms", "counts",
    "n"}``, or None without durations. Three small statements: the count, the percentile
    (one row at an offset) and the grouped bins."""
    timed = qc_annotations(project=project).filter(duration_ms__isnull=False)
    n = timed.count()
    if not n:
        return None
    # The value at the 99th percentile's position, counted from the top: a short top-N sort.
    top = (timed.order_by("-duration_ms").values_list("duration_ms", flat=True)
           [n - 1 - min(n - 1, int(0.99 * n))])
    width = max(top, 1) / bins
    binned = (timed.annotate(bin=Least(
                  Cast(Func(F("duration_ms") / Value(width, output_field=FloatField()),
                            function="FLOOR", output_field=FloatField()),
                       IntegerField()),
                  Value(bins - 1, output_field=IntegerField())))
              .values("bin").annotate(n=Count("id")).order_by().values_list("bin", "n"))
    counts = [0] * bins
    for index, count in binned:
        counts[int(index)] += count
    return {"width_ms": width, "counts": counts, "n": n}


def latest_qc_job(*, project: Project) -> Job | None:
    """The project's latest finished QC job (its report has the per-worker agreement)."""
    return (Job.objects.filter(project=project, kind=Job.Kind.QC, state=Job.State.DONE)
            .order_by("-finished_at", "-id").first())
