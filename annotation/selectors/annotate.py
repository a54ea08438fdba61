"""Reads for the annotator task pages: items with everything a page shows, in a fixed number of
queries, and the plain ``ItemContext`` the payload validators and live checks use.

Conventions of the source material read here:

* decontext: the item's ``TargetSentence`` (UTF-8 byte offsets) in its ``Document``;
* plausibility: the item's ``ClozeFiller`` in its ``ClozeItem`` (the gap is a run of ``_``);
* rewrite: the item's ``DialogueTurn``; the turns before it are the visible history;
* sluice: the item's turn holds Q2 (its question) and the turn just before it holds Q1 and A1
  (a sluice dialogue imported as two turns);
* split_rephrase: the item's ``ComplexSentence``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.db import connections
from django.db.models import Prefetch, prefetch_related_objects

from ..models import (
    Annotation,
    Assignment,
    DialogueTurn,
    Hit,
    HitItem,
    Item,
    Project,
    TaskKind,
    Worker,
)
from ..payloads import ItemContext
from ..sql import rows

GAP = re.compile(r"_{2,}")


# The source material each kind shows: only that relation is joined (fewer joins to compile and
# run on the annotator hot path than joining all four for every kind).
SOURCE_RELATIONS = {
    TaskKind.DECONTEXT: ("target_sentence__document",),
    TaskKind.PLAUSIBILITY: ("filler__cloze",),
    TaskKind.REWRITE: ("turn__dialogue",),
    TaskKind.SLUICE: ("turn__dialogue",),
    TaskKind.SPLIT_REPHRASE: ("complex_sentence",),
}


def page_items_queryset(project: Project):
    """Items of ``project`` with the source material its kind shows (joined; dialogue turns
    prefetched for rewrite and sluice). Callers add the filter that picks the items.

    The hot path (submit, next item) uses ``load_items``, the same query written once per kind;
    this ORM statement of it is the reference its tests compare against."""
    queryset = Item.objects.filter(project=project).select_related(
        *SOURCE_RELATIONS.get(project.kind, ()))
    if project.kind in (TaskKind.REWRITE, TaskKind.SLUICE):
        queryset = queryset.prefetch_related(
            Prefetch("turn__dialogue__turns", queryset=DialogueTurn.objects.order_by("order"))
        )
    return queryset


# --- the hot-path item loader ---------------------------------------------------------------
# ``items_for_page`` and the work queue load an item with its kind's source rows on every
# submit: the SELECT ``page_items_queryset`` compiles, written ONCE per (kind, database) from
# the models' metadata (``annotation.sql.rows``), its rows turned into the instances
# select_related builds.

# The alias of the item table in ``load_items``'s ``where``.
ITEM_ALIAS = rows.ITEM_ALIAS


#: Each project's kind by its slug, as this process last read it: the submit reads its project
#: and item in one statement (``project_and_item_for_submit``), whose joins depend on the
#: kind. That statement also checks the kind, so an entry gone stale (a project deleted and
#: its slug reused) costs a second read, never a wrong row; only slugs of projects read are
#: kept.
_kind_by_slug: dict[str, str] = {}


def project_by_slug(slug: str, using: str = "default") -> Project | None:
    """The project of a task URL, read as ``Project.objects.filter(slug=slug).first()`` would,
    with the SELECT written once from the model's metadata: on every annotator request, the
    ORM's compilation of this one-row lookup cost more CPU than running it."""
    connection = connections[using]
    sql, table = rows.project_by_slug_select(using)
    with connection.cursor() as cursor:
        cursor.execute(sql, {"slug": slug})
        row = cursor.fetchone()
    if row is None:
        _kind_by_slug.pop(slug, None)
        return None
    project = rows.instance(table, row, using, connection)
    _kind_by_slug[slug] = project.kind
    return project


