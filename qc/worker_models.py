"""Aggregation with worker-quality models, and the safety rule that decides whether to use one.

Pure numpy over rows ``(item_id, worker_id, label)``:

- :func:`dawid_skene` -- categorical answers (decontext categories, CLAIRE classes, sluice
  skip): one confusion matrix per worker, class priors, EM from the majority vote
  (Dawid & Skene 1979), each matrix shrunk towards the worker's one-coin matrix.
- :func:`bias_noise_ratings` -- 1-5 ratings: each worker has a bias, a noise and a share of
  random answers; a rating is the scale point nearest to ``truth + bias + noise`` (an
  ordinal model: the ends of the scale are open) or a random point; fitted by EM on grids.
  Ratings off a whole-number scale get the Gaussian version
  (:func:`gaussian_bias_noise_ratings`: precision-weighted mean of bias-corrected ratings).
  Dawid-Skene on classes and majority vote both lose to the plain mean on clean ratings;
  this model does not.
- :func:`most_supported_texts` -- free text: per item, the answer most supported by the
  others (sentence chrF against the rest, weighted by the other writers' scores), and each
  worker's score (their answers' mean support).

**The safety rule** (:func:`choose_output`): workers who collude on the same wrong answer fool
every consensus model. A model's output is used only where, on the project's gold items, it is
at least as accurate as the plain mean/vote; otherwise (or without gold items to check on)
the plain output is used and the choice says why.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qc.agreement import as_table

PLAIN = "plain"
MODEL = "model"
METHODS = (PLAIN, MODEL)
DAWID_SKENE = "dawid_skene"
BIAS_NOISE = "bias_noise"
TEXT_SUPPORT = "text_support"
MEAN = "mean"
MAJORITY_VOTE = "majority_vote"


@dataclass(frozen=True)
class CategoricalModel:
    """Dawid-Skene estimates: ``labels[item]``, ``posterior[item]`` (of that label),
    ``reliability[worker]`` (probability of a right answer under the class priors),
    ``priors[label]``, ``iterations`` run."""

    labels: dict
    posterior: dict
    reliability: dict
    priors: dict
    iterations: int


def dawid_skene(rows, *, max_iterations: int = 100, tolerance: float = 1e-6,
                smoothing: float = 1.0, diagonal_prior: float = 3.0,
                one_coin_prior: float = 15.0) -> CategoricalModel:
    """Dawid-Skene EM, starting from the (soft) majority vote.

    Each worker's confusion matrix gets pseudo-counts (a Dirichlet prior per row):
    ``smoothing`` in every cell and ``diagonal_prior`` more on the diagonal (a worker seen on
    few items keeps a usable matrix), and ``one_coin_prior`` spread as the worker's own
    one-coin matrix (their overall share of right answers on the diagonal, the rest evenly
    off it). The last pulls the rarely seen rows of a full matrix -- a worker's answers on the
    rare true classes -- towards the worker's overall accuracy instead of towards chance,
    while a worker with a favourite answer still shows it in the rows seen often. With
    ``one_coin_prior=0`` this is crowd-kit's ``DawidSkene`` plus the first two pseudo-counts."""
    table = as_table(rows)
    n_items, n_workers, n_labels = len(table.items), len(table.workers), len(table.labels)
    items, workers, labels = table.item_codes, table.worker_codes, table.label_codes
    truth = np.zeros((n_items, n_labels))
    np.add.at(truth, (items, labels), 1.0)
    truth /= truth.sum(axis=1, keepdims=True)
    diagonal = np.arange(n_labels)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (reported)
        priors = truth.mean(axis=0) + 1e-12
        counts = np.zeros((n_workers, n_labels, n_labels))
        # counts[w, true j, given l] += P(item i is j) for each answer l of w on i
        np.add.at(counts, (workers, slice(None), labels), truth[items])
        # the worker's one-coin matrix: share of right answers (counted softly, plus one
        # right and one wrong) on the diagonal, the rest evenly off it
        right = (counts[:, diagonal, diagonal].sum(axis=1) + 1.0) / (
            counts.sum(axis=(1, 2)) + 2.0)
        off = one_coin_prior * (1.0 - right) / max(n_labels - 1, 1)
        confusion = counts + float(smoothing) + off[:, None, None]
        confusion[:, diagonal, diagonal] += (diagonal_prior + one_coin_prior * right - off)[
            :, None]
        confusion /= confusion.sum(axis=2, keepdims=True)
        log_truth = np.tile(np.log(priors), (n_items, 1))
        np.add.at(log_truth, items, np.log(confusion[workers, :, labels]))
        log_truth -= log_truth.max(axis=1, keepdims=True)
        new_truth = np.exp(log_truth)
        new_truth /= new_truth.sum(axis=1, keepdims=True)
        change = np.abs(new_truth - truth).max()
        truth = new_truth
        if change < tolerance:
            break
    winners = truth.argmax(axis=1)
    label_values = table.labels.tolist()
    item_ids = table.items.tolist()
    reliability = (confusion[:, diagonal, diagonal] * priors).sum(
        axis=1) / priors.sum()
    return CategoricalModel(
        labels={item: label_values[k] for item, k in zip(item_ids, winners.tolist(),
                                                         strict=True)},
        posterior={item: float(p) for item, p in zip(item_ids, truth.max(axis=1).tolist(),
                                                     strict=True)},
        reliability={worker: float(r) for worker, r in zip(table.workers.tolist(),
                                                           reliability.tolist(), strict=True)},
        priors={label: float(p) for label, p in zip(label_values, priors / priors.sum(),
                                                    strict=True)},
        iterations=iterations,
    )


