"""An MTurk batch results CSV, imported as annotations of items that already exist.

Columns: ``HITId, AssignmentId, WorkerId, AssignmentStatus, AcceptTime, SubmitTime,
WorkTimeInSeconds``, the ``Input.*`` the HIT was built from and the ``Answer.*`` the worker
gave. The item is ``Input.item_id`` (Item.external_id) or, for sluice projects without it, the
``Input.question_1/answer_1/question_2`` context. Answers map to the project kind's payload:

- decontext: ``Answer.category``, ``Answer.decontextualized_sentence``, optional
  ``Answer.operations`` (a JSON list)
- plausibility: ``Answer.rating`` (an integer 1–5)
- rewrite: ``Answer.rewrite``
- sluice: ``Answer.full_question`` (empty or "not enough info" = skipped; or ``Answer.skipped``)
- split_rephrase: ``Answer.simple_sentences`` (a JSON list of ≥ 2 sentences)

Workers are ``Worker(provider="mturk", WorkerId)``; source ``mturk``; Approved/Rejected become
the review status; provenance keeps the HIT, assignment, status and times.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

from .base import (
    AnnotationRecord,
    Bundle,
    SourceFile,
    Stream,
    Where,
    fail,
    progress,
    read_delimited,
)
from .sluice import context_id, is_skip

FORMAT = "mturk-csv"
KIND = None  # the existing project's kind
ITEMS_MUST_EXIST = True  # annotates the project's items, makes none
META = ("HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime", "SubmitTime",
        "WorkTimeInSeconds")
ANSWERS = {
    "decontext": ("Answer.category", "Answer.decontextualized_sentence"),
    "plausibility": ("Answer.rating",),
    "rewrite": ("Answer.rewrite",),
    "sluice": ("Answer.full_question",),
    "split_rephrase": ("Answer.simple_sentences",),
}
SLUICE_INPUTS = ("Input.question_1", "Input.answer_1", "Input.question_2")
REVIEW = {"Approved": "approved", "Rejected": "rejected", "Submitted": "pending"}
# MTurk writes times like "Tue Jun 18 09:39:05 PDT 2019".
MTURK_TIME = re.compile(r"^\w{3} (\w{3}) +(\d{1,2}) (\d\d:\d\d:\d\d) ([A-Z]{2,4}) (\d{4})$")
ZONES = {"UTC": 0, "GMT": 0, "PST": -8, "PDT": -7, "MST": -7, "MDT": -6, "CST": -6,
         "CDT": -5, "EST": -5, "EDT": -4}


def parse_time(where: Where, column: str, value: str) -> datetime | None:
    value = value.strip()
    if not value:
        return None
    match = MTURK_TIME.match(value)
    if match and match.group(4) in ZONES:
        month, day, clock, zone, year = match.groups()
        naive = datetime.strptime(f"{year} {month} {day} {clock}", "%Y %b %d %H:%M:%S")
        return naive.replace(tzinfo=timezone(timedelta(hours=ZONES[zone])))
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise fail(FORMAT, where, f'column "{column}": {value!r} is not an MTurk time '
                                  "(e.g. Tue Jun 18 09:39:05 PDT 2019) or ISO 8601") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _payload(kind: str, where: Where, row: dict) -> dict:
    """Annotation columns for the kind's Answer.* cells."""
    if kind == "decontext":
        category = row["Answer.category"].strip()
        if category not in ("DONE", "IMPOSSIBLE", "UNNECESSARY"):
            raise fail(FORMAT, where, f'column "Answer.category": {category!r} is not DONE, '
                                      "IMPOSSIBLE or UNNECESSARY")
        operations = _json_list(where, row, "Answer.operations", required=False)
        text = row["Answer.decontextualized_sentence"]
        return {"payload": {"category": category, "decontextualized_sentence": text,
                            "operations": operations},
                "category": category, "text": text, "edit_operations": operations}
    if kind == "plausibility":
        value = row["Answer.rating"].strip()
        if value not in {"1", "2", "3", "4", "5"}:
            raise fail(FORMAT, where, f'column "Answer.rating": {value!r} is not 1–5')
        return {"payload": {"rating": int(value)}, "rating": int(value)}
    if kind == "rewrite":
        return {"payload": {"rewrite": row["Answer.rewrite"]}, "text": row["Answer.rewrite"]}
    if kind == "sluice":
        answer = row["Answer.full_question"]
        flag = row.get("Answer.skipped", "").strip().lower() in {"1", "true", "yes", "on"}
        skipped = flag or is_skip(answer)
        return {"payload": {"full_question": answer, "skipped": skipped}, "text": answer,
                "skipped": skipped}
    sentences = _json_list(where, row, "Answer.simple_sentences", required=True)
    if len(sentences) < 2 or not all(isinstance(s, str) and s.strip() for s in sentences):
        raise fail(FORMAT, where, 'column "Answer.simple_sentences" must list at least two '
                                  "non-empty sentences")
    return {"payload": {"simple_sentences": sentences}, "text": " ".join(sentences)}


