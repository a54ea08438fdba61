"""``python manage.py evaluate SLUG (--system FILE | --baseline NAME | --human) [--split test]``.

Exports the split with the project's dataset exporter into a temporary folder, reads the
multi-reference export back (so what is scored is exactly what is shipped), and scores a
system output in the same format, or a built-in baseline of ``qc.baselines``, with the
paper's measures from ``qc.evaluation`` (this command only reads files and builds rows; every
measure, the multi-reference rules and the decontext scorer's rules live in ``qc``):

- rewrite (CANARD): corpus BLEU against every reference rewrite of each question, after
  CANARD's official spaCy tokenisation (``--tokenize 13a``: sacrebleu's 13a alone);
  baselines ``copy``, ``pronoun_sub``; ``--human``: each question's first rewrite against
  its others (``multiple_refs.json``); the system file is a CANARD JSON array (its
  ``Rewrite`` per ``QuAC_dialog_id`` + ``Question_no``);
- plausibility (CLAIRE): accuracy of labels and Spearman of scores; the system file is a
  ``*_scores.tsv`` (labels then follow from the thresholds) or a ``*_labels.tsv`` covering
  exactly the split's fillers (``--missing-as-wrong`` scores a missing one as wrong);
- sluice: mean sentence GLEU/BLEU/chrF against all references of a context; baselines
  ``ce_q1``, ``ce_a``; the system file is in the processed sluice JSON shape;
- decontext: exactly what the official scorer (google-research/language
  ``language/decontext/eval.py`` with ``--word_tokenizer=whitespace``) computes
  (``qc.evaluation.evaluate_decontext_predictions``): length
  increase ratio (characters), % changed, sentence match (all / on examples no reference
  leaves unchanged), SARI add/delete on unigrams of the normalised text, for the system and
  for the median-length human annotation, plus the feasibility classification score; baseline
  ``repeat``; the system file is the scorer's prediction JSONL ``{example_id, category,
  original_sentence, decontextualized_sentence}`` with one line per example of the split
  (``--write-predictions FILE`` writes a baseline's outputs in that shape);
- split_rephrase (WebSplit): average multi-reference BLEU, sacrebleu's and Aharoni &
  Goldberg's ``multi-bleu.perl`` rule; baseline ``repeat``; the system file is JSONL
  ``{complex_id, simple_sentences}``.

An empty split is refused for every task.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.exporters import EXPORTERS, export_project
from annotation.exporters.decontext import NO_CHANGED_EXAMPLE
from annotation.exporters.sluice import FILE_SPLIT_NAMES
from annotation.models import Project
from annotation.selectors import projects as project_selectors
from qc import baselines, cleaning, evaluation
from qc.aggregation import decontext_sentence

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


def nothing_to_score(split: str, what: str) -> CommandError:
    """The error for an empty split: scoring nothing would print a meaningless 0 or NaN."""
    return CommandError(f"the {split} split has no {what} to score (its export is empty); "
                        "pick another --split or import/collect annotations first")


def evaluate_rewrite(export_dir: Path, split: str, system: Path | None, baseline, *,
                     tokenization: str = "spacy", human: bool = False):
    records = json.loads((export_dir / f"{split}.json").read_text(encoding="utf-8"))
    references: dict[tuple, list[str]] = {}
    first: dict[tuple, dict] = {}
    for record in records:
        key = (record["QuAC_dialog_id"], record["Question_no"])
        references.setdefault(key, []).append(record["Rewrite"])
        first.setdefault(key, record)
    if not references:
        raise nothing_to_score(split, "rewritten question")
    if human:
        return dataclasses.asdict(evaluation.rewrite_human_agreement(
            list(references.values()), tokenization=tokenization))
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
    return dataclasses.asdict(evaluation.evaluate_rewrites(
        [outputs[key] for key in keys], [references[key] for key in keys],
        tokenization=tokenization))


def evaluate_plausibility(export_dir: Path, split: str, system: Path | None, baseline, *,
                          missing_as_wrong: bool = False):
    if system is None:
        raise CommandError("CLAIRE has no built-in baseline: pass --system a scores/labels TSV")
    gold_scores = {k: float(v) for k, v in read_tsv_values(export_dir /
                                                           f"{split}_scores.tsv").items()}
    gold_labels = read_tsv_values(export_dir / f"{split}_labels.tsv")
    if not gold_labels:
        raise nothing_to_score(split, "rated filler")
    predicted = read_tsv_values(system)
    try:
        predicted_scores = {k: float(v) for k, v in predicted.items()}
    except ValueError:  # not all numbers: a labels file
        predicted_scores = None
    # As the official scorer, which refuses a file of another size, qc refuses predictions
    # that miss fillers of the split or name others (the wrong file or split).
    try:
        if predicted_scores is None:
            return evaluation.evaluate_claire(gold_labels, gold_scores,
                                              predicted_labels=predicted,
                                              missing_as_wrong=missing_as_wrong).as_dict()
        return evaluation.evaluate_claire(gold_labels, gold_scores,
                                          predicted_scores=predicted_scores).as_dict()
    except ValueError as error:
        raise CommandError(f"{system}: {error} (the {split} split)") from None


def evaluate_sluice(export_dir: Path, split: str, system: Path | None, baseline):
    rows = json.loads((export_dir / f"sluice_{FILE_SPLIT_NAMES[split]}_filtered.json")
                      .read_text(encoding="utf-8")).values()
    contexts = cleaning.references_by_context(rows)
    if not contexts:
        raise nothing_to_score(split, "sluice context")
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


# --- decontextualization: rows for qc.evaluation.evaluate_decontext_predictions ---------

DECONTEXT_PREDICTION_KEYS = ("example_id", "category", "original_sentence",
                             "decontextualized_sentence")


def read_decontext_predictions(path: Path) -> dict:
    """The scorer's prediction JSONL; every key it reads is required (it fails without)."""
    predictions = {}
    for number, row in enumerate(read_jsonl(path), start=1):
        missing = [key for key in DECONTEXT_PREDICTION_KEYS if key not in row]
        if missing:
            raise CommandError(f"{path} prediction {number}: missing {', '.join(missing)} (the "
                               f"official scorer reads {', '.join(DECONTEXT_PREDICTION_KEYS)})")
        predictions[row["example_id"]] = row
    return predictions


