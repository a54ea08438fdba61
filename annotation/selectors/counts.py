"""How many answers a project has, the one definition every page, command and the API reads.

An answer row is in exactly one ``Annotation.State`` (kept by
``annotation.services.annotations.annotation_state``); each count here is the rows in some of
those states, named for what it counts, so "annotations" never means two things:

* **stored**: every row, older versions and problem reports too (what the home page and the
  review list show, kept by the database's triggers in ``ProjectCount``);
* **counted**: answers that fill an item's redundancy slot (progress, the work queue);
* **imported**: a released dataset's answers (exported and checked, fill no slot);
* **rejected**: answers a reviewer rejected (checked by QC, never exported);
* **in QC**: counted + imported + rejected, the answers ``qc_report`` checks;
* **superseded**, **provisional** and **reported**: older versions an annotator changed, MTurk
  page answers not confirmed yet, and problem reports: in no count above but stored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from django.db.models import Count, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

from ..models import Annotation, Project, ProjectCount

State = Annotation.State

#: What each count counts, in the order pages list them.
COUNT_LABELS = {
    "stored": "stored: every answer row, older versions and problem reports too",
    "counted": "counted: answers filling an item's slot (progress)",
    "imported": "imported: a released dataset's answers",
    "rejected": "rejected by a reviewer",
    "in_qc": "in QC: counted + imported + rejected (what qc_report checks)",
    "superseded": "superseded: older versions an annotator changed",
    "provisional": "provisional: MTurk page answers not confirmed yet",
    "reported": "problem reports (not answers)",
}


@dataclass(frozen=True)
class AnswerCounts:
    counted: int = 0
    imported: int = 0
    rejected: int = 0
    superseded: int = 0
    provisional: int = 0
    reported: int = 0

    @property
    def in_qc(self) -> int:
        return self.counted + self.imported + self.rejected

    @property
    def stored(self) -> int:
        return self.in_qc + self.superseded + self.provisional + self.reported

    def to_dict(self) -> dict[str, int]:
        """Every count by its name (``COUNT_LABELS``), the two sums included."""
        return {**asdict(self), "in_qc": self.in_qc, "stored": self.stored}


def answer_counts(*, project: Project) -> AnswerCounts:
    """The project's answers per state (one grouped statement over its answers: for a QC job,
    the API's counts call and small projects; pages at scale read the QC report's copy)."""
    rows = (Annotation.objects.filter(project=project).values("state")
            .annotate(n=Count("id")).order_by().values_list("state", "n"))
    per_state = dict(rows)
    unknown = set(per_state) - {state.value for state in State}
    if unknown:
        raise ValueError(f"answers in states no count knows: {', '.join(sorted(unknown))}")
    return AnswerCounts(**{state.value: per_state.get(state.value, 0) for state in State})


def stored_answer_count_subquery():
    """``stored`` of the outer query's project (``OuterRef("pk")``) from ``ProjectCount``, the
    counts the database's triggers keep: a few rows per project at any size."""
    shards = ProjectCount.objects.filter(project=OuterRef("pk")).order_by().values("project")
    return Coalesce(Subquery(shards.annotate(n=Sum("annotations")).values("n")), 0)


def stored_answer_count(*, project: Project) -> int:
    """``stored`` of one project from ``ProjectCount`` (one index probe)."""
    return (ProjectCount.objects.filter(project=project)
            .aggregate(n=Coalesce(Sum("annotations"), 0))["n"])
