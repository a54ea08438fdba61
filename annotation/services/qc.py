"""Quality control on the Django side: run ``qc/`` over a project's rows and store its flags.

``project_qc_run`` is what ``manage.py qc_report`` calls: it reads plain rows through
``annotation.selectors.qc`` (``values_list``, never model instances), computes agreement,
aggregation and the sluice cleaning figures with ``qc/``, turns the flag rules' output into
``Flag`` rows idempotently and returns a JSON-friendly report.

Flag storage contract (``flags_store``):

- the fingerprint is ``<reason>:<target kind>:<target id>``, unique per project, so
  re-running QC never creates a second flag for the same finding;
- a flag still raised keeps its row: an open one gets the new score/detail, a decided one
  (upheld or dismissed) keeps its decision untouched;
- an *open* flag that the rules no longer raise (thresholds changed, work re-checked) is
  deleted; decided flags are never deleted;
- QC owns only the flags it raised (``Flag.raised_by == qc``): flags that collection or a
  reviewer raised are never updated or deleted here.

QC reads the annotations ``annotation.selectors.qc`` gives it: every answer but the
provisional ones for agreement and flags, the exportable ones for aggregation.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from qc import aggregation, agreement, bootstrap, cleaning, effort, flags, textmetrics, timing

from ..models import Annotation, Flag, Project, TaskKind, Worker
from ..selectors import effort as effort_selectors
from ..selectors import qc as qc_selectors
from ..selectors import qc_models as model_selectors
from ..selectors.counts import answer_counts
from ..selectors.dashboard import dashboard_figures
from . import qc_models
from .splits import describe_cross_split_contexts, sluice_cross_split_contexts
from .statistics import planner_statistics_refresh_grown

WORKER = "worker"
ANNOTATION = "annotation"
TEXT_KINDS = (TaskKind.REWRITE, TaskKind.SLUICE, TaskKind.SPLIT_REPHRASE)
# Workers listed in the report's per-worker table (lowest agreement first).
REPORT_WORKERS = 20  # workers the text report lists (the JSON has them all)


@dataclass(frozen=True)
class FlagCandidate:
    """A flag rule's finding, resolved to what the Flag row points at."""

    target_kind: str  # worker | annotation
    target_id: int
    reason: str
    score: float
    detail: str

    @property
    def fingerprint(self) -> str:
        return f"{self.reason}:{self.target_kind}:{self.target_id}"


def _finite(value: float) -> float | None:
    """JSON has no NaN: statistics without data become null."""
    value = float(value)
    return value if math.isfinite(value) else None


# --- agreement and aggregation ---------------------------------------------------------------


def rating_table(project: Project, *, with_gold: bool = False,
                 crowd: qc_selectors.CrowdRatings | None = None) -> agreement.RatingTable:
    """The project's crowd ratings as one ``RatingTable`` (from numpy arrays, see
    ``selectors.qc.rating_arrays``; ``crowd``: the QC run's ``crowd_ratings``). Without
    the ratings of gold items unless ``with_gold``: agreement describes the dataset; the worker
    models need the gold items' ratings to check themselves against the known answers (the
    safety rule)."""
    table = _table_of(*qc_selectors.rating_arrays(project=project, crowd=crowd))
    return table if with_gold else without_gold_items(table, project)


def _table_of(item_ids, worker_ids, ratings) -> agreement.RatingTable:
    if not len(ratings):
        return agreement.RatingTable.from_rows([])
    return agreement.RatingTable.from_arrays(item_ids, worker_ids, ratings)


def without_gold_items(table: agreement.RatingTable, project: Project) -> agreement.RatingTable:
    """``table`` without the ratings of the project's gold items (the dataset's ratings)."""
    gold = qc_selectors.gold_item_ids(project=project)
    if not gold or not table.n_ratings:
        return table
    item_ids = table.items[table.item_codes]
    kept = ~np.isin(item_ids, np.fromiter(gold, dtype=np.int64))
    return _table_of(item_ids[kept], table.workers[table.worker_codes[kept]],
                     table.labels[table.label_codes[kept]])


