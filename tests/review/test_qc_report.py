"""qc_report: agreement figures, flags stored idempotently, decisions kept."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from annotation.models import Flag, Project
from annotation.services.qc import project_qc_run
from tests.factories import (
    ClozeFillerFactory,
    ClozeItemFactory,
    ItemFactory,
    ProjectFactory,
    annotate,
    canard_sample,
    sluice_sample,
    workers,
)

pytestmark = pytest.mark.django_db


def planted_plausibility_project(n_items=12):
    """Five agreeing workers and one who rates the opposite of everyone (the clicker)."""
    project = ProjectFactory(slug="planted", kind="plausibility")
    rng = np.random.default_rng(1)
    crowd = workers(5)
    clicker = workers(1)[0]
    for k in range(n_items):
        cloze = ClozeItemFactory(project=project)
        item = ItemFactory(project=project, filler=ClozeFillerFactory(cloze=cloze),
                           split="dev")
        truth = int(rng.integers(1, 6))
        for worker in crowd:
            annotate(item, worker, rating=int(np.clip(truth + rng.integers(-1, 2), 1, 5)),
                     duration_ms=20000 + 100 * k)
        annotate(item, clicker, rating=6 - truth, duration_ms=500 if k == 0 else 20000)
    return project, clicker


def test_report_finds_the_planted_worker_and_stores_flags_once(capsys):
    project, clicker = planted_plausibility_project()
    report = project_qc_run(project=project)
    agreement = report["agreement"]
    assert agreement["n_ratings"] == 72 and agreement["n_workers"] == 6
    assert agreement["krippendorff_alpha_ordinal"] is not None
    assert agreement["per_worker"][0]["worker"] == clicker.pk
    # The name staff see everywhere (issue 24), in --json and in the text report.
    assert agreement["per_worker"][0]["pseudonym"] == clicker.anonymous_id
    out = StringIO()
    call_command("qc_report", project.slug, stdout=out)
    assert clicker.anonymous_id in out.getvalue()
    assert sum(report["aggregation"]["labels"].values()) == 12
    worker_flags = Flag.objects.filter(project=project, worker=clicker, annotation=None)
    assert worker_flags.filter(reason="worker_far_from_consensus").exists()
    assert Flag.objects.filter(project=project, reason="too_fast").count() == 1
    total = Flag.objects.count()
    assert report["flags_stored"]["created"] == total

    again = project_qc_run(project=project)
    assert Flag.objects.count() == total
    assert again["flags_stored"] == {"created": 0, "still_raised": total,
                                     "removed_stale_open": 0}


def test_a_decided_flag_keeps_its_decision_and_stale_open_flags_go():
    project, clicker = planted_plausibility_project()
    project_qc_run(project=project)
    assert Flag.objects.filter(worker=clicker, reason="worker_far_from_consensus").exists()
    decided = Flag.objects.get(project=project, reason="too_fast")
    decided.status = Flag.Status.DISMISSED
    decided.decision_note = "fast but right"
    decided.save()
    # Far looser rules: neither the fast annotation nor the clicker is raised any more.
    Project.objects.filter(pk=project.pk).update(
        flag_settings={"fast_z": 50, "slow_z": 50, "max_worker_deviation_z": 50})
    project.refresh_from_db()
    project_qc_run(project=project)
    decided.refresh_from_db()
    assert decided.status == Flag.Status.DISMISSED and decided.decision_note == "fast but right"
    assert not Flag.objects.filter(worker=clicker, reason="worker_far_from_consensus").exists()


def test_unknown_flag_setting_is_a_clear_error():
    project, _ = planted_plausibility_project(n_items=2)
    Project.objects.filter(pk=project.pk).update(flag_settings={"fastz": 1})
    with pytest.raises(Exception, match="fastz"):
        call_command("qc_report", project.slug)


def test_text_agreement_and_copy_flags_on_rewrites(capsys):
    project, items = canard_sample()
    first, second = workers(2)
    annotate(items[1], first, text="When did they disband?")  # a copy with a pronoun left
    annotate(items[1], second, text="When did Zappa and the Mothers of Invention disband?")
    call_command("qc_report", project.slug, "--json")
    report = json.loads(capsys.readouterr().out)
    assert report["agreement"]["n_pairs"] == 1
    assert 0 < report["agreement"]["bleu"] < 100
    assert report["flags_raised"]["copy_of_input"] == 1
    flag = Flag.objects.get(reason="copy_of_input")
    assert flag.annotation.worker == first and flag.worker == first


def test_sluice_report_counts_what_cleaning_drops(capsys):
    project, items = sluice_sample()
    crowd = workers(3)
    annotate(items["c1"], crowd[0], text="Who went to the fair?")
    annotate(items["c1"], crowd[1], text="Who went to the fair?")
    annotate(items["c1"], crowd[2], text="", skipped=True)
    annotate(items["c3"], crowd[0], text="When did Oliver come?")
    call_command("qc_report", project.slug)
    output = capsys.readouterr().out
    assert "test: annotations 3, dropped_skipped 1, dropped_short_q1 0, " \
           "dropped_duplicate_references 1, exported 1" in output
    assert "train: annotations 1, dropped_skipped 0, dropped_short_q1 1" in output
