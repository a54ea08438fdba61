"""``python manage.py evaluate SLUG [--system FILE | --baseline NAME] [--split test] [--json]``.

Exports the split with the project's dataset exporter into a temporary folder, reads the
multi-reference export back (so what is scored is exactly what is shipped), and scores a
system output in the same format, or a built-in baseline of ``qc.baselines``, with the
paper's measures from ``qc.evaluation``:

- rewrite (CANARD): corpus BLEU against every reference rewrite of each question;
  baselines ``copy``, ``pronoun_sub``; the system file is a CANARD JSON array (its
  ``Rewrite`` per ``QuAC_dialog_id`` + ``Question_no``);
- plausibility (CLAIRE): accuracy of labels and Spearman of scores; the system file is a
  ``*_scores.tsv`` (labels then follow from the thresholds) or a ``*_labels.tsv``;
- sluice: mean sentence GLEU/BLEU/chrF against all references of a context; baselines
  ``ce_q1``, ``ce_a``; the system file is in the processed sluice JSON shape;
- decontext: length increase, % edited, match, SARI add/delete against the references
  (the median-length human annotation removed); baseline ``repeat``; the system file is JSONL
  of ``{example_id, category, decontextualized_sentence}`` as the official scorer reads;
- split_rephrase (WebSplit): average multi-reference BLEU; baseline ``repeat``; the system
  file is JSONL ``{complex_id, simple_sentences}``.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import selectors
from annotation.exporters import EXPORTERS, export_project
from annotation.exporters.sluice import FILE_SPLIT_NAMES
from annotation.models import Project
from qc import baselines, evaluation, textmetrics
from qc.aggregation import plausibility_label

FORMAT_OF_KIND = {"rewrite": "canard", "plausibility": "claire", "sluice": "sluice",
                  "decontext": "decontext", "split_rephrase": "websplit"}
BASELINES = {
    "rewrite": {"copy": lambda r: baselines.repeat(r["Question"]),
                "pronoun_sub": lambda r: baselines.pronoun_sub(r["Question"], r["History"][0])},
    "sluice": {"ce_q1": lambda r: baselines.copy_edit_q1(r["Input.question_1"],
                                                         r["Input.question_2"]),
               "ce_a": lambda r: baselines.copy_edit_answer(r["Input.answer_1"],
                                                            r["Input.question_2"])},
    "decontext": {"repeat": lambda r: baselines.repeat(r["original_sentence"])},
    "split_rephrase": {"repeat": lambda r: [baselines.repeat(r["complex_sentence"])]},
}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def read_tsv_values(path: Path) -> dict[str, str]:
    values = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        key, separator, value = line.partition("\t")
        if not separator:
            raise CommandError(f"{path} line {number}: expected <Id>_<n> TAB value")
        values[key] = value.strip()
    return values


def evaluate_rewrite(export_dir: Path, split: str, system: Path | None, baseline):
    records = json.loads((export_dir / f"{split}.json").read_text(encoding="utf-8"))
    references: dict[tuple, list[str]] = {}
    first: dict[tuple, dict] = {}
    for record in records:
        key = (record["QuAC_dialog_id"], record["Question_no"])
        references.setdefault(key, []).append(record["Rewrite"])
        first.setdefault(key, record)
    if system is not None:
        outputs = {(r["QuAC_dialog_id"], r["Question_no"]): r["Rewrite"]
                   for r in json.loads(system.read_text(encoding="utf-8"))}
    else:
        outputs = {key: baseline(record) for key, record in first.items()}
    keys = list(references)
    missing = [key for key in keys if key not in outputs]
    if missing:
        raise CommandError(f"the system output has no rewrite for {len(missing)} question(s), "
                           f"e.g. {missing[0]}")
    bleu = textmetrics.corpus_bleu([outputs[key] for key in keys],
                                   [references[key] for key in keys])
    return {"n_questions": len(keys), "bleu": bleu}


def evaluate_plausibility(export_dir: Path, split: str, system: Path | None, baseline):
    if system is None:
        raise CommandError("CLAIRE has no built-in baseline: pass --system a scores/labels TSV")
    gold_scores = {k: float(v) for k, v in read_tsv_values(export_dir /
                                                           f"{split}_scores.tsv").items()}
    gold_labels = read_tsv_values(export_dir / f"{split}_labels.tsv")
    predicted = read_tsv_values(system)
    result = {"n_fillers": len(gold_labels)}
    try:
        predicted_scores = {k: float(v) for k, v in predicted.items()}
    except ValueError:
        predicted_scores = None
    if predicted_scores is not None:
        result["spearman"] = evaluation.claire_spearman(gold_scores, predicted_scores)
        predicted_labels = {k: plausibility_label(v) for k, v in predicted_scores.items()}
    else:
        predicted_labels = predicted
    result["accuracy"] = evaluation.claire_accuracy(gold_labels, predicted_labels)
    return result


def evaluate_sluice(export_dir: Path, split: str, system: Path | None, baseline):
    rows = json.loads((export_dir / f"sluice_{FILE_SPLIT_NAMES[split]}_filtered.json")
                      .read_text(encoding="utf-8")).values()
    contexts: dict[tuple, list[str]] = {}
    for row in rows:
        key = (row["Input.question_1"], row["Input.answer_1"], row["Input.question_2"])
        contexts.setdefault(key, []).append(row["Answer.full_question"])
    if system is not None:
        outputs = {(r["Input.question_1"], r["Input.answer_1"], r["Input.question_2"]):
                   r["Answer.full_question"]
                   for r in json.loads(system.read_text(encoding="utf-8")).values()}
    else:
        outputs = {key: baseline({"Input.question_1": key[0], "Input.answer_1": key[1],
                                  "Input.question_2": key[2]}) for key in contexts}
    keys = [key for key in contexts if key in outputs]
    if len(keys) < len(contexts):
        raise CommandError(f"the system output misses {len(contexts) - len(keys)} context(s)")
    return dataclasses.asdict(evaluation.evaluate_sluice([outputs[k] for k in keys],
                                                         [contexts[k] for k in keys]))


def evaluate_decontext(export_dir: Path, split: str, system: Path | None, baseline):
    examples = read_jsonl(export_dir / f"{split}.jsonl")
    if system is not None:
        predictions = {}
        for row in read_jsonl(system):
            sentence = (row["decontextualized_sentence"] if row["category"] == "DONE"
                        else row.get("original_sentence", ""))
            predictions[row["example_id"]] = sentence
    scored, human = [], []
    for example in examples:
        original = example["original_sentence"]
        rows = [(a["category"], a["decontextualized_sentence"]) for a in example["annotations"]]
        (reference_example,) = evaluation.decontext_human_examples([(original, rows)]) or [None]
        if reference_example is None:
            continue  # the official scorer skips it too
        _, _, references = reference_example
        output = (predictions.get(example["example_id"], original) if system is not None
                  else baseline(example))
        scored.append((original, output, references))
        human.append(reference_example)
    if not scored:
        raise CommandError("no example has enough feasible annotations to be scored")

    def summary(scores):
        values = dataclasses.asdict(scores)
        for part in ("sari_add", "sari_delete"):
            counts = getattr(scores, part)
            values[part] = {"precision": counts.precision, "recall": counts.recall,
                            "f1": counts.f1}
        return values

    return {"system": summary(evaluation.evaluate_decontext(scored)),
            "human": summary(evaluation.evaluate_decontext(human))}


def evaluate_websplit(export_dir: Path, split: str, system: Path | None, baseline):
    records = [r for r in read_jsonl(export_dir / f"{split}.jsonl") if r["references"]]
    if system is not None:
        outputs = {row["complex_id"]: row["simple_sentences"] for row in read_jsonl(system)}
    else:
        outputs = {record["complex_id"]: baseline(record) for record in records}
    examples = [(outputs.get(record["complex_id"], []),
                 [reference["simple_sentences"] for reference in record["references"]])
                for record in records]
    return dataclasses.asdict(evaluation.evaluate_websplit(examples))


EVALUATORS = {"rewrite": evaluate_rewrite, "plausibility": evaluate_plausibility,
              "sluice": evaluate_sluice, "decontext": evaluate_decontext,
              "split_rephrase": evaluate_websplit}


def evaluate_project(*, project: Project, split: str, system: Path | None,
                     baseline_name: str | None) -> dict:
    baseline = None
    if system is None:
        choices = BASELINES.get(project.kind, {})
        if baseline_name not in choices:
            raise CommandError(f"--baseline for a {project.kind} project: "
                               f"{', '.join(choices) or 'none available'}")
        baseline = choices[baseline_name]
    elif not system.is_file():
        raise CommandError(f"no such system file: {system}")
    with tempfile.TemporaryDirectory(prefix="unpack-eval-") as folder:
        export_dir = Path(folder)
        export_project(project=project, format_name=FORMAT_OF_KIND[project.kind],
                       out_dir=export_dir)
        scores = EVALUATORS[project.kind](export_dir, split, system, baseline)
    return {"project": project.slug, "split": split,
            "system": str(system) if system else f"baseline:{baseline_name}", **scores}


class Command(BaseCommand):
    help = "Score a system output or a built-in baseline against the multi-reference export."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--system", type=Path)
        source.add_argument("--baseline")
        parser.add_argument("--split", default="test", choices=("train", "dev", "test"))

    def handle(self, *args, slug, system, baseline, split, **options):
        try:
            project = selectors.project_get(slug=slug)
        except Project.DoesNotExist:
            raise CommandError(f"no project {slug!r}") from None
        if FORMAT_OF_KIND.get(project.kind) not in EXPORTERS:
            raise CommandError(f"no evaluation for {project.kind} projects")
        result = evaluate_project(project=project, split=split, system=system,
                                  baseline_name=baseline)
        self.stdout.write(json.dumps(result, indent=2, sort_keys=True))
