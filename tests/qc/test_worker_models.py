"""Worker-quality aggregation, the safety rule, adaptive redundancy and bootstrap intervals.

crowd-kit (Toloka's reference implementation) is not installed: with its dependencies
(transformers, pyarrow, scikit-learn, nltk) it is far heavier than the rest of the dev
environment. Dawid-Skene is cross-checked instead against a plain-Python reimplementation of
crowd-kit's ``DawidSkene`` EM (``_m_step`` / ``_e_step``: majority-vote start, priors from the
posteriors, per-worker confusion matrices) and against hand-computed cases.
"""

from collections import defaultdict

import numpy as np
import pytest

from qc.agreement import RatingTable, fleiss_kappa, krippendorff_alpha
from qc.bootstrap import (
    _alpha_of_weights,
    _count_patterns,
    _draw_pattern_weights,
    _fleiss_of_weights,
    agreement_intervals,
    bootstrap_interval,
    fleiss_kappa_interval,
    krippendorff_alpha_interval,
    resample_items,
)
from qc.redundancy import RedundancyPolicy, needs_more
from qc.worker_models import (
    MODEL,
    PLAIN,
    aggregate_categories,
    aggregate_ratings,
    bias_noise_ratings,
    choose_output,
    dawid_skene,
    gaussian_bias_noise_ratings,
    most_supported_texts,
)


def reference_dawid_skene(rows, *, n_iter=100, smoothing=0.0, diagonal=0.0, one_coin=0.0):
    """crowd-kit's DawidSkene EM, in plain Python (plus our pseudo-counts: ``one_coin`` spread
    as the worker's one-coin matrix, their soft share of right answers plus one right and one
    wrong on the diagonal and the rest evenly off it)."""
    items = sorted({row[0] for row in rows})
    labels = sorted({row[2] for row in rows})
    by_item = defaultdict(list)
    for item, worker, label in rows:
        by_item[item].append((worker, label))
    probas = {i: {j: sum(label == j for _, label in by_item[i]) / len(by_item[i])
                  for j in labels} for i in items}
    workers = sorted({row[1] for row in rows})
    for _ in range(n_iter):
        priors = {j: sum(probas[i][j] for i in items) / len(items) for j in labels}
        counts = {(w, j, k): 0.0 for w in workers for j in labels for k in labels}
        for item, worker, label in rows:
            for j in labels:
                counts[(worker, j, label)] += probas[item][j]
        errors = {}
        for w in workers:
            seen = sum(counts[(w, j, k)] for j in labels for k in labels)
            right = (sum(counts[(w, j, j)] for j in labels) + 1) / (seen + 2)
            for j in labels:
                for k in labels:
                    coin = right if j == k else (1 - right) / (len(labels) - 1)
                    errors[(w, j, k)] = (counts[(w, j, k)] + smoothing
                                         + (diagonal if j == k else 0.0) + one_coin * coin)
        for w in workers:
            for j in labels:
                total = sum(errors[(w, j, k)] for k in labels)
                for k in labels:
                    errors[(w, j, k)] /= total
        new = {}
        for i in items:
            logs = {j: np.log(priors[j]) for j in labels}
            for worker, label in by_item[i]:
                for j in labels:
                    logs[j] += np.log(errors[(worker, j, label)])
            top = max(logs.values())
            unnorm = {j: np.exp(v - top) for j, v in logs.items()}
            new[i] = {j: v / sum(unnorm.values()) for j, v in unnorm.items()}
        probas = new
    return {i: max(labels, key=lambda j: probas[i][j]) for i in items}, probas


def simulated_categories(seed=0, n_items=300, n_workers=20, per_item=5):
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, n_items, p=[0.5, 0.3, 0.2])
    accuracy = rng.uniform(0.5, 0.95, n_workers)
    accuracy[:4] = 1 / 3  # random clickers
    rows = []
    for item in range(n_items):
        for worker in rng.choice(n_workers, per_item, replace=False):
            right = rng.random() < accuracy[worker]
            label = truth[item] if right else (truth[item] + rng.integers(1, 3)) % 3
            rows.append((item, int(worker), "ABC"[label]))
    return rows, ["ABC"[t] for t in truth]