def load_items(*, project: Project, where: str, params: dict, using: str = "default",
               lock: bool = False, with_clause: str = "") -> list[Item]:
    """Items of ``project`` matching ``where`` (SQL over the item table, aliased ``item``;
    values as named ``params``, never ``project_id``), each with the source material its
    kind's page shows, as ``page_items_queryset(project)`` would return them, in id order.
    ``item.project`` is ``project`` (no query); dialogue turns prefetched for rewrite and
    sluice (one query).

    ``lock``: the Item rows are locked until the caller's transaction ends (FOR UPDATE, where
    the database has row locks; SQLite's IMMEDIATE transactions serialise writers instead).
    ``with_clause``: SQL put before the SELECT (a ``WITH …`` that ``where`` reads)."""
    select = rows.items_select(SOURCE_RELATIONS.get(project.kind, ()), using)
    items = _loaded(select, where=where, params={"project_id": project.pk, **params},
                    using=using, lock=lock, with_clause=with_clause)
    for item in items:
        item.project = project
    return _with_turns(items, project.kind)


def _loaded(select: rows.ItemsSelect, *, where: str, params: dict, using: str, lock: bool,
            with_clause: str = "") -> list[Item]:
    """The items of ``select`` matching ``where``, in id order, each with the rows joined
    to it (as select_related sets them)."""
    connection = connections[using]
    suffix = (f" FOR UPDATE OF {ITEM_ALIAS}"
              if lock and connection.features.has_select_for_update else "")
    with connection.cursor() as cursor:
        cursor.execute(f"{with_clause}{select.sql} ({where}) ORDER BY {ITEM_ALIAS}.id{suffix}",
                       params)
        fetched = cursor.fetchall()
    items = []
    for row in fetched:
        start, instances = 0, []
        for table in select.tables:
            instance = rows.instance(table, row[start:start + len(table.fields)], using,
                                     connection)
            start += len(table.fields)
            instances.append(instance)
            if table.parent_index is not None and instances[table.parent_index] is not None:
                table.parent_field.set_cached_value(instances[table.parent_index], instance)
        items.append(instances[0])
    return items


def _with_turns(items: list[Item], kind: str) -> list[Item]:
    """``items`` with their dialogues' turns prefetched (rewrite and sluice: one query)."""
    if items and kind in (TaskKind.REWRITE, TaskKind.SLUICE):
        prefetch_related_objects(items, Prefetch(
            "turn__dialogue__turns", queryset=DialogueTurn.objects.order_by("order")))
    return items


def project_and_item_for_submit(*, project_slug: str, item_id: int, lock: bool = False
                                ) -> tuple[Project | None, Item | None]:
    """The project named ``project_slug`` (None: no such project) and its item ``item_id``
    with its source material (None: the project has no such item), as ``project_by_slug``
    and ``item_for_submit`` read them; ``lock`` as ``load_items``'s (the item row).

    Once this process knows the project's kind, both come from ONE statement (the item
    joined with its project, by slug and kind), one round trip fewer on every submit."""
    kind = _kind_by_slug.get(project_slug)
    if kind is not None:
        select = rows.items_select(SOURCE_RELATIONS.get(kind, ()), "default",
                                   with_project=True)
        items = _loaded(select, where=f"{ITEM_ALIAS}.id = %(item_id)s", lock=lock,
                        params={"slug": project_slug, "kind": kind, "item_id": item_id},
                        using="default")
        if items:
            return items[0].project, _with_turns(items, kind)[0]
    project = project_by_slug(project_slug)
    if project is None:
        return None, None
    return project, item_for_submit(project=project, item_id=item_id, lock=lock)


def items_for_page(*, project: Project, item_ids: Iterable[int], lock: bool = False
                   ) -> list[Item]:
    """The items (of ``project``) with their source material; order of ``item_ids`` kept.

    Two queries at most whatever the number of items: items, then dialogue turns (rewrite and
    sluice). ``item.project`` is ``project`` itself (no query).
    """
    ids = [int(item_id) for item_id in item_ids]
    if not ids:
        return []
    names = [f"id{index}" for index in range(len(ids))]
    by_id = {item.id: item for item in load_items(
        project=project, where=f"{ITEM_ALIAS}.id IN ({', '.join(f'%({n})s' for n in names)})",
        params=dict(zip(names, ids, strict=True)), lock=lock)}
    return [by_id[item_id] for item_id in ids if item_id in by_id]


