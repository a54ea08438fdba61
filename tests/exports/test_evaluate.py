"""evaluate on shipped real data and on small projects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.factories import annotate, decontext_sample, sluice_sample, workers

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parents[2] / "annotation" / "demo_data"


def run(capsys, *args) -> dict:
    call_command("evaluate", *args)
    return json.loads(capsys.readouterr().out)


def test_copy_baseline_on_canard_dev_matches_the_paper(shared_data, capsys):
    call_command("import_data", "canard", str(shared_data / "canard" / "dev.json"),
                 "--project", "canard-dev", "--split", "dev")
    capsys.readouterr()
    # CANARD's official set-up (spaCy's blank English tokenizer, then BLEU as
    # multi-bleu-detok.perl) is the default: paper 33.84 / 47.72.
    copy = run(capsys, "canard-dev", "--baseline", "copy", "--split", "dev")
    assert copy["n_questions"] == 3430 and copy["tokenization"] == "spacy"
    assert round(copy["bleu"], 2) == 33.83
    pronoun = run(capsys, "canard-dev", "--baseline", "pronoun_sub", "--split", "dev")
    assert round(pronoun["bleu"], 2) == 47.72
    # sacrebleu's 13a alone on the raw text, on request.
    for baseline, bleu in (("copy", 34.76), ("pronoun_sub", 47.92)):
        result = run(capsys, "canard-dev", "--baseline", baseline, "--split", "dev",
                     "--tokenize", "13a")
        assert (round(result["bleu"], 2), result["tokenization"]) == (bleu, "13a")
    # dev.json has one rewrite per question: no human figure.
    with pytest.raises(CommandError, match="no question has two rewrites"):
        call_command("evaluate", "canard-dev", "--human", "--split", "dev")
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
    with pytest.raises(CommandError,
                       match=r"no prediction for 1 filler\(s\), e.g. .* \(the dev split\)"):
        call_command("evaluate", "claire-dev", "--system", str(short), "--split", "dev")
    lenient = run(capsys, "claire-dev", "--system", str(short), "--split", "dev",
                  "--missing-as-wrong")
    assert lenient["accuracy"] == 2499 / 2500
    extra = tmp_path / "extra_labels.tsv"
    extra.write_text("\n".join([*lines, "99999_1\tPLAUSIBLE"]) + "\n")
    with pytest.raises(CommandError, match=r"1 id\(s\) are not gold fillers, e.g. 99999_1"):
        call_command("evaluate", "claire-dev", "--system", str(extra), "--split", "dev")


def test_human_figure_from_canard_multiple_refs(shared_data, capsys):
    """Paper Table 3: human rewrites 59.92 BLEU, the first worker's against the second's."""
    call_command("import_data", "canard", str(shared_data / "canard" / "multiple_refs.json"),
                 "--project", "canard-refs")
    capsys.readouterr()
    human = run(capsys, "canard-refs", "--human")  # multiple_refs.json is a test split
    assert (human["n_questions"], round(human["bleu"], 2), human["system"]) == (
        100, 59.92, "human")
    assert round(run(capsys, "canard-refs", "--human", "--tokenize", "13a")["bleu"], 2) == 59.92


@pytest.mark.parametrize(("slug_kind", "args"), [
    ("canard", ["--baseline", "copy"]), ("sluice", ["--baseline", "ce_q1"]),
    ("decontext", ["--baseline", "repeat"]), ("websplit", ["--baseline", "repeat"]),
    ("claire", ["--system", "labels.tsv"])])
def test_every_task_refuses_an_empty_split(shared_data, capsys, tmp_path, slug_kind, args):
    """An empty split is an error, not "BLEU 0.0 over 0 questions" or NaN."""
    data = shared_data
    sources = {
        "canard": ("canard", [data / "canard" / "dev.json"], "dev"),
        "sluice": ("sluice", [data / "sluice" / "raw" / "conv_sluice_test.csv"], "test"),
        "decontext": ("decontext", [DEMO / "decontext" / "handmade_dev.jsonl"], "dev"),
        "websplit": ("websplit", [DEMO / "websplit" / "handmade_train.jsonl"], "train"),
        "claire": ("claire", [data / "claire" / f"dev_{part}.tsv"
                              for part in ("data", "scores", "labels")], "dev"),
    }
    fmt, paths, split = sources[slug_kind]
    call_command("import_data", fmt, *map(str, paths), "--project", slug_kind,
                 "--split", split, "--quiet")
    (tmp_path / "labels.tsv").write_text("0_1\tPLAUSIBLE\n")
    args = [arg if arg != "labels.tsv" else str(tmp_path / "labels.tsv") for arg in args]
    empty = "train" if split != "train" else "test"
    with pytest.raises(CommandError, match=f"the {empty} split has no .* to score"):
        call_command("evaluate", slug_kind, *args, "--split", empty)


def test_websplit_reports_sacrebleu_and_aharoni_goldberg_bleu(capsys, tmp_path):
    call_command("import_data", "websplit", str(DEMO / "websplit" / "handmade_test.jsonl"),
                 "--project", "ws", "--quiet")
    capsys.readouterr()
    result = run(capsys, "ws", "--baseline", "repeat")
    assert result["n_complex"] == 2  # the test sentences with references
    assert 0 < result["bleu_multi_bleu"] < 100 and 0 < result["bleu"] < 100
    # A system equal to the references: 100 by both rules.
    system = tmp_path / "system.jsonl"
    system.write_text("".join(json.dumps({"complex_id": record["id"],
                                          "simple_sentences": record["simple_references"][0]})
                              + "\n" for record in map(json.loads, (
                                  DEMO / "websplit" / "handmade_test.jsonl").read_text()
                                  .splitlines()) if "simple_references" in record))
    perfect = run(capsys, "ws", "--system", str(system))
    assert (perfect["bleu"], perfect["bleu_multi_bleu"]) == (pytest.approx(100), 100.0)


def test_sluice_baselines_and_decontext_repeat(capsys):
    project, items = sluice_sample()
    crowd = workers(2)
    annotate(items["c1"], crowd[0], text="Who went to the fair?")
    annotate(items["c1"], crowd[1], text="Who all went to the fair?")
    ce_q1 = run(capsys, project.slug, "--baseline", "ce_q1")
    assert ce_q1["n_items"] == 1 and 0 < ce_q1["bleu"] <= 1
    with pytest.raises(CommandError, match="ce_q1, ce_a"):
        call_command("evaluate", project.slug, "--baseline", "copy")

    project, item = decontext_sample()
    for worker, sentence in zip(workers(3), ["Zinc is brittle at room temperature.",
                                             "Zinc is brittle at room temperature .",
                                             "The metal zinc is brittle at room temperature."],
                                strict=True):
        annotate(item, worker, category="DONE", text=sentence,
                 payload={"decontextualized_sentence": sentence})
    result = run(capsys, project.slug, "--baseline", "repeat", "--split", "dev")
    assert result["system"]["percent_edited"] == 0.0
    assert result["human"]["percent_edited"] == 1.0