@pytest.mark.parametrize("one_coin", [0.0, 15.0])
def test_dawid_skene_matches_a_reimplementation_of_crowd_kits_em(one_coin):
    """one_coin 0: crowd-kit's EM plus the cell and diagonal pseudo-counts; 15: the default,
    each worker's matrix also shrunk towards their one-coin matrix."""
    rows, _ = simulated_categories()
    model = dawid_skene(rows, smoothing=1.0, diagonal_prior=3.0, one_coin_prior=one_coin,
                        tolerance=0.0, max_iterations=30)
    labels, probas = reference_dawid_skene(rows, n_iter=30, smoothing=1.0, diagonal=3.0,
                                           one_coin=one_coin)
    assert model.labels == labels
    assert all(model.posterior[i] == pytest.approx(max(probas[i].values()), abs=1e-9)
               for i in labels)


def test_dawid_skene_beats_the_vote_with_random_clickers_and_ranks_them_last():
    rows, truth = simulated_categories(seed=1)
    model = dawid_skene(rows)
    from qc.aggregation import majority_labels

    vote = majority_labels(rows)
    accuracy = np.mean([model.labels[i] == truth[i] for i in range(len(truth))])
    assert accuracy > np.mean([vote[i] == truth[i] for i in range(len(truth))])
    worst = sorted(model.reliability, key=model.reliability.get)[:4]
    assert sorted(worst) == [0, 1, 2, 3]


def test_dawid_skene_hand_case_trusts_the_worker_who_agrees_with_the_others():
    """Workers a and b agree on 10 items, c answers the opposite; on item 99 only a and c
    answered, disagreeing: a's answer wins (a vote would tie)."""
    rows = [(i, w, "yes" if i % 2 else "no") for i in range(10) for w in "ab"]
    rows += [(i, "c", "no" if i % 2 else "yes") for i in range(10)]
    rows += [(99, "a", "yes"), (99, "c", "no")]
    model = dawid_skene(rows)
    assert model.labels[99] == "yes"
    assert model.reliability["a"] > 0.7 > 0.5 > model.reliability["c"]


def test_bias_noise_corrects_a_biased_rater_and_discounts_a_noisy_one():
    rng = np.random.default_rng(0)
    truth = rng.uniform(1.5, 4.5, 200)
    rows = []
    for item, score in enumerate(truth):
        for worker in range(4):
            rows.append((item, f"ok{worker}", float(score + rng.normal(0, 0.2))))
        rows.append((item, "lenient", float(score + 1.0 + rng.normal(0, 0.2))))
        rows.append((item, "noisy", float(rng.uniform(1, 5))))
    model = bias_noise_ratings(rows, scale=(0.0, 6.0))
    assert model.bias["lenient"] == pytest.approx(1.0, abs=0.1)
    assert model.noise["noisy"] > 5 * model.noise["ok0"]
    estimate = np.array([model.scores[i] for i in range(200)])
    means = np.array([np.mean([r[2] for r in rows if r[0] == i]) for i in range(200)])
    assert np.abs(estimate - truth).mean() < 0.15 < np.abs(means - truth).mean()


def test_bias_noise_on_a_clean_crowd_is_the_mean():
    rows = [(i, w, float(1 + (i + w) % 5)) for i in range(50) for w in range(5)]
    model = bias_noise_ratings(rows)
    assert all(model.scores[i] == pytest.approx(3.0, abs=0.05) for i in range(50))


def test_most_supported_text_and_writer_scores():
    answers = {
        "w1": "Why did Frank Zappa leave the band?",
        "w2": "Why did Frank Zappa leave the Mothers?",
        "w3": "Why did Zappa leave the band?",
        "paster": "As an AI language model, I cannot answer that question.",
    }
    rows = [(item, worker, text) for item in range(3) for worker, text in answers.items()]
    model = most_supported_texts(rows)
    assert model.texts[0] in {answers["w1"], answers["w3"]}
    assert min(model.reliability, key=model.reliability.get) == "paster"
    assert most_supported_texts([(1, "only", "alone")]).texts == {1: "alone"}


