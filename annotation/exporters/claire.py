"""CLAIRE / SemEval-2022 Task 7: ``{split}_data.tsv``, ``_labels.tsv`` and ``_scores.tsv``.

Exactly what the official starter-kit scorer (acidAnn/semeval2022_task7_starter_kit
``src/scorer.py``) and the released files use: the data file has a header and one row per
sentence with its five fillers; the label and score files have no header and one line
``<Id>_<n>\\t<value>`` per filler, in the data file's order.

Score of a filler: the released mean when the filler was imported with one (the released
dataset is the authority for its own rows; the importer keeps the score's text so the file
round-trips byte for byte), otherwise the mean of the crowd's 1-5 ratings. Label: the paper's
thresholds (``qc.aggregation.plausibility_label``). Fillers without any rating are written to
the data file but get no score or label line (the scorer only reads ids it finds).

What the starter kit checks (``format_checker_for_submission.py`` on both the predictions and
the reference files, ``format_checker_for_dataset.py`` on the data file) is checked here
before anything is written, so an export it would reject fails with :class:`ExportError`
instead: the sentence id is an integer (``<Id>_<n>`` is split on ``_`` and both halves go
through ``int``), the filler number is 1-5, the resolved pattern is one of the four
phenomena and the sentence contains the gap ``______``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import groupby

from django.db import connections

from qc.aggregation import plausibility_label

from ..models import Annotation
from ..selectors import exports as export_selectors
from ..selectors import qc as qc_selectors
from .base import SPLITS, Exporter, ExportError, ExportFile, format_number, tsv_row

DATA_HEADER = ["Id", "Resolved pattern", "Article title", "Section header", "Previous context",
               "Sentence", "Follow-up context", "Filler1", "Filler2", "Filler3", "Filler4",
               "Filler5"]

RESOLVED_PATTERNS = ("IMPLICIT REFERENCE", "ADDED COMPOUND", "METONYMIC REFERENCE", "FUSED HEAD")
GAP = "______"
FILLER_POSITIONS = range(1, 6)
# Fillers whose ratings one statement reads (``item_id IN``: far below PostgreSQL's 65,535
# parameters).
RATINGS_PER_QUERY = 5000


def check_official_row(cloze_id: str, pattern: str, sentence: str, positions) -> None:
    """Refuse a sentence the starter kit's format checkers would reject (see the module doc)."""
    where = f"CLAIRE sentence {cloze_id!r}"
    if not (cloze_id.isascii() and cloze_id.isdigit()):
        raise ExportError(f"{where}: the official scorer needs an integer sentence id "
                          f"(filler ids are <Id>_<1..5>)")
    if pattern not in RESOLVED_PATTERNS:
        raise ExportError(f"{where}: resolved pattern {pattern!r} is not one of "
                          f"{', '.join(RESOLVED_PATTERNS)}")
    if GAP not in sentence:
        raise ExportError(f"{where}: the sentence has no gap {GAP!r}")
    stray = sorted(set(positions) - set(FILLER_POSITIONS))
    if stray:
        raise ExportError(f"{where}: filler number(s) {stray} outside 1-5")


def filler_score(ratings: list[tuple[str, float, dict]]) -> tuple[str, float] | None:
    """``(score text, score)`` of one filler from its ``(source, rating, payload)`` rows."""
    imported = [row for row in ratings if row[0] == Annotation.Source.IMPORT]
    if imported:
        _, rating, payload = imported[0]
        return released_score(rating, payload)
    if not ratings:
        return None
    return mean_score([row[1] for row in ratings])


def released_score(rating: float, payload) -> tuple[str, float]:
    """A released filler's score: the score's text kept by the importer, else its rating."""
    payload = payload or {}
    released = payload.get("score_text", payload.get("score"))
    if isinstance(released, str) and released.strip():
        return released.strip(), float(released)
    return format_number(rating), float(rating)


def mean_score(ratings: list[float]) -> tuple[str, float]:
    """The crowd's score of a filler: the mean of its ratings, summed in answer order."""
    mean = sum(ratings) / len(ratings)
    return format_number(mean), mean


#: PostgreSQL: each rated filler of a split (``{fillers}``: ``claire_filler_rows``) with its
#: ratings (``{ratings}``: ``claire_rating_rows`` and the answer id) gathered by the database,
#: in answer order, and its first released rating and payload; in data-file order. One row per
#: filler instead of one per rating: Python reads 200,000 rows, not 1,000,000.
SCORES_SQL = """
SELECT f.cloze__external_id, f.position, a.ratings::text, a.released_rating,
       a.released_payload
FROM ({fillers}) AS f
JOIN (SELECT r.item_id, array_agg(r.rating ORDER BY r.id) AS ratings,
             (array_agg(r.rating ORDER BY r.id) FILTER (WHERE r.source = %s))[1]
                 AS released_rating,
             (array_agg(r.payload::text ORDER BY r.id) FILTER (WHERE r.source = %s))[1]
                 AS released_payload
      FROM ({ratings}) AS r GROUP BY r.item_id) AS a ON a.item_id = f.items__id
ORDER BY f.cloze_id, f.position
"""


