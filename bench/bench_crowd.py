"""Simulated crowds with known truth: worker-quality aggregation and adaptive redundancy
against the plain mean / majority vote, at equal cost.

Ratings: the 2,500 real CLAIRE dev fillers (../shared/data/claire/dev_scores.tsv and
dev_labels.tsv: the released mean score and class are the truth). Categorical: 2,500
decontext-like items (DONE 55%, IMPOSSIBLE 30%, UNNECESSARY 15%). 100 workers, 5 judgements an
item, 5% of the items are the project's gold (the safety rule checks on them; accuracy is
measured on the others). Pools mix reliable workers with spammers, split evenly among random
clickers, biased raters and copy workers (who paste one shared "LLM" answer per item); the
``collusion`` pool is 30% copy workers only. Every figure is the mean over ``--seeds`` runs.

"known workers" is the ceiling: the Bayes estimate from the same five judgements with the
simulation's TRUE worker parameters (each worker's kind, noise, bias or confusion matrix; the
true score distribution / class priors; an item's copy workers counted once, as they paste one
answer). A method that has to learn the workers from the answers cannot beat it on average,
so a target above it is out of reach with this crowd and this redundancy.

    python3 bench/bench_crowd.py [--seeds 20] [--items 2500] [--workers 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qc.aggregation import majority_labels, plausibility_labels
from qc.redundancy import RedundancyPolicy, needs_more
from qc.worker_models import (
    MODEL,
    aggregate_categories,
    aggregate_ratings,
)

CLAIRE = Path(__file__).resolve().parents[2] / "shared" / "data" / "claire"
CATEGORIES = np.array(["DONE", "IMPOSSIBLE", "UNNECESSARY"], dtype=object)
CATEGORY_PRIORS = np.array([0.55, 0.30, 0.15])
POOLS = {"none": 0.0, "10%": 0.1, "20%": 0.2, "30%": 0.3, "40%": 0.4}
GOLD_SHARE = 0.05
REDUNDANCY = 5
#: A second adaptive policy for comparison: 3 judgements, up to 5 (never more than fixed-5
#: costs). The first is ``RedundancyPolicy()``'s defaults.
CHEAP_POLICY = RedundancyPolicy(start=3, maximum=5)


def claire_truth(folder: Path = CLAIRE) -> tuple[np.ndarray, np.ndarray]:
    """(released mean scores, released classes) of the dev fillers, in file order."""
    scores = dict(line.split("\t") for line in
                  (folder / "dev_scores.tsv").read_text().splitlines() if line)
    labels = dict(line.split("\t") for line in
                  (folder / "dev_labels.tsv").read_text().splitlines() if line)
    ids = sorted(scores)
    return (np.array([float(scores[i]) for i in ids]),
            np.array([labels[i].strip() for i in ids], dtype=object))


def worker_kinds(rng, n_workers: int, spam: float, pool: str) -> np.ndarray:
    """Kind per worker: reliable, random, biased, copy."""
    n_spam = round(spam * n_workers)
    if pool == "collusion":
        spammers = ["copy"] * n_spam
    else:
        spammers = [("random", "biased", "copy")[k % 3] for k in range(n_spam)]
    kinds = np.array(spammers + ["reliable"] * (n_workers - n_spam), dtype=object)
    rng.shuffle(kinds)
    return kinds


def assignments(rng, n_items: int, n_workers: int, per_item: int) -> np.ndarray:
    """``per_item`` distinct random workers per item (n_items x per_item)."""
    return np.argsort(rng.random((n_items, n_workers)), axis=1)[:, :per_item]


#: The simulated raters: honest noise sd drawn per worker, biased raters' bias (±) and
#: noise, the pasted answer's noise (see :func:`simulate_ratings`).
HONEST_NOISE = (0.6, 1.1)
BIAS, BIASED_NOISE, LLM_NOISE = 1.5, 0.7, 1.2


def simulate_ratings(rng, truth: np.ndarray, kinds: np.ndarray, chosen: np.ndarray):
    """A rating for every (item, worker) of ``chosen`` (n_items x k), and the workers' true
    parameters ``(noise_sd, bias)`` (for :func:`known_workers_ratings`)."""
    n_workers = len(kinds)
    noise_sd = rng.uniform(*HONEST_NOISE, n_workers)
    bias = rng.choice([-BIAS, BIAS], n_workers)
    # One pasted "LLM" answer per item: near the truth, but its error is shared by every copier.
    llm = np.clip(np.rint(truth + rng.normal(0, LLM_NOISE, len(truth))), 1, 5)
    t = truth[:, None]
    honest = np.clip(np.rint(t + rng.normal(0, 1, chosen.shape) * noise_sd[chosen]), 1, 5)
    biased = np.clip(np.rint(t + bias[chosen] + rng.normal(0, BIASED_NOISE, chosen.shape)), 1, 5)
    random = rng.integers(1, 6, chosen.shape).astype(float)
    copied = np.broadcast_to(llm[:, None], chosen.shape)
    kind = kinds[chosen]
    return np.select([kind == "reliable", kind == "biased", kind == "random"],
                     [honest, biased, random], copied), (noise_sd, bias)


def simulate_categories(rng, truth: np.ndarray, kinds: np.ndarray, chosen: np.ndarray):
    """A class for every (item, worker) of ``chosen``, and the workers' true parameters
    ``(accuracy, favourite)`` (for :func:`known_workers_categories`)."""
    n_workers, n_classes = len(kinds), len(CATEGORIES)
    # Crowd decontext agreement is low (the paper: Fleiss' kappa 0.30): honest workers are
    # right 55-85% of the time.
    accuracy = rng.uniform(0.55, 0.85, n_workers)
    favourite = rng.integers(0, n_classes, n_workers)
    # One pasted answer per item, right 60% of the time, else one wrong class shared by all.
    llm = np.where(rng.random(len(truth)) < 0.6, truth,
                   (truth + rng.integers(1, n_classes, len(truth))) % n_classes)
    t = np.broadcast_to(truth[:, None], chosen.shape)
    wrong = (t + rng.integers(1, n_classes, chosen.shape)) % n_classes
    honest = np.where(rng.random(chosen.shape) < accuracy[chosen], t, wrong)
    biased = np.where(rng.random(chosen.shape) < 0.8, favourite[chosen], honest)
    random = rng.integers(0, n_classes, chosen.shape)
    copied = np.broadcast_to(llm[:, None], chosen.shape)
    kind = kinds[chosen]
    return np.select([kind == "reliable", kind == "biased", kind == "random"],
                     [honest, biased, random], copied), (accuracy, favourite)


def _first_copier_only(kinds: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Mask of the judgements the known-workers posterior counts: every one but the second
    and later copy workers of an item (they paste the same answer as the first: one piece of
    evidence, not several)."""
    copy = kinds[chosen] == "copy"
    return ~copy | (np.cumsum(copy, axis=1) == 1)


