"""Reads for the effort flags (``qc.effort``): each free-text answer's words and the summary
its page recorded of how they were written."""

from __future__ import annotations

from ..models import Project, TaskKind
from .qc import qc_annotations

#: The task kinds whose answers are written (decontext: the words its edits add).
EFFORT_KINDS = (TaskKind.DECONTEXT, TaskKind.REWRITE, TaskKind.SLUICE, TaskKind.SPLIT_REPHRASE)


def written_text(kind: str, text: str, edit_operations: list | None) -> str:
    """The words the worker wrote: the answer's text, but for a decontextualization the text
    its additions and swaps bring (the rest is the original sentence, not theirs)."""
    if kind != TaskKind.DECONTEXT:
        return text
    return " ".join(operation.get("text", "") for operation in edit_operations or []
                    if isinstance(operation, dict) and operation.get("op") in ("add", "swap"))


def effort_rows(*, project: Project) -> list[tuple[int, str, dict | None]]:
    """``(annotation_id, written text, effort summary or None)`` of the project's written
    answers QC sees (skips and empty answers left out), in id order."""
    if project.kind not in EFFORT_KINDS:
        return []
    rows = (qc_annotations(project=project).filter(skipped=False)
            .order_by("id").values_list("id", "text", "edit_operations", "effort"))
    written = ((annotation_id, written_text(project.kind, text, operations), effort)
               for annotation_id, text, operations, effort in rows)
    return [(annotation_id, text, effort) for annotation_id, text, effort in written
            if text.strip()]
