"""CLAIRE / SemEval-2022 Task 7: ``{split}_data.tsv`` plus optional ``_scores.tsv`` /
``_labels.tsv``.

Each data row is a ClozeItem with 5 ClozeFillers and 5 Items (``<Id>_<n>``). A released mean
score and class per filler become one imported annotation by the pseudonymous worker
``claire-released-mean`` (it is an average over several raters, not one person's rating).
The files are plain tab-separated text: no quoting (train_data.tsv has cells starting with ").
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator

from qc.aggregation import plausibility_label

from .base import (
    AnnotationRecord,
    Bundle,
    ImportInputError,
    ItemRecord,
    SourceFile,
    Stream,
    Where,
    fail,
    fit_key,
    gold_answer_in,
    progress,
    read_delimited,
    resolve_split,
)

FORMAT = "claire"
KIND = "plausibility"
FILLERS = 5
DATA_COLUMNS = ("Id", "Resolved pattern", "Article title", "Section header", "Previous context",
                "Sentence", "Follow-up context", "Filler1", "Filler2", "Filler3", "Filler4",
                "Filler5")
LABELS = ("IMPLAUSIBLE", "NEUTRAL", "PLAUSIBLE")
MEAN_WORKER = ("import", "claire-released-mean")
SUFFIXES = ("_data.tsv", "_scores.tsv", "_labels.tsv")


def _prefix_and_role(file: SourceFile) -> tuple[str, str]:
    for suffix in SUFFIXES:
        if file.name.endswith(suffix):
            return file.name[: -len(suffix)], suffix[1:].split(".")[0]
    raise ImportInputError(FORMAT, file.name,
                           "expected a name ending in _data.tsv, _scores.tsv or _labels.tsv")


def _read_values(file: SourceFile) -> dict[str, tuple[str, int]]:
    """``<Id>_<n>`` TAB value lines (no header) -> {filler id: (value, line)} (a line number,
    not a ``Where``: one is kept per filler)."""
    values: dict[str, tuple[str, int]] = {}
    for number, raw in file.lines(FORMAT):
        if not raw.strip():
            continue
        where = Where(file.name, line=number)
        cells = raw.split("\t")
        if len(cells) != 2:
            raise fail(FORMAT, where, f"expected 2 tab-separated cells (<Id>_<n>, value), "
                                      f"found {len(cells)}")
        if cells[0] in values:
            raise fail(FORMAT, where, f"filler {cells[0]!r} appears twice")
        values[cells[0]] = (cells[1].strip(), number)
    return values


def parse(stream: Stream, files: list[SourceFile], *, split: str | None, kind: str,
          quiet: bool) -> Iterator[Bundle]:
    grouped: dict[str, dict[str, SourceFile]] = {}
    for file in files:
        prefix, role = _prefix_and_role(file)
        grouped.setdefault(prefix, {})[role] = file
    for prefix, roles in grouped.items():
        if "data" not in roles:
            other = next(iter(roles.values()))
            raise ImportInputError(FORMAT, other.name,
                                   f"no {prefix}_data.tsv among the paths to attach it to")
        yield from _parse_split(stream, roles, split, quiet)
    yield stream.take()


def _parse_split(stream: Stream, roles: dict[str, SourceFile], split: str | None,
                 quiet: bool) -> Iterator[Bundle]:
    """The data file's rows (clozes, fillers, items), then — once the scores and labels
    files are checked against them — one annotation per filler. What spans the files is
    keys: the fillers' ids, and each filler's score and label."""
    data = roles["data"]
    file_split = resolve_split(FORMAT, data, split, None)
    filler_ids: dict[str, tuple[str, int]] = {}
    rows = 0
    for line, row in progress(read_delimited(FORMAT, data, delimiter="\t",
                                             required=DATA_COLUMNS, quoting=csv.QUOTE_NONE),
                              total=None, desc=data.name, quiet=quiet):
        rows += 1
        where = Where(data.name, line=line)
        cloze_id = row["Id"].strip()
        if not cloze_id:
            raise fail(FORMAT, where, 'column "Id" is empty')
        if cloze_id in stream.keys:
            raise fail(FORMAT, where, f"Id {cloze_id!r} appears twice")
        stream.keys.add(cloze_id)
        if "______" not in row["Sentence"]:
            raise fail(FORMAT, where, 'column "Sentence" has no gap "______"')
        bundle = stream.bundle
        bundle.clozes[cloze_id] = {
            "resolved_pattern": row["Resolved pattern"].strip(),
            "article_title": row["Article title"],
            "section_header": row["Section header"],
            "previous_context": row["Previous context"],
            "sentence": row["Sentence"],
            "followup_context": row["Follow-up context"],
        }
        for position in range(1, FILLERS + 1):
            text = row[f"Filler{position}"]
            if not text.strip():
                raise fail(FORMAT, where, f'column "Filler{position}" is empty')
            bundle.fillers[(cloze_id, position)] = {"text": text, "is_original": None}
            external_id = f"{cloze_id}_{position}"
            filler_ids[external_id] = (cloze_id, position)
            gold_column = f"Gold{position}"
            stream.add_item(external_id,
                            ItemRecord(split=file_split, group_key=fit_key(row["Article title"]),
                                       position=position, source=("filler",
                                                                  (cloze_id, position)),
                                       gold_answer=gold_answer_in(
                                           FORMAT, where, KIND, row.get(gold_column),
                                           field_name=gold_column)),
                            FORMAT, where)
        if stream.full():
            yield stream.take()
    stream.file_done(data, rows=rows, split=file_split)
    scores = _check_scores(roles["scores"], filler_ids) if "scores" in roles else None
    labels = _check_labels(roles["labels"], filler_ids) if "labels" in roles else None
    for extra, values in (("scores", scores), ("labels", labels)):
        if values is not None:
            stream.file_done(roles[extra], rows=len(values), split=file_split)
    if scores is None and labels is None:
        return
    for external_id in filler_ids:
        payload: dict = {}
        fields: dict = {}
        where = Where(data.name)
        if scores is not None:
            score, score_line, score_text = scores[external_id]
            where = Where(roles["scores"].name, line=score_line)
            payload["score"] = score
            payload["score_text"] = score_text
            fields["rating"] = score
        if labels is not None:
            label, label_line = labels[external_id]
            label_where = Where(roles["labels"].name, line=label_line)
            if scores is not None and plausibility_label(payload["score"]) != label:
                raise fail(FORMAT, label_where,
                           f"label {label} of {external_id} contradicts its mean score "
                           f"{payload['score']} (≤ 2.5 IMPLAUSIBLE, ≥ 4 PLAUSIBLE, "
                           f"else NEUTRAL)")
            payload["label"] = label
            where = label_where if scores is None else where
        provenance = {"file": where.file, "line": where.line, "id": external_id}
        if scores is not None and labels is not None:
            provenance["labels_file"] = roles["labels"].name
            provenance["labels_line"] = labels[external_id][1]
        fields.update(payload=payload, provenance=provenance)
        stream.bundle.annotations.append(AnnotationRecord(
            worker=MEAN_WORKER, item_key=external_id, source="import", fields=fields,
            where=where))
        if stream.full():
            yield stream.take()


def _check_complete(file: SourceFile, values: dict, filler_ids: dict) -> None:
    for external_id, (_, line) in values.items():
        if external_id not in filler_ids:
            raise fail(FORMAT, Where(file.name, line=line),
                       f"{external_id!r} is not a filler of the data file")
    for external_id in filler_ids:
        if external_id not in values:
            raise ImportInputError(FORMAT, file.name, f"no value for filler {external_id!r}")


def _check_scores(file: SourceFile,
                  filler_ids: dict) -> dict[str, tuple[float, int, str]]:
    raw = _read_values(file)
    _check_complete(file, raw, filler_ids)
    scores = {}
    for external_id, (value, line) in raw.items():
        where = Where(file.name, line=line)
        try:
            score = float(value)
        except ValueError:
            raise fail(FORMAT, where, f"score {value!r} is not a number") from None
        if not math.isfinite(score) or not 1 <= score <= 5:
            raise fail(FORMAT, where, f"score {value!r} is outside 1..5")
        # The text is kept too, so an export writes "1.0" back as "1.0", not "1".
        scores[external_id] = (score, line, value.strip())
    return scores


def _check_labels(file: SourceFile, filler_ids: dict) -> dict[str, tuple[str, int]]:
    labels = _read_values(file)
    _check_complete(file, labels, filler_ids)
    for value, line in labels.values():
        if value not in LABELS:
            raise fail(FORMAT, Where(file.name, line=line),
                       f"label {value!r} is not one of {', '.join(LABELS)}")
    return labels
