"""Generic JSONL: ``annotations.jsonl``, every annotation of the project, one per line.

Unlike the dataset formats this keeps everything a researcher may want to audit: rejected
work (with its review status), the worker's anonymised id (never the MTurk id or username),
the typed payload and the denormalised columns, timings, the live-check warnings the browser
showed, those the worker overrode and those the server found again, the QC flags with their
decisions, the MTurk assignment/HIT ids and the import provenance.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from ..selectors import qc as qc_selectors
from .base import Exporter, ExportFile, json_line


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


class GenericJsonlExporter(Exporter):
    format_name = "jsonl"
    kinds = ()  # every task kind

    def files(self) -> list[ExportFile]:
        return [ExportFile("annotations.jsonl", self.lines)]

    def lines(self) -> Iterator[str]:
        anonymous = qc_selectors.AnonymousIds()
        rows = qc_selectors.generic_annotation_rows(project=self.project)
        for batch in qc_selectors.batched(rows.iterator(chunk_size=qc_selectors.CHUNK_SIZE),
                                          qc_selectors.CHUNK_SIZE):
            flags = qc_selectors.flags_by_annotation(annotation_ids=[row[0] for row in batch])
            for (annotation_id, _item_pk, item_external_id, split, group_key, worker_pk,
                 provider, worker_external_id, source, assignment_id, hit_id, payload,
                 category, rating, text, skipped, edit_operations, started_at, submitted_at,
                 duration_ms, client_warnings, overridden_warnings, server_warnings,
                 review_status, provenance) in batch:
                self.count()
                yield json_line({
                    "project": self.project.slug,
                    "task": self.project.kind,
                    "annotation_id": annotation_id,
                    "item_id": item_external_id,
                    "split": split,
                    "group_key": group_key,
                    "worker_id": anonymous.get(worker_pk, provider, worker_external_id),
                    "source": source,
                    "assignment_id": assignment_id,
                    "hit_id": hit_id,
                    "payload": payload,
                    "category": category or None,
                    "rating": rating,
                    "text": text,
                    "skipped": skipped,
                    "edit_operations": edit_operations,
                    "started_at": iso(started_at),
                    "submitted_at": iso(submitted_at),
                    "duration_ms": duration_ms,
                    "warnings": {"shown": client_warnings, "overridden": overridden_warnings,
                                 "server": server_warnings},
                    "flags": flags.get(annotation_id, []),
                    "review_status": review_status,
                    "provenance": provenance,
                })