def known_workers_ratings(truth: np.ndarray, kinds: np.ndarray, parameters, chosen: np.ndarray,
                          ratings: np.ndarray) -> np.ndarray:
    """The ceiling of any aggregation of these ratings: each item's posterior mean score under
    the simulation's own model with the workers' TRUE parameters (kind, noise, bias) and the
    true scores' distribution as prior -- the Bayes estimate no method that has to learn the
    workers can beat on average."""
    from scipy.special import ndtr

    noise_sd, bias = parameters
    grid = np.arange(1.0, 5.0 + 1e-9, 0.05)
    edges = np.arange(0.5, 6.0)

    def log_likelihood(shift: float, sd: float) -> np.ndarray:  # (answer 1-5, grid)
        below = ndtr((edges[:, None] - grid[None, :] - shift) / sd)
        below[0], below[-1] = 0.0, 1.0
        return np.log(np.maximum(np.diff(below, axis=0), 1e-300))

    table = np.empty((len(kinds), 5, len(grid)))
    for worker, kind in enumerate(kinds.tolist()):
        table[worker] = (log_likelihood(0.0, noise_sd[worker]) if kind == "reliable" else
                         log_likelihood(bias[worker], BIASED_NOISE) if kind == "biased" else
                         np.full((5, len(grid)), np.log(0.2)) if kind == "random" else
                         log_likelihood(0.0, LLM_NOISE))
    counted = _first_copier_only(kinds, chosen)
    answers = ratings.astype(int) - 1
    nearest = np.clip(np.rint((truth - 1.0) / 0.05).astype(int), 0, len(grid) - 1)
    log_prior = np.log((np.bincount(nearest, minlength=len(grid)) + 0.5) / (len(truth) + 0.5))
    log_posterior = log_prior + (table[chosen, answers] * counted[..., None]).sum(axis=1)
    log_posterior -= log_posterior.max(axis=1, keepdims=True)
    posterior = np.exp(log_posterior)
    return posterior @ grid / posterior.sum(axis=1)


