"""Leakage-free train/dev/test splits, frozen in a ``SplitManifest``.

``project_split(*, project, rule, seed, fractions, force)`` computes the assignment with
``qc.splits`` and, in one transaction, records a frozen manifest (group → split) and sets
``Item.split`` in bulk. Rules:

- ``group``: seeded group split by ``Item.group_key`` (page, article, dialogue…);
- ``websplit``: complex sentences sharing an RDF triple stay together, every relation is in
  train (``qc.splits.websplit_split``); the manifest is keyed by complex-sentence id;
- ``canard``: by dialogue — QuAC dev dialogues → test, a seeded 10% of QuAC train → dev, the
  rest → train. Dialogues imported from CANARD itself keep the split CANARD released them in.
- ``sluice``: the leakage-free alternative to the release's split: every item keeps its
  split, except that a context (group key) with items in several splits moves wholly into
  the most held-out one (test > dev > train). Seed and fractions play no part. Imported
  items are annotated, so moving them needs ``force``: an explicit choice.

Safety: the same rule and seed give the same manifest, and re-running then changes nothing.
A frozen manifest that would change is refused unless ``force``; so is moving an item that
already has annotations to another split (its annotations were collected with that split's
redundancy and may already be in an export).

Entry points: ``make_splits`` (a progress bar) and the console's splits page, which freezes
through a ``splits`` job (``staff_jobs``): both call ``project_split`` with a ``progress``
callback, which hears each step and the items moved so far.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.db.models.lookups import GreaterThanOrEqual

from qc import cleaning
from qc import splits as qc_splits

from ..models import Annotation, ComplexSentence, Item, Project, SplitManifest, TaskKind
from .adaptive import slots_by_split
from .annotations import items_lock
from .batching import chunks
from .statistics import planner_statistics_refresh

RULES = ("group", "websplit", "canard", "sluice")
QUAC_DEV_NAMES = frozenset({"dev", "val", "validation"})
#: Items per UPDATE: one parameter each, far under PostgreSQL's 65,535 (``batching``).
UPDATE_BATCH = 5000

#: ``progress(done, total, message)``, as ``staff_jobs.ProgressCallback``.
Progress = Callable[[int, "int | None", str], None]


def _no_progress(done: int, total: int | None = None, message: str = "") -> None:
    """The progress callback of a caller that follows none."""


class SplitRefused(Exception):
    """The split would break a frozen manifest or move annotated items (needs --force)."""


@dataclass(frozen=True)
class SplitResult:
    manifest: SplitManifest
    counts: dict[str, int]
    moved_items: int
    unchanged: bool


def _group_assignment(project: Project, seed: int, fractions: dict) -> tuple[dict, dict]:
    """``(item → split, group → split)`` for the group rule."""
    rows = list(Item.objects.filter(project=project).values_list("id", "group_key"))
    item_splits = qc_splits.group_split(rows, seed=seed, fractions=fractions)
    group_of = dict(rows)
    return item_splits, {group_of[item]: split for item, split in item_splits.items()}


def _websplit_assignment(project: Project, seed: int, fractions: dict) -> tuple[dict, dict]:
    triples: dict[str, list] = defaultdict(list)
    facts = ComplexSentence.facts.through.objects.filter(complexsentence__project=project)
    for external_id, subject, prop, obj in facts.values_list(
        "complexsentence__external_id", "fact__subject", "fact__property", "fact__object"
    ):
        triples[external_id].append((subject, prop, obj))
    for external_id in ComplexSentence.objects.filter(project=project).values_list(
        "external_id", flat=True
    ):
        triples.setdefault(external_id, [])
    sentence_splits = qc_splits.websplit_split(dict(triples), seed=seed, fractions=fractions)
    item_splits = {
        item_id: sentence_splits[external_id]
        for item_id, external_id in Item.objects.filter(
            project=project, complex_sentence__isnull=False
        ).values_list("id", "complex_sentence__external_id")
    }
    return item_splits, sentence_splits


def _canard_assignment(project: Project, seed: int, fractions: dict) -> tuple[dict, dict]:
    dialogues = list(project.dialogues.values_list("external_id", "source", "source_split"))
    released = {external_id: source_split for external_id, source, source_split in dialogues
                if source == "canard" and source_split}
    quac = [(external_id, source_split) for external_id, source, source_split in dialogues
            if external_id not in released]
    total = sum(fractions.values()) or 1.0
    mapping = qc_splits.canard_splits(
        [external_id for external_id, source_split in quac
         if source_split not in QUAC_DEV_NAMES],
        [external_id for external_id, source_split in quac if source_split in QUAC_DEV_NAMES],
        seed=seed, dev_fraction=fractions.get("dev", 0.1) / total,
    )
    mapping.update(released)
    item_splits = {
        item_id: mapping[external_id]
        for item_id, external_id in Item.objects.filter(
            project=project, turn__isnull=False
        ).values_list("id", "turn__dialogue__external_id")
    }
    return item_splits, mapping


def sluice_cross_split_contexts(project: Project) -> dict[str, tuple[str, ...]]:
    """Sluice contexts (Item group keys) with Items in several splits: ``{context: splits}``.

    Every sluice import reports them and ``qc_report`` warns of them: a context whose test
    reference is also in train leaks.
    """
    if project.kind != TaskKind.SLUICE:
        return {}
    return cleaning.cross_split_contexts(
        Item.objects.filter(project=project).values_list("group_key", "split"))


def describe_cross_split_contexts(found: dict[str, tuple[str, ...]], *, shown: int = 10) -> str:
    """One line for a person: how many contexts leak, and which (ids and their splits)."""
    listed = ", ".join(f"{context} ({'+'.join(splits)})"
                       for context, splits in sorted(found.items())[:shown])
    more = f", and {len(found) - shown} more" if len(found) > shown else ""
    return (f"leakage: {len(found)} sluice context(s) are in several splits: {listed}{more} "
            "(make_splits --rule sluice moves each into one split)")


def _sluice_assignment(project: Project, seed: int, fractions: dict) -> tuple[dict, dict]:
    """The items' current splits, except that a context in several splits moves wholly into
    the most held-out of them (test > dev > train): no test context is then seen in train."""
    rule_fits(project, "sluice")
    rows = list(Item.objects.filter(project=project).values_list("id", "group_key", "split"))
    rank = {"train": 0, "dev": 1, "test": 2}
    held_out: dict[str, str] = {}
    for _, context, split in rows:
        if rank[split] >= rank[held_out.get(context, "train")]:
            held_out[context] = split
    return {item_id: held_out[context] for item_id, context, _ in rows}, held_out


def rule_fits(project: Project, rule: str) -> None:
    """ValueError when ``rule`` cannot split this project (the jobs refuse it before they
    start; the assigners check it again)."""
    if rule not in RULES:
        raise ValueError(f"unknown split rule {rule!r}; choose from {', '.join(RULES)}")
    if rule == "sluice" and project.kind != TaskKind.SLUICE:
        raise ValueError(f"the sluice rule is for sluice projects; {project.slug} is a "
                         f"{project.kind} project")


ASSIGNERS = {"group": _group_assignment, "websplit": _websplit_assignment,
             "canard": _canard_assignment, "sluice": _sluice_assignment}


@transaction.atomic
def project_split(*, project: Project, rule: str, seed: int, fractions: dict | None = None,
                  force: bool = False, progress: Progress = _no_progress) -> SplitResult:
    """Split the project's items by ``rule`` and freeze the result (see the module docstring).

    ``progress(done, total, message)`` hears the steps: the assignment (0 of None), then the
    items moved so far out of the items to move, then freezing the manifest."""
    rule_fits(project, rule)
    fractions = dict(fractions or qc_splits.DEFAULT_FRACTIONS)
    locked = Project.objects.select_for_update().get(pk=project.pk)  # its redundancy, as it is
    progress(0, None, f"assigning the items by the {rule} rule")
    item_splits, group_splits = ASSIGNERS[rule](project, seed, fractions)
    group_splits = {str(group): split for group, split in sorted(group_splits.items())}
    current = SplitManifest.objects.filter(project=project, frozen=True).order_by(
        "-created_at", "-id").first()
    if (current is not None and current.group_splits == group_splits
            and current.rule == rule):
        progress(0, 0, "unchanged: the frozen manifest is this split already")
        return SplitResult(current, dict(current.counts), 0, unchanged=True)
    if current is not None and not force:
        raise SplitRefused(
            f"project {project.slug} has a frozen split manifest ({current.rule}, seed "
            f"{current.seed}); re-splitting would change it — pass --force to replace it"
        )
    current_split = dict(Item.objects.filter(project=project).values_list("id", "split"))
    moved = {item_id: split for item_id, split in item_splits.items()
             if current_split.get(item_id) != split}
    # In chunks: a split may move more items than a statement takes parameters.
    annotated_moves = sum(
        Item.objects.filter(id__in=chunk)
        .filter(Exists(Annotation.objects.filter(item_id=OuterRef("pk")))).count()
        for chunk in chunks(sorted(moved)))
    if annotated_moves and not force:
        raise SplitRefused(
            f"{annotated_moves} item(s) with annotations would move to another split; "
            "pass --force to move them"
        )
    by_split: dict[str, list[int]] = defaultdict(list)
    for item_id, split in moved.items():
        by_split[split].append(item_id)
    done = 0
    progress(done, len(moved), "moving items")
    # A moved item needs another number of answers: its "filled" mark is set in the statement
    # that moves it, from its counted answers, under the lock every submit takes first
    # (``items_lock``: a concurrent answer waits, so the count is the final one).
    items_lock(moved)
    # COUNT(*), not of a column: the index (item_id, state) answers it alone (an index-only
    # scan, 0.07 ms an item at 1,000,000 answers, against 0.34 ms reading the answers' rows).
    counted = (Annotation.objects.filter(item_id=OuterRef("pk"),
                                         state=Annotation.State.COUNTED)
               .order_by().values("item_id").annotate(n=Count("*")).values("n"))
    if connection.vendor == "postgresql":
        # Each UPDATE touches 5,000 rows through short index probes: compiling it (JIT, on
        # for the planner's large estimates) costs more than it saves. For this transaction.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
    # What fills an item: its adaptive target when it has one, else its new split's default.
    defaults = slots_by_split(locked)
    for split, item_ids in by_split.items():
        filled = GreaterThanOrEqual(Coalesce(Subquery(counted), 0),
                                    Coalesce(F("target_answers"), Value(defaults[split])))
        for chunk in chunks(sorted(item_ids), UPDATE_BATCH):
            Item.objects.filter(id__in=chunk).update(split=split, filled=filled)
            done += len(chunk)
            progress(done, len(moved), f"moving items ({split})")
    if moved:
        # The work queue's plans depend on how items spread over splits.
        transaction.on_commit(lambda: planner_statistics_refresh(of=[Item]))
    counts: dict[str, int] = defaultdict(int)
    for split in item_splits.values():
        counts[split] += 1
    progress(done, len(moved), "freezing the manifest")
    SplitManifest.objects.filter(project=project, frozen=True).update(frozen=False)
    manifest = SplitManifest.objects.create(
        project=project, rule=rule, seed=seed, fractions=fractions, group_splits=group_splits,
        counts=dict(sorted(counts.items())), frozen=True,
    )
    return SplitResult(manifest, manifest.counts, len(moved), unchanged=False)


@dataclass(frozen=True)
class SplitPreview:
    """What ``project_split`` would do, computed without writing anything."""

    counts: dict[str, int]  # items per split
    moved_items: int  # items whose split would change
    annotated_moves: int  # of those, items with annotations (needs force)
    leaks: dict[str, tuple[str, ...]]  # group keys that would sit in several splits
    unchanged: bool  # the frozen manifest is this one already
    frozen: SplitManifest | None  # the current frozen manifest, if any

    def as_result(self) -> dict:
        """The preview as JSON (a preview job's ``result``, the API's answer), ``"preview":
        true`` telling it from a freeze's result."""
        return {"preview": True, "counts": self.counts, "moved_items": self.moved_items,
                "annotated_moves": self.annotated_moves,
                "leaks": {group: list(splits) for group, splits in self.leaks.items()},
                "unchanged": self.unchanged,
                "frozen": None if self.frozen is None else {
                    "id": self.frozen.pk, "rule": self.frozen.rule, "seed": self.frozen.seed}}


