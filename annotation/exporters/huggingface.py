"""The Hugging Face dataset export (``hf``): one Parquet file per split and a dataset card.

``datasets.load_dataset("parquet", data_dir=OUT)`` loads it (``dev.parquet`` becomes the
``validation`` split by the library's file-name rules). One row per item with at least one
exported answer (``EXPORTED_STATES``): the item's id, split, group key, the source material as
JSON (as the API's items show it) and its answers (pseudonymous worker id and the answer's
payload as JSON). Items without an exported answer are left out, and the export says how many.

The card (``README.md``) carries the task, the splits and their counts, the number of
annotators, the agreement figures of the project's latest QC report when it is current (else
it says why there are none: ``_agreement``), the licence and attribution recorded on the
project, and a data-statement skeleton (Bender & Friedman, 2018) to fill in.

Memory stays flat: one pass over the items and their answers as plain rows, each split's
rows written in Parquet row groups of ``ROW_GROUP`` (``_write_splits``), and the card reads a
stored report instead of running QC.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..models import Item, TaskKind
from ..selectors import exports as export_selectors
from ..selectors import qc as qc_selectors
from .base import EXPORT_FILE_MODE, SPLITS, Exporter, WrittenFile, write_atomically

ROW_GROUP = 2000

SCHEMA = pa.schema([
    ("id", pa.string()), ("split", pa.string()), ("group_key", pa.string()),
    ("task", pa.string()), ("source", pa.string()),
    ("annotations", pa.list_(pa.struct([("worker", pa.string()), ("answer", pa.string())]))),
    ("n_annotations", pa.int32()),
])

#: The QC report's agreement figures the card shows, and what each one is.
AGREEMENT_SHOWN = {
    "n_ratings": "crowd ratings the figures are computed from",
    "n_annotations": "answers with a category the figures are computed from",
    "n_items": "items with at least one of those ratings",
    "n_workers": "workers who gave those ratings",
    "krippendorff_alpha_ordinal": "Krippendorff's alpha, ordinal distance",
    "krippendorff_alpha_interval": "Krippendorff's alpha, interval distance",
    "fleiss_kappa": "Fleiss' kappa",
    "observed_agreement": "observed agreement (share of agreeing pairs)",
    "binary_fleiss_kappa": "Fleiss' kappa, feasible vs infeasible",
    "binary_agreement": "observed agreement, feasible vs infeasible",
    "mean_item_exact_agreement": "mean share of an item's rating pairs that are equal",
    # written answers (rewrite, sluice, split-and-rephrase; decontext's edits)
    "n_pairs": "items with two written answers (the first two compared)",
    "bleu": "corpus BLEU of the first answer against the second",
    "gleu": "corpus GLEU of the first answer against the second",
    "chrf": "corpus chrF of the first answer against the second",
    "edit_n_pairs": "items with two edited sentences (the first two compared)",
    "edit_bleu": "corpus BLEU of the first edited sentence against the second",
    "edit_gleu": "corpus GLEU of the first edited sentence against the second",
    "edit_chrf": "corpus chrF of the first edited sentence against the second",
}

#: The Hugging Face Hub's identifiers of the licences datasets use most (the card's
#: ``license`` metadata takes one of the Hub's identifiers; any other licence is ``other``
#: with its name in ``license_name``).
HF_LICENSES = frozenset((
    "apache-2.0", "mit", "bsd", "bsd-2-clause", "bsd-3-clause", "cc", "cc0-1.0", "cc-by-2.0",
    "cc-by-2.5", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-2.0",
    "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-3.0", "cc-by-nc-nd-4.0",
    "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0", "cdla-sharing-1.0",
    "cdla-permissive-1.0", "cdla-permissive-2.0", "gfdl", "gpl", "gpl-2.0", "gpl-3.0",
    "lgpl", "lgpl-2.1", "lgpl-3.0", "agpl-3.0", "mpl-2.0", "odc-by", "odbl", "pddl",
    "unlicense", "wtfpl", "unknown", "other"))


def hf_license(licence: str) -> tuple[str, str]:
    """The card's ``license`` identifier for the licence recorded on a project, and the name
    to give as ``license_name`` ("" when the identifier says it all): "CC BY-SA 4.0" is
    ``cc-by-sa-4.0``; an empty licence ``unknown``; one the Hub does not know ``other``."""
    name = licence.strip()
    if not name:
        return "unknown", ""
    identifier = "-".join(name.lower().replace("_", " ").split())
    if identifier in HF_LICENSES:
        return identifier, ""
    return "other", name


def card_figure(value) -> str:
    """A figure as the card prints it: counts whole, the rest to three decimals."""
    if value is None:
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    return f"{value:.3f}"


class _RowGroup:
    """One Parquet row group of a split, gathered column by column: the answers of every
    item in one flat list and each item's end in ``offsets`` (Arrow's list layout), so no
    dictionary is made per answer or per item (``Table.from_pylist`` of them took most of the
    export's Python)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.group_keys: list[str] = []
        self.sources: list[str] = []
        self.offsets: list[int] = [0]
        self.workers: list[str] = []
        self.answers: list[str] = []

    def table(self, *, split: str, task: str) -> pa.Table:
        n = len(self.ids)
        answers = pa.StructArray.from_arrays(
            [pa.array(self.workers, pa.string()), pa.array(self.answers, pa.string())],
            fields=list(SCHEMA.field("annotations").type.value_type))
        offsets = pa.array(self.offsets, pa.int32())
        return pa.Table.from_arrays([
            pa.array(self.ids, pa.string()), pa.array([split] * n, pa.string()),
            pa.array(self.group_keys, pa.string()), pa.array([task] * n, pa.string()),
            pa.array(self.sources, pa.string()), pa.ListArray.from_arrays(offsets, answers),
            pc.subtract(offsets[1:], offsets[:-1]).cast(pa.int32()),
        ], schema=SCHEMA)


class HuggingFaceExporter(Exporter):
    format_name = "hf"
    kinds = ()  # every task kind
    description = "Hugging Face dataset: Parquet per split + dataset card"

    def write(self, out_dir: Path, *,
              progress: Callable[[int, int | None, str], None] | None = None
              ) -> list[WrittenFile]:
        """The Parquet file of each split and the card; ``progress(files done, files,
        message)`` (optional, as ``Exporter.write``) hears the Parquet files start, then the
        card."""
        out_dir.mkdir(parents=True, exist_ok=True)
        if progress is not None:
            progress(0, 2, "writing " + ", ".join(f"{split}.parquet" for split in SPLITS))
        workers: set[str] = set()
        counts, left_out = self._write_splits(out_dir, workers)
        written = []
        for split in SPLITS:
            path = out_dir / f"{split}.parquet"
            if path.exists():
                written.append(WrittenFile(path, path.stat().st_size, counts[split]))
            if left_out[split]:
                self.note(f"{split}.parquet: left out {left_out[split]} item(s) without an "
                          "exported answer")
        if not any(counts.values()):
            self.note("no item has an exported answer yet: the export has no data files")
        if progress is not None:
            progress(1, 2, "writing README.md (the dataset card)")
        card = self._card(counts, len(workers))
        size = write_atomically(out_dir / "README.md", iter([card]))
        written.append(WrittenFile(out_dir / "README.md", size, 0))
        if written:
            written[-1].notes = list(self.notes)
        return written

    def _write_splits(self, out_dir: Path, workers: set) -> tuple[dict, dict]:
        """Write each split's rows to ``<split>.parquet`` (only a split that has one);
        (rows per split, items left out per split). ``workers`` gathers the pseudonyms.

        One pass: the items (with their source columns) and the exported answers, both in
        item order (``stream_rows``: raw tuples, a server-side cursor on PostgreSQL), merged,
        each row going to its split's writer in row groups of ``ROW_GROUP``. No model
        instance and no ``IN`` list of ids: at 1,000,000 answers the batches of items with
        their answers looked up by id took 140 s; a pass per split read the answers' index
        three times."""
        columns = export_selectors.ITEM_SOURCE_COLUMNS
        items = (Item.objects.filter(project=self.project, is_gold=False).order_by("id")
                 .values_list("id", "split", "external_id", "group_key", *columns))
        answers = (qc_selectors.dataset_annotations(project=self.project)
                   .order_by("item_id", "id")
                   .values_list("item_id", "worker_id", "worker__provider",
                                "worker__external_id", "payload"))
        anonymous = qc_selectors.AnonymousIds()
        # The payload's stored text to json.dumps(payload, sort_keys=True, ensure_ascii=False)
        # without decoding each answer (memoised: answers repeat).
        canonical = export_selectors.CanonicalJson()
        kind = self.project.kind
        # json.dumps(…, sort_keys=True, ensure_ascii=False) without an encoder built per call.
        source_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
        buffers: dict[str, _RowGroup] = {split: _RowGroup() for split in SPLITS}
        writers: dict[str, pq.ParquetWriter] = {}
        counts = dict.fromkeys(SPLITS, 0)
        left_out = dict.fromkeys(SPLITS, 0)

        def temporary(split: str) -> Path:
            return out_dir / f".{split}.parquet.partial"

        def flush(split: str) -> None:
            rows = buffers[split]
            if split not in writers:
                writers[split] = pq.ParquetWriter(temporary(split), SCHEMA)
            writers[split].write_table(rows.table(split=split, task=kind))
            counts[split] += len(rows.ids)
            self.count(len(rows.ids))
            buffers[split] = _RowGroup()

        # Two cursors open at once on the connection, the answers read as far as the item.
        # Not read ahead: Python takes most of this export's time (PostgreSQL 1.9 s of CPU
        # at 1,000,000 answers, Python 3 s), and its peak memory is near the 300 MB allowed.
        pending = iter(export_selectors.stream_rows(answers, ahead=False))
        next_answer = next(pending, None)
        try:
            for item_id, split, external_id, group_key, *source in (
                    export_selectors.stream_rows(items, ahead=False)):
                rows = buffers[split]
                found = 0
                while next_answer is not None and next_answer[0] <= item_id:
                    if next_answer[0] == item_id:
                        _, worker_pk, provider, worker_external, payload = next_answer
                        worker = anonymous.get(worker_pk, provider, worker_external)
                        workers.add(worker)
                        rows.workers.append(worker)
                        rows.answers.append(canonical(payload))
                        found += 1
                    next_answer = next(pending, None)
                if not found:
                    left_out[split] += 1
                    continue
                rows.ids.append(external_id)
                rows.group_keys.append(group_key)
                rows.sources.append(source_json(
                    export_selectors.item_source(dict(zip(columns, source, strict=True)))))
                rows.offsets.append(len(rows.workers))
                if len(rows.ids) >= ROW_GROUP:
                    flush(split)
            for split in SPLITS:
                if buffers[split].ids:
                    flush(split)
            for split in list(writers):
                writers.pop(split).close()
                os.chmod(temporary(split), EXPORT_FILE_MODE)
                os.replace(temporary(split), out_dir / f"{split}.parquet")
        finally:
            for split, writer in writers.items():
                writer.close()
                temporary(split).unlink(missing_ok=True)
        return counts, left_out

    def _agreement(self) -> tuple[dict, str]:
        """The agreement figures of the project's latest finished QC report when it is
        current (``selectors.qc.qc_inputs``: computed from the answers there are now), and
        the card's sentence on where they come from. Without a current report the card says
        so and shows none: running QC here took 20 s and 500 MB at 1,000,000 answers, more
        than an export may (≤ 20 s, < 300 MB), and figures of other answers would be wrong."""
        from ..selectors.dashboard import latest_qc_job

        job = latest_qc_job(project=self.project)
        report = (job.result or {}) if job is not None else {}
        if job is None:
            why = "QC has not run on this project"
        elif report.get("qc_inputs") != qc_selectors.qc_inputs(project=self.project):
            why = (f"the latest QC report (job {job.pk}, "
                   f"{job.finished_at:%Y-%m-%d %H:%M} UTC) was computed before the answers "
                   "changed")
        else:
            figures = {key: value for key, value in report.get("agreement", {}).items()
                       if key in AGREEMENT_SHOWN}
            imported = ("; ratings: the crowd's, the imported mean scores left out"
                        if "n_ratings" in figures else "")
            return figures, (f"From the project's QC report (job {job.pk}, "
                             f"{job.finished_at:%Y-%m-%d %H:%M} UTC), computed from the "
                             "project's answers as they are now (rejected ones included, "
                             f"gold items' left out{imported}).")
        self.note(f"README.md: no agreement figures: {why}; run QC (\"Run QC now\" on the "
                  "review page) and export again")
        return {}, (f"Not included: {why}. Run QC (\"Run QC now\" on the project's review "
                    "page) and export again to include them.")

    def _card(self, counts: dict[str, int], annotators: int) -> str:
        project = self.project
        licence = project.licence.strip() or "unknown"
        license_id, license_name = hf_license(project.licence)
        license_lines = f"license: {license_id}" + (
            f"\nlicense_name: {json.dumps(license_name)}" if license_name else "")
        hf_names = {"train": "train", "dev": "validation", "test": "test"}
        split_rows = "\n".join(f"| {hf_names[split]} (`{split}.parquet`) | {n} |"
                               for split, n in counts.items())
        agreement, agreement_source = self._agreement()
        agreement_rows = "\n".join(f"| {key} | {card_figure(value)} | {AGREEMENT_SHOWN[key]} |"
                                   for key, value in agreement.items())
        return f"""---
{license_lines}
pretty_name: {json.dumps(project.name)}
---

# {project.name}

Made with Unpack (project `{project.slug}`).

## Task

{TaskKind(project.kind).label} (`{project.kind}`). Each row is one item: `source` is the
material the annotators saw (JSON), `annotations` their answers (a pseudonymous `worker` id and
the `answer` payload as JSON), `group_key` the group a split never cuts.

## Splits

| split | items |
|---|---|
{split_rows}

Items without an exported answer are not included.

## Annotators

{annotators} annotator{"" if annotators == 1 else "s"} gave the exported answers (pseudonymous ids).

## Agreement

{agreement_source}

| figure | value | what it is |
|---|---|---|
{agreement_rows or "| (none) | | |"}

## Licence and attribution

Licence: {licence}

{project.attribution.strip() or "Attribution: not recorded on the project."}

## Data statement (to complete)

- Curation rationale:
- Language variety:
- Speaker demographic:
- Annotator demographic:
- Speech situation:
- Text characteristics:
- Provenance appendix:
"""