def rating_agreement(project: Project, table: agreement.RatingTable | None = None) -> dict:
    if table is None:
        table = rating_table(project)
    if not table.n_ratings:
        return {"n_ratings": 0}
    _, per_item, n_per_item = agreement.per_item_agreement(table)
    return {
        "n_ratings": table.n_ratings,
        "n_items": len(table.items),
        "n_workers": len(table.workers),
        "krippendorff_alpha_ordinal": _finite(agreement.krippendorff_alpha(table, "ordinal")),
        "krippendorff_alpha_interval": _finite(agreement.krippendorff_alpha(table, "interval")),
        "fleiss_kappa": _finite(agreement.fleiss_kappa(table).kappa),
        "mean_item_exact_agreement": _finite(np.nanmean(per_item)) if (n_per_item >= 2).any()
        else None,
        "per_worker": worker_table(table),
    }


def category_agreement(project: Project) -> dict:
    """Agreement of the decontext categories over the dataset's items (not gold items)."""
    gold = qc_selectors.gold_item_ids(project=project)
    rows = [row for row in qc_selectors.category_rows(project=project) if row[0] not in gold]
    if not rows:
        return {"n_annotations": 0}
    fleiss = agreement.fleiss_kappa(rows)
    # FEASIBLE (DONE/UNNECESSARY) vs INFEASIBLE (IMPOSSIBLE): the paper's binary agreement.
    binary_rows = [(item, worker, "INFEASIBLE" if category == "IMPOSSIBLE" else "FEASIBLE")
                   for item, worker, category in rows]
    binary = agreement.fleiss_kappa(binary_rows)
    majority = aggregation.majority_labels(rows, preference=("DONE", "UNNECESSARY",
                                                             "IMPOSSIBLE"))
    return {
        "n_annotations": len(rows),
        "fleiss_kappa": _finite(fleiss.kappa),
        "observed_agreement": _finite(fleiss.observed_agreement),
        "binary_fleiss_kappa": _finite(binary.kappa),
        "binary_agreement": _finite(binary.observed_agreement),
        "majority_category": dict(sorted(Counter(majority.values()).items())),
        "per_worker": worker_table(agreement.RatingTable.from_rows(rows)),
    }


def worker_table(table: agreement.RatingTable) -> list[dict]:
    result = agreement.worker_consensus_agreement(table)
    rows = [
        {"worker": int(result.workers[k]), "n_compared": int(result.n_compared[k]),
         "agreement": _finite(result.agreement[k]),
         "mean_abs_deviation": _finite(result.mean_abs_deviation[k])}
        for k in range(len(result.workers)) if result.n_compared[k] > 0
    ]
    rows.sort(key=lambda row: (row["agreement"] if row["agreement"] is not None else 2.0,
                               row["worker"]))
    # Every worker (the dashboard's worker table); the text report prints the lowest ones.
    # The name staff see on every page (issue 24): the pseudonym (and a local annotator's
    # username), beside the database id.
    return qc_selectors.name_workers(rows)


def text_pairs(project: Project) -> dict[int, tuple[str, str]]:
    """item id -> the texts of its first two annotators, for every item that has two (not
    skipped, not blank). A decontext project's texts are its edited sentences (category DONE):
    the sentences left as they were or infeasible say nothing of how alike two edits are."""
    category = Annotation.Category.DONE if project.kind == TaskKind.DECONTEXT else None
    texts: dict[int, list[str]] = defaultdict(list)
    for _, item_id, _, text, skipped in qc_selectors.text_rows(project=project,
                                                               category=category):
        if not skipped and text.strip():
            texts[item_id].append(text)
    return {item_id: (item_texts[0], item_texts[1]) for item_id, item_texts in texts.items()
            if len(item_texts) >= 2}


def text_agreement(project: Project, pairs: dict[int, tuple[str, str]] | None = None) -> dict:
    """Agreement between the first two annotators of every item that has two texts: corpus
    BLEU, GLEU and chrF of the first's text against the second's (``text_pairs``)."""
    if pairs is None:
        pairs = text_pairs(project)
    if not pairs:
        return {"n_pairs": 0}
    hypotheses = [first for first, _ in pairs.values()]
    references = [[second] for _, second in pairs.values()]
    chrf = textmetrics.corpus_chrf(hypotheses, references)
    return {
        "n_pairs": len(pairs),
        "bleu": textmetrics.corpus_bleu(hypotheses, references),
        "gleu": textmetrics.corpus_gleu(hypotheses, references),
        "chrf": chrf.f_score,
    }


