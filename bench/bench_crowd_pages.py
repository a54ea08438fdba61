"""A simulated crowd driven through the real task pages and submit endpoints: are timing and
effort flags right where workers produce them?

Items: real sluice dialogues (``../shared/data/sluice/processed/sluice_test_filtered.json``:
Q1, A1, the sluice and a released full question, the honest answer). Pages: MTurk HITs of
``--per-hit`` items saved at once on Submit (the page shape whose timing once flagged 75% of
honest answers), ``--assignments`` workers a HIT. Every worker opens the HIT's task page (GET:
the server serves it and signs when), posts each item to the MTurk submit endpoint with the
``duration_ms`` and ``effort`` summary its page would send, then finishes the assignment;
collection confirms the answers and QC runs (``project_qc_run``, as "Run QC now" does) and
stores its flags. Nothing is called below the HTTP layer but the clock, which the bench
advances by each worker's simulated seconds (``django.utils.timezone.now``).

Workers (per seed, in the pool's shares):

- honest: read the dialogue (log-normal, median 6 s), think, then type the released answer at
  their own pace (1.5-7 characters a second); some paste a phrase copied from the page, some
  look away (focus lost; hidden time is no item's active time, as the page counts it);
- random clickers: 0.4-2.5 s an item, skip the sluice or type a few characters;
- pasting workers: read, go to another tab (a chatbot), paste its answer (the released answer
  reworded, sometimes with the chatbot's framing) and touch it up; a fifth of their answers
  are retyped from the other window instead of pasted.

The page's summaries are computed here as ``frontend/static/frontend/annotate/effort.js`` and
``timing.js`` compute them (``tests/browser/test_effort_signals.py`` and
``tests/browser/test_active_time.py`` check the page's side in a real browser).

Reports, over ``--seeds`` runs: % of honest answers flagged for timing (``too_fast``,
``too_slow``, ``under_time_floor``, ``timing_mismatch``) and for effort; % of random clickers'
answers flagged (any flag) and of random clickers with a flag; % of pasting workers' answers
flagged (any effort flag) and of pasting workers with one.

    python3 bench/bench_crowd_pages.py [--seeds 20] [--workers 30] [--hits 15] [--json]

Runs in process through Django's test client on a throw-away SQLite database (or
DATABASE_URL, which must be disposable).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

SLUICE = REPO_ROOT.parent / "shared" / "data" / "sluice" / "processed" / \
    "sluice_test_filtered.json"
SUBMIT_TO = "https://workersandbox.mturk.com"
TIMING_REASONS = ("too_fast", "too_slow", "under_time_floor", "timing_mismatch")
EFFORT_REASONS = ("pasted_answer", "implausible_typing", "machine_like_text")
KINDS = ("honest", "random", "pasting")
#: What a chatbot wraps around an answer (pasted as it came, or trimmed by the worker).
CHATBOT_FRAMES = ("Sure! Here is the full question: {}", "Certainly! {}",
                  "{} I hope this helps!", "Here's the rewritten question: {}")


class Clock:
    """The server's clock in the bench: starts now, moves only when told."""

    def __init__(self):
        self.at = datetime.now(UTC)

    def now(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=float(seconds))


def load_dialogues() -> list[dict]:
    """One row per distinct dialogue (Q1, A1, sluice), with its first released answer."""
    rows = json.loads(SLUICE.read_text()).values()
    seen: dict[tuple, dict] = {}
    for row in rows:
        key = (row["Input.question_1"], row["Input.answer_1"], row["Input.question_2"])
        if key not in seen and row["Answer.full_question"].strip():
            seen[key] = {"q1": key[0], "a1": key[1], "q2": key[2],
                         "answer": row["Answer.full_question"].strip()}
    return list(seen.values())


def effort_summary(*, pastes=0, pasted=0, pasted_from_page=0, typed=0, typing_ms=0,
                   focus_losses=0, first_input_ms=None) -> dict:
    return {"pastes": pastes, "pasted_chars": pasted, "pasted_from_page_chars": pasted_from_page,
            "typed_chars": typed, "typing_ms": int(typing_ms), "focus_losses": focus_losses,
            "first_input_ms": None if first_input_ms is None else int(first_input_ms)}