@dataclass(frozen=True)
class RatingModel:
    """Bias/noise estimates: ``scores[item]`` (estimated true rating, within the scale),
    ``bias[worker]`` (how much higher than the truth they rate), ``noise[worker]`` (standard
    deviation of their ratings around truth + bias), ``reliability[worker]`` (the share of the
    weight an average rater gets: 1 for typical noise, towards 0 for noisy workers or random
    answers), ``spam[worker]`` (the ordinal model's estimate of the share of the worker's
    ratings that are random, ignoring the item; empty for the Gaussian model, which has no
    such term)."""

    scores: dict
    bias: dict
    noise: dict
    reliability: dict
    iterations: int
    spam: dict = field(default_factory=dict)


#: The ordinal model's grids: true scores every ``ORDINAL_STEP`` points of the scale; worker
#: biases every quarter point up to half the number of scale points either way; noise from
#: 0.25 to 3/4 of the scale's span (log-spaced); random-answer shares.
ORDINAL_STEP = 0.1
ORDINAL_NOISE_STEPS = 14
ORDINAL_SPAM_SHARES = (0.0, 0.05, 0.15, 0.3, 0.5, 0.75, 1.0)
#: Items per block of the ordinal model's E step (a block's posterior fits the cache).
ORDINAL_BLOCK = 2048