def text_agreement_intervals(project: Project, pairs: dict[int, tuple[str, str]], *,
                             prefix: str = "",
                             n_resamples: int = qc_models.BOOTSTRAP_RESAMPLES) -> dict:
    """split -> {``prefix`` + statistic: interval dict} of ``text_agreement``'s BLEU, GLEU and
    chrF, bootstrap 95% over the split's items (``qc.bootstrap.text_agreement_intervals``)."""
    if not pairs:
        return {}
    split_of = model_selectors.item_splits(project=project)
    by_split: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for item_id, pair in pairs.items():
        by_split[split_of[item_id]].append(pair)
    result = {}
    for split, split_pairs in sorted(by_split.items()):
        intervals = bootstrap.text_agreement_intervals(
            [first for first, _ in split_pairs], [[second] for _, second in split_pairs],
            n_resamples=n_resamples)
        result[split] = {f"{prefix}{name}": {**interval.to_dict(), "n_items": len(split_pairs)}
                         for name, interval in intervals.items()}
    return result


def plausibility_aggregation(project: Project,
                              crowd: qc_selectors.CrowdRatings | None = None) -> dict:
    """Labels per filler (crowd mean, or the released mean of imported rows) and plausible
    fillers per sentence. The crowd's means come from the QC run's ``crowd`` ratings
    (``crowd_ratings``, read here unless given); imported rows are read as they are."""
    if crowd is None:
        crowd = qc_selectors.crowd_ratings(project=project)
    exportable = qc_selectors.exportable_annotations(project=project).filter(
        rating__isnull=False)
    means: dict[int, float] = {}
    sentence_of: dict[int, int] = {}
    crowd_items, crowd_means = qc_selectors.crowd_rating_means(crowd)
    item_ids = crowd_items.tolist()
    means.update(zip(item_ids, crowd_means.tolist(), strict=True))
    if item_ids:
        clozes = qc_selectors.numeric_columns(
            project.items.order_by().values_list("id", "filler__cloze_id"))
        cloze_of = dict(zip(clozes[:, 0].astype(np.int64).tolist(),
                            [int(cloze) if cloze == cloze else None  # NaN: none
                             for cloze in clozes[:, 1].tolist()], strict=True))
        sentence_of.update((item_id, cloze_of.get(item_id)) for item_id in item_ids)
    released = (exportable.filter(source=Annotation.Source.IMPORT).order_by("id")
                .values_list("item_id", "item__filler__cloze_id", "rating"))
    # The released mean is the authority for imported fillers (the last row of a filler wins).
    for item_id, cloze_id, rating in released.iterator(chunk_size=qc_selectors.CHUNK_SIZE):
        sentence_of[item_id] = cloze_id
        means[item_id] = rating
    labels = {item_id: aggregation.plausibility_label(mean) for item_id, mean in means.items()}
    per_sentence = aggregation.plausible_fillers_per_sentence(
        (sentence_of[item_id], label) for item_id, label in labels.items()
    )
    return {
        "n_fillers": len(labels),
        "labels": dict(sorted(Counter(labels.values()).items())),
        "plausible_fillers_per_sentence": _finite(np.mean(list(per_sentence.values())))
        if per_sentence else None,
    }


def decontext_aggregation(project: Project) -> dict:
    """How many examples get a median-length human output (≥ 2 feasible, no IMPOSSIBLE
    majority) — the examples the scorer can use."""
    rows = (
        qc_selectors.exportable_annotations(project=project)
        .exclude(category="")
        .order_by("item_id", "id")
        .values_list("item_id", "item__target_sentence__text", "category", "text", "payload")
    )
    per_item: dict[int, tuple[str, list]] = {}
    for item_id, original, category, text, payload in rows:
        sentence = (payload or {}).get("decontextualized_sentence") or text
        per_item.setdefault(item_id, (original, []))[1].append((category, sentence))
    humans = (aggregation.decontext_human_output(original, annotations)
              for original, annotations in per_item.values())
    with_output = sum(human is not None and human.scorable for human in humans)
    return {"n_examples": len(per_item), "examples_with_human_output": with_output}