def known_workers_categories(kinds: np.ndarray, parameters, chosen: np.ndarray,
                             answers: np.ndarray) -> np.ndarray:
    """The ceiling of any aggregation of these answers: each item's most probable class under
    the simulation's own model with the workers' TRUE confusion matrices and the true class
    priors (the Bayes decision: no method that has to learn the workers beats it on average)."""
    accuracy, favourite = parameters
    n_classes = len(CATEGORIES)
    confusion = np.empty((len(kinds), n_classes, n_classes))
    for worker, kind in enumerate(kinds.tolist()):
        honest = np.full((n_classes, n_classes), (1 - accuracy[worker]) / (n_classes - 1))
        np.fill_diagonal(honest, accuracy[worker])
        if kind == "reliable":
            confusion[worker] = honest
        elif kind == "biased":
            confusion[worker] = 0.2 * honest
            confusion[worker][:, favourite[worker]] += 0.8
        elif kind == "random":
            confusion[worker] = 1.0 / n_classes
        else:
            confusion[worker] = np.full((n_classes, n_classes), 0.4 / (n_classes - 1))
            np.fill_diagonal(confusion[worker], 0.6)
    counted = _first_copier_only(kinds, chosen)
    log_posterior = np.log(CATEGORY_PRIORS) + (
        np.log(confusion[chosen, :, answers]) * counted[..., None]).sum(axis=1)
    return log_posterior.argmax(axis=1)


def rows_of(chosen: np.ndarray, answers: np.ndarray, columns: int | None = None,
            counts: np.ndarray | None = None) -> list[tuple]:
    """Rows (item, worker, answer) of the first ``counts[i]`` (or ``columns``) judgements."""
    n_items, width = chosen.shape
    limit = counts if counts is not None else np.full(n_items, columns or width)
    return [(i, int(chosen[i, k]), answers[i, k].item() if hasattr(answers[i, k], "item")
             else answers[i, k]) for i in range(n_items) for k in range(int(limit[i]))]


def adaptive_counts(answers: np.ndarray, policy: RedundancyPolicy, *, numeric: bool):
    """Judgements each item gets under ``policy`` (answers in the order they arrive)."""
    counts = np.empty(len(answers), dtype=int)
    for i, row in enumerate(answers):
        n = policy.start
        while n < policy.maximum and needs_more(list(row[:n]), policy, numeric=numeric):
            n += 1
        counts[i] = n
    return counts


def rating_run(seed: int, truth_scores, truth_labels, pool: str, spam: float, n_workers: int,
               policy: RedundancyPolicy) -> dict:
    rng = np.random.default_rng(seed)
    n_items = len(truth_scores)
    kinds = worker_kinds(rng, n_workers, spam, pool)
    chosen = assignments(rng, n_items, n_workers, policy.maximum)
    ratings, parameters = simulate_ratings(rng, truth_scores, kinds, chosen)
    gold_items = rng.random(n_items) < GOLD_SHARE
    gold = {i: float(truth_scores[i]) for i in np.flatnonzero(gold_items).tolist()}
    scored = ~gold_items

    def metrics(scores: dict) -> tuple[float, float]:
        estimate = np.array([scores[i] for i in range(n_items)])
        accuracy = float(np.mean(plausibility_labels(estimate)[scored] == truth_labels[scored]))
        return 100 * accuracy, float(spearmanr(estimate[scored], truth_scores[scored])[0])

    fixed_rows = rows_of(chosen, ratings, REDUNDANCY)
    chosen_scores, choice, model = aggregate_ratings(
        fixed_rows, requested=MODEL, gold=gold, classify=lambda s: plausibility_labels([s])[0])
    plain = {i: float(np.mean(ratings[i, :REDUNDANCY])) for i in range(n_items)}
    known = known_workers_ratings(truth_scores, kinds, parameters, chosen[:, :REDUNDANCY],
                                  ratings[:, :REDUNDANCY])
    result = {"plain": metrics(plain), "model": metrics(model.scores),
              "chosen": metrics(chosen_scores), "fell_back": choice.fell_back,
              "known": metrics(dict(enumerate(known.tolist())))}
    for name, adaptive_policy in (("adaptive", policy), ("adaptive5", CHEAP_POLICY)):
        counts = adaptive_counts(ratings, adaptive_policy, numeric=True)
        result[name] = metrics({i: float(np.mean(ratings[i, :counts[i]]))
                                for i in range(n_items)})
        result[f"{name}_judgements"] = float(counts.mean())
    return result