def split_preview(*, project: Project, rule: str, seed: int, fractions: dict | None = None,
                  progress: Progress = _no_progress) -> SplitPreview:
    """``project_split``'s outcome for these choices — counts per split, items moved and the
    leakage check (items of one group, ``Item.group_key``, in several splits) — without
    writing. ValueError for an unknown rule or one that does not fit the project.

    It reads every item (3.4 s at 200,000 items), so the console and the API run it as a
    ``splits`` job with ``preview`` (``staff_jobs``); ``progress`` hears its steps."""
    rule_fits(project, rule)
    fractions = dict(fractions or qc_splits.DEFAULT_FRACTIONS)
    progress(0, None, f"assigning the items by the {rule} rule")
    item_splits, group_splits = ASSIGNERS[rule](project, seed, fractions)
    group_splits = {str(group): split for group, split in sorted(group_splits.items())}
    current = SplitManifest.objects.filter(project=project, frozen=True).order_by(
        "-created_at", "-id").first()
    rows = list(Item.objects.filter(project=project).values_list("id", "group_key", "split"))
    moved = [item_id for item_id, _, split in rows
             if item_id in item_splits and item_splits[item_id] != split]
    # Chunked: a re-split of a large project moves more items than one statement may name.
    answered = Exists(Annotation.objects.filter(item_id=OuterRef("pk")))
    annotated = checked = 0
    for chunk in chunks(moved):
        progress(checked, len(moved), "counting the moved items that have answers")
        annotated += Item.objects.filter(id__in=chunk).filter(answered).count()
        checked += len(chunk)
    counts: dict[str, int] = defaultdict(int)
    for split in item_splits.values():
        counts[split] += 1
    leaks = cleaning.cross_split_contexts(
        (group_key, item_splits.get(item_id, split)) for item_id, group_key, split in rows)
    return SplitPreview(
        counts=dict(sorted(counts.items())), moved_items=len(moved), annotated_moves=annotated,
        leaks=leaks, frozen=current,
        unchanged=current is not None and current.rule == rule
        and current.group_splits == group_splits)