class ClaireExporter(Exporter):
    format_name = "claire"
    kinds = ("plausibility",)
    _kept_scores: tuple[str, list] | None = None

    def files(self) -> list[ExportFile]:
        files = []
        for split in SPLITS:
            files.append(ExportFile(f"{split}_data.tsv", lambda s=split: self.data_lines(s)))
            files.append(ExportFile(f"{split}_labels.tsv",
                                    lambda s=split: self.value_lines(s, labels=True)))
            files.append(ExportFile(f"{split}_scores.tsv",
                                    lambda s=split: self.value_lines(s, labels=False)))
        return files

    def data_lines(self, split: str) -> Iterator[str]:
        yield tsv_row(DATA_HEADER)
        rows = qc_selectors.claire_filler_rows(project=self.project, split=split)
        for _, fillers in groupby(export_selectors.stream_rows(rows), key=lambda row: row[0]):
            fillers = list(fillers)
            first = fillers[0]
            by_position = {row[8]: row[9] for row in fillers}
            check_official_row(first[1], first[2], first[6], by_position)
            self.count()
            yield tsv_row([first[1], *first[2:8],
                           *(by_position.get(position, "") for position in FILLER_POSITIONS)])

    def scores(self, split: str) -> Iterator[tuple[str, str, float]]:
        """``(filler id, score text, score)`` per rated filler, in data-file order."""
        fillers = qc_selectors.claire_filler_rows(project=self.project, split=split)
        ratings = qc_selectors.claire_rating_rows(project=self.project, split=split)
        if connections[ratings.db].vendor == "postgresql":
            yield from self.scores_postgresql(fillers, ratings)
            return
        # Fillers come in data-file order (cloze, position), which need not follow item ids:
        # fetch the ratings of each chunk of fillers with one query rather than merging
        # two streams on an order they may not share.
        for batch in qc_selectors.batched(export_selectors.stream_rows(fillers),
                                          RATINGS_PER_QUERY):
            item_ids = [row[10] for row in batch]
            by_item: dict[int, list] = {}
            # Raw rows: the payload stays text but for a released row's (its score's text).
            for item_id, source, rating, payload in export_selectors.stream_rows(
                    ratings.filter(item_id__in=item_ids)):
                if source == Annotation.Source.IMPORT:
                    payload = json.loads(payload) if isinstance(payload, str) else payload
                by_item.setdefault(item_id, []).append((source, rating, payload))
            for row in batch:
                score = filler_score(by_item.get(row[10], []))
                if score is not None:
                    yield f"{row[1]}_{row[8]}", score[0], score[1]

    def scores_postgresql(self, fillers, ratings) -> Iterator[tuple[str, str, float]]:
        """``scores`` from ``SCORES_SQL``: the same figures (``filler_score``'s rules: the
        first released rating, else the mean of the ratings in answer order)."""
        fillers_sql, fillers_params = fillers.query.get_compiler(fillers.db).as_sql()
        with_ids = ratings.values_list("item_id", "id", "source", "rating", "payload")
        ratings_sql, ratings_params = with_ids.query.get_compiler(with_ids.db).as_sql()
        sql = SCORES_SQL.replace("{fillers}", fillers_sql).replace("{ratings}", ratings_sql)
        released = Annotation.Source.IMPORT.value
        params = (*fillers_params, released, released, *ratings_params)
        for batch in export_selectors.stream_batches(ratings.db, sql, params):
            for cloze_id, position, ratings_text, released_rating, payload in batch:
                if released_rating is not None:  # a released row: the first one's score
                    score = released_score(released_rating,
                                           None if payload is None else json.loads(payload))
                else:  # float8[]'s text: each value's shortest exact digits
                    score = mean_score(list(map(float, ratings_text[1:-1].split(","))))
                yield f"{cloze_id}_{position}", score[0], score[1]

    def value_lines(self, split: str, *, labels: bool) -> Iterator[str]:
        # The labels file is written first; once it is complete it leaves its split's scores
        # (one row per filler: the items', not the answers', number) to the scores file,
        # instead of every rating being read twice.
        kept = self._kept_scores
        self._kept_scores = None
        if not labels and kept is not None and kept[0] == split:
            scores = kept[1]
        else:
            scores = self.scores(split)
        collected = []
        for filler_id, score_text, score in scores:
            if labels:
                collected.append((filler_id, score_text, score))
            self.count()
            value = plausibility_label(score) if labels else score_text
            yield f"{filler_id}\t{value}\n"
        if labels:
            self._kept_scores = (split, collected)