def item_for_submit(*, project: Project, item_id: int, lock: bool = False) -> Item | None:
    """The item of a submission with its source material; ``lock``: see ``load_items``."""
    items = items_for_page(project=project, item_ids=[item_id], lock=lock)
    return items[0] if items else None


def _byte_span_to_chars(text: str, start_byte: int, end_byte: int) -> tuple[int, int]:
    encoded = text.encode("utf-8")
    start = len(encoded[:start_byte].decode("utf-8", errors="ignore"))
    end = len(encoded[:end_byte].decode("utf-8", errors="ignore"))
    return start, end


def _earlier_turns(turn: DialogueTurn) -> list[DialogueTurn]:
    return [other for other in turn.dialogue.turns.all() if other.order < turn.order]


def paragraph_headings(paragraphs: list[dict]) -> list[str]:
    """The section heading the page shows above each paragraph ("" where the section does not
    change): its section path without the page title, joined by " › "."""
    headings, previous = [], None
    for paragraph in paragraphs:
        section = list(paragraph.get("section") or [])
        headings.append(" › ".join(section[1:] or section) if section != previous else "")
        previous = section
    return headings


def item_context(item: Item) -> ItemContext:
    """What validation and live checks need about ``item`` (no queries after items_for_page)."""
    kind = item.project.kind
    if kind == TaskKind.DECONTEXT:
        target = item.target_sentence
        document = target.document
        paragraphs = tuple(p.get("text", "") for p in document.paragraphs)
        return ItemContext(kind=kind, sentence=target.text, paragraphs=paragraphs,
                           title=document.title,
                           headings=tuple(paragraph_headings(document.paragraphs)))
    if kind == TaskKind.SPLIT_REPHRASE:
        return ItemContext(kind=kind, sentence=item.complex_sentence.text)
    if kind == TaskKind.REWRITE:
        turn = item.turn
        words = [turn.dialogue.title, turn.dialogue.section_title]
        for earlier in _earlier_turns(turn):
            words += [earlier.question, earlier.shown_answer]
        return ItemContext(kind=kind, question=turn.question, context_words=tuple(words))
    if kind == TaskKind.SLUICE:
        turn = item.turn
        earlier = _earlier_turns(turn)
        q1, a1 = (earlier[-1].question, earlier[-1].answer) if earlier else ("", "")
        return ItemContext(kind=kind, q1=q1, a1=a1, q2=turn.question)
    return ItemContext(kind=kind)


def item_page_data(item: Item) -> dict:
    """Everything the task template renders for ``item`` (plain values, escaped by templates)."""
    kind = item.project.kind
    data: dict = {"item_id": item.id, "kind": kind}
    if kind == TaskKind.DECONTEXT:
        target = item.target_sentence
        document = target.document
        paragraphs = []
        headings = paragraph_headings(document.paragraphs)
        for index, paragraph in enumerate(document.paragraphs):
            text = paragraph.get("text", "")
            entry = {"index": index, "text": text, "heading": headings[index]}
            if index == target.paragraph_index:
                start, end = _byte_span_to_chars(text, target.start_byte, target.end_byte)
                entry.update(before=text[:start], target=text[start:end], after=text[end:],
                             target_start=start, target_end=end)
            paragraphs.append(entry)
        data.update(title=document.title, url=document.url, paragraphs=paragraphs,
                    sentence=target.text, context_key=f"document:{document.pk}")
    elif kind == TaskKind.PLAUSIBILITY:
        cloze = item.filler.cloze
        before, gap, after = cloze.sentence, "", ""
        match = GAP.search(cloze.sentence)
        if match:
            before, gap, after = (cloze.sentence[:match.start()], match.group(),
                                  cloze.sentence[match.end():])
        data.update(article_title=cloze.article_title, section_header=cloze.section_header,
                    previous_context=cloze.previous_context, before=before, after=after,
                    filler=item.filler.text, has_gap=bool(gap),
                    followup_context=cloze.followup_context, context_key=f"cloze:{cloze.pk}")
    elif kind == TaskKind.REWRITE:
        turn = item.turn
        data.update(title=turn.dialogue.title, section_title=turn.dialogue.section_title,
                    history=[{"turn_id": t.id, "question": t.question, "answer": t.shown_answer}
                             for t in _earlier_turns(turn)],
                    turn_id=turn.id,
                    question=turn.question, order=turn.order,
                    context_words=list(item_context(item).context_words))
    elif kind == TaskKind.SLUICE:
        context = item_context(item)
        data.update(q1=context.q1, a1=context.a1, q2=context.q2)
    elif kind == TaskKind.SPLIT_REPHRASE:
        data.update(sentence=item.complex_sentence.text)
    return data