def bias_noise_ratings(rows, *, scale: tuple[float, float] = (1.0, 5.0),
                       max_iterations: int = 50, tolerance: float = 1e-3,
                       bias_sd: float = 1.0, prior_ratings: float = 5.0) -> RatingModel:
    """Estimate each item's true rating and each worker's bias and noise.

    Ratings that are whole points of a whole-number ``scale`` (1-5 plausibility) get the
    **ordinal** model: a worker's rating is the scale point nearest to ``truth + bias +
    noise`` (normal noise, the ends of the scale take everything beyond them: a lenient
    rater's 5 says "at least 3.5", not "3.5"), or, with the worker's own probability
    ``spam``, a random point of the scale. Fitted by EM on grids (``ORDINAL_*``): items get
    a posterior over true scores (prior: the learnt distribution of true scores, as
    Dawid-Skene learns class priors) and their score is its mean; each worker gets the
    most probable (bias, noise, spam) given the items' posteriors, with a normal prior of
    sd ``bias_sd`` on the bias and ``prior_ratings`` pseudo-ratings that behave like the
    pool's average rating (a worker seen on few ratings stays near the pool, never a
    noiseless super-rater). Random clickers get spam near 1, so their ratings weigh
    nothing (and are reported with no bias and the grid's largest noise); biased raters are
    corrected and keep their weight.

    EM stops when the items' scores moved by less than ``tolerance`` on average (mean
    absolute change between two iterations), or after ``max_iterations``.

    Other ratings (fractions, or a fractional scale) get :func:`gaussian_bias_noise_ratings`.
    """
    table = as_table(rows)
    values = table.label_values().astype(np.float64)
    low, high = scale
    whole = (float(low).is_integer() and float(high).is_integer() and high > low
             and bool(np.all(values == np.rint(values)))
             and bool(np.all((values >= low) & (values <= high))))
    if not whole or not table.n_ratings:
        return gaussian_bias_noise_ratings(table, scale=scale)
    return _ordinal_bias_noise(table, values, int(low), int(high), max_iterations=max_iterations,
                               tolerance=tolerance, bias_sd=bias_sd,
                               prior_ratings=prior_ratings)