def sluice_cleaning_report(project: Project) -> dict:
    """What the export's cleaning drops, per split, with the named ``qc.cleaning`` rules."""
    per_split: dict[str, dict] = {}
    grouped: dict[str, list[dict]] = defaultdict(list)
    for (_, _, split, q1, a1, q2, text, skipped, status,
         _) in qc_selectors.sluice_context_rows(project=project):
        if status == Annotation.Review.REJECTED:
            continue
        grouped[split].append({cleaning.Q1: q1, cleaning.A1: a1, cleaning.Q2: q2,
                               cleaning.ANSWER: "" if skipped else text})
    for split, rows in sorted(grouped.items()):
        not_skipped = cleaning.drop_skipped(rows)
        long_enough = cleaning.drop_short_q1(not_skipped)
        kept = cleaning.dedupe_references(long_enough) if split == "test" else long_enough
        per_split[split] = {
            "annotations": len(rows),
            "dropped_skipped": len(rows) - len(not_skipped),
            "dropped_short_q1": len(not_skipped) - len(long_enough),
            "dropped_duplicate_references": len(long_enough) - len(kept),
            "exported": len(kept),
        }
    return per_split


# --- flags ----------------------------------------------------------------------------------


def flag_candidates(project: Project, settings: flags.FlagSettings,
                    ratings: agreement.RatingTable | None = None,
                    answers: qc_selectors.AnswerColumns | None = None) -> list[FlagCandidate]:
    """Every finding of the ``qc.flags`` rules that apply to the project's task
    (``ratings``: the plausibility project's ``rating_table``, ``answers``: the run's
    ``qc_answer_columns``, when the caller has them)."""
    found: list[FlagCandidate] = []

    def add(kind: str, results: list[flags.Flag]) -> None:
        found.extend(FlagCandidate(kind, int(flag.target_id), flag.reason_code,
                                   float(flag.score), flag.detail) for flag in results)

    if project.kind == TaskKind.PLAUSIBILITY:
        table = ratings if ratings is not None else rating_table(project)
        add(WORKER, flags.worker_consensus_flags(table, settings))
    elif project.kind == TaskKind.DECONTEXT:
        add(WORKER, flags.worker_consensus_flags(qc_selectors.category_rows(project=project),
                                                 settings))
    timings = qc_selectors.timing_arrays(project=project, answers=answers)
    if len(timings.target_ids):
        add(ANNOTATION, timing.timing_arrays_flags(timings, settings))
    del timings
    # One flag per annotation, naming every warning the worker overrode (stored warnings are
    # {"code", "message"} objects; the flag's fingerprint is per annotation and reason).
    add(ANNOTATION, flags.overridden_warning_flags(
        (annotation_id, ", ".join(sorted({_warning_code(warning) for warning in warnings})))
        for annotation_id, warnings in qc_selectors.overridden_warning_rows(project=project)
    ))
    add(WORKER, flags.gold_flags(*gold_rows(project), settings))
    if project.kind in TEXT_KINDS:
        sources = qc_selectors.source_text_rows(project=project)
        texts = [(annotation_id, sources.get(item_id, ""), text)
                 for annotation_id, item_id, _, text, skipped in
                 qc_selectors.text_rows(project=project) if not skipped and text.strip()]
        add(ANNOTATION, flags.copy_flags(texts))
        if project.kind == TaskKind.REWRITE:
            add(ANNOTATION, flags.rewrite_warning_flags(texts, settings))
    add(ANNOTATION, effort.effort_flags(
        effort.EffortRow(*row) for row in effort_selectors.effort_rows(project=project)))
    if project.kind == TaskKind.SLUICE:
        add(ANNOTATION, flags.sluice_context_flags(
            (annotation_id, q1, a1, text)
            for annotation_id, _, _, q1, a1, _, text, skipped, _, _ in
            qc_selectors.sluice_context_rows(project=project)
            if not skipped and text.strip()
        ))
    return found


def gold_rows(project: Project, *, worker: Worker | None = None) -> tuple[list[tuple], dict]:
    """``(answers, gold)`` for ``qc.flags.gold_flags`` from gold items of the project (the
    answers of ``worker`` only, when given)."""
    gold = dict(
        project.items.filter(is_gold=True, gold_answer__isnull=False)
        .values_list("id", "gold_answer")
    )
    if not gold:
        return [], {}
    gold = {item_id: tuple(answer) if isinstance(answer, list) else answer
            for item_id, answer in gold.items()}
    answered = qc_selectors.qc_annotations(project=project).filter(item_id__in=list(gold))
    if worker is not None:
        answered = answered.filter(worker=worker)
    answers = [
        (worker_id, item_id, rating if rating is not None else (category or text))
        for worker_id, item_id, rating, category, text in
        answered.values_list("worker_id", "item_id", "rating", "category", "text")
    ]
    answers = [(worker, item, int(answer) if isinstance(answer, float) and answer.is_integer()
                else answer) for worker, item, answer in answers]
    return answers, gold