def hide_unrevealed_history(page_items: list[dict]) -> list[dict]:
    """For a page holding several turns of one conversation (an MTurk HIT), show each earlier
    turn once, and never a page turn's answer before its rewrite is saved."""
    page_turns = {data["turn_id"] for data in page_items if "turn_id" in data}
    shown: set[int] = set()
    for data in page_items:
        if "history" not in data:
            continue
        outside_page = [turn for turn in data["history"] if turn["turn_id"] not in page_turns]
        # The live-check vocabulary must not leak answers still hidden; the page adds each
        # page turn's question and answer as they are revealed.
        data["context_words"] = [data["title"], data["section_title"]] + [
            text for turn in outside_page for text in (turn["question"], turn["answer"])]
        data["history"] = [turn for turn in outside_page if turn["turn_id"] not in shown]
        shown.update(turn["turn_id"] for turn in data["history"])
    return page_items


def share_context(page_items: list[dict]) -> list[dict]:
    """On a page of several items, a context they share (the same page of a document, the same
    wikiHow passage) is shown once: every later item of that context gets ``context_of``, the
    1-based number of the item that shows it (its template then says so instead)."""
    first: dict[str, int] = {}
    for index, data in enumerate(page_items):
        key = data.get("context_key")
        if key is None:
            continue
        if key in first:
            data["context_of"] = first[key] + 1
        else:
            first[key] = index
    return page_items


def revealed_after_submit(item: Item) -> dict:
    """What the page may show only once the annotation is stored (CANARD: the answer)."""
    if item.project.kind == TaskKind.REWRITE:
        return {"answer": item.turn.shown_answer}
    return {}


def hit_for_task(*, project: Project, provider_hit_id: str) -> Hit | None:
    return (Hit.objects.select_related("batch")
            .filter(provider_hit_id=provider_hit_id, batch__project=project).first())


def hit_item_ids(*, hit: Hit) -> list[int]:
    return list(HitItem.objects.filter(hit=hit).order_by("order", "id")
                .values_list("item_id", flat=True))


def assignment_annotations(*, assignment: Assignment) -> dict[int, Annotation]:
    """Annotations already stored for a crowd assignment, by item id (resuming a HIT). The
    caller has checked the assignment is the requesting worker's."""
    return {a.item_id: a for a in Annotation.objects.filter(assignment=assignment)}


def assignment_by_provider_id(*, provider_assignment_id: str) -> Assignment | None:
    return (Assignment.objects.select_related("worker", "hit")
            .filter(provider_assignment_id=provider_assignment_id).first())


def page_assignment_is_theirs(assignment: Assignment, *, hit: Hit, provider: str,
                              worker_id: str) -> bool:
    """Whether ``assignment`` is the one of ``provider``'s worker ``worker_id`` (an MTurk
    WorkerId, a PROLIFIC_PID) on ``hit``."""
    worker = assignment.worker
    return (assignment.hit_id == hit.pk and worker.provider == provider
            and worker.external_id == worker_id)