def _ordinal_bias_noise(table, values, low: int, high: int, *, max_iterations: int,
                        tolerance: float, bias_sd: float, prior_ratings: float) -> RatingModel:
    from scipy import sparse
    from scipy.special import ndtr

    n_points = high - low + 1
    answer = values.astype(np.int64) - low
    items, workers = table.item_codes, table.worker_codes
    n_items, n_workers, n = len(table.items), len(table.workers), len(values)
    grid = np.arange(low, high + ORDINAL_STEP / 2, ORDINAL_STEP)
    biases = np.arange(-n_points / 2, n_points / 2 + 0.125, 0.25)
    noises = np.geomspace(0.25, 0.75 * (high - low), ORDINAL_NOISE_STEPS)
    bias, noise, spam = (axis.ravel() for axis in np.meshgrid(
        biases, noises, np.array(ORDINAL_SPAM_SHARES), indexing="ij"))
    # A worker who only answers at random has no bias or noise to speak of: one such point,
    # reported as no bias and the largest noise (not the first grid point, a precise rater's).
    kept = (spam < 1.0) | ((bias == 0.0) & (noise == noises[-1]))
    bias, noise, spam = bias[kept], noise[kept], spam[kept]
    # probability[θ, answer, true score]: the scale point nearest truth + bias + noise, ends
    # open, or with probability spam a uniformly random point.
    edges = np.arange(low - 0.5, high + 1.0)
    below = ndtr((edges[None, :, None] - grid[None, None, :] - bias[:, None, None])
                 / noise[:, None, None])
    below[:, 0, :], below[:, -1, :] = 0.0, 1.0
    probability = ((1.0 - spam)[:, None, None] * np.diff(below, axis=1)
                   + spam[:, None, None] / n_points)
    # float32 throughout the loop: half the memory and time at a million ratings, and far
    # finer than the grids.
    log_probability = np.log(np.maximum(probability, 1e-12)).reshape(len(bias), -1).astype(
        np.float32)
    log_parameter_prior = -0.5 * (bias / bias_sd) ** 2
    # The E step's ratings by item: an item's log-likelihood is the sum of its ratings' rows
    # of a table with one row per (parameter point some worker chose, answer) -- a few hundred
    # rows that stay in the cache, where a row per (worker, answer) did not. Items are taken
    # in order of their number of ratings, so that a run of items with k ratings each is a
    # (items x k) array of rows: k gathers and k - 1 additions, with no per-item loop.
    per_item = np.bincount(items, minlength=n_items)
    item_order = np.argsort(per_item, kind="stable")
    position = np.empty(n_items, dtype=np.int64)
    position[item_order] = np.arange(n_items)
    by_position = np.argsort(position[items], kind="stable")
    rating_worker, rating_answer = workers[by_position], answer[by_position]
    sorted_counts = per_item[item_order]
    starts = np.concatenate(([0], np.cumsum(sorted_counts)))
    # Blocks of at most ORDINAL_BLOCK items with the same number of ratings: every elementwise
    # step of the E step works on a block that fits the cache instead of streaming the whole
    # posterior through memory once per step.
    blocks = []
    run_edges = np.flatnonzero(np.diff(sorted_counts)) + 1
    for run_start, run_stop in zip(np.concatenate(([0], run_edges)),
                                   np.concatenate((run_edges, [n_items])), strict=True):
        blocks.extend((int(start), int(min(start + ORDINAL_BLOCK, run_stop)))
                      for start in range(int(run_start), int(run_stop), ORDINAL_BLOCK))
    mean = np.bincount(items, values, minlength=n_items) / np.maximum(per_item, 1)
    # The M step's sparse counts of ratings per (worker-answer cell, item): no ratings x grid
    # array is ever built (a million ratings would make it 650 MB).
    cell = workers * n_points + answer
    cell_items = sparse.csr_matrix((np.ones(n, dtype=np.float32), (cell, position[items])),
                                   shape=(n_workers * n_points, n_items))
    # The starting posterior (around each item's mean) computed in float64 a block of items at
    # a time: over all items at once its float64 temporaries were the model's peak memory.
    # Rows of the posterior (and of ``scores``) are items in ``item_order``.
    posterior = np.empty((n_items, len(grid)), dtype=np.float32)
    for start, stop in blocks:
        posterior[start:stop] = np.exp(
            -0.5 * ((grid[None, :] - mean[item_order[start:stop], None]) / 0.5) ** 2)
    posterior /= posterior.sum(axis=1, keepdims=True)
    # Scores in float64 a block at a time (the whole posterior in float64 would be twice its
    # size again).
    scores = np.empty(n_items)
    for start, stop in blocks:
        scores[start:stop] = posterior[start:stop] @ grid
    chosen = np.zeros(n_workers, dtype=np.int64)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (reported)
        # M step: expected counts of each worker's answers at each true score, plus
        # prior_ratings pseudo-ratings distributed as the pool's.
        counts = (cell_items @ posterior).reshape(n_workers, -1)
        pool = counts.sum(axis=0) / n
        fit = (counts + prior_ratings * pool[None, :]) @ log_probability.T
        chosen = np.argmax(fit + log_parameter_prior[None, :], axis=1)
        score_prior = posterior.mean(axis=0) + 1e-3 / len(grid)
        log_score_prior = np.log(score_prior / score_prior.sum()).astype(np.float32)
        # E step: each item's posterior over true scores, written over the last one.
        points, slot = np.unique(chosen, return_inverse=True)
        table_rows = log_probability[points].reshape(len(points) * n_points, len(grid))
        row = slot[rating_worker] * n_points + rating_answer
        new_scores = np.empty(n_items)
        for start, stop in blocks:
            rows_of = row[starts[start]:starts[stop]].reshape(
                stop - start, -1)  # items x their k ratings
            block = table_rows[rows_of[:, 0]]
            for k in range(1, rows_of.shape[1]):
                block += table_rows[rows_of[:, k]]
            block += log_score_prior[None, :]
            block -= block.max(axis=1, keepdims=True)
            np.exp(block, out=block)
            block /= block.sum(axis=1, keepdims=True)
            posterior[start:stop] = block
            new_scores[start:stop] = block @ grid
        # Converged when the scores moved by less than ``tolerance`` on average. Not the
        # largest move: at a million ratings a few items jump by a grid step whenever one of
        # their workers' parameters flips to a neighbouring grid point, which kept the largest
        # move above 1e-3 for 50 iterations and more while the average fell below it by the
        # 36th (``docs/qc.md``).
        change = float(np.abs(new_scores - scores).mean()) if n_items else 0.0
        scores = new_scores
        if change < tolerance:
            break
    item_scores = np.empty(n_items)
    item_scores[item_order] = scores
    weight = (1.0 - spam[chosen]) / noise[chosen] ** 2
    typical = float(np.median(weight))
    worker_ids = table.workers.tolist()
    return RatingModel(
        scores=dict(zip(table.items.tolist(), item_scores.tolist(), strict=True)),
        bias=dict(zip(worker_ids, bias[chosen].tolist(), strict=True)),
        noise=dict(zip(worker_ids, noise[chosen].tolist(), strict=True)),
        reliability=dict(zip(worker_ids, np.minimum(weight / max(typical, 1e-12), 1.0)
                             .tolist(), strict=True)),
        iterations=iterations,
        spam=dict(zip(worker_ids, spam[chosen].tolist(), strict=True)),
    )


