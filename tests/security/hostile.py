"""A database in which every text a dataset, a worker or MTurk can supply carries markup.

Pages must show these strings as text: no element with an ``xss`` id may ever exist, no
``window.__xss`` may ever be set and no dialog may open (``tests/browser/test_escaping.py``);
the server never sends them unescaped (``tests/security/test_escaping.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import (
    Annotation,
    Assignment,
    Batch,
    ClozeFiller,
    ClozeItem,
    Dialogue,
    DialogueTurn,
    Document,
    Flag,
    Hit,
    HitItem,
    Item,
    Project,
    StatusEvent,
    TargetSentence,
    TaskKind,
    Worker,
)


# Element content, attribute values (quoted and unquoted), <title>, <textarea>, SVG and script
# contexts; each marker names where it came from when a test fails.
def payload(where: str) -> str:
    # At most 200 characters: it must fit the CharFields (titles, headers) unchanged.
    text = (f'{where} "\'><img id="xss-{where}" src=x onerror="window.__xss=1">'
            f"<script>window.__xss=2</script></title></textarea>"
            f'<svg id="xss-s-{where}" onload="alert(1)"></svg>')
    assert len(text) <= 200, where
    return text


# MTurk ids and codes are capped at 64 / 60 characters by the database or the validators.
def short(where: str, limit: int = 60) -> str:
    text = f'"><img id=xss-{where} src=x onerror=alert(1)>'
    return text if len(text) <= limit else f'"><i id=xss-{where}>'[:limit]


# What must never reach a page unescaped.
MARKERS = ('<img id="xss-', "<img id=xss-", "<i id=xss-", "<script>window.__xss",
           '<svg id="xss-')


@dataclass
class Hostile:
    plausibility: Project
    rewrite: Project
    decontext: Project
    batch: Batch
    hit: Hit
    assignment: Assignment
    page_hit: Hit


def hostile_world() -> Hostile:
    plausibility = Project.objects.create(
        slug="hostile-claire", name=payload("project-name"), kind=TaskKind.PLAUSIBILITY,
        instructions=payload("instructions"), redundancy={"train": 5, "dev": 5, "test": 5})
    cloze = ClozeItem.objects.create(
        project=plausibility, external_id=short("cloze-id"), resolved_pattern="IMPLICIT",
        article_title=payload("article-title"), section_header=payload("section-header"),
        previous_context=payload("previous-context"),
        sentence=f"Get surgery for ______ now {payload('cloze-sentence')}",
        followup_context=payload("followup-context"))
    items = []
    for position in (1, 2):
        filler = ClozeFiller.objects.create(cloze=cloze, position=position,
                                            text=payload(f"filler-{position}"))
        items.append(Item.objects.create(project=plausibility,
                                         external_id=short(f"item-{position}"),
                                         group_key=payload("group-key"), filler=filler,
                                         split="train", position=position))

    batch = Batch.objects.create(project=plausibility, provider="mturk",
                                 title=payload("batch-title"),
                                 status=Batch.Status.FAILED, error=payload("batch-error"))
    hit = Hit.objects.create(batch=batch, provider_hit_id=short("hit-id"),
                             unique_request_token="hostile-hit", max_assignments=3,
                             status=Hit.Status.ASSIGNABLE, error=payload("hit-error"))
    # The task page refuses a malformed hitId before looking anything up (MTurk ids are
    # [A-Z0-9]{1,64}), so a hostile HIT id never reaches it: the page is opened on a HIT with a
    # valid id over the same hostile items; the hostile id stays for the staff pages.
    page_hit = Hit.objects.create(batch=batch, provider_hit_id="HOSTILEPAGEHIT",
                                  unique_request_token="hostile-page-hit", max_assignments=3,
                                  status=Hit.Status.ASSIGNABLE)
    for order, item in enumerate(items):
        HitItem.objects.create(hit=hit, item=item, order=order)
        HitItem.objects.create(hit=page_hit, item=item, order=order)
    workers = [Worker.objects.create(provider="mturk", external_id=short(f"worker-{k}"))
               for k in range(3)]
    assignment = Assignment.objects.create(hit=hit, worker=workers[0],
                                           provider_assignment_id=short("assignment-id"),
                                           status=Assignment.Status.SUBMITTED,
                                           raw_answer=payload("raw-answer"),
                                           review_message=payload("review-message"))
    StatusEvent.objects.create(batch=batch, hit=hit, assignment=assignment, kind="error",
                               old_status="pending", new_status="failed",
                               detail={"message": payload("event-detail")})
    for k, worker in enumerate(workers):
        for item in items:
            annotation = Annotation.objects.create(
                project=plausibility, item=item, worker=worker, source="mturk",
                assignment=assignment if k == 0 else None, rating=1 + (k + item.position) % 5,
                payload={"rating": 1 + (k + item.position) % 5},
                client_warnings=[{"code": short("client-code"),
                                  "message": payload("client-message")}],
                overridden_warnings=[{"code": short("overridden-code"),
                                      "message": payload("overridden-message")}],
                duration_ms=1000 * (k + 1))
            Flag.objects.create(project=plausibility, annotation=annotation, worker=worker,
                                assignment=annotation.assignment, reason=short("reason", limit=40),
                                score=1.0, detail=payload("flag-detail"),
                                fingerprint=f"hostile:{annotation.pk}")

    rewrite = Project.objects.create(slug="hostile-canard", name=payload("rewrite-name"),
                                     kind=TaskKind.REWRITE)
    dialogue = Dialogue.objects.create(project=rewrite, external_id="C_hostile",
                                       title=payload("dialogue-title"),
                                       section_title=payload("section-title"))
    turn_items = []
    for order in (1, 2):
        turn = DialogueTurn.objects.create(dialogue=dialogue, order=order,
                                           question=payload(f"question-{order}"),
                                           answer=payload(f"answer-{order}"))
        turn_items.append(Item.objects.create(project=rewrite, external_id=f"C_hostile#{order}",
                                              group_key="C_hostile", position=order, turn=turn))
    rewritten = Annotation.objects.create(project=rewrite, item=turn_items[1],
                                          worker=workers[1], source="local",
                                          text=payload("rewrite-text"),
                                          payload={"rewrite": payload("rewrite-text")})
    Flag.objects.create(project=rewrite, annotation=rewritten, worker=workers[1],
                        reason="rewrite_pronoun_left", score=1.0,
                        detail=payload("rewrite-flag"), fingerprint="hostile:rewrite")

    decontext = Project.objects.create(slug="hostile-decontext", name=payload("decontext-name"),
                                       kind=TaskKind.DECONTEXT)
    text = f"Zinc is a metal. {payload('paragraph')}"
    document = Document.objects.create(
        project=decontext, external_id="zinc", title=payload("page-title"),
        url="https://en.wikipedia.org/wiki/Zinc",
        paragraphs=[{"section": [payload("section")], "text": text}])
    target = TargetSentence.objects.create(document=document, paragraph_index=0, start_byte=0,
                                           end_byte=len(b"Zinc is a metal."),
                                           text="Zinc is a metal.")
    Item.objects.create(project=decontext, external_id="zinc-0", group_key="zinc",
                        target_sentence=target)
    return Hostile(plausibility=plausibility, rewrite=rewrite, decontext=decontext,
                   batch=batch, hit=hit, assignment=assignment, page_hit=page_hit)


def staff_pages(world: Hostile) -> list[str]:
    """Every staff page that shows dataset or worker text, admin list displays included."""
    pages = ["/", "/staff/review/", "/staff/batches/", f"/staff/batches/{world.batch.pk}/"]
    for project in (world.plausibility, world.rewrite, world.decontext):
        pages += [f"/staff/review/{project.slug}/", f"/staff/review/{project.slug}/?by=worker",
                  f"/staff/review/{project.slug}/dashboard/"]
    for model in ("project", "document", "targetsentence", "dialogue", "dialogueturn",
                  "clozeitem", "clozefiller", "item", "worker", "batch", "hit", "assignment",
                  "annotation", "flag", "statusevent"):
        pages.append(f"/admin/annotation/{model}/")
    pages += [f"/admin/annotation/assignment/{world.assignment.pk}/change/",
              f"/admin/annotation/batch/{world.batch.pk}/change/",
              f"/admin/annotation/clozeitem/"
              f"{ClozeItem.objects.filter(project=world.plausibility).get().pk}/change/",
              f"/admin/annotation/dialogue/"
              f"{Dialogue.objects.filter(project=world.rewrite).get().pk}/change/"]
    return pages


def annotator_pages(world: Hostile) -> list[str]:
    return ["/", f"/annotate/{world.plausibility.slug}/", f"/annotate/{world.rewrite.slug}/",
            f"/annotate/{world.decontext.slug}/"]


def mturk_page(world: Hostile) -> str:
    from urllib.parse import urlencode

    return f"/mturk/task/{world.plausibility.slug}/?" + urlencode({
        "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": world.page_hit.provider_hit_id})