@transaction.atomic
def flags_store(*, project: Project, candidates: list[FlagCandidate]) -> dict[str, int]:
    """Write the findings as Flag rows idempotently (see the module docstring).

    Only what changed is written: new findings are inserted, open flags whose score or detail
    changed are updated, stale open ones deleted; a flag raised again unchanged costs nothing.
    Every statement takes at most ``IN_CHUNK`` ids."""
    by_fingerprint: dict[str, FlagCandidate] = {}
    for candidate in candidates:
        previous = by_fingerprint.get(candidate.fingerprint)
        if previous is None or abs(candidate.score) > abs(previous.score):
            by_fingerprint[candidate.fingerprint] = candidate
    existing = {
        fingerprint: (flag_id, status, score, detail)
        for flag_id, fingerprint, status, score, detail in Flag.objects.select_for_update()
        .filter(project=project, raised_by=Flag.RaisedBy.QC)
        .values_list("id", "fingerprint", "status", "score", "detail")
    }
    annotation_targets = qc_selectors.annotation_targets(
        annotation_ids=[c.target_id for fingerprint, c in by_fingerprint.items()
                        if c.target_kind == ANNOTATION and fingerprint not in existing]
    )
    to_create, to_update = [], []
    still_raised = 0
    for fingerprint, candidate in sorted(by_fingerprint.items()):
        if fingerprint in existing:
            still_raised += 1
            flag_id, _, score, detail = existing[fingerprint]
            # A score recomputed in another summation order may differ in its last bits:
            # that is the same finding, not a change worth a write.
            if not math.isclose(score, candidate.score, rel_tol=1e-9, abs_tol=1e-12) \
                    or detail != candidate.detail:
                to_update.append(Flag(id=flag_id, score=candidate.score,
                                      detail=candidate.detail))
            continue
        fields = {"reason": candidate.reason, "score": candidate.score,
                  "detail": candidate.detail, "raised_by": Flag.RaisedBy.QC}
        if candidate.target_kind == ANNOTATION:
            worker_id, assignment_id = annotation_targets[candidate.target_id]
            fields.update(annotation_id=candidate.target_id, worker_id=worker_id,
                          assignment_id=assignment_id)
        else:
            fields.update(worker_id=candidate.target_id)
        to_create.append(Flag(project=project, fingerprint=fingerprint, **fields))
    Flag.objects.bulk_create(to_create, batch_size=1000)
    Flag.objects.bulk_update(to_update, ["score", "detail"], batch_size=1000)
    stale = [flag_id for fingerprint, (flag_id, status, _, _) in existing.items()
             if fingerprint not in by_fingerprint and status == Flag.Status.OPEN]
    for chunk in qc_selectors.batched(stale, qc_selectors.IN_CHUNK):
        Flag.objects.filter(id__in=chunk).delete()
    return {"created": len(to_create), "still_raised": still_raised,
            "removed_stale_open": len(stale)}


#: The steps of ``project_qc_run`` as its progress reports them.
QC_STEPS = ("counting", "agreement", "aggregation", "flag rules", "storing flags")