def decontext_baseline_predictions(examples: Sequence[dict], baseline) -> dict:
    """A baseline's output per example, as prediction rows (unchanged -> UNNECESSARY)."""
    predictions = {}
    for example in examples:
        output = baseline(example)
        original = example["original_sentence"]
        predictions[example["example_id"]] = {
            "example_id": example["example_id"],
            "category": "UNNECESSARY" if output == original else "DONE",
            "original_sentence": original,
            "decontextualized_sentence": output,
        }
    return predictions


def evaluate_decontext(export_dir: Path, split: str, system: Path | None, baseline,
                       write_predictions: Path | None = None):
    examples = read_jsonl(export_dir / f"{split}.jsonl")
    if not examples:
        raise nothing_to_score(split, "annotated example")
    if system is not None:
        predictions = read_decontext_predictions(system)
    else:
        predictions = decontext_baseline_predictions(examples, baseline)
    missing = [example["example_id"] for example in examples
               if example["example_id"] not in predictions]
    if missing:
        raise CommandError(f"the system output has no prediction for {len(missing)} example(s), "
                           f"e.g. {missing[0]!r} (the official scorer needs one per example)")
    if write_predictions is not None:
        write_predictions.write_text(
            "".join(json.dumps(predictions[example["example_id"]], sort_keys=True,
                               ensure_ascii=False) + "\n" for example in examples),
            encoding="utf-8")
    rows = []
    for example in examples:
        prediction = predictions[example["example_id"]]
        rows.append(evaluation.DecontextExample(
            example_id=example["example_id"],
            original_sentence=example["annotations"][0]["original_sentence"],
            annotations=[(annotation["category"], annotation["decontextualized_sentence"])
                         for annotation in example["annotations"]],
            predicted_category=prediction["category"],
            predicted_sentence=decontext_sentence(prediction["category"],
                                                  prediction["original_sentence"],
                                                  prediction["decontextualized_sentence"])))
    scores = evaluation.evaluate_decontext_predictions(rows).as_dict()
    if scores["human"]["n_match_edited"] == 0:
        # NaN is not JSON, and the official scorer has no figure here at all (it stops).
        for side in ("system", "human"):
            scores[side]["match_edited"] = None
        scores["notes"] = [NO_CHANGED_EXAMPLE.format(file=f"{split}.jsonl",
                                                     n=scores["human"]["n_examples"])]
    return scores