def test_the_safety_rule_falls_back_when_the_model_loses_on_gold():
    model = {1: "A", 2: "A", 3: "B"}
    plain = {1: "A", 2: "B", 3: "B"}
    same = lambda a, b: a == b  # noqa: E731
    choice = choose_output(requested=MODEL, model_name="dawid_skene",
                           plain_name="majority_vote", model_output=model,
                           plain_output=plain, gold={2: "B", 3: "B"}, correct=same)
    assert choice.used == PLAIN and choice.fell_back
    assert "less accurate than majority_vote on 2 gold items (50% against 100%)" in \
        choice.reason
    kept = choose_output(requested=MODEL, model_name="m", plain_name="p", model_output=model,
                         plain_output=plain, gold={1: "A", 2: "A"}, correct=same)
    assert kept.used == MODEL and not kept.fell_back and kept.to_dict()["gold_items"] == 2
    nogold = choose_output(requested=MODEL, model_name="m", plain_name="p",
                           model_output=model, plain_output=plain, gold={}, correct=same)
    assert nogold.used == PLAIN and "no gold item has answers" in nogold.reason
    with pytest.raises(ValueError, match="aggregation must be one of"):
        choose_output(requested="magic", model_name="m", plain_name="p", model_output={},
                      plain_output={}, gold={}, correct=same)


def test_colluding_copiers_fool_the_model_and_the_rule_keeps_the_vote():
    rng = np.random.default_rng(5)
    truth = rng.choice(["A", "B", "C"], 400)
    pasted = np.where(rng.random(400) < 0.4, truth, "C")  # one shared wrong answer
    rows = []
    for item in range(400):
        for worker in rng.choice(10, 5, replace=False):
            if worker < 4:
                label = pasted[item]
            else:
                label = truth[item] if rng.random() < 0.7 else rng.choice(["A", "B", "C"])
            rows.append((item, int(worker), str(label)))
    gold = {item: str(truth[item]) for item in range(40)}
    labels, choice, _ = aggregate_categories(rows, requested=MODEL, gold=gold)
    from qc.aggregation import majority_labels

    vote = majority_labels(rows)
    assert choice.fell_back and labels == vote
    ratings, rchoice, _ = aggregate_ratings([(i, w, 3.0) for i, w, _ in rows],
                                            requested=PLAIN, gold={}, classify=round)
    assert rchoice.used == PLAIN and set(ratings.values()) == {3.0}


def test_adaptive_redundancy_rule():
    policy = RedundancyPolicy(start=3, maximum=7, boundary_se=1.0)
    assert needs_more(["A", "A"], policy, numeric=False)  # below start
    assert not needs_more(["A", "A", "A"], policy, numeric=False)
    assert needs_more(["A", "A", "B"], policy, numeric=False)
    assert not needs_more(["A", "A", "B", "A"], policy, numeric=False)
    assert not needs_more(["A", "B", "C", "A", "B", "C", "A"], policy, numeric=False)  # max
    assert not needs_more([5, 5, 5], policy, numeric=True)  # far from 4 and 2.5
    assert needs_more([5, 3, 4], policy, numeric=True)  # mean 4, on a boundary
    assert not needs_more([4, 4, 3, 3], policy, numeric=True)  # mean 3.5: 0.5 > se 0.29
    assert RedundancyPolicy.from_dict({"start": 2, "maximum": 5}).maximum == 5
    for bad in ({"start": 9}, {"start": 1.5}, {"typo": 1}, {"min_sd": True}):
        with pytest.raises(ValueError):
            RedundancyPolicy.from_dict(bad)


def test_bootstrap_resamples_whole_items():
    rows = [(i, w, (i + w) % 3) for i in range(30) for w in range(4)]
    rows += [(100, 0, 1)]  # an item with one rating
    table = RatingTable.from_rows(rows)
    sample = resample_items(table, np.random.default_rng(1))
    per_item = np.bincount(sample.item_codes)
    assert len(per_item) == len(table.items) and set(per_item) <= {1, 4}
    assert sample.n_ratings == per_item.sum()