def honest_item(rng, dialogue: dict, pace: float) -> dict:
    """An honest worker's item: active seconds, hidden seconds, the answer and its summary."""
    answer = dialogue["answer"]
    reading = rng.lognormal(np.log(6.0), 0.5)
    thinking = rng.lognormal(np.log(3.0), 0.6)
    typing_seconds = len(answer) / pace
    pasted_from_page = 0
    typed = len(answer)
    if rng.random() < 0.1:  # a name copied from the dialogue and pasted in
        pasted_from_page = min(len(answer) // 2, int(rng.integers(6, 20)))
        typed -= pasted_from_page
        typing_seconds = typed / pace
    losses = int(rng.poisson(0.15))
    hidden = float(rng.exponential(20.0)) * losses
    effort = effort_summary(pastes=int(pasted_from_page > 0), pasted=pasted_from_page,
                            pasted_from_page=pasted_from_page, typed=typed,
                            typing_ms=typing_seconds * 1000 * rng.uniform(0.95, 1.3),
                            focus_losses=losses, first_input_ms=(reading + thinking) * 1000)
    return {"active": reading + thinking + typing_seconds, "hidden": hidden,
            "payload": {"full_question": answer, "skipped": False}, "effort": effort}


def random_item(rng, dialogue: dict) -> dict:
    active = rng.uniform(0.4, 2.5)
    if rng.random() < 0.5:
        return {"active": active, "hidden": 0.0,
                "payload": {"full_question": "", "skipped": True},
                "effort": effort_summary()}
    text = dialogue["q2"].strip().rstrip("?") + " " + "".join(
        rng.choice(list("abcdefghij ")) for _ in range(int(rng.integers(2, 8)))) + "?"
    speed = rng.uniform(5.0, 9.0)
    return {"active": active + len(text) / speed, "hidden": 0.0,
            "payload": {"full_question": text, "skipped": False},
            "effort": effort_summary(typed=len(text), typing_ms=len(text) / speed * 1000,
                                     first_input_ms=active * 1000)}


def chatbot_answer(rng, dialogue: dict) -> str:
    """The released answer as a chatbot would give it: reworded, sometimes framed."""
    answer = dialogue["answer"]
    if rng.random() < 0.35:
        return str(rng.choice(CHATBOT_FRAMES)).format(answer)
    if rng.random() < 0.5:
        return f"{answer.rstrip('?')}, according to the conversation?"
    return answer


def pasting_item(rng, dialogue: dict, pace: float) -> dict:
    text = chatbot_answer(rng, dialogue)
    reading = rng.lognormal(np.log(4.0), 0.5)
    away = rng.uniform(8.0, 30.0)  # in the chatbot's tab: hidden, no item's active time
    if rng.random() < 0.2:  # retyped from the other window instead of pasted
        typing = len(text) / pace
        effort = effort_summary(typed=len(text), typing_ms=typing * 1000, focus_losses=1,
                                first_input_ms=(reading + away) * 1000)
        return {"active": reading + typing, "hidden": away,
                "payload": {"full_question": text, "skipped": False}, "effort": effort}
    edits = int(rng.integers(0, 6))
    effort = effort_summary(pastes=1, pasted=len(text), typed=edits, typing_ms=edits * 250,
                            focus_losses=1, first_input_ms=(reading + away) * 1000)
    return {"active": reading + rng.uniform(1.0, 4.0), "hidden": away,
            "payload": {"full_question": text, "skipped": False}, "effort": effort}


def run_seed(seed: int, args, dialogues: list[dict], clock: Clock) -> dict:
    from django.test import Client

    from annotation.models import Annotation, Flag, Worker
    from annotation.services.annotations import annotations_confirm
    from annotation.services.qc import project_qc_run
    from tests.factories import publish_hit

    rng = np.random.default_rng(seed)
    project = sluice_bench_project(f"pages-{seed}-{uuid.uuid4().hex[:6]}", rng, dialogues,
                                   args.hits * args.per_hit)
    items = list(project.items.order_by("id"))
    by_item = {item.pk: dialogue for item, dialogue in
               zip(items, project_dialogues[project.pk], strict=True)}
    n_random = round(args.workers * args.random)
    n_pasting = round(args.workers * args.pasting)
    kinds = ["random"] * n_random + ["pasting"] * n_pasting
    kinds += ["honest"] * (args.workers - len(kinds))
    paces = rng.uniform(1.5, 7.0, size=args.workers)
    kind_of_worker: dict[str, str] = {}
    requests = 0
    started = time.perf_counter()
    for hit_index in range(args.hits):
        hit_items = items[hit_index * args.per_hit:(hit_index + 1) * args.per_hit]
        hit_id = f"HITP{seed:03d}{hit_index:04d}{uuid.uuid4().hex[:6].upper()}"
        publish_hit(project, hit_id=hit_id, items=hit_items, max_assignments=args.assignments)
        for slot, worker in enumerate(rng.choice(args.workers, size=args.assignments,
                                                 replace=False)):
            kind = kinds[worker]
            worker_id = f"AWP{seed:03d}X{worker:04d}"
            kind_of_worker[worker_id] = kind
            client = Client(REMOTE_ADDR=f"198.51.{worker // 250}.{worker % 250 + 1}")
            clock.advance(rng.uniform(0, 600))  # workers arrive over time
            response = client.get(f"/mturk/task/{project.slug}/", {
                "assignmentId": f"ASP{hit_id}{slot}", "hitId": hit_id, "workerId": worker_id,
                "turkSubmitTo": SUBMIT_TO})
            requests += 1
            assert response.status_code == 200, response.status_code
            token = response.context["config"]["task_token"]
            clock.advance(rng.uniform(2.0, 8.0))  # the instructions, the page settling
            answers = []
            for item in hit_items:
                dialogue = by_item[item.pk]
                if kind == "honest":
                    done = honest_item(rng, dialogue, paces[worker])
                elif kind == "random":
                    done = random_item(rng, dialogue)
                else:
                    done = pasting_item(rng, dialogue, paces[worker])
                clock.advance(done["active"] + done["hidden"])
                answers.append((item, done))
            clock.advance(rng.uniform(0.5, 2.0))  # Submit: every item saved at once
            for item, done in answers:
                body = {"item_id": item.pk, "client_token": uuid.uuid4().hex,
                        "task_token": token, "payload": done["payload"],
                        "duration_ms": int(done["active"] * 1000), "effort": done["effort"]}
                if done["payload"]["skipped"]:
                    body.pop("effort")
                saved = client.post(f"/mturk/task/{project.slug}/submit/", json.dumps(body),
                                    content_type="application/json")
                requests += 1
                assert saved.status_code == 200, saved.content
                clock.advance(0.15)
            finished = client.post(f"/mturk/task/{project.slug}/finish/",
                                   json.dumps({"task_token": token}),
                                   content_type="application/json")
            requests += 1
            assert finished.status_code == 200, finished.content
    walls = time.perf_counter() - started
    # Collection: MTurk reported every assignment.
    annotations_confirm(annotations=Annotation.objects.filter(project=project))
    qc_started = time.perf_counter()
    project_qc_run(project=project)
    qc_seconds = time.perf_counter() - qc_started

    worker_ids = dict(Worker.objects.filter(annotations__project=project)
                      .values_list("pk", "external_id").distinct())
    answer_worker = {pk: worker_ids[worker] for pk, worker in
                     Annotation.objects.filter(project=project).values_list("pk", "worker_id")}
    answer_kind = {pk: kind_of_worker[worker] for pk, worker in answer_worker.items()}
    reasons: dict[int, set[str]] = defaultdict(set)
    for annotation_id, reason in Flag.objects.filter(
            project=project, annotation__isnull=False).values_list("annotation_id", "reason"):
        reasons[annotation_id].add(reason)
    answers_of = Counter(answer_kind.values())
    flagged = Counter()
    worker_flagged: dict[str, set[str]] = defaultdict(set)
    for annotation_id, kind in answer_kind.items():
        found = reasons.get(annotation_id, set())
        worker = answer_worker[annotation_id]
        if found & set(TIMING_REASONS):
            flagged[(kind, "timing")] += 1
        if found & set(EFFORT_REASONS):
            flagged[(kind, "effort")] += 1
            worker_flagged["effort"].add(worker)
        if found:
            flagged[(kind, "any")] += 1
            worker_flagged["any"].add(worker)
    workers_of = Counter(kind_of_worker.values())

    def share(kind, what):
        return 100.0 * flagged[(kind, what)] / max(answers_of[kind], 1)

    def worker_share(kind, what):
        return 100.0 * sum(1 for worker in worker_flagged[what]
                           if kind_of_worker[worker] == kind) / max(workers_of[kind], 1)

    return {
        "answers": dict(answers_of), "workers": dict(workers_of),
        "honest_timing_pct": share("honest", "timing"),
        "honest_effort_pct": share("honest", "effort"),
        "honest_any_pct": share("honest", "any"),
        "random_any_pct": share("random", "any"),
        "random_timing_pct": share("random", "timing"),
        "random_workers_any_pct": worker_share("random", "any"),
        "pasting_effort_pct": share("pasting", "effort"),
        "pasting_any_pct": share("pasting", "any"),
        "pasting_workers_effort_pct": worker_share("pasting", "effort"),
        "requests": requests, "request_seconds": walls, "qc_seconds": qc_seconds,
    }


#: The dialogues each bench project was built from, in item order.
project_dialogues: dict[int, list[dict]] = {}


def sluice_bench_project(slug: str, rng, dialogues: list[dict], n_items: int):
    from annotation import models

    project = models.Project.objects.create(slug=slug, name="Sluice pages bench",
                                            kind=models.TaskKind.SLUICE,
                                            redundancy={"train": 3, "dev": 3, "test": 3})
    chosen = [dialogues[index] for index in rng.choice(len(dialogues), size=n_items,
                                                       replace=False)]
    for index, dialogue in enumerate(chosen):
        row = models.Dialogue.objects.create(project=project, external_id=f"d{index}",
                                             source="sluice")
        models.DialogueTurn.objects.create(dialogue=row, order=1, question=dialogue["q1"],
                                           answer=dialogue["a1"])
        sluice = models.DialogueTurn.objects.create(dialogue=row, order=2,
                                                    question=dialogue["q2"])
        models.Item.objects.create(project=project, external_id=f"d{index}", split="test",
                                   group_key=f"d{index}", position=2, turn=sluice)
    project_dialogues[project.pk] = chosen
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--workers", type=int, default=30)
    parser.add_argument("--hits", type=int, default=15)
    parser.add_argument("--per-hit", type=int, default=4)
    parser.add_argument("--assignments", type=int, default=3)
    parser.add_argument("--random", type=float, default=0.15, help="share of random clickers")
    parser.add_argument("--pasting", type=float, default=0.15, help="share of pasting workers")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from scratch_django import setup_scratch_django

    setup_scratch_django("unpack-bench-crowd-pages-")
    from django.conf import settings
    from django.utils import timezone

    # One simulated crowd saves far faster than people: the anonymous saves' rate limits
    # (annotation/crowd_throttle.py) are not what this bench measures.
    settings.UNPACK_CROWD_SAVES_PER_ADDRESS = 10**9
    settings.UNPACK_CROWD_SESSIONS_PER_ADDRESS = 10**9
    settings.UNPACK_CROWD_SESSIONS_PER_HIT = 10**9
    clock = Clock()
    timezone.now = clock.now  # every reader of the server's clock goes through it

    dialogues = load_dialogues()
    runs = [run_seed(seed, args, dialogues, clock) for seed in range(args.seeds)]
    keys = [key for key in runs[0] if key.endswith("_pct") or key.endswith("_seconds")]
    summary = {key: {"mean": float(np.mean([run[key] for run in runs])),
                     "max": float(np.max([run[key] for run in runs])),
                     "min": float(np.min([run[key] for run in runs]))} for key in keys}
    summary["answers_per_seed"] = runs[0]["answers"]
    summary["workers_per_seed"] = runs[0]["workers"]
    summary["requests"] = int(sum(run["requests"] for run in runs))
    summary["arguments"] = vars(args)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"{args.seeds} seeds; per seed {args.hits} HITs of {args.per_hit} real sluice "
          f"items x {args.assignments} assignments, {args.workers} workers "
          f"({summary['workers_per_seed']}), answers {summary['answers_per_seed']}; "
          f"{summary['requests']} HTTP requests in all")
    labels = {
        "honest_timing_pct": "honest answers flagged for timing (target <= 2%)",
        "honest_effort_pct": "honest answers with an effort flag",
        "honest_any_pct": "honest answers with any flag (ignores_context: no word of Q1/A1)",
        "random_timing_pct": "random clickers' answers flagged for timing",
        "random_any_pct": "random clickers' answers flagged, any flag (target >= 95%)",
        "random_workers_any_pct": "random clickers with a flag",
        "pasting_effort_pct": "pasting workers' answers with an effort flag (target >= 80%)",
        "pasting_workers_effort_pct": "pasting workers with an effort flag",
    }
    for key, label in labels.items():
        figures = summary[key]
        print(f"  {label}: {figures['mean']:.1f}% (min {figures['min']:.1f}, "
              f"max {figures['max']:.1f})")
    print(f"  per seed: requests {summary['request_seconds']['mean']:.1f}s wall, "
          f"QC run {summary['qc_seconds']['mean']:.2f}s wall")


if __name__ == "__main__":
    main()