def gaussian_bias_noise_ratings(rows, *, scale: tuple[float, float] = (1.0, 5.0),
                                max_iterations: int = 50, tolerance: float = 1e-6,
                                bias_prior: float = 3.0,
                                noise_prior: float = 5.0) -> RatingModel:
    """Estimate ``rating = truth + bias[worker] + noise`` by alternating updates (ratings that
    are not whole points of a whole-number scale; see :func:`bias_noise_ratings`).

    ``bias_prior`` / ``noise_prior`` are pseudo-counts: a worker's bias is shrunk towards 0 as
    if they had ``bias_prior`` more ratings with no bias, their noise variance towards the
    common one as if they had ``noise_prior`` more ratings at it. Biases are centred on the
    median worker's (the scale's level is the typical worker's, not the biased ones').
    """
    table = as_table(rows)
    values = table.label_values().astype(np.float64)
    items, workers = table.item_codes, table.worker_codes
    n_items, n_workers = len(table.items), len(table.workers)
    per_worker = np.bincount(workers, minlength=n_workers).astype(np.float64)
    per_item = np.bincount(items, minlength=n_items).astype(np.float64)
    truth = np.bincount(items, values, minlength=n_items) / np.maximum(per_item, 1)
    bias = np.zeros(n_workers)
    weight = np.ones(n_workers)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (reported)
        residual = values - truth[items]
        bias = np.bincount(workers, residual, minlength=n_workers) / (per_worker + bias_prior)
        bias -= np.median(bias)
        error = values - bias[workers] - truth[items]
        common = float(np.mean(error ** 2)) if len(error) else 1.0
        common = max(common, 1e-3)
        variance = (np.bincount(workers, error ** 2, minlength=n_workers)
                    + noise_prior * common) / (per_worker + noise_prior)
        weight = 1.0 / variance
        weighted = weight[workers]
        new_truth = np.bincount(items, weighted * (values - bias[workers]), minlength=n_items) \
            / np.bincount(items, weighted, minlength=n_items)
        new_truth = np.clip(new_truth, *scale)
        change = float(np.abs(new_truth - truth).max()) if n_items else 0.0
        truth = new_truth
        if change < tolerance:
            break
    typical = float(np.median(weight)) if n_workers else 1.0
    worker_ids = table.workers.tolist()
    return RatingModel(
        scores=dict(zip(table.items.tolist(), truth.tolist(), strict=True)),
        bias=dict(zip(worker_ids, bias.tolist(), strict=True)),
        noise=dict(zip(worker_ids, np.sqrt(1.0 / weight).tolist(), strict=True)),
        reliability=dict(zip(worker_ids, np.minimum(weight / typical, 1.0).tolist(),
                             strict=True)),
        iterations=iterations,
    )