def test_bootstrap_intervals_cover_the_estimate_and_match_a_naive_resampling():
    rng = np.random.default_rng(2)
    truth = rng.integers(1, 6, 80)
    rows = [(i, w, int(np.clip(truth[i] + rng.integers(-1, 2), 1, 5)))
            for i in range(80) for w in range(4)]
    kappa = fleiss_kappa_interval(rows, n_resamples=200, seed=3)
    assert kappa.low < kappa.estimate < kappa.high
    assert kappa.estimate == pytest.approx(fleiss_kappa(rows).kappa)
    alpha = krippendorff_alpha_interval(rows, "ordinal", n_resamples=200, seed=3)
    assert alpha.low < alpha.estimate < alpha.high
    assert alpha.estimate == pytest.approx(krippendorff_alpha(rows, "ordinal"))
    # Resampling through plain rows (every rating of each drawn item, renamed per draw)
    # gives the same interval up to the resamples' own noise: the fast path draws resamples
    # of the same distribution per count pattern (not the same random numbers).
    draws = np.random.default_rng(3)
    naive = []
    for _ in range(1000):
        picked = draws.integers(0, 80, 80)
        naive.append(fleiss_kappa([(n, w, label) for n, item in enumerate(picked)
                                   for (i, w, label) in rows if i == item]).kappa)
    many = fleiss_kappa_interval(rows, n_resamples=1000, seed=3)
    assert many.low == pytest.approx(np.percentile(naive, 2.5), abs=0.02)
    assert many.high == pytest.approx(np.percentile(naive, 97.5), abs=0.02)
    assert fleiss_kappa_interval(rows, n_resamples=50, seed=3) == \
        fleiss_kappa_interval(rows, n_resamples=50, seed=3)
    undefined = bootstrap_interval([(1, 1, "a"), (1, 2, "a")], lambda t: float("nan"),
                                   n_resamples=5)
    assert undefined.n_undefined == 5 and undefined.to_dict()["low"] is None


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_fast_statistics_of_pattern_weights_equal_the_rebuilt_resample(level):
    """The weighted-sum paths give, for a resample's per-pattern counts, exactly the statistic
    of the resample rebuilt as rows (unequal raters per item, items with a single rating)."""
    rng = np.random.default_rng(8)
    rows = [(i, w, int(rng.integers(1, 6))) for i in range(40)
            for w in range(int(rng.integers(1, 6)))]
    table = RatingTable.from_rows(rows)
    patterns, pattern_of_item = _count_patterns(table)
    kappas, alphas = _fleiss_of_weights(patterns), _alpha_of_weights(patterns, level)
    draws = np.random.default_rng(4)
    for _ in range(30):
        # resample_items' draw, repeated to know which items it drew
        state = draws.bit_generator.state
        drawn = draws.integers(0, len(table.items), len(table.items))
        draws.bit_generator.state = state
        sample = resample_items(table, draws)
        weights = np.bincount(pattern_of_item[drawn],
                              minlength=len(patterns))[None, :].astype(float)
        assert kappas(weights)[0] == pytest.approx(fleiss_kappa(sample).kappa, nan_ok=True)
        assert alphas(weights)[0] == pytest.approx(krippendorff_alpha(sample, level),
                                                   nan_ok=True)


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_fast_intervals_match_the_generic_resampling(level):
    """The fast paths' resamples (a multinomial draw per count pattern) have the distribution
    of ``resample_items``': the intervals agree up to the resamples' noise, and every draw
    has as many items as the table."""
    rng = np.random.default_rng(8)
    rows = [(i, w, int(rng.integers(1, 6))) for i in range(40)
            for w in range(int(rng.integers(1, 6)))]
    fast = krippendorff_alpha_interval(rows, level, n_resamples=1000, seed=4)
    slow = bootstrap_interval(rows, lambda t: krippendorff_alpha(t, level), n_resamples=1000,
                              seed=4)
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=0.03)
    fast = fleiss_kappa_interval(rows, n_resamples=1000, seed=4)
    slow = bootstrap_interval(rows, lambda t: fleiss_kappa(t).kappa, n_resamples=1000, seed=4)
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=0.03)
    patterns, pattern_of_item = _count_patterns(RatingTable.from_rows(rows))
    weights = _draw_pattern_weights(np.random.default_rng(1), pattern_of_item, len(patterns),
                                    2000)
    assert (weights.sum(axis=1) == 40).all()
    shares = np.bincount(pattern_of_item, minlength=len(patterns)) / 40
    assert weights.mean(axis=0) / 40 == pytest.approx(shares, abs=0.01)


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_both_intervals_from_one_set_of_draws_equal_each_alone(level):
    """``agreement_intervals`` draws once for both statistics (the QC run's intervals) and
    gives exactly what each interval function gives alone with the same seed."""
    rng = np.random.default_rng(11)
    rows = [(i, w, int(rng.integers(1, 6))) for i in range(60)
            for w in range(int(rng.integers(1, 6)))]
    both = agreement_intervals(rows, level, n_resamples=120, seed=5)
    assert both["fleiss_kappa"] == fleiss_kappa_interval(rows, n_resamples=120, seed=5)
    assert both["krippendorff_alpha"] == krippendorff_alpha_interval(rows, level,
                                                                     n_resamples=120, seed=5)


