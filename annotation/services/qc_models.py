"""Worker-quality aggregation and agreement intervals for the QC report.

``worker_quality`` runs the project's aggregation method (``flag_settings["aggregation"]``:
``plain`` or ``model``) through ``qc.worker_models``: Dawid-Skene on decontext categories, the
bias/noise model on 1-5 ratings, the most supported answer on free text; the safety rule
(``qc.worker_models.choose_output``) keeps the plain mean/vote unless the gold items show the
model at least as accurate. The result names the method used and why, and lists each worker's
estimated reliability (least reliable first).

``agreement_intervals`` gives bootstrap 95% intervals (resampling items) of Fleiss' kappa and
Krippendorff's alpha per split.

Reads only (``annotation.selectors``); nothing is written here.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from qc import aggregation, bootstrap, textmetrics, worker_models
from qc.agreement import RatingTable
from qc.flags import FlagSettings

from ..models import Project, TaskKind
from ..selectors import qc as qc_selectors
from ..selectors import qc_models as model_selectors

#: Bootstrap resamples per interval.
BOOTSTRAP_RESAMPLES = 1000
DECONTEXT_PREFERENCE = ("DONE", "UNNECESSARY", "IMPOSSIBLE")
TEXT_KINDS = (TaskKind.REWRITE, TaskKind.SLUICE, TaskKind.SPLIT_REPHRASE)


def _text_matches(text: str, expected) -> bool:
    accepted = expected if isinstance(expected, tuple) else (expected,)
    return textmetrics.sentence_match(text, [str(value) for value in accepted])


def _workers(reliability: dict, **extra: dict) -> list[dict]:
    rows = [{"worker": int(worker), "reliability": round(float(value), 4),
             **{name: round(float(values[worker]), 4) for name, values in extra.items()}}
            for worker, value in reliability.items()]
    rows.sort(key=lambda row: (row["reliability"], row["worker"]))
    # Every worker (the dashboard's table; the text report lists the first ones), each by the
    # name staff see everywhere (issue 24): one query for all of them.
    return qc_selectors.name_workers(rows)


def _ratings(project: Project, ratings: RatingTable | None, *, with_gold: bool) -> RatingTable:
    """The plausibility project's ratings: the caller's table (QC reads them once) or read;
    ``with_gold``: the gold items' ratings too (the worker models check themselves on them)."""
    if ratings is not None:
        return ratings
    from .qc import rating_table

    return rating_table(project, with_gold=with_gold)


def aggregated_outputs(*, project: Project, settings: FlagSettings,
                       ratings: RatingTable | None = None) -> tuple[dict, dict]:
    """``(output per item id, the report part)`` for the project's aggregation method
    (``ratings``: the plausibility project's rating table, when the caller has it)."""
    gold = model_selectors.gold_answers(project=project)
    requested = settings.aggregation
    if project.kind == TaskKind.PLAUSIBILITY:
        rows = _ratings(project, ratings, with_gold=True)
        if not rows.n_ratings:
            return {}, {"requested": requested, "n_items": 0}
        scores, choice, model = worker_models.aggregate_ratings(
            rows, requested=requested, gold=gold, classify=aggregation.plausibility_label)
        output = {item: (aggregation.plausibility_label(score), score)
                  for item, score in scores.items()}
        labels = Counter(label for label, _ in output.values())
        workers = _workers(model.reliability, bias=model.bias, noise=model.noise)
    elif project.kind == TaskKind.DECONTEXT:
        rows = qc_selectors.category_rows(project=project)
        if not rows:
            return {}, {"requested": requested, "n_items": 0}
        chosen, choice, model = worker_models.aggregate_categories(
            rows, requested=requested, gold=gold, preference=DECONTEXT_PREFERENCE)
        output = {item: (label, model.posterior[item] if choice.used == worker_models.MODEL
                         else None) for item, label in chosen.items()}
        labels = Counter(chosen.values())
        workers = _workers(model.reliability)
    elif project.kind in TEXT_KINDS:
        rows = [(item_id, worker_id, text) for _, item_id, worker_id, text, skipped in
                qc_selectors.text_rows(project=project) if not skipped and text.strip()]
        if not rows:
            return {}, {"requested": requested, "n_items": 0}
        model = worker_models.most_supported_texts(rows)
        first: dict = {}
        for item_id, _, text in rows:
            first.setdefault(item_id, text)
        choice = worker_models.choose_output(
            requested=requested, model_name=worker_models.TEXT_SUPPORT,
            plain_name="first_answer", model_output=model.texts, plain_output=first,
            gold=gold, correct=_text_matches)
        texts = model.texts if choice.used == worker_models.MODEL else first
        output = {item: (text, model.support[item]) for item, text in texts.items()}
        labels = Counter()
        workers = _workers(model.reliability)
    else:
        return {}, {"requested": requested, "n_items": 0}
    report = {**choice.to_dict(), "n_items": len(output),
              "labels": dict(sorted(labels.items())), "workers": workers}
    if not labels:
        del report["labels"]
    return output, report


def worker_quality(*, project: Project, settings: FlagSettings,
                   ratings: RatingTable | None = None) -> dict:
    """The report part of :func:`aggregated_outputs`."""
    return aggregated_outputs(project=project, settings=settings, ratings=ratings)[1]


def _tables_by_split(table: RatingTable, split_of: dict) -> dict[str, RatingTable]:
    """The table's ratings cut by their item's split (numpy masks, no row objects)."""
    item_split = np.array([split_of[item] for item in table.items.tolist()], dtype=object)
    rating_split = item_split[table.item_codes]
    return {split: RatingTable.from_arrays(table.items[table.item_codes[mask]],
                                           table.workers[table.worker_codes[mask]],
                                           table.labels[table.label_codes[mask]])
            for split in sorted(set(item_split.tolist()))
            if (mask := rating_split == split).any()}


def agreement_intervals(*, project: Project, n_resamples: int = BOOTSTRAP_RESAMPLES,
                        ratings: RatingTable | None = None) -> dict:
    """split -> {statistic: interval dict} for ratings (Fleiss' kappa, Krippendorff's alpha
    ordinal) and categories (Fleiss' kappa, Krippendorff's alpha nominal); ``ratings``: the
    plausibility project's rating table, when the caller has it."""
    if project.kind == TaskKind.PLAUSIBILITY:
        table, level = _ratings(project, ratings, with_gold=False), "ordinal"
    elif project.kind == TaskKind.DECONTEXT:
        gold = qc_selectors.gold_item_ids(project=project)  # agreement is of the dataset
        table = RatingTable.from_rows(row for row in qc_selectors.category_rows(project=project)
                                      if row[0] not in gold)
        level = "nominal"
    else:
        return {}
    if not table.n_ratings:
        return {}
    by_split = _tables_by_split(table, model_selectors.item_splits(project=project))
    intervals = {}
    for split, split_rows in sorted(by_split.items()):
        # Both statistics from one set of draws (the draws are most of the cost).
        both = bootstrap.agreement_intervals(split_rows, level, n_resamples=n_resamples)
        intervals[split] = {
            "fleiss_kappa": both["fleiss_kappa"].to_dict(),
            f"krippendorff_alpha_{level}": both["krippendorff_alpha"].to_dict(),
        }
    return intervals