def _json_list(where: Where, row: dict, column: str, *, required: bool) -> list:
    raw = row.get(column, "").strip()
    if not raw:
        if required:
            raise fail(FORMAT, where, f'column "{column}" is empty')
        return []
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise fail(FORMAT, where, f'column "{column}": broken JSON ({error.msg})') from None
    if not isinstance(value, list):
        raise fail(FORMAT, where, f'column "{column}" must be a JSON list')
    return value


def parse(stream: Stream, files: list[SourceFile], *, split: str | None, kind: str,
          quiet: bool) -> Iterator[Bundle]:
    """The rows as annotations of existing items; what spans rows (assignments, worker and
    item pairs) is kept as keys."""
    by_pair: dict[tuple[str, str], str] = {}
    assignments: set[str] = set()
    for file in files:
        rows = 0
        for line, row in progress(read_delimited(FORMAT, file, delimiter=",",
                                                 required=META + ANSWERS[kind]),
                                  total=None, desc=file.name, quiet=quiet):
            rows += 1
            where = Where(file.name, line=line)
            for column in ("HITId", "AssignmentId", "WorkerId"):
                if not row[column].strip():
                    raise fail(FORMAT, where, f'column "{column}" is empty')
            item_key = _item_key(kind, where, row)
            assignment, worker = row["AssignmentId"].strip(), row["WorkerId"].strip()
            if assignment in assignments:
                raise fail(FORMAT, where, f"assignment {assignment} appears twice")
            assignments.add(assignment)
            earlier = by_pair.get((worker, item_key))
            if earlier is not None:
                raise fail(FORMAT, where, f"worker {worker} already answered item "
                                          f"{item_key!r} in assignment {earlier}")
            by_pair[(worker, item_key)] = assignment
            fields = _payload(kind, where, row)
            seconds = row["WorkTimeInSeconds"].strip()
            if seconds and not seconds.isdigit():
                raise fail(FORMAT, where, f'column "WorkTimeInSeconds": {seconds!r} is not '
                                          "a whole number of seconds")
            status = row["AssignmentStatus"].strip()
            fields.update(
                started_at=parse_time(where, "AcceptTime", row["AcceptTime"]),
                submitted_at=parse_time(where, "SubmitTime", row["SubmitTime"]),
                duration_ms=int(seconds) * 1000 if seconds else None,
                review_status=REVIEW.get(status, "pending"),
                provenance={**where.provenance(),
                            **{column: row[column] for column in META if column != "WorkerId"}},
            )
            stream.bundle.annotations.append(AnnotationRecord(
                worker=("mturk", worker), item_key=item_key, source="mturk", fields=fields,
                where=where))
            if stream.full():
                yield stream.take()
        stream.file_done(file, rows=rows, split=None)
    yield stream.take()


def _item_key(kind: str, where: Where, row: dict) -> str:
    item_id = row.get("Input.item_id", "").strip()
    if item_id:
        return item_id
    if kind == "sluice" and all(column in row for column in SLUICE_INPUTS):
        return context_id(*(row[column] for column in SLUICE_INPUTS))
    wanted = ('"Input.item_id" or "Input.question_1/answer_1/question_2"' if kind == "sluice"
              else '"Input.item_id"')
    raise fail(FORMAT, where, f"column {wanted} is missing or empty; it names the item")
