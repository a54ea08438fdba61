"""Simulated crowds with known truth: worker-quality aggregation and adaptive redundancy
against the plain mean / majority vote, at equal cost.

Ratings: the 2,500 real CLAIRE dev fillers (../shared/data/claire/dev_scores.tsv and
dev_labels.tsv: the released mean score and class are the truth). Categorical: 2,500
decontext-like items (DONE 55%, IMPOSSIBLE 30%, UNNECESSARY 15%). 100 workers, 5 judgements an
item, 5% of the items are the project's gold (the safety rule checks on them; accuracy is
measured on the others). Pools mix reliable workers with spammers, split evenly among random
clickers, biased raters and copy workers (who paste one shared "LLM" answer per item); the
``collusion`` pool is 30% copy workers only. Every figure is the mean over ``--seeds`` runs.

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
    bias_noise_ratings,
    dawid_skene,
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


def simulate_ratings(rng, truth: np.ndarray, kinds: np.ndarray, chosen: np.ndarray):
    """A rating for every (item, worker) of ``chosen`` (n_items x k)."""
    n_workers = len(kinds)
    noise_sd = rng.uniform(0.6, 1.1, n_workers)
    bias = rng.choice([-1.5, 1.5], n_workers)
    # One pasted "LLM" answer per item: near the truth, but its error is shared by every copier.
    llm = np.clip(np.rint(truth + rng.normal(0, 1.2, len(truth))), 1, 5)
    t = truth[:, None]
    honest = np.clip(np.rint(t + rng.normal(0, 1, chosen.shape) * noise_sd[chosen]), 1, 5)
    biased = np.clip(np.rint(t + bias[chosen] + rng.normal(0, 0.7, chosen.shape)), 1, 5)
    random = rng.integers(1, 6, chosen.shape).astype(float)
    copied = np.broadcast_to(llm[:, None], chosen.shape)
    kind = kinds[chosen]
    return np.select([kind == "reliable", kind == "biased", kind == "random"],
                     [honest, biased, random], copied)


def simulate_categories(rng, truth: np.ndarray, kinds: np.ndarray, chosen: np.ndarray):
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
                     [honest, biased, random], copied)


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
    ratings = simulate_ratings(rng, truth_scores, kinds, chosen)
    gold_items = rng.random(n_items) < GOLD_SHARE
    gold = {i: float(truth_scores[i]) for i in np.flatnonzero(gold_items).tolist()}
    scored = ~gold_items

    def metrics(scores: dict) -> tuple[float, float]:
        estimate = np.array([scores[i] for i in range(n_items)])
        accuracy = float(np.mean(plausibility_labels(estimate)[scored] == truth_labels[scored]))
        return 100 * accuracy, float(spearmanr(estimate[scored], truth_scores[scored])[0])

    fixed_rows = rows_of(chosen, ratings, REDUNDANCY)
    chosen_scores, choice, _ = aggregate_ratings(
        fixed_rows, requested=MODEL, gold=gold, classify=lambda s: plausibility_labels([s])[0])
    plain = {i: float(np.mean(ratings[i, :REDUNDANCY])) for i in range(n_items)}
    model = bias_noise_ratings(fixed_rows).scores
    result = {"plain": metrics(plain), "model": metrics(model),
              "chosen": metrics(chosen_scores), "fell_back": choice.fell_back}
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
    answers = simulate_categories(rng, truth, kinds, chosen)
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
    chosen_labels, choice, _ = aggregate_categories(fixed_rows, requested=MODEL, gold=gold,
                                                    preference=preference)
    plain = majority_labels(fixed_rows, preference)
    model = dawid_skene(fixed_rows).labels
    result = {"plain": accuracy(plain), "model": accuracy(model),
              "chosen": accuracy(chosen_labels), "fell_back": choice.fell_back}
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
    print(f"{'spammers':24} {'mean':>14} {'bias/noise':>14} {'chosen':>14} {'fallback':>8} "
          f"{'mean, ' + adaptive:>14} {'judgements':>10} {'mean, ' + cheap:>14} "
          f"{'judgements':>10}")
    for name, row in report["ratings"].items():
        print(f"{name:24} " + " ".join(f"{row[k][0]:6.1f} ({row[k][1]:.3f})"
                                       for k in ("plain", "model", "chosen"))
              + f" {row['fell_back']:8.0%} "
              + " ".join(f"{row[k][0]:6.1f} ({row[k][1]:.3f}) {row[k + '_judgements']:10.2f}"
                         for k in ("adaptive", "adaptive5")))
    print("categorical: accuracy %")
    print(f"{'spammers':24} {'vote':>7} {'DS':>7} {'chosen':>7} {'fallback':>8} "
          f"{'vote, ' + adaptive:>10} {'judgements':>10} {'vote, ' + cheap:>10} "
          f"{'judgements':>10}")
    for name, row in report["categorical"].items():
        print(f"{name:24} {row['plain']:7.1f} {row['model']:7.1f} {row['chosen']:7.1f} "
              f"{row['fell_back']:8.0%} {row['adaptive']:10.1f} "
              f"{row['adaptive_judgements']:10.2f} {row['adaptive5']:10.1f} "
              f"{row['adaptive5_judgements']:10.2f}")
    print(f"{report['seconds']}s")


if __name__ == "__main__":
    main()