def category_run(seed: int, n_items: int, pool: str, spam: float, n_workers: int,
                 policy: RedundancyPolicy) -> dict:
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(CATEGORIES), n_items, p=CATEGORY_PRIORS)
    kinds = worker_kinds(rng, n_workers, spam, pool)
    chosen = assignments(rng, n_items, n_workers, policy.maximum)
    answers, parameters = simulate_categories(rng, truth, kinds, chosen)
    labels = CATEGORIES[answers]
    gold_items = rng.random(n_items) < GOLD_SHARE
    gold = {i: CATEGORIES[truth[i]] for i in np.flatnonzero(gold_items).tolist()}
    scored = ~gold_items
    true_labels = CATEGORIES[truth]

    def accuracy(output: dict) -> float:
        estimate = np.array([output[i] for i in range(n_items)], dtype=object)
        return 100 * float(np.mean(estimate[scored] == true_labels[scored]))

    fixed_rows = rows_of(chosen, labels, REDUNDANCY)
    preference = tuple(CATEGORIES)
    chosen_labels, choice, model = aggregate_categories(fixed_rows, requested=MODEL, gold=gold,
                                                        preference=preference)
    plain = majority_labels(fixed_rows, preference)
    known = known_workers_categories(kinds, parameters, chosen[:, :REDUNDANCY],
                                     answers[:, :REDUNDANCY])
    result = {"plain": accuracy(plain), "model": accuracy(model.labels),
              "chosen": accuracy(chosen_labels), "fell_back": choice.fell_back,
              "known": accuracy(dict(enumerate(CATEGORIES[known].tolist())))}
    for name, adaptive_policy in (("adaptive", policy), ("adaptive5", CHEAP_POLICY)):
        counts = adaptive_counts(answers, adaptive_policy, numeric=False)
        result[name] = accuracy(majority_labels(rows_of(chosen, labels, counts=counts),
                                                preference))
        result[f"{name}_judgements"] = float(counts.mean())
    return result


def summarise(runs: list[dict]) -> dict:
    summary = {}
    for key in runs[0]:
        values = [run[key] for run in runs]
        if isinstance(values[0], tuple):
            summary[key] = [round(float(np.mean([v[k] for v in values])), 3) for k in range(2)]
        else:
            summary[key] = round(float(np.mean(values)), 3)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--items", type=int, default=2500, help="categorical items")
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--claire", type=Path, default=CLAIRE)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    policy = RedundancyPolicy()
    truth_scores, truth_labels = claire_truth(args.claire)
    started = time.perf_counter()
    report: dict = {"ratings": {}, "categorical": {}}
    pools = [(name, "mixed", share) for name, share in POOLS.items()]
    pools.append(("30% colluding copiers", "collusion", 0.3))
    for name, pool, share in pools:
        report["ratings"][name] = summarise([
            rating_run(seed, truth_scores, truth_labels, pool, share, args.workers, policy)
            for seed in range(args.seeds)])
        report["categorical"][name] = summarise([
            category_run(seed, args.items, pool, share, args.workers, policy)
            for seed in range(args.seeds)])
    report["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{args.seeds} seeds, {len(truth_scores)} CLAIRE dev fillers / {args.items} "
          f"categorical items, {args.workers} workers, {REDUNDANCY} judgements an item "
          f"(adaptive: {policy.start} up to {policy.maximum}, or up to "
          f"{CHEAP_POLICY.maximum})")
    print("ratings: class accuracy % (Spearman)")
    adaptive = f"{policy.start}->{policy.maximum}"
    cheap = f"{CHEAP_POLICY.start}->{CHEAP_POLICY.maximum}"
    print(f"{'spammers':24} {'mean':>14} {'bias/noise':>14} {'chosen':>14} {'known workers':>14} "
          f"{'fallback':>8} "
          f"{'mean, ' + adaptive:>14} {'judgements':>10} {'mean, ' + cheap:>14} "
          f"{'judgements':>10}")
    for name, row in report["ratings"].items():
        print(f"{name:24} " + " ".join(f"{row[k][0]:6.1f} ({row[k][1]:.3f})"
                                       for k in ("plain", "model", "chosen", "known"))
              + f" {row['fell_back']:8.0%} "
              + " ".join(f"{row[k][0]:6.1f} ({row[k][1]:.3f}) {row[k + '_judgements']:10.2f}"
                         for k in ("adaptive", "adaptive5")))
    print("categorical: accuracy %")
    print(f"{'spammers':24} {'vote':>7} {'DS':>7} {'chosen':>7} {'known':>7} {'fallback':>8} "
          f"{'vote, ' + adaptive:>10} {'judgements':>10} {'vote, ' + cheap:>10} "
          f"{'judgements':>10}")
    for name, row in report["categorical"].items():
        print(f"{name:24} {row['plain']:7.1f} {row['model']:7.1f} {row['chosen']:7.1f} "
              f"{row['known']:7.1f} {row['fell_back']:8.0%} {row['adaptive']:10.1f} "
              f"{row['adaptive_judgements']:10.2f} {row['adaptive5']:10.1f} "
              f"{row['adaptive5_judgements']:10.2f}")
    print(f"{report['seconds']}s")


if __name__ == "__main__":
    main()