@dataclass(frozen=True)
class TextModel:
    """``texts[item]`` (the chosen answer), ``support[item]`` (its support, 0-1) and
    ``reliability[worker]`` (the mean support of the worker's answers, 0-1)."""

    texts: dict
    support: dict
    reliability: dict


def _chrf(hypothesis: str, reference: str) -> float:
    from qc.textmetrics import sentence_chrf  # sacrebleu-compatible chrF (β = 3)

    return sentence_chrf(hypothesis, [reference]).f_score / 100.0


def most_supported_texts(rows, *, rounds: int = 2,
                         similarity: Callable[[str, str], float] = _chrf) -> TextModel:
    """Per item, the answer with the highest weighted mean similarity to the other answers
    (weights: the other writers' scores; equal in the first round), and per worker the mean
    support of their answers. An item with one answer keeps it (support 0: nothing to
    compare with). ``similarity`` is symmetric-enough text similarity in 0-1 (chrF)."""
    by_item: dict[Any, list[tuple[Any, str]]] = defaultdict(list)
    for item_id, worker_id, text in rows:
        by_item[item_id].append((worker_id, str(text)))
    pair_scores: dict[Any, np.ndarray] = {}
    for item_id, answers in by_item.items():
        n = len(answers)
        matrix = np.zeros((n, n))
        for a in range(n):
            for b in range(n):
                if a != b:
                    matrix[a, b] = similarity(answers[a][1], answers[b][1])
        pair_scores[item_id] = matrix
    reliability: dict = {}
    support_of: dict = {}
    for _ in range(max(rounds, 1)):
        totals: dict = defaultdict(list)
        support_of = {}
        for item_id, answers in by_item.items():
            matrix = pair_scores[item_id]
            weights = np.array([reliability.get(worker, 1.0) for worker, _ in answers])
            support = np.zeros(len(answers))
            for a in range(len(answers)):
                others = np.arange(len(answers)) != a
                if others.any() and weights[others].sum() > 0:
                    support[a] = float(np.average(matrix[a, others], weights=weights[others]))
            support_of[item_id] = support
            for (worker, _), value in zip(answers, support, strict=True):
                if len(answers) > 1:
                    totals[worker].append(value)
        reliability = {worker: float(np.mean(values)) for worker, values in totals.items()}
    texts, best_support = {}, {}
    for item_id, answers in by_item.items():
        best = int(np.argmax(support_of[item_id]))
        texts[item_id] = answers[best][1]
        best_support[item_id] = float(support_of[item_id][best])
    return TextModel(texts, best_support, reliability)


# --- the safety rule ------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """Which output the safety rule chose and why (JSON-friendly through :meth:`to_dict`)."""

    requested: str
    used: str
    model: str
    plain: str
    reason: str
    gold_items: int = 0
    model_gold_accuracy: float | None = None
    plain_gold_accuracy: float | None = None
    details: dict = field(default_factory=dict)

    @property
    def fell_back(self) -> bool:
        return self.requested == MODEL and self.used != MODEL

    def to_dict(self) -> dict:
        return {"requested": self.requested, "used": self.used, "model": self.model,
                "plain": self.plain, "fell_back": self.fell_back, "reason": self.reason,
                "gold_items": self.gold_items,
                "model_gold_accuracy": self.model_gold_accuracy,
                "plain_gold_accuracy": self.plain_gold_accuracy, **self.details}


def gold_accuracy(output: Mapping, gold: Mapping,
                  correct: Callable[[Any, Any], bool]) -> tuple[int, float | None]:
    """(gold items with an output, share of them where ``correct(output, gold)``)."""
    checked = [correct(output[item], answer) for item, answer in gold.items() if item in output]
    return len(checked), (float(np.mean(checked)) if checked else None)


