"""Small projects built row by row for export and QC tests (real data goes through import_data)."""

from __future__ import annotations

from annotation import models
from annotation.services.annotations import annotation_state
from tests.factories import (
    ClozeFillerFactory,
    ClozeItemFactory,
    ComplexSentenceFactory,
    DialogueFactory,
    DialogueTurnFactory,
    DocumentFactory,
    ItemFactory,
    ProjectFactory,
    TargetSentenceFactory,
    WorkerFactory,
)


def annotate(item, worker, **fields):
    source = fields.pop("source", "local")
    state = annotation_state(source=source,
                             review_status=fields.get("review_status", "pending"))
    return models.Annotation.objects.create(project=item.project, item=item, worker=worker,
                                            source=source, state=state, **fields)


def claire_project(slug="claire-small", split="dev"):
    project = ProjectFactory(slug=slug, kind=models.TaskKind.PLAUSIBILITY)
    cloze = ClozeItemFactory(project=project, external_id="7")
    items = []
    for position, text in enumerate(["the split", "your chin", "cleft lips", "your baby",
                                      "the ear"], start=1):
        filler = ClozeFillerFactory(cloze=cloze, position=position, text=text)
        items.append(ItemFactory(project=project, filler=filler, split=split,
                                 external_id=f"7_{position}", group_key="article-7"))
    return project, items


def canard_project(slug="canard-small", split="dev"):
    project = ProjectFactory(slug=slug, kind=models.TaskKind.REWRITE)
    dialogue = DialogueFactory(project=project, external_id="C_abc_0", title="Frank Zappa",
                               section_title="Disbandment", source_split="dev")
    turns = [
        DialogueTurnFactory(dialogue=dialogue, order=1, question="What group disbanded?",
                            answer="Zappa and the Mothers of Invention"),
        DialogueTurnFactory(dialogue=dialogue, order=2, question="When did they disband?",
                            answer="CANNOTANSWER"),
        DialogueTurnFactory(dialogue=dialogue, order=3, question="Why?", answer="In 1969."),
    ]
    items = [ItemFactory(project=project, turn=turn, filler=None, split=split,
                         external_id=f"C_abc_0#{turn.order}", group_key="C_abc_0",
                         position=turn.order) for turn in turns]
    return project, items


def decontext_project(slug="decontext-small", split="dev"):
    project = ProjectFactory(slug=slug, kind=models.TaskKind.DECONTEXT)
    document = DocumentFactory(project=project)
    target = TargetSentenceFactory(document=document)
    item = ItemFactory(project=project, target_sentence=target, filler=None, split=split,
                       external_id="3245252", group_key=document.external_id)
    return project, item


def websplit_project(slug="websplit-small", split="test"):
    project = ProjectFactory(slug=slug, kind=models.TaskKind.SPLIT_REPHRASE)
    sentence = ComplexSentenceFactory(project=project, external_id="ws-1")
    facts = [models.Fact.objects.create(project=project, subject="Alan_Bean",
                                        property="birthPlace", object="Wheeler,_Texas"),
             models.Fact.objects.create(project=project, subject="Alan_Bean",
                                        property="occupation", object="Test_pilot")]
    sentence.facts.set(facts)
    item = ItemFactory(project=project, complex_sentence=sentence, filler=None, split=split,
                       external_id="ws-1", group_key="component-1")
    return project, item


def sluice_project(slug="sluice-small"):
    project = ProjectFactory(slug=slug, kind=models.TaskKind.SLUICE)
    items = {}
    contexts = [
        ("c1", "test", "How many people went to the fair?", "Two", "who"),
        ("c2", "test", "for how long?", "for two matches", "when"),  # Q1 has 3 words: kept
        ("c3", "train", "Who?", "Oliver", "When"),  # Q1 of 1 word: cleaned away
    ]
    for key, split, q1, a1, q2 in contexts:
        dialogue = DialogueFactory(project=project, external_id=key, source="sluice")
        DialogueTurnFactory(dialogue=dialogue, order=1, question=q1, answer=a1)
        turn = DialogueTurnFactory(dialogue=dialogue, order=2, question=q2, answer="")
        items[key] = ItemFactory(project=project, turn=turn, filler=None, split=split,
                                 external_id=key, group_key=key, position=2)
    return project, items


def workers(n):
    return [WorkerFactory() for _ in range(n)]
