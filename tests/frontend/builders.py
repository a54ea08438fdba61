"""Small projects of each task kind for the task-page tests (views and browser).

Dataset strings carry ``<script>`` on purpose: every page must show them as text.
"""

from __future__ import annotations

from annotation.models import (
    Batch,
    ClozeFiller,
    ClozeItem,
    ComplexSentence,
    Dialogue,
    DialogueTurn,
    Document,
    Hit,
    HitItem,
    Item,
    Project,
    TargetSentence,
    TaskKind,
)

XSS = "<script>window.__xss = 1</script>"

ZINC_PARAGRAPHS = [
    {"section": ["Zinc"], "text": "Zinc is a chemical element with the symbol Zn."},
    {"section": ["Zinc", "Properties"],
     "text": "Zinc is a bluish-white metal. It is brittle at room temperature."},
]
ZINC_TARGET = "It is brittle at room temperature."


def decontext_project(slug="decontext-demo", *, items=1, redundancy=None, title=None):
    project = Project.objects.create(slug=slug, name="Decontext demo", kind=TaskKind.DECONTEXT,
                                     redundancy=redundancy or {"train": 1, "dev": 5, "test": 5})
    for index in range(items):
        document = Document.objects.create(project=project, external_id=f"zinc-{index}",
                                           title=title or f"Zinc {XSS}",
                                           url="https://en.wikipedia.org/wiki/Zinc",
                                           paragraphs=ZINC_PARAGRAPHS)
        text = ZINC_PARAGRAPHS[1]["text"]
        start = text.index(ZINC_TARGET)
        target = TargetSentence.objects.create(
            document=document, paragraph_index=1, start_byte=len(text[:start].encode()),
            end_byte=len(text[:start].encode()) + len(ZINC_TARGET.encode()), text=ZINC_TARGET)
        Item.objects.create(project=project, external_id=f"d{index}", group_key=f"zinc-{index}",
                            target_sentence=target)
    return project


def plausibility_project(slug="claire-demo", *, items=1, redundancy=None, split="train"):
    project = Project.objects.create(slug=slug, name="CLAIRE demo", kind=TaskKind.PLAUSIBILITY,
                                     redundancy=redundancy or {"train": 2, "dev": 4, "test": 4})
    for index in range(items):
        cloze = ClozeItem.objects.create(
            project=project, external_id=f"c{index}", resolved_pattern="IMPLICIT REFERENCE",
            article_title=f"How to Detect Cleft Lip {XSS}", section_header="Treating Cleft Lip",
            previous_context="1. Care for a newborn with a cleft lip.",
            sentence="2. Get surgery for ______ at 3 to 6 months old.",
            followup_context="A pediatric surgeon will move the skin.")
        filler = ClozeFiller.objects.create(cloze=cloze, position=1,
                                            text=f"the cleft lip {XSS}")
        Item.objects.create(project=project, external_id=f"p{index}", split=split,
                            group_key=f"article-{index}", filler=filler)
    return project


def rewrite_project(slug="canard-demo", *, dialogues=1, redundancy=None):
    project = Project.objects.create(slug=slug, name="CANARD demo", kind=TaskKind.REWRITE,
                                     redundancy=redundancy or {"train": 1, "dev": 1, "test": 1})
    turns_text = [
        ("What was the band's first album?", "Freak Out! in 1966."),
        ("When did they disband?", "In 1969."),
        ("Did he form any other band?", "CANNOTANSWER"),
    ]
    for d in range(dialogues):
        dialogue = Dialogue.objects.create(project=project, external_id=f"C_{d}", source="quac",
                                           title="Frank Zappa",
                                           section_title="The Mothers of Invention")
        for order, (question, answer) in enumerate(turns_text, start=1):
            turn = DialogueTurn.objects.create(dialogue=dialogue, order=order,
                                               question=question, answer=answer)
            Item.objects.create(project=project, external_id=f"C_{d}_q#{order}",
                                group_key=f"C_{d}", position=order, turn=turn)
    return project


def sluice_project(slug="sluice-demo", *, items=1, redundancy=None, split="train"):
    project = Project.objects.create(slug=slug, name="Sluice demo", kind=TaskKind.SLUICE,
                                     redundancy=redundancy or {"train": 1, "dev": 1, "test": 3})
    for index in range(items):
        dialogue = Dialogue.objects.create(project=project, external_id=f"s{index}",
                                           source="sluice")
        DialogueTurn.objects.create(dialogue=dialogue, order=1,
                                    question="Did he leave the band?", answer="Yes, in 1975.")
        q2 = DialogueTurn.objects.create(dialogue=dialogue, order=2, question="Why?")
        Item.objects.create(project=project, external_id=f"s{index}", split=split,
                            group_key=f"s{index}", position=2, turn=q2)
    return project


def split_project(slug="websplit-demo", *, items=1, redundancy=None):
    project = Project.objects.create(slug=slug, name="WebSplit demo",
                                     kind=TaskKind.SPLIT_REPHRASE,
                                     redundancy=redundancy or {"train": 1, "dev": 3, "test": 3})
    for index in range(items):
        sentence = ComplexSentence.objects.create(
            project=project, external_id=f"w{index}",
            text="Alan Bean, born in Wheeler, Texas, was a test pilot.")
        Item.objects.create(project=project, external_id=f"w{index}", group_key=f"w{index}",
                            complex_sentence=sentence)
    return project


BUILDERS = {
    TaskKind.DECONTEXT: decontext_project,
    TaskKind.PLAUSIBILITY: plausibility_project,
    TaskKind.REWRITE: rewrite_project,
    TaskKind.SLUICE: sluice_project,
    TaskKind.SPLIT_REPHRASE: split_project,
}


def publish_hit(project: Project, *, hit_id="HIT123", items=None, max_assignments=1) -> Hit:
    """A published MTurk HIT holding ``items`` (default: all of the project's, in order)."""
    batch = Batch.objects.create(project=project, provider="mturk", title="Demo batch",
                                 status=Batch.Status.PUBLISHED)
    hit = Hit.objects.create(batch=batch, provider_hit_id=hit_id,
                             unique_request_token=f"token-{hit_id}",
                             max_assignments=max_assignments, status=Hit.Status.ASSIGNABLE)
    for order, item in enumerate(items if items is not None else project.items.order_by("id")):
        HitItem.objects.create(hit=hit, item=item, order=order)
    return hit
