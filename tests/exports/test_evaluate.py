"""evaluate on shipped real data and on small projects."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from tests.exports.builders import annotate, decontext_project, sluice_project, workers

pytestmark = pytest.mark.django_db


def run(capsys, *args) -> dict:
    call_command("evaluate", *args)
    return json.loads(capsys.readouterr().out)


def test_copy_baseline_on_canard_dev_matches_the_paper(shared_data, capsys):
    call_command("import_data", "canard", str(shared_data / "canard" / "dev.json"),
                 "--project", "canard-dev", "--split", "dev")
    capsys.readouterr()
    copy = run(capsys, "canard-dev", "--baseline", "copy", "--split", "dev")
    assert copy["n_questions"] == 3430
    assert abs(copy["bleu"] - 33.84) < 1.0
    pronoun = run(capsys, "canard-dev", "--baseline", "pronoun_sub", "--split", "dev")
    assert abs(pronoun["bleu"] - 47.72) < 1.5
    # The released file scored as a system is the references themselves.
    perfect = run(capsys, "canard-dev", "--system", str(shared_data / "canard" / "dev.json"),
                  "--split", "dev")
    assert perfect["bleu"] == pytest.approx(100.0)


def test_claire_labels_follow_from_scores(shared_data, capsys, tmp_path):
    claire = shared_data / "claire"
    call_command("import_data", "claire", str(claire / "dev_data.tsv"),
                 str(claire / "dev_scores.tsv"), str(claire / "dev_labels.tsv"),
                 "--project", "claire-dev", "--split", "dev")
    capsys.readouterr()
    result = run(capsys, "claire-dev", "--system", str(claire / "dev_scores.tsv"),
                 "--split", "dev")
    assert result["accuracy"] == 1.0 and result["spearman"] == pytest.approx(1.0)
    labels = run(capsys, "claire-dev", "--system", str(claire / "dev_labels.tsv"),
                 "--split", "dev")
    assert labels["accuracy"] == 1.0 and "spearman" not in labels
    constant = tmp_path / "constant_labels.tsv"
    constant.write_text("".join(f"{line.split(chr(9))[0]}\tPLAUSIBLE\n" for line in
                                (claire / "dev_labels.tsv").read_text().splitlines()))
    share = sum(line.endswith("\tPLAUSIBLE") for line in
                (claire / "dev_labels.tsv").read_text().splitlines()) / 2500
    assert run(capsys, "claire-dev", "--system", str(constant),
               "--split", "dev")["accuracy"] == pytest.approx(share)
    # A file with fillers missing or foreign ids is refused, as by the official scorer.
    lines = (claire / "dev_labels.tsv").read_text().splitlines()
    short = tmp_path / "short_labels.tsv"
    short.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(CommandError, match=r"no prediction for 1 filler\(s\) of the dev split"):
        call_command("evaluate", "claire-dev", "--system", str(short), "--split", "dev")
    extra = tmp_path / "extra_labels.tsv"
    extra.write_text("\n".join([*lines, "99999_1\tPLAUSIBLE"]) + "\n")
    with pytest.raises(CommandError, match=r"1 id\(s\) not in the dev split, e.g. 99999_1"):
        call_command("evaluate", "claire-dev", "--system", str(extra), "--split", "dev")


def test_sluice_baselines_and_decontext_repeat(capsys):
    project, items = sluice_project()
    crowd = workers(2)
    annotate(items["c1"], crowd[0], text="Who went to the fair?")
    annotate(items["c1"], crowd[1], text="Who all went to the fair?")
    ce_q1 = run(capsys, project.slug, "--baseline", "ce_q1")
    assert ce_q1["n_items"] == 1 and 0 < ce_q1["bleu"] <= 1
    with pytest.raises(CommandError, match="ce_q1, ce_a"):
        call_command("evaluate", project.slug, "--baseline", "copy")

    project, item = decontext_project()
    for worker, sentence in zip(workers(3), ["Zinc is brittle at room temperature.",
                                             "Zinc is brittle at room temperature .",
                                             "The metal zinc is brittle at room temperature."],
                                strict=True):
        annotate(item, worker, category="DONE", text=sentence,
                 payload={"decontextualized_sentence": sentence})
    result = run(capsys, project.slug, "--baseline", "repeat", "--split", "dev")
    assert result["system"]["percent_edited"] == 0.0
    assert result["human"]["percent_edited"] == 1.0