def evaluate_websplit(export_dir: Path, split: str, system: Path | None, baseline):
    records = [r for r in read_jsonl(export_dir / f"{split}.jsonl") if r["references"]]
    if not records:
        raise nothing_to_score(split, "complex sentence with a reference")
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
                     baseline_name: str | None, write_predictions: Path | None = None,
                     human: bool = False, tokenization: str | None = None,
                     missing_as_wrong: bool = False) -> dict:
    baseline = None
    extra: dict = {}
    if tokenization is not None or human:
        if project.kind != "rewrite":
            raise CommandError("--tokenize and --human are for rewrite (CANARD) projects")
        extra["tokenization"] = tokenization or "spacy"
    if missing_as_wrong:
        if project.kind != "plausibility":
            raise CommandError("--missing-as-wrong is for plausibility (CLAIRE) projects")
        extra["missing_as_wrong"] = True
    if human:
        extra["human"] = True
    elif system is None:
        choices = BASELINES.get(project.kind, {})
        if baseline_name not in choices:
            raise CommandError(f"--baseline for a {project.kind} project: "
                               f"{', '.join(choices) or 'none available'}")
        baseline = choices[baseline_name]
    elif not system.is_file():
        raise CommandError(f"no such system file: {system}")
    if write_predictions is not None and project.kind != "decontext":
        raise CommandError("--write-predictions writes the decontext scorer's prediction "
                           "JSONL; it is for decontext projects")
    with tempfile.TemporaryDirectory(prefix="unpack-eval-") as folder:
        export_dir = Path(folder)
        export_project(project=project, format_name=FORMAT_OF_KIND[project.kind],
                       out_dir=export_dir)
        if write_predictions:
            extra["write_predictions"] = write_predictions
        try:
            scores = EVALUATORS[project.kind](export_dir, split, system, baseline, **extra)
        except ValueError as error:  # what qc refuses to score, said plainly
            raise CommandError(str(error)) from error
    source = "human" if human else str(system) if system else f"baseline:{baseline_name}"
    return {"project": project.slug, "split": split, "system": source, **scores}


class Command(BaseCommand):
    help = "Score a system output or a built-in baseline against the multi-reference export."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--system", type=Path)
        source.add_argument("--baseline")
        source.add_argument("--human", action="store_true",
                            help="rewrite: the human figure, each question's first rewrite "
                                 "scored against its others (CANARD's multiple_refs.json)")
        parser.add_argument("--split", default="test", choices=("train", "dev", "test"))
        parser.add_argument("--tokenize", choices=evaluation.REWRITE_TOKENIZATIONS,
                            help="rewrite: spacy (default; CANARD's official set-up, spaCy's "
                                 "blank English tokenizer before BLEU) or 13a (sacrebleu's "
                                 "13a alone, on the raw text)")
        parser.add_argument("--missing-as-wrong", action="store_true",
                            help="plausibility: score a filler without a prediction as wrong "
                                 "instead of refusing the file (as the official scorer does)")
        parser.add_argument("--write-predictions", type=Path, metavar="FILE",
                            help="decontext: also write the scored outputs as the official "
                                 "scorer's prediction JSONL (one line per example)")

    def handle(self, *args, slug, system, baseline, human, split, write_predictions, tokenize,
               missing_as_wrong, **options):
        try:
            project = project_selectors.project_get(slug=slug)
        except Project.DoesNotExist:
            raise CommandError(f"no project {slug!r}") from None
        if FORMAT_OF_KIND.get(project.kind) not in EXPORTERS:
            raise CommandError(f"no evaluation for {project.kind} projects")
        result = evaluate_project(project=project, split=split, system=system,
                                  baseline_name=baseline, write_predictions=write_predictions,
                                  human=human, tokenization=tokenize,
                                  missing_as_wrong=missing_as_wrong)
        self.stdout.write(json.dumps(result, indent=2, sort_keys=True))