def page_worker(*, provider: str, external_id: str) -> Worker | None:
    """The Worker of ``provider`` with this id, if we have one (never created by a read)."""
    return Worker.objects.filter(provider=provider, external_id=external_id).first()


# --- provisional MTurk work ------------------------------------------------------------------
# An ExternalQuestion page cannot authenticate the worker: whoever knows a HIT id can open it
# with invented assignment and worker ids. Answers the page stores are therefore stored with
# ``Annotation.State.PROVISIONAL`` until collection sees their assignment at MTurk
# (``annotation.services.annotations.annotations_confirm``); their provenance says where they
# came from.


def page_provenance(*, assignment: Assignment, hit: Hit, provider: str = "mturk") -> dict:
    """The provenance of an answer a crowd task page (MTurk's, Prolific's) stores."""
    return {"provider": provider, "via": "page",
            "assignment_id": assignment.provider_assignment_id, "hit_id": hit.provider_hit_id}


# --- going back: a local annotator's own answers ----------------------------------------------

#: How many of their latest answers "Your recent answers" lists.
RECENT_ANSWERS = 50


def _own_answers(*, project: Project, worker: Worker):
    """``worker``'s live answers (and problem reports) in ``project`` outside any provider's
    assignment, newest first (a changed answer is new): older versions never show."""
    return (Annotation.objects.filter(project=project, worker=worker, assignment__isnull=True)
            .exclude(state=Annotation.State.SUPERSEDED).order_by("-id"))


def recent_answers(*, project: Project, worker: Worker, limit: int = RECENT_ANSWERS
                   ) -> list[Annotation]:
    """The worker's latest answers with their items' source material (one query)."""
    relations = [f"item__{relation}" for relation in SOURCE_RELATIONS.get(project.kind, ())]
    return list(_own_answers(project=project, worker=worker).select_related(*relations)
                [:limit])


def previous_answer_id(*, project: Project, worker: Worker, before_id: int | None
                       ) -> int | None:
    """The id of the worker's live answer given just before answer ``before_id`` (their latest
    when None), or None."""
    answers = _own_answers(project=project, worker=worker)
    if before_id is not None:
        answers = answers.filter(id__lt=before_id)
    return answers.values_list("id", flat=True).first()


def own_answer(*, project: Project, worker: Worker, annotation_id: int) -> Annotation | None:
    """Answer ``annotation_id`` if it is ``worker``'s, in ``project``, outside any assignment;
    for an older version, the live version that replaced it. None otherwise (another worker's
    answer is never shown)."""
    annotation = (Annotation.objects.filter(pk=annotation_id, project=project, worker=worker,
                                            assignment__isnull=True).first())
    if annotation is None or annotation.state != Annotation.State.SUPERSEDED:
        return annotation
    return (_own_answers(project=project, worker=worker)
            .filter(item_id=annotation.item_id).first())


def item_summary(item: Item, kind: str) -> str:
    """The item of a ``kind`` project in a few words, for lists (the sentence, the question,
    the gap filled)."""
    if kind == TaskKind.DECONTEXT:
        return item.target_sentence.text
    if kind == TaskKind.PLAUSIBILITY:
        cloze = item.filler.cloze
        return GAP.sub(f"[{item.filler.text}]", cloze.sentence, count=1)
    if kind in (TaskKind.REWRITE, TaskKind.SLUICE):
        return item.turn.question
    if kind == TaskKind.SPLIT_REPHRASE:
        return item.complex_sentence.text
    return item.external_id


def answer_summary(annotation: Annotation) -> str:
    """The stored answer in words (a list of answers; a page told another answer is stored)."""
    if annotation.problem:
        label = Annotation.Problem(annotation.problem).label
        return f"(problem reported: {label})"
    if annotation.skipped:
        return "(skipped)"
    if annotation.rating is not None:
        return f"rating {annotation.rating:g}"
    if annotation.category and annotation.category != Annotation.Category.DONE:
        return annotation.category
    return annotation.text
