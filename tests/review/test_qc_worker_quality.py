"""qc_report: the project's aggregation method, the safety rule's verdict, each worker's
estimated reliability, and bootstrap intervals of agreement per split."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.management import call_command

from annotation.models import Project
from annotation.services.projects import validate_flag_settings
from annotation.services.qc import project_qc_run
from tests.factories import (
    ClozeFillerFactory,
    ClozeItemFactory,
    ItemFactory,
    ProjectFactory,
    annotate,
    workers,
)

pytestmark = pytest.mark.django_db


def rated_project(*, n_items=30, gold_items=0, aggregation="model", copiers=0):
    """Five honest raters, one random clicker (and ``copiers`` who all paste one wrong
    rating); the first ``gold_items`` items are gold with their true rating."""
    project = ProjectFactory(slug="rated", kind="plausibility",
                             flag_settings={"aggregation": aggregation})
    rng = np.random.default_rng(4)
    honest, clicker, pasting = workers(5), workers(1)[0], workers(copiers)
    for k in range(n_items):
        truth = int(rng.integers(1, 6))
        cloze = ClozeItemFactory(project=project)
        item = ItemFactory(project=project, filler=ClozeFillerFactory(cloze=cloze),
                           split="dev" if k % 2 else "test", is_gold=k < gold_items,
                           gold_answer=truth if k < gold_items else None)
        for worker in honest:
            annotate(item, worker, rating=int(np.clip(truth + rng.integers(-1, 2), 1, 5)))
        annotate(item, clicker, rating=int(rng.integers(1, 6)))
        for worker in pasting:
            annotate(item, worker, rating=6 - truth if truth != 3 else 5)
    return project, clicker


def test_the_model_is_used_when_gold_shows_it_no_worse_and_the_clicker_ranks_last(capsys):
    project, clicker = rated_project(gold_items=10)
    quality = project_qc_run(project=project)["worker_quality"]
    assert quality["requested"] == "model" and quality["model"] == "bias_noise"
    assert quality["used"] == "model" and not quality["fell_back"]
    assert quality["gold_items"] == 10
    assert quality["model_gold_accuracy"] >= quality["plain_gold_accuracy"]
    assert quality["workers"][0]["worker"] == clicker.pk
    assert quality["workers"][0]["reliability"] < 0.5 <= quality["workers"][1]["reliability"]
    assert sum(quality["labels"].values()) == quality["n_items"] == 30
    call_command("qc_report", project.slug)
    text = capsys.readouterr().out
    assert "aggregation used: bias_noise (bias_noise is at least as accurate as mean on 10 " \
           "gold items" in text
    # By the name staff see everywhere (issue 24), never the database id.
    assert f"(least reliable first): {clicker.anonymous_id} " in text


def test_without_gold_the_plain_mean_is_used_and_the_report_says_why():
    project, _ = rated_project(gold_items=0)
    quality = project_qc_run(project=project)["worker_quality"]
    assert quality["used"] == "plain" and quality["fell_back"]
    assert quality["reason"] == ("no gold item has answers, so bias_noise could not be "
                                 "checked against mean: mean is used")


def test_colluding_copiers_make_the_rule_fall_back_to_the_mean():
    project, _ = rated_project(gold_items=12, copiers=5)
    quality = project_qc_run(project=project)["worker_quality"]
    assert quality["fell_back"], quality
    assert quality["model_gold_accuracy"] < quality["plain_gold_accuracy"]
    assert "is less accurate than mean on 12 gold items" in quality["reason"]


def test_plain_is_the_default_and_unknown_methods_are_refused():
    project, _ = rated_project(n_items=6, aggregation="plain")
    quality = project_qc_run(project=project)["worker_quality"]
    assert quality["used"] == "plain" and not quality["fell_back"]
    assert quality["reason"] == "plain aggregation was asked for"
    Project.objects.filter(pk=project.pk).update(flag_settings={"aggregation": "magic"})
    project.refresh_from_db()
    with pytest.raises(ValueError, match="aggregation: must be one of plain, model"):
        project_qc_run(project=project)
    with pytest.raises(Exception, match="aggregation: must be one of plain, model"):
        validate_flag_settings({"aggregation": "magic"})


def test_json_report_has_bootstrap_intervals_per_split(capsys):
    project, _ = rated_project(n_items=20)
    call_command("qc_report", project.slug, "--json")
    report = json.loads(capsys.readouterr().out)
    intervals = report["agreement"]["intervals_by_split"]
    assert sorted(intervals) == ["dev", "test"]
    for split in intervals.values():
        for name in ("fleiss_kappa", "krippendorff_alpha_ordinal"):
            interval = split[name]
            assert interval["low"] <= interval["estimate"] <= interval["high"]
            assert interval["confidence"] == 0.95 and interval["n_resamples"] == 1000