def test_count_patterns_are_the_distinct_count_rows_in_order():
    rng = np.random.default_rng(12)
    rows = [(i, w, int(rng.integers(1, 6))) for i in range(300)
            for w in range(int(rng.integers(1, 7)))]
    table = RatingTable.from_rows(rows)
    counts = np.zeros((len(table.items), len(table.labels)))
    np.add.at(counts, (table.item_codes, table.label_codes), 1.0)
    expected, expected_of_item = np.unique(counts, axis=0, return_inverse=True)
    patterns, pattern_of_item = _count_patterns(table)
    assert patterns.tolist() == expected.tolist()
    assert pattern_of_item.tolist() == expected_of_item.ravel().tolist()


def mixed_category_crowd(seed, n_items=1000, n_workers=40, per_item=5):
    """Honest workers right 55-85% of the time, 4 random clickers, 4 with a favourite answer
    (80% of the time); a rare class (15%)."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, n_items, p=[0.55, 0.3, 0.15])
    accuracy = rng.uniform(0.55, 0.85, n_workers)
    favourite = rng.integers(0, 3, n_workers)
    kind = ["random"] * 4 + ["favourite"] * 4 + ["honest"] * (n_workers - 8)
    rows = []
    for item in range(n_items):
        for worker in rng.choice(n_workers, per_item, replace=False):
            label = truth[item] if rng.random() < accuracy[worker] else (
                truth[item] + rng.integers(1, 3)) % 3
            if kind[worker] == "random":
                label = rng.integers(0, 3)
            elif kind[worker] == "favourite" and rng.random() < 0.8:
                label = favourite[worker]
            rows.append((item, int(worker), "ABC"[label]))
    return rows, ["ABC"[t] for t in truth]


def test_the_one_coin_prior_makes_dawid_skene_more_accurate_on_mixed_crowds():
    """Over six crowds: the default (matrices shrunk towards each worker's one-coin matrix)
    against crowd-kit's plain EM (one_coin_prior=0), both above the vote."""
    from qc.aggregation import majority_labels

    right = {"vote": 0, "full": 0, "one_coin": 0}
    for seed in range(6):
        rows, truth = mixed_category_crowd(seed)
        outputs = {"vote": majority_labels(rows, tuple("ABC")),
                   "full": dawid_skene(rows, one_coin_prior=0.0).labels,
                   "one_coin": dawid_skene(rows).labels}
        for name, labels in outputs.items():
            right[name] += sum(labels[i] == truth[i] for i in range(len(truth)))
    assert right["vote"] < right["full"] < right["one_coin"]


def rated_crowd(seed=0, n_items=300):
    """Integer 1-5 ratings: six honest raters (noise 0.6), a lenient one (+1, noise 0.5), two
    random clickers; every rater rates every item."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1.5, 4.5, n_items)
    raters = {f"ok{k}": (0.0, 0.6) for k in range(6)} | {"lenient": (1.0, 0.5)}
    rows = []
    for item, score in enumerate(truth):
        for worker, (bias, noise) in raters.items():
            rating = np.clip(np.rint(score + bias + rng.normal(0, noise)), 1, 5)
            rows.append((item, worker, float(rating)))
        for worker in ("random1", "random2"):
            rows.append((item, worker, float(rng.integers(1, 6))))
    return rows, truth


def test_ordinal_model_gives_random_clickers_no_weight_and_corrects_a_lenient_rater():
    from scipy.stats import spearmanr

    rows, truth = rated_crowd()
    model = bias_noise_ratings(rows)
    assert model.spam["random1"] >= 0.75 and model.spam["random2"] >= 0.75
    assert max(model.spam[f"ok{k}"] for k in range(6)) <= 0.15
    assert max(model.reliability["random1"], model.reliability["random2"]) < 0.2
    # Seen answering only at random: reported with no bias and the largest noise.
    assert model.spam["random1"] == 1.0
    assert (model.bias["random1"], model.noise["random1"]) == (0.0, pytest.approx(3.0))
    assert model.bias["lenient"] == pytest.approx(1.0, abs=0.3)
    assert abs(model.bias["ok0"]) <= 0.25
    estimate = np.array([model.scores[i] for i in range(len(truth))])
    means = np.array([np.mean([r[2] for r in rows if r[0] == i]) for i in range(len(truth))])
    assert np.abs(estimate - truth).mean() < 0.75 * np.abs(means - truth).mean()
    assert spearmanr(estimate, truth)[0] > spearmanr(means, truth)[0]
    # The Gaussian model on the same ratings: clicking at random is only "noise" there.
    gaussian = gaussian_bias_noise_ratings(rows)
    assert gaussian.spam == {}
    assert np.abs(estimate - truth).mean() < np.abs(
        np.array([gaussian.scores[i] for i in range(len(truth))]) - truth).mean()


def test_a_worker_seen_once_does_not_outweigh_the_pool():
    """One rating far from the others' is not taken as a noiseless rater's word: the
    pseudo-ratings keep the worker near the pool."""
    rows, _ = rated_crowd(n_items=100)
    rows = [row for row in rows if row[1] != "lenient"]
    others = np.mean([rating for item, _, rating in rows if item == 0])
    rows.append((0, "once", 5.0 if others < 3 else 1.0))
    model = bias_noise_ratings(rows)
    assert model.reliability["once"] <= 1.0
    assert abs(model.scores[0] - others) < 0.6


def test_fractional_ratings_get_the_gaussian_model():
    rows = [(i, w, 1.5 + (i + w) % 3) for i in range(20) for w in range(4)]
    model = bias_noise_ratings(rows)
    assert model.spam == {} and model.iterations >= 1
    whole = bias_noise_ratings([(i, w, r + 0.5) for i, w, r in rows])
    assert whole.spam  # whole points of the scale: the ordinal model


def test_ordinal_em_stops_when_the_scores_move_less_than_the_tolerance_on_average():
    """The stop rule is the mean absolute change of the item scores (not the largest one,
    which a few items flipping between grid points keep high at scale): the run stops at the
    first iteration whose average move is below the tolerance, not before and not after."""
    rows, _ = rated_crowd(n_items=300)
    model = bias_noise_ratings(rows, tolerance=1e-3)
    stop = model.iterations
    assert 2 < stop < 50

    def scores(iterations):
        fitted = bias_noise_ratings(rows, tolerance=0.0, max_iterations=iterations)
        return np.array([fitted.scores[item] for item in range(300)])

    before, at_stop, last = scores(stop - 2), scores(stop - 1), scores(stop)
    assert np.abs(last - at_stop).mean() < 1e-3 <= np.abs(at_stop - before).mean()
    assert np.abs(last - at_stop).max() >= 1e-3  # the largest move alone would go on
    assert model.scores == bias_noise_ratings(rows, tolerance=0.0, max_iterations=stop).scores