def project_qc_run(*, project: Project, store_flags: bool = True,
                   progress: Callable[[int, int | None, str], None] | None = None) -> dict:
    """Compute the QC report of a project and (by default) store its flags.

    ``progress(done, total, message)`` (optional) hears each of ``QC_STEPS`` start."""

    def step(name: str) -> None:
        if progress is not None:
            progress(QC_STEPS.index(name), len(QC_STEPS), name)

    try:
        settings = flags.FlagSettings.from_dict(project.flag_settings)
    except ValueError as error:
        raise ValueError(f"project {project.slug}: flag_settings: {error}") from None
    step("counting")
    # The answers' columns (the flag rules' timing facts, the dashboard's figures), read by
    # the database while the statistics below are computed (PostgreSQL, outside a
    # transaction: ``answer_columns_reader``).
    answer_columns = qc_selectors.answer_columns_reader(project=project)
    counts = answer_counts(project=project)  # read once: the report's and the dashboard's
    report: dict = {
        "project": project.slug,
        "task": project.kind,
        "items_per_split": qc_selectors.split_counts(project=project),
        # "in QC" of the one definition of each count (selectors.counts).
        "annotations": counts.in_qc,
        "flag_settings": settings.to_dict(),
        # Read before the answers: a report is current while these still hold (the Hugging
        # Face card takes its agreement from a current report instead of running QC again).
        "qc_inputs": qc_selectors.qc_inputs(project=project),
    }
    step("agreement")
    ratings = all_ratings = None
    if project.kind == TaskKind.PLAUSIBILITY:
        # Read once: the worker models with the gold items' ratings, agreement and the worker
        # flags without them; the crowd's means from the same read.
        crowd = qc_selectors.crowd_ratings(project=project)
        all_ratings = rating_table(project, with_gold=True, crowd=crowd)
        ratings = without_gold_items(all_ratings, project)
        report["agreement"] = rating_agreement(project, ratings)
        step("aggregation")
        report["aggregation"] = plausibility_aggregation(project, crowd)
        del crowd
    elif project.kind == TaskKind.DECONTEXT:
        report["agreement"] = category_agreement(project)
        step("aggregation")
        report["aggregation"] = decontext_aggregation(project)
    else:
        pairs = text_pairs(project)
        report["agreement"] = text_agreement(project, pairs)
    report["worker_quality"] = qc_models.worker_quality(project=project, settings=settings,
                                                        ratings=all_ratings)
    intervals = qc_models.agreement_intervals(project=project, ratings=ratings)
    if project.kind != TaskKind.PLAUSIBILITY:
        # Text agreement (rewrites; a decontext project's edited sentences, as "edit_"
        # statistics beside its categories' agreement) with its intervals per split.
        prefix = "edit_" if project.kind == TaskKind.DECONTEXT else ""
        if prefix:
            pairs = text_pairs(project)
            report["agreement"].update({f"{prefix}{key}": value for key, value
                                        in text_agreement(project, pairs).items()})
        for split, statistics in text_agreement_intervals(project, pairs,
                                                          prefix=prefix).items():
            intervals.setdefault(split, {}).update(statistics)
    if intervals:  # ratings and categories: bootstrap 95% intervals per split
        report["agreement"]["intervals_by_split"] = intervals
    if project.kind == TaskKind.SLUICE:
        step("aggregation")
        report["cleaning"] = sluice_cleaning_report(project)
        leaks = sluice_cross_split_contexts(project)
        report["leakage"] = {"contexts_in_several_splits": len(leaks),
                             "contexts": {context: list(splits)
                                          for context, splits in sorted(leaks.items())}}
        if leaks:
            report["warnings"] = [describe_cross_split_contexts(leaks)]
    step("flag rules")
    # One pass over the answers for the rest that reads them in bulk (the timing facts, the
    # dashboard's times, days and per-worker counts): each was a scan of the project's answers
    # of its own (a second or two at a million).
    answers = answer_columns()
    candidates = flag_candidates(project, settings, ratings, answers)
    del ratings
    report["flags_raised"] = dict(sorted(Counter(c.reason for c in candidates).items()))
    if store_flags:
        step("storing flags")
        stored = report["flags_stored"] = flags_store(project=project, candidates=candidates)
        # The review queue is planned from the flags table's statistics (planned for 1 row
        # with 11,299 flags in it before, issue 21): refreshed once QC changed enough of it.
        changed = stored["created"] + stored["removed_stale_open"]
        transaction.on_commit(lambda: planner_statistics_refresh_grown(
            written={Flag: changed}, of=[Flag]))
    report["flags_by_status"] = qc_selectors.flag_counts(project=project)
    # The dashboard's figures that read every answer (selectors.dashboard), after the flags
    # so its worker table counts the flags just stored.
    report["dashboard"] = dashboard_figures(project=project, report=report,
                                            rating_table=all_ratings, counts=counts,
                                            answers=answers)
    if progress is not None:
        progress(len(QC_STEPS), len(QC_STEPS), "done")
    return report


def _warning_code(warning) -> str:
    return str(warning.get("code", "")) if isinstance(warning, dict) else str(warning)
