"""A simulated crowd for the demo: local workers answer part of each demo project, then QC runs.

``demo_crowd_run`` is what ``manage.py demo`` calls after importing the samples. Contract:

- every answer goes through the same door as the task pages: ``annotate_selectors.item_context``
  → ``payloads.validate_payload`` → ``services.annotations.annotation_submit`` (source
  ``local``), so payload validation, the redundancy check under the Item row lock and the
  server-side live checks all run; live-check warnings a simulated worker "submitted anyway"
  are recorded as shown and overridden, exactly as the browser reports them;
- deterministic: answers, ratings and durations come from fixed plans and a seeded
  ``random.Random``; the client token of an answer is derived from (project, worker, item), so
  running the demo again stores nothing new (``annotation_submit`` returns the stored answer);
- it respects each split's redundancy: an item is never planned beyond
  ``project.redundancy_for(split)`` crowd answers, and some items of every project are left
  with open slots so the demo ``annotator`` login still has work everywhere;
- afterwards ``services.qc.project_qc_run`` stores the flags of every demo project, so the
  review queue and dashboards show real findings.

The plans below are written for the shipped samples in ``annotation/demo_data/`` (item external
ids); an item a plan names but the database lacks is an error, so a changed sample cannot
silently produce an empty demo.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from ..models import Annotation, Item, Project, TaskKind, Worker
from ..payloads import live_check_warnings, validate_payload
from ..selectors import annotate as annotate_selectors
from .annotations import SubmitRefused, annotation_submit
from .qc import project_qc_run
from .staff_jobs import job_record_finished
from .workers import worker_get_or_create

SEED = 20240607
WORKERS = tuple(f"demo-worker-{n}" for n in range(1, 7))
RANDOM_CLICKER = "demo-worker-6"  # CLAIRE: ratings uniformly at random, and in a hurry
FAST_WORKER = "demo-worker-5"  # text tasks: abnormally fast, low-effort answers

# Median seconds per item of a careful worker, by task (log-normal spread around it).
MEDIAN_SECONDS = {TaskKind.PLAUSIBILITY: 12.0, TaskKind.REWRITE: 35.0, TaskKind.SLUICE: 20.0,
                  TaskKind.DECONTEXT: 75.0, TaskKind.SPLIT_REPHRASE: 60.0}
FAST_SECONDS = 1.5
SPREAD = 0.3  # sigma of log(seconds)


@dataclass(frozen=True)
class PlannedAnswer:
    """One simulated submission: ``raw`` is what the browser would POST as ``payload``.

    ``override`` = the worker saw the live-check warnings and submitted anyway (they are
    recorded as shown and overridden); otherwise the answer reaches the server without client
    warnings (an older page, a script), and only the server's re-check records them.
    """

    worker: str
    external_id: str
    raw: dict
    override: bool = True
    fast: bool = False


@dataclass
class CrowdResult:
    project: str
    submitted: int = 0
    already_there: int = 0
    refused: int = 0
    qc: dict = field(default_factory=dict)


# --- plans per task --------------------------------------------------------------------------


def claire_plan(project: Project, rng: random.Random) -> list[PlannedAnswer]:
    """Fillers of the first 16 sentences rated by 4 workers around the released mean (noise
    σ = 0.7, rounded, clipped to 1–5); every 6th filler the random clicker takes a slot. The last
    4 sentences get 2 ratings each, so their fillers stay open."""
    released = dict(
        Annotation.objects.filter(project=project, source=Annotation.Source.IMPORT)
        .values_list("item__external_id", "rating")
    )
    items = sorted(released, key=_claire_key)
    honest = WORKERS[:5]
    plan = []
    for index, external_id in enumerate(items):
        sentence = index // 5
        wanted = 4 if sentence < 16 else 2
        raters = [honest[(index + k) % 5] for k in range(wanted)]
        if wanted == 4 and index % 6 == 0:
            raters[-1] = RANDOM_CLICKER
        for worker in raters:
            if worker == RANDOM_CLICKER:
                rating = rng.randint(1, 5)
            else:
                rating = min(5, max(1, round(released[external_id] + rng.gauss(0, 0.7))))
            plan.append(PlannedAnswer(worker, external_id, {"rating": rating},
                                      fast=worker == RANDOM_CLICKER))
    return plan


def _claire_key(external_id: str) -> tuple[int, int]:
    sentence, _, filler = external_id.partition("_")
    return int(sentence), int(filler)


# CANARD sample: the Zappa dialogue (train) and the first five turns of the test dialogue are
# answered; the Pinhead train dialogue and the last test turns stay open for the annotator.
ZAPPA = "C_2d211835213b45588ad5ca868ce7fabd_0"
PINHEAD_TEST = "C_0227b27df6b845bb85329aabcab01cf2_0"
CANARD_PLAN = [
    ("demo-worker-1", f"{ZAPPA}#1", "What group did Frank Zappa disband?", True),
    ("demo-worker-2", f"{ZAPPA}#2", "When did they finally disband?", True),  # pronoun left
    ("demo-worker-3", f"{ZAPPA}#3", "What kind of music did the Mothers of Invention play?",
     True),
    ("demo-worker-4", f"{ZAPPA}#4", "Why did they break up?", False),  # a copy, not overridden
    ("demo-worker-1", f"{ZAPPA}#5",
     "Why were there financial problems in the Mothers of Invention?", True),
    (FAST_WORKER, f"{ZAPPA}#6", "why?", True),  # too short
    ("demo-worker-2", f"{ZAPPA}#7",
     "Did the Mothers of Invention release any albums or singles together?", True),
    ("demo-worker-3", f"{ZAPPA}#8", "Did the Mothers of Invention play with anybody famous?",
     True),
    ("demo-worker-4", f"{PINHEAD_TEST}#1", "What were Pinhead's weaknesses in Hellraiser?",
     True),
    (FAST_WORKER, f"{PINHEAD_TEST}#2",
     "Are there any other interesting aspects about this article?", True),  # a copy
    ("demo-worker-1", f"{PINHEAD_TEST}#3", "What were Pinhead's limitations in Hellraiser?",
     True),
    ("demo-worker-2", f"{PINHEAD_TEST}#4", "What other kind of illusions did he have?", True),
    ("demo-worker-3", f"{PINHEAD_TEST}#5", "What kind of powers did Pinhead have?", True),
]


def canard_plan(project: Project, rng: random.Random) -> list[PlannedAnswer]:
    return [PlannedAnswer(worker, external_id, {"rewrite": text}, override=override,
                          fast=worker == FAST_WORKER)
            for worker, external_id, text, override in CANARD_PLAN]


def sluice_plan(project: Project, rng: random.Random) -> list[PlannedAnswer]:
    """Seven contexts get 3 answers (two careful workers reusing the released resolutions, a
    third rotating over a careful one, one copying Q1, the fast one-worder and a skipper); the
    other three contexts get one answer and stay open."""
    items = list(Item.objects.filter(project=project).order_by("id")
                 .select_related("turn__dialogue"))
    answers: dict[int, list[str]] = {}
    for item_id, text in (Annotation.objects.filter(project=project, skipped=False)
                          .exclude(text="").order_by("id").values_list("item_id", "text")):
        if text not in answers.setdefault(item_id, []):
            answers[item_id].append(text)
    third = ("demo-worker-3", "demo-worker-4", FAST_WORKER, "demo-worker-6")
    plan = []
    for index, item in enumerate(items):
        good = answers.get(item.pk) or [f"{item.turn.question.strip().capitalize()} exactly?"]
        plan.append(PlannedAnswer("demo-worker-1", item.external_id,
                                  {"full_question": good[0], "skipped": False}))
        if index >= 7:
            continue
        plan.append(PlannedAnswer("demo-worker-2", item.external_id,
                                  {"full_question": good[-1], "skipped": False}))
        worker = third[index % len(third)]
        if worker == "demo-worker-4":  # copies Q1 and overrides the warning
            context = annotate_selectors.item_context(item)
            raw = {"full_question": context.q1, "skipped": False}
        elif worker == FAST_WORKER:  # one word, in a hurry
            raw = {"full_question": f"{item.turn.question.strip().capitalize()}?",
                   "skipped": False}
        elif worker == "demo-worker-6":
            raw = {"full_question": "", "skipped": True}
        else:
            raw = {"full_question": good[min(1, len(good) - 1)], "skipped": False}
        plan.append(PlannedAnswer(worker, item.external_id, raw, fast=worker == FAST_WORKER))
    return plan


# (item, [(worker, text to replace, replacement)]) — swaps on the original sentence; the
# replacement is linked to its span on the page when the page has it. None = INFEASIBLE.
DECONTEXT_PLAN = [
    ("9001", [("demo-worker-1", "It", "Má vlast")]),
    ("9003", [("demo-worker-2", "its winters", "Reykjavík's winters")]),
    ("9005", [("demo-worker-1", "She", "Ada Lovelace"), ("demo-worker-2", "She", "Lovelace"),
              ("demo-worker-3", "She", "Ada Lovelace"), ("demo-worker-4", None, None)]),
    ("9006", [("demo-worker-1", "These notes", "Lovelace's notes"),
              ("demo-worker-2", "These notes", "Ada Lovelace's notes"),
              ("demo-worker-3", "These notes", "Lovelace's notes on the Analytical Engine"),
              ("demo-worker-4", None, None)]),
    ("9007", [("demo-worker-1", "At that time", "At the time of Gaudí's death"),
              ("demo-worker-2", "At that time", "When Gaudí died"),
              ("demo-worker-3", None, None), ("demo-worker-4", "", "")]),
    ("9008", [("demo-worker-1", "The basilica", "The Sagrada Família"),
              ("demo-worker-2", "", ""), ("demo-worker-3", "The basilica", "Gaudí's basilica"),
              ("demo-worker-4", None, None)]),
    ("9009", [("demo-worker-1", "this", "the retreat of Kilimanjaro's glaciers"),
              ("demo-worker-2", "this", "the shrinking of the glaciers"),
              ("demo-worker-3", "this", "the loss of ice on Mount Kilimanjaro"),
              ("demo-worker-4", None, None)]),
]


def decontext_plan(project: Project, rng: random.Random) -> list[PlannedAnswer]:
    """Two train sentences edited by one worker each; five dev sentences by four workers, of
    whom demo-worker-4 calls nearly everything INFEASIBLE. 9002, 9004 and 9010 stay open (and
    dev wants 5 answers, so every dev sentence is still open)."""
    items = {item.external_id: item for item in _items_for_page(
        project, [external_id for external_id, _ in DECONTEXT_PLAN])}
    plan = []
    for external_id, answers in DECONTEXT_PLAN:
        context = annotate_selectors.item_context(items[external_id])
        for worker, old, new in answers:
            if old is None:
                raw = {"category": "IMPOSSIBLE", "operations": []}
            elif not old:
                raw = {"category": "UNNECESSARY", "operations": [],
                       "decontextualized_sentence": context.sentence}
            else:
                raw = _decontext_swap(context, old, new)
            plan.append(PlannedAnswer(worker, external_id, raw))
    return plan


def _decontext_swap(context, old: str, new: str) -> dict:
    start = _word_find(context.sentence, old)
    if start < 0:
        raise ValueError(f"demo plan: {old!r} is not in {context.sentence!r}")
    source = None
    for paragraph, text in enumerate(context.paragraphs):
        at = text.find(new)
        if at >= 0:
            source = {"paragraph": paragraph, "start": at, "end": at + len(new)}
            break
    operation = {"op": "swap", "start": start, "end": start + len(old), "text": new,
                 "source": source,
                 "edit_type": "PRONOUN/NP SWAP"}
    sentence = context.sentence[:start] + new + context.sentence[start + len(old):]
    return {"category": "DONE", "operations": [operation], "decontextualized_sentence": sentence}


def _word_find(sentence: str, word: str) -> int:
    """Index of ``word`` as a whole word in ``sentence`` (``this`` not inside ``thistle``)."""
    start = 0
    while (at := sentence.find(word, start)) >= 0:
        before = sentence[at - 1] if at else " "
        after = sentence[at + len(word):at + len(word) + 1] or " "
        if not before.isalnum() and not after.isalnum():
            return at
        start = at + 1
    return -1


WEBSPLIT_PLAN = [
    ("demo-worker-1", "ws-demo-4", ["Bangalore was founded by Kempe Gowda I.",
                                    "Bangalore is in Karnataka."]),
    ("demo-worker-2", "ws-demo-6", ["The capital of Spain is Madrid.", "Spain uses the euro."]),
    ("demo-worker-3", "ws-demo-1", ["Alan Bean was born in Wheeler, Texas.",
                                    "Alan Bean was a crew member of Apollo 12."]),
    (FAST_WORKER, "ws-demo-2", ["Apollo 12 had Alan Bean", "NASA"]),
    ("demo-worker-1", "ws-demo-7", ["The Akron Summit Assault play in the Premier Development "
                                    "League.", "The Akron Summit Assault is managed by Denzil "
                                    "Antonio."]),
    ("demo-worker-2", "ws-demo-7", ["The Akron Summit Assault is managed by Denzil Antonio.",
                                    "The club plays in the Premier Development League."]),
    ("demo-worker-3", "ws-demo-7", ["The Akron Summit Assault play in the Premier Development "
                                    "League.", "Their manager is Denzil Antonio."]),
    ("demo-worker-1", "ws-demo-8", ["Denzil Antonio was born in Jamaica.",
                                    "Denzil Antonio plays for the Akron Summit Assault."]),
    ("demo-worker-2", "ws-demo-8", ["Denzil Antonio is from Jamaica.",
                                    "He plays for the Akron Summit Assault."]),
    ("demo-worker-4", "ws-demo-8", ["Denzil Antonio, born in Jamaica, plays for the Akron "
                                    "Summit Assault.", "He was born in Jamaica."]),
    ("demo-worker-1", "ws-demo-9", ["The 11th Mississippi Infantry Monument is in Adams County, "
                                    "Pennsylvania.", "The monument was established in 2000."]),
]


def websplit_plan(project: Project, rng: random.Random) -> list[PlannedAnswer]:
    """Three train sentences and parts of the test split; ws-demo-3/5 (train), the third answer
    of ws-demo-9 and all of ws-demo-10 (test) stay open."""
    return [PlannedAnswer(worker, external_id, {"simple_sentences": sentences},
                          fast=worker == FAST_WORKER)
            for worker, external_id, sentences in WEBSPLIT_PLAN]


PLANS = {
    TaskKind.PLAUSIBILITY: claire_plan,
    TaskKind.REWRITE: canard_plan,
    TaskKind.SLUICE: sluice_plan,
    TaskKind.DECONTEXT: decontext_plan,
    TaskKind.SPLIT_REPHRASE: websplit_plan,
}


# --- running a plan --------------------------------------------------------------------------


def _items_for_page(project: Project, external_ids: Iterable[str]) -> list[Item]:
    wanted = list(dict.fromkeys(external_ids))
    ids = dict(Item.objects.filter(project=project, external_id__in=wanted)
               .values_list("external_id", "id"))
    missing = [external_id for external_id in wanted if external_id not in ids]
    if missing:
        raise ValueError(f"demo plan of {project.slug}: no items {', '.join(missing[:5])}")
    return annotate_selectors.items_for_page(project=project,
                                             item_ids=[ids[e] for e in wanted])


def _client_token(project: Project, worker: str, external_id: str) -> str:
    digest = hashlib.sha256(f"{project.slug}|{worker}|{external_id}".encode()).hexdigest()
    return f"demo-{digest[:40]}"


def _duration_ms(kind: str, fast: bool, rng: random.Random) -> int:
    median = FAST_SECONDS if fast else MEDIAN_SECONDS[kind]
    return int(1000 * median * math.exp(rng.gauss(0, SPREAD)))


def crowd_submit(*, project: Project, plan: list[PlannedAnswer], rng: random.Random,
                 result: CrowdResult) -> None:
    """Submit ``plan`` through the task pages' service, capped by the split's redundancy."""
    items = {item.external_id: item
             for item in _items_for_page(project, [answer.external_id for answer in plan])}
    workers = {name: worker_get_or_create(provider=Worker.Provider.LOCAL, external_id=name)
               for name in dict.fromkeys(answer.worker for answer in plan)}
    planned_per_item: dict[str, int] = {}
    now = timezone.now()
    for answer in plan:
        item = items[answer.external_id]
        # Durations are drawn for every planned answer, stored or not, so the sequence of the
        # random generator (and thus every later value) is the same on every run.
        duration_ms = _duration_ms(project.kind, answer.fast, rng)
        planned = planned_per_item.get(answer.external_id, 0) + 1
        planned_per_item[answer.external_id] = planned
        if planned > project.redundancy_for(item.split):
            raise ValueError(f"demo plan of {project.slug}: more answers for "
                             f"{answer.external_id} than its {item.split} redundancy")
        context = annotate_selectors.item_context(item)
        clean = validate_payload(project.kind, answer.raw, context)  # a bad plan is a bug
        shown = live_check_warnings(context, clean.payload) if answer.override else []
        try:
            stored = annotation_submit(
                worker=workers[answer.worker], item=item, clean=clean, context=context,
                source=Annotation.Source.LOCAL,
                client_token=_client_token(project, answer.worker, answer.external_id),
                client_warnings=shown, overridden_warnings=shown,
                started_at=now - timedelta(milliseconds=duration_ms), duration_ms=duration_ms,
            )
        except SubmitRefused:
            # Someone (the demo annotator) filled the last slot first: their answer stands.
            result.refused += 1
            continue
        if stored.created:
            result.submitted += 1
        else:
            result.already_there += 1


def demo_crowd_run(*, project_slugs: Iterable[str], seed: int = SEED) -> list[CrowdResult]:
    """Simulate the crowd on each demo project (see the module docstring) and run QC."""
    results = []
    for slug in project_slugs:
        project = Project.objects.get(slug=slug)
        rng = random.Random(f"{seed}:{slug}")
        result = CrowdResult(project=slug)
        plan = PLANS[project.kind](project, rng)
        crowd_submit(project=project, plan=plan, rng=rng, result=result)
        result.qc = project_qc_run(project=project)
        # Stored as a finished QC job: the dashboard reads the latest one's result.
        job_record_finished(kind="qc", project=project, result=result.qc)
        results.append(result)
    return results
