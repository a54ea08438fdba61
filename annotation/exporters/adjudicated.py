"""``adjudicated.jsonl``: the references reviewers settled by adjudication
(``services/adjudication.py``), written beside any export of a project that has one.

The dataset's own files never change (they keep every exportable answer as the released
formats do, each a reference of its own); a reader who wants the adjudicated reference of an
item takes it from here. One JSON line per settled item, in item id order: ``item`` (external
id), ``split``, ``reference`` (the text, or the rating for plausibility), ``from`` (``answer``
when an answer was picked, ``reviewer`` when the reviewer wrote it), ``worker`` (the picked
answer's worker's pseudonym, null otherwise) and ``decided_at`` (ISO 8601, UTC).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..models import ItemReference
from .base import Exporter, ExportFile, json_line

FILE_NAME = "adjudicated.jsonl"


def has_references(project) -> bool:
    return ItemReference.objects.filter(item__project=project).exists()


class AdjudicatedExporter(Exporter):
    format_name = "adjudicated"

    def files(self) -> list[ExportFile]:
        return [ExportFile(FILE_NAME, self.lines)]

    def lines(self) -> Iterator[str]:
        references = (ItemReference.objects.filter(item__project=self.project)
                      .select_related("item", "chosen__worker").order_by("item_id"))
        for reference in references.iterator(chunk_size=2000):
            chosen = reference.chosen
            self.count()
            yield json_line({
                "item": reference.item.external_id, "split": reference.item.split,
                "reference": reference.rating if reference.rating is not None
                else reference.text,
                "from": "reviewer" if reference.chosen_id is None else "answer",
                "worker": chosen.worker.anonymous_id if chosen is not None else None,
                "decided_at": reference.decided_at.isoformat(),
            })