def choose_output(*, requested: str, model_name: str, plain_name: str, model_output: Mapping,
                  plain_output: Mapping, gold: Mapping,
                  correct: Callable[[Any, Any], bool]) -> Choice:
    """The safety rule: the model's output when ``requested`` is ``model`` and, on the gold
    items answered, it is at least as accurate as the plain output; else the plain one."""
    if requested not in METHODS:
        raise ValueError(f"aggregation must be one of {', '.join(METHODS)}, not {requested!r}")
    n_gold, model_accuracy = gold_accuracy(model_output, gold, correct)
    _, plain_accuracy = gold_accuracy(plain_output, gold, correct)
    common = {"requested": requested, "model": model_name, "plain": plain_name,
              "gold_items": n_gold, "model_gold_accuracy": model_accuracy,
              "plain_gold_accuracy": plain_accuracy}
    if requested == PLAIN:
        return Choice(used=PLAIN, reason="plain aggregation was asked for", **common)
    if n_gold == 0:
        return Choice(used=PLAIN, reason=(
            f"no gold item has answers, so {model_name} could not be checked against "
            f"{plain_name}: {plain_name} is used"), **common)
    if model_accuracy >= plain_accuracy:
        return Choice(used=MODEL, reason=(
            f"{model_name} is at least as accurate as {plain_name} on {n_gold} gold items "
            f"({model_accuracy:.0%} against {plain_accuracy:.0%})"), **common)
    return Choice(used=PLAIN, reason=(
        f"{model_name} is less accurate than {plain_name} on {n_gold} gold items "
        f"({model_accuracy:.0%} against {plain_accuracy:.0%}), so {plain_name} is used"),
        **common)


def plain_means(rows) -> dict:
    """Mean rating per item (``rows``: ``(item, worker, rating)`` rows or a RatingTable)."""
    table = as_table(rows)
    if not table.n_ratings:
        return {}
    per_item = np.bincount(table.item_codes, minlength=len(table.items))
    sums = np.bincount(table.item_codes, table.label_values(), minlength=len(table.items))
    return dict(zip(table.items.tolist(), (sums / per_item).tolist(), strict=True))


def aggregate_ratings(rows, *, requested: str, gold: Mapping,
                      classify: Callable[[float], Any]) -> tuple[dict, Choice, RatingModel]:
    """Scores per item by the chosen method (the safety rule judges ``classify``-ed scores
    against ``classify``-ed gold scores; a gold answer may list several accepted scores), the
    choice, and the model (worker estimates). ``rows``: rating rows or a RatingTable."""
    table = as_table(rows)
    plain = plain_means(table)
    model = bias_noise_ratings(table)
    choice = choose_output(
        requested=requested, model_name=BIAS_NOISE, plain_name=MEAN,
        model_output=model.scores, plain_output=plain, gold=gold,
        correct=lambda score, expected: classify(score) in {
            classify(float(value)) for value in _accepted(expected)})
    return (model.scores if choice.used == MODEL else plain), choice, model


def _accepted(expected) -> tuple:
    """A gold answer as the tuple of accepted answers (a list/set of them, or one)."""
    if isinstance(expected, list | tuple | set | frozenset):
        return tuple(expected)
    return (expected,)


def _matches(label, expected) -> bool:
    """A label matches a gold answer: equal, or one of a list/set of accepted answers."""
    return label in _accepted(expected)


def aggregate_categories(rows: Iterable, *, requested: str, gold: Mapping,
                         preference=None) -> tuple[dict, Choice, CategoricalModel]:
    """Labels per item by the chosen method, the choice and the Dawid-Skene model."""
    from qc.aggregation import majority_labels

    rows = list(rows)
    plain = majority_labels(rows, preference)
    model = dawid_skene(rows)
    choice = choose_output(requested=requested, model_name=DAWID_SKENE,
                           plain_name=MAJORITY_VOTE, model_output=model.labels,
                           plain_output=plain, gold=gold,
                           correct=_matches)
    return (model.labels if choice.used == MODEL else plain), choice, model
