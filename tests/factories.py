"""Every builder the tests share, in one place.

- factory_boy factories for the core models: each builds a valid, minimal row.
- Task-page projects (``plausibility_project`` … ``split_project``, ``BUILDERS``,
  ``publish_hit``): small projects of each task kind whose dataset strings carry ``<script>``
  on purpose (every page must show them as text).
- Dataset samples (``claire_sample`` … ``sluice_sample``): a few rows shaped like the
  released datasets, returned with their items, for export, QC and review tests; ``annotate``
  and ``workers`` add answers and annotators to them.
- Local answers (``local_worker``, ``local_answer``, and through the page: ``local_submit``,
  ``post_json``); ``wrongly_filled_items``, the check
  every database test ends with (tests/conftest.py).
- Batch projects and crowd work (``batch_plausibility_project``, ``batch_rewrite_project``,
  ``launched_batch``, ``page_work``, ``launch_prolific``, ``prolific_page_work`` …): priced
  projects to plan and launch, and what a worker and our task pages do through the MTurk and
  Prolific stand-ins.
- A hostile world (``hostile_world``): markup in every text a page shows, for the escaping
  tests.

Fixtures stay in the conftest files; builders live here only.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

import factory
from django.db.models import Count, Q

from annotation import models
from annotation.payloads import validate_payload
from annotation.providers.prolific import StudyTemplate, study_url
from annotation.selectors import annotate as annotate_selectors
from annotation.services.annotations import annotation_state, annotation_submit, slots_required
from annotation.services.batches.collect import ANSWER_FIELD_PAYLOADS
from annotation.services.batches.plan import LaunchOptions, batch_launch, batch_plan


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Project
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda project: project.slug.title())
    kind = models.TaskKind.PLAUSIBILITY


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Document

    project = factory.SubFactory(ProjectFactory, kind=models.TaskKind.DECONTEXT)
    external_id = factory.Sequence(lambda n: f"doc-{n}")
    title = "Zinc"
    url = "https://en.wikipedia.org/wiki/Zinc"
    paragraphs = factory.LazyFunction(
        lambda: [{"section": ["Zinc", "Properties"],
                  "text": "Zinc is a chemical element. It is brittle at room temperature."}]
    )


class TargetSentenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.TargetSentence

    document = factory.SubFactory(DocumentFactory)
    paragraph_index = 0
    start_byte = 28
    end_byte = 62
    text = "It is brittle at room temperature."


class DialogueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Dialogue

    project = factory.SubFactory(ProjectFactory, kind=models.TaskKind.REWRITE)
    external_id = factory.Sequence(lambda n: f"C_dialogue_{n}")
    source = "quac"
    title = "Frank Zappa"
    section_title = "Disbandment"


class DialogueTurnFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.DialogueTurn

    dialogue = factory.SubFactory(DialogueFactory)
    order = factory.Sequence(lambda n: n + 1)
    question = "When did they disband?"
    answer = "In 1969."


class ClozeItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.ClozeItem

    project = factory.SubFactory(ProjectFactory, kind=models.TaskKind.PLAUSIBILITY)
    external_id = factory.Sequence(str)
    resolved_pattern = "IMPLICIT REFERENCE"
    article_title = "How to Detect Cleft Lip Early in Pregnancy"
    section_header = "Treating Cleft Lip"
    previous_context = "1. Care for a newborn with a cleft lip."
    sentence = "2. Get surgery for ______ at 3 to 6 months old."
    followup_context = "A pediatric surgeon will move the skin."


class ClozeFillerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.ClozeFiller

    cloze = factory.SubFactory(ClozeItemFactory)
    position = 1
    text = "the split"


class ComplexSentenceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.ComplexSentence

    project = factory.SubFactory(ProjectFactory, kind=models.TaskKind.SPLIT_REPHRASE)
    external_id = factory.Sequence(lambda n: f"complex-{n}")
    text = "Alan Bean, born in Wheeler, Texas, was a test pilot."


class ItemFactory(factory.django.DjangoModelFactory):
    """An item pointing at a cloze filler unless another source is given."""

    class Meta:
        model = models.Item

    project = factory.SubFactory(ProjectFactory)
    external_id = factory.Sequence(lambda n: f"item-{n}")
    split = models.Split.TRAIN
    group_key = factory.Sequence(lambda n: f"group-{n}")
    filler = factory.SubFactory(
        ClozeFillerFactory, cloze__project=factory.SelfAttribute("...project")
    )


class WorkerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = models.Worker

    provider = models.Worker.Provider.MTURK
    external_id = factory.Sequence(lambda n: f"A{n:013d}")


class AnnotationFactory(factory.django.DjangoModelFactory):
    """An annotation whose ``state`` follows the one rule (``annotation_state``) from its
    source, review status and ``provisional`` (an MTurk page's unconfirmed answer)."""

    class Meta:
        model = models.Annotation

    class Params:
        provisional = False

    item = factory.SubFactory(ItemFactory)
    project = factory.SelfAttribute("item.project")
    worker = factory.SubFactory(WorkerFactory)
    source = models.Annotation.Source.LOCAL
    rating = 4
    state = factory.LazyAttribute(lambda annotation: annotation_state(
        source=annotation.source, review_status=annotation.review_status,
        confirmed=not annotation.provisional))
    review_status = models.Annotation.Review.PENDING


# --- task-page projects ----------------------------------------------------------------------

XSS = "<script>window.__xss = 1</script>"

ZINC_PARAGRAPHS = [
    {"section": ["Zinc"], "text": "Zinc is a chemical element with the symbol Zn."},
    {"section": ["Zinc", "Properties"],
     "text": "Zinc is a bluish-white metal. It is brittle at room temperature."},
]
ZINC_TARGET = "It is brittle at room temperature."


def decontext_project(slug="decontext-demo", *, items=1, redundancy=None, title=None):
    project = models.Project.objects.create(
        slug=slug, name="Decontext demo", kind=models.TaskKind.DECONTEXT,
        redundancy=redundancy or {"train": 1, "dev": 5, "test": 5})
    for index in range(items):
        document = models.Document.objects.create(
            project=project, external_id=f"zinc-{index}", title=title or f"Zinc {XSS}",
            url="https://en.wikipedia.org/wiki/Zinc", paragraphs=ZINC_PARAGRAPHS)
        text = ZINC_PARAGRAPHS[1]["text"]
        start = text.index(ZINC_TARGET)
        target = models.TargetSentence.objects.create(
            document=document, paragraph_index=1, start_byte=len(text[:start].encode()),
            end_byte=len(text[:start].encode()) + len(ZINC_TARGET.encode()), text=ZINC_TARGET)
        models.Item.objects.create(project=project, external_id=f"d{index}",
                                   group_key=f"zinc-{index}", target_sentence=target)
    return project


def plausibility_project(slug="claire-demo", *, items=1, redundancy=None, split="train"):
    project = models.Project.objects.create(
        slug=slug, name="CLAIRE demo", kind=models.TaskKind.PLAUSIBILITY,
        redundancy=redundancy or {"train": 2, "dev": 4, "test": 4})
    for index in range(items):
        cloze = models.ClozeItem.objects.create(
            project=project, external_id=f"c{index}", resolved_pattern="IMPLICIT REFERENCE",
            article_title=f"How to Detect Cleft Lip {XSS}", section_header="Treating Cleft Lip",
            previous_context="1. Care for a newborn with a cleft lip.",
            sentence="2. Get surgery for ______ at 3 to 6 months old.",
            followup_context="A pediatric surgeon will move the skin.")
        filler = models.ClozeFiller.objects.create(cloze=cloze, position=1,
                                                   text=f"the cleft lip {XSS}")
        models.Item.objects.create(project=project, external_id=f"p{index}", split=split,
                                   group_key=f"article-{index}", filler=filler)
    return project


def rewrite_project(slug="canard-demo", *, dialogues=1, redundancy=None):
    project = models.Project.objects.create(
        slug=slug, name="CANARD demo", kind=models.TaskKind.REWRITE,
        redundancy=redundancy or {"train": 1, "dev": 1, "test": 1})
    turns_text = [
        ("What was the band's first album?", "Freak Out! in 1966."),
        ("When did they disband?", "In 1969."),
        ("Did he form any other band?", "CANNOTANSWER"),
    ]
    for d in range(dialogues):
        dialogue = models.Dialogue.objects.create(
            project=project, external_id=f"C_{d}", source="quac", title="Frank Zappa",
            section_title="The Mothers of Invention")
        for order, (question, answer) in enumerate(turns_text, start=1):
            turn = models.DialogueTurn.objects.create(dialogue=dialogue, order=order,
                                                      question=question, answer=answer)
            models.Item.objects.create(project=project, external_id=f"C_{d}_q#{order}",
                                       group_key=f"C_{d}", position=order, turn=turn)
    return project


def sluice_project(slug="sluice-demo", *, items=1, redundancy=None, split="train"):
    project = models.Project.objects.create(
        slug=slug, name="Sluice demo", kind=models.TaskKind.SLUICE,
        redundancy=redundancy or {"train": 1, "dev": 1, "test": 3})
    for index in range(items):
        dialogue = models.Dialogue.objects.create(project=project, external_id=f"s{index}",
                                                  source="sluice")
        models.DialogueTurn.objects.create(dialogue=dialogue, order=1,
                                           question="Did he leave the band?",
                                           answer="Yes, in 1975.")
        q2 = models.DialogueTurn.objects.create(dialogue=dialogue, order=2, question="Why?")
        models.Item.objects.create(project=project, external_id=f"s{index}", split=split,
                                   group_key=f"s{index}", position=2, turn=q2)
    return project


def split_project(slug="websplit-demo", *, items=1, redundancy=None):
    project = models.Project.objects.create(
        slug=slug, name="WebSplit demo", kind=models.TaskKind.SPLIT_REPHRASE,
        redundancy=redundancy or {"train": 1, "dev": 3, "test": 3})
    for index in range(items):
        sentence = models.ComplexSentence.objects.create(
            project=project, external_id=f"w{index}",
            text="Alan Bean, born in Wheeler, Texas, was a test pilot.")
        models.Item.objects.create(project=project, external_id=f"w{index}",
                                   group_key=f"w{index}", complex_sentence=sentence)
    return project


BUILDERS = {
    models.TaskKind.DECONTEXT: decontext_project,
    models.TaskKind.PLAUSIBILITY: plausibility_project,
    models.TaskKind.REWRITE: rewrite_project,
    models.TaskKind.SLUICE: sluice_project,
    models.TaskKind.SPLIT_REPHRASE: split_project,
}


def publish_hit(project: models.Project, *, hit_id="HIT123", items=None,
                max_assignments=1) -> models.Hit:
    """A published MTurk HIT holding ``items`` (default: all of the project's, in order)."""
    batch = models.Batch.objects.create(project=project, provider="mturk", title="Demo batch",
                                        status=models.Batch.Status.PUBLISHED)
    hit = models.Hit.objects.create(batch=batch, provider_hit_id=hit_id,
                                    unique_request_token=f"token-{hit_id}",
                                    max_assignments=max_assignments,
                                    status=models.Hit.Status.ASSIGNABLE)
    for order, item in enumerate(items if items is not None else project.items.order_by("id")):
        models.HitItem.objects.create(hit=hit, item=item, order=order)
    return hit


def prolific_study_hit(project: models.Project, *, study_id: str, items=None,
                       max_assignments: int = 1, completion_code: str = "C7UNPACK",
                       assignment_duration_seconds: int = 3600) -> models.Hit:
    """A published Prolific batch whose one study (``study_id``, one HIT) holds ``items``
    (default: all of the project's, in order), as the launch service leaves it: the batch
    carries the study's completion codes and its maximum allowed time as the assignment
    duration."""
    batch = models.Batch.objects.create(
        project=project, provider="prolific", title="Prolific study",
        status=models.Batch.Status.PUBLISHED, completion_code=completion_code,
        failed_check_code=f"{completion_code}X", estimated_minutes=5,
        assignment_duration_seconds=assignment_duration_seconds)
    hit = models.Hit.objects.create(
        batch=batch, provider_hit_id=study_id, unique_request_token=f"token-{study_id}",
        max_assignments=max_assignments, status=models.Hit.Status.ASSIGNABLE)
    for order, item in enumerate(items if items is not None
                                 else project.items.order_by("id")):
        models.HitItem.objects.create(hit=hit, item=item, order=order)
    return hit


# --- dataset samples (export, QC and review tests; real data goes through import_data) ------

SCRIPT = "<script>alert(1)</script>"


def annotate(item, worker, **fields):
    source = fields.pop("source", "local")
    state = annotation_state(source=source,
                             review_status=fields.get("review_status", "pending"))
    return models.Annotation.objects.create(project=item.project, item=item, worker=worker,
                                            source=source, state=state, **fields)


def workers(n):
    return [WorkerFactory() for _ in range(n)]


def claire_sample(slug="claire-small", split="dev"):
    """Five fillers of one CLAIRE cloze: ``(project, items)``."""
    project = ProjectFactory(slug=slug, kind=models.TaskKind.PLAUSIBILITY)
    cloze = ClozeItemFactory(project=project, external_id="7")
    items = []
    for position, text in enumerate(["the split", "your chin", "cleft lips", "your baby",
                                      "the ear"], start=1):
        filler = ClozeFillerFactory(cloze=cloze, position=position, text=text)
        items.append(ItemFactory(project=project, filler=filler, split=split,
                                 external_id=f"7_{position}", group_key="article-7"))
    return project, items


def canard_sample(slug="canard-small", split="dev"):
    """One CANARD dialogue of three turns: ``(project, items)``."""
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


def decontext_sample(slug="decontext-small", split="dev"):
    """One decontextualisation target sentence: ``(project, item)``."""
    project = ProjectFactory(slug=slug, kind=models.TaskKind.DECONTEXT)
    document = DocumentFactory(project=project)
    target = TargetSentenceFactory(document=document)
    item = ItemFactory(project=project, target_sentence=target, filler=None, split=split,
                       external_id="3245252", group_key=document.external_id)
    return project, item


def websplit_sample(slug="websplit-small", split="test"):
    """One WebSplit complex sentence with its two facts: ``(project, item)``."""
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


def sluice_sample(slug="sluice-small"):
    """Three sluice contexts (one the release cleaning drops): ``(project, {key: item})``."""
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


def flagged_rewrites(n_assignments=2, project_items=None, first=0):
    """A rewrite project with one HIT per assignment, each with a flagged rewrite:
    ``(project, [(assignment, annotation, flag, worker_flag), …])``."""
    project, items = project_items or canard_sample()
    batch = models.Batch.objects.create(project=project, title="rewrites", provider="mturk")
    rows = []
    for k, worker in enumerate(workers(n_assignments), start=first):
        hit = models.Hit.objects.create(batch=batch, unique_request_token=f"token-{k}",
                                 provider_hit_id=f"HIT{k}")
        assignment = models.Assignment.objects.create(hit=hit, worker=worker,
                                               provider_assignment_id=f"ASG{k}",
                                               status=models.Assignment.Status.SUBMITTED,
                                               decision_synced=True)
        annotation = annotate(items[1], worker, assignment=assignment, source="mturk",
                              text=f"When did they disband? {SCRIPT}", duration_ms=900)
        annotate(items[2], worker, assignment=assignment, source="mturk",
                 text="Why did Zappa disband the group?", duration_ms=30000)
        flag = models.Flag.objects.create(project=project, annotation=annotation, worker=worker,
                                   assignment=assignment, reason="rewrite_pronoun_left",
                                   score=1.0, detail=f"pronoun {SCRIPT}",
                                   fingerprint=f"rewrite_pronoun_left:annotation:{annotation.pk}")
        worker_flag = models.Flag.objects.create(project=project, worker=worker, reason="too_fast",
                                          score=-4.0, fingerprint=f"too_fast:worker:{worker.pk}")
        rows.append((assignment, annotation, flag, worker_flag))
    return project, rows


# --- local answers ---------------------------------------------------------------------------


def local_worker(name, **fields):
    return models.Worker.objects.create(provider=models.Worker.Provider.LOCAL, external_id=name,
                                        **fields)


def local_answer(project, item, worker, rating=3, **extra):
    """An answer stored through the general path (``annotation_submit``), as a local
    annotator's page stores it."""
    loaded = annotate_selectors.item_for_submit(project=project, item_id=item.pk)
    context = annotate_selectors.item_context(loaded)
    clean = validate_payload(project.kind, {"rating": rating}, context)
    return annotation_submit(worker=worker, item=loaded, clean=clean, context=context,
                             source="local", client_token=extra.pop("client_token", None)
                             or uuid.uuid4().hex, **extra)


def post_json(client, url: str, body):
    """POST ``body`` as JSON through Django's test client, as the task pages' fetch does."""
    return client.post(url, json.dumps(body), content_type="application/json")


def local_submit(client, project, item_id, payload, token=None, **extra):
    """What a local annotator's page posts to save an answer (a fresh token unless given)."""
    return post_json(client, f"/annotate/{project.slug}/submit/",
                     {"item_id": item_id, "client_token": token or uuid.uuid4().hex,
                      "payload": payload, **extra})


def wrongly_filled_items() -> list[int]:
    """Items marked filled (``Item.filled``) while their counted answers leave a slot open: the
    one thing the mark may never say (the work queue would hide them for good)."""
    counted = Count("annotations", filter=Q(annotations__state=models.Annotation.State.COUNTED))
    items = (models.Item.objects.filter(filled=True).select_related("project")
             .annotate(counted=counted))
    return [item.pk for item in items if item.counted < slots_required(item)]


# --- batch projects and MTurk work -----------------------------------------------------------


def batch_plausibility_project(*, items: int, split: str = "dev",
                               redundancy: dict | None = None,
                               slug: str = "claire") -> models.Project:
    """A priced CLAIRE project of ``items`` items (dev by default), one cloze each, to plan
    and launch batches of."""
    project = ProjectFactory(slug=slug, kind=models.TaskKind.PLAUSIBILITY,
                             redundancy=redundancy or {"train": 2, "dev": 4, "test": 4},
                             reward_cents=20)
    for _ in range(items):
        ItemFactory(project=project, split=split)
    return project


def batch_rewrite_project(*, dialogues: int, turns: int, split: str = "train") -> models.Project:
    """A CANARD project of ``dialogues`` dialogues of ``turns`` turns, to plan batches of."""
    project = ProjectFactory(slug="canard", kind=models.TaskKind.REWRITE,
                             redundancy={"train": 1, "dev": 1, "test": 1})
    for _ in range(dialogues):
        dialogue = DialogueFactory(project=project)
        for order in range(1, turns + 1):
            turn = DialogueTurnFactory(dialogue=dialogue, order=order,
                                       question=f"What happened in part {order}?")
            ItemFactory(project=project, split=split, group_key=dialogue.external_id,
                        position=order, filler=None, turn=turn)
    return project


def launched_batch(project, capture=None, **overrides) -> models.Batch:
    """A batch of the project's dev items planned, confirmed and launched. With ``capture``
    (pytest-django's ``django_capture_on_commit_callbacks``) its on-commit jobs run here and
    the batch is read back; without, they go to the real queue (integration tests)."""
    values = {"title": "Rate fillers", "reward_cents": 50, "items_per_hit": 5,
              "splits": ("dev",)}
    values.update(overrides)
    chosen = LaunchOptions(**values)
    plan = batch_plan(project=project, options=chosen)
    if capture is None:
        return batch_launch(project=project, options=chosen,
                            confirmed_total_cents=plan.estimate.total_cents)
    with capture(execute=True):
        batch = batch_launch(project=project, options=chosen,
                             confirmed_total_cents=plan.estimate.total_cents)
    batch.refresh_from_db()
    return batch


def hit_item_ids(hit: models.Hit) -> list[int]:
    return list(hit.items.order_by("hititem__order").values_list("pk", flat=True))


def submitted_assignment(simulator, hit: models.Hit, worker_id: str, rating: int = 4) -> str:
    """A simulated worker accepts the HIT at the MTurk stand-in and submits what our page
    posts; returns the assignment id."""
    simulator.register_worker(worker_id)
    accepted = simulator.accept(worker_id, hit.provider_hit_id)
    simulator.external_submit(accepted["assignment_id"],
                              page_answer_fields(hit_item_ids(hit), rating))
    return accepted["assignment_id"]


def page_answer_fields(item_ids, rating: int = 4) -> dict[str, str]:
    """The fields our ExternalQuestion page posts to /mturk/externalSubmit for a plausibility
    HIT (besides assignmentId)."""
    return {ANSWER_FIELD_PAYLOADS: json.dumps({str(item_id): {"rating": rating}
                                               for item_id in item_ids})}


def page_work(client, task_url: str, rating: int = 4) -> dict[str, str]:
    """What our ExternalQuestion page does for a plausibility HIT, through Django's test client:
    open the task URL MTurk hands the worker, save every item, finish. Returns the fields the
    page then posts to MTurk's externalSubmit (besides assignmentId)."""
    parts = urlsplit(task_url)
    page = client.get(parts.path, dict(parse_qsl(parts.query)))
    assert page.status_code == 200, page.content.decode()[:500]
    config = page.context["config"]
    for item in config["items"]:
        body = {"item_id": item["item_id"], "client_token": uuid.uuid4().hex,
                "task_token": config["task_token"], "payload": {"rating": rating}}
        saved = client.post(config["submit_url"], json.dumps(body),
                            content_type="application/json")
        assert saved.status_code == 200, saved.content
    done = client.post(config["finish_url"], json.dumps({"task_token": config["task_token"]}),
                       content_type="application/json")
    assert done.status_code == 200, done.content
    return {"summary": done.json()["summary"], **done.json()["answer_fields"]}


# --- Prolific batches and work ---------------------------------------------------------------

PROLIFIC_LAUNCH = {"title": "Rate fillers", "reward_cents": 150, "items_per_hit": 5,
                   "splits": ("dev",), "provider": "prolific", "estimated_minutes": 10,
                   "assignment_duration_seconds": 30 * 60, "min_percent_approved": 95}


def study_template(**overrides) -> StudyTemplate:
    fields = {
        "name": "Rate fillers", "description": "Rate how plausible each filler is.",
        "external_study_url": study_url("https://unpack.example/prolific/task/demo/"),
        "reward_cents": 150, "estimated_completion_minutes": 10, "maximum_allowed_minutes": 30,
        "completion_code": "CDONE1234", "failed_check_code": "CFAIL5678",
        "internal_name": "unpack batch 1",
        "filters": ({"filter_id": "approval_rate", "selected_range": {"lower": 95,
                                                                      "upper": 100}},),
    }
    fields.update(overrides)
    return StudyTemplate(**fields)


def prolific_options(**overrides) -> LaunchOptions:
    return LaunchOptions(**{**PROLIFIC_LAUNCH, **overrides})


def launch_prolific(project, capture, **overrides) -> models.Batch:
    """Plan, confirm and launch; the publish job runs inline when ``capture`` executes it."""
    return launched_batch(project, capture, **{**PROLIFIC_LAUNCH, **overrides})


def prolific_page_work(client, task_url: str, *, rating: int = 4, items: int | None = None,
                       finish: bool = True) -> str | None:
    """What a participant's browser does on our task page (``/prolific/task/<slug>/``) for a
    plausibility study, through Django's test client: open the URL Prolific sends them to,
    save ``items`` items (all by default) and, with ``finish``, finish. Returns the completion
    code the page sends them back to Prolific with (None without ``finish``)."""
    parts = urlsplit(task_url)
    page = client.get(parts.path, dict(parse_qsl(parts.query)))
    assert page.status_code == 200, page.content.decode()[:500]
    config = page.context["config"]
    for item in config["items"][:items]:
        saved = client.post(config["submit_url"], json.dumps({
            "item_id": item["item_id"], "client_token": uuid.uuid4().hex,
            "task_token": config["task_token"], "payload": {"rating": rating}}),
            content_type="application/json")
        assert saved.status_code == 200, saved.content
    if not finish:
        return None
    done = client.post(config["finish_url"], json.dumps({"task_token": config["task_token"]}),
                       content_type="application/json")
    assert done.status_code == 200, done.content
    return parse_qs(urlsplit(done.json()["redirect_url"]).query)["cc"][0]


def participant_works(simulator, hit, *, client, finish: bool = True,
                      items: int | None = None, rating: int = 4):
    """A participant starts the study at Prolific (the stand-in's side door), works on our
    task page through ``client`` and, with ``finish``, completes at Prolific with the code
    the page gave them."""
    started = simulator.start(simulator.participant(), hit.provider_hit_id)
    session = started["session_id"]
    code = prolific_page_work(client, started["task_url"], rating=rating, items=items,
                              finish=finish)
    if finish:
        assert code == hit.batch.completion_code
        simulator.complete(session, code)
    return models.Assignment.objects.get(provider_assignment_id=session)


# --- a hostile world (escaping tests) -------------------------------------------------------
# A database in which every text a dataset, a worker or MTurk can supply carries markup. Pages
# must show these strings as text: no element with an ``xss`` id may ever exist, no
# ``window.__xss`` may ever be set and no dialog may open (``tests/browser/test_escaping.py``);
# the server never sends them unescaped (``tests/security/test_escaping.py``).

# Element content, attribute values (quoted and unquoted), <title>, <textarea>, SVG and script
# contexts; each marker names where it came from when a test fails.
def hostile_text(where: str) -> str:
    # At most 200 characters: it must fit the CharFields (titles, headers) unchanged.
    text = (f'{where} "\'><img id="xss-{where}" src=x onerror="window.__xss=1">'
            f"<script>window.__xss=2</script></title></textarea>"
            f'<svg id="xss-s-{where}" onload="alert(1)"></svg>')
    assert len(text) <= 200, where
    return text


# MTurk ids and codes are capped at 64 / 60 characters by the database or the validators.
def hostile_id(where: str, limit: int = 60) -> str:
    text = f'"><img id=xss-{where} src=x onerror=alert(1)>'
    return text if len(text) <= limit else f'"><i id=xss-{where}>'[:limit]


# What must never reach a page unescaped.
MARKERS = ('<img id="xss-', "<img id=xss-", "<i id=xss-", "<script>window.__xss",
           '<svg id="xss-')


@dataclass
class Hostile:
    plausibility: models.Project
    rewrite: models.Project
    decontext: models.Project
    batch: models.Batch
    hit: models.Hit
    assignment: models.Assignment
    page_hit: models.Hit


def hostile_world() -> Hostile:
    plausibility = models.Project.objects.create(
        slug="hostile-claire", name=hostile_text("project-name"),
        kind=models.TaskKind.PLAUSIBILITY, instructions=hostile_text("instructions"),
        redundancy={"train": 5, "dev": 5, "test": 5})
    cloze = models.ClozeItem.objects.create(
        project=plausibility, external_id=hostile_id("cloze-id"), resolved_pattern="IMPLICIT",
        article_title=hostile_text("article-title"),
        section_header=hostile_text("section-header"),
        previous_context=hostile_text("previous-context"),
        sentence=f"Get surgery for ______ now {hostile_text('cloze-sentence')}",
        followup_context=hostile_text("followup-context"))
    items = []
    for position in (1, 2):
        filler = models.ClozeFiller.objects.create(cloze=cloze, position=position,
                                                   text=hostile_text(f"filler-{position}"))
        items.append(models.Item.objects.create(
            project=plausibility, external_id=hostile_id(f"item-{position}"),
            group_key=hostile_text("group-key"), filler=filler, split="train",
            position=position))

    batch = models.Batch.objects.create(
        project=plausibility, provider="mturk", title=hostile_text("batch-title"),
        status=models.Batch.Status.FAILED, error=hostile_text("batch-error"))
    hit = models.Hit.objects.create(
        batch=batch, provider_hit_id=hostile_id("hit-id"), unique_request_token="hostile-hit",
        max_assignments=3, status=models.Hit.Status.ASSIGNABLE, error=hostile_text("hit-error"))
    # The task page refuses a malformed hitId before looking anything up (MTurk ids are
    # [A-Z0-9]{1,64}), so a hostile HIT id never reaches it: the page is opened on a HIT with a
    # valid id over the same hostile items; the hostile id stays for the staff pages.
    page_hit = models.Hit.objects.create(
        batch=batch, provider_hit_id="HOSTILEPAGEHIT", unique_request_token="hostile-page-hit",
        max_assignments=3, status=models.Hit.Status.ASSIGNABLE)
    for order, item in enumerate(items):
        models.HitItem.objects.create(hit=hit, item=item, order=order)
        models.HitItem.objects.create(hit=page_hit, item=item, order=order)
    hostile_workers = [models.Worker.objects.create(provider="mturk",
                                                    external_id=hostile_id(f"worker-{k}"))
                       for k in range(3)]
    assignment = models.Assignment.objects.create(
        hit=hit, worker=hostile_workers[0], provider_assignment_id=hostile_id("assignment-id"),
        status=models.Assignment.Status.SUBMITTED, raw_answer=hostile_text("raw-answer"),
        review_message=hostile_text("review-message"))
    models.StatusEvent.objects.create(batch=batch, hit=hit, assignment=assignment, kind="error",
                                      old_status="pending", new_status="failed",
                                      detail={"message": hostile_text("event-detail")})
    for k, worker in enumerate(hostile_workers):
        for item in items:
            annotation = models.Annotation.objects.create(
                project=plausibility, item=item, worker=worker, source="mturk",
                assignment=assignment if k == 0 else None, rating=1 + (k + item.position) % 5,
                payload={"rating": 1 + (k + item.position) % 5},
                client_warnings=[{"code": hostile_id("client-code"),
                                  "message": hostile_text("client-message")}],
                overridden_warnings=[{"code": hostile_id("overridden-code"),
                                      "message": hostile_text("overridden-message")}],
                duration_ms=1000 * (k + 1))
            models.Flag.objects.create(
                project=plausibility, annotation=annotation, worker=worker,
                assignment=annotation.assignment, reason=hostile_id("reason", limit=40),
                score=1.0, detail=hostile_text("flag-detail"),
                fingerprint=f"hostile:{annotation.pk}")

    rewrite = models.Project.objects.create(slug="hostile-canard",
                                            name=hostile_text("rewrite-name"),
                                            kind=models.TaskKind.REWRITE)
    dialogue = models.Dialogue.objects.create(project=rewrite, external_id="C_hostile",
                                              title=hostile_text("dialogue-title"),
                                              section_title=hostile_text("section-title"))
    turn_items = []
    for order in (1, 2):
        turn = models.DialogueTurn.objects.create(dialogue=dialogue, order=order,
                                                  question=hostile_text(f"question-{order}"),
                                                  answer=hostile_text(f"answer-{order}"))
        turn_items.append(models.Item.objects.create(
            project=rewrite, external_id=f"C_hostile#{order}", group_key="C_hostile",
            position=order, turn=turn))
    rewritten = models.Annotation.objects.create(
        project=rewrite, item=turn_items[1], worker=hostile_workers[1], source="local",
        text=hostile_text("rewrite-text"), payload={"rewrite": hostile_text("rewrite-text")})
    models.Flag.objects.create(project=rewrite, annotation=rewritten, worker=hostile_workers[1],
                               reason="rewrite_pronoun_left", score=1.0,
                               detail=hostile_text("rewrite-flag"),
                               fingerprint="hostile:rewrite")

    decontext = models.Project.objects.create(slug="hostile-decontext",
                                              name=hostile_text("decontext-name"),
                                              kind=models.TaskKind.DECONTEXT)
    text = f"Zinc is a metal. {hostile_text('paragraph')}"
    document = models.Document.objects.create(
        project=decontext, external_id="zinc", title=hostile_text("page-title"),
        url="https://en.wikipedia.org/wiki/Zinc",
        paragraphs=[{"section": [hostile_text("section")], "text": text}])
    target = models.TargetSentence.objects.create(
        document=document, paragraph_index=0, start_byte=0,
        end_byte=len(b"Zinc is a metal."), text="Zinc is a metal.")
    models.Item.objects.create(project=decontext, external_id="zinc-0", group_key="zinc",
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
              f"{models.ClozeItem.objects.filter(project=world.plausibility).get().pk}/change/",
              f"/admin/annotation/dialogue/"
              f"{models.Dialogue.objects.filter(project=world.rewrite).get().pk}/change/"]
    return pages


def annotator_pages(world: Hostile) -> list[str]:
    return ["/", f"/annotate/{world.plausibility.slug}/", f"/annotate/{world.rewrite.slug}/",
            f"/annotate/{world.decontext.slug}/"]


def mturk_page(world: Hostile) -> str:
    return f"/mturk/task/{world.plausibility.slug}/?" + urlencode({
        "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": world.page_hit.provider_hit_id})


def submitted_hit_answers(*, slug="canard-sample", local_text="Mine"):
    """A rewrite project's HIT with three MTurk workers' submitted assignments on its first item
    ("good"; "blocked" from the project; "waiting": not confirmed by collection yet) and a local
    annotator's answer to the second: ``(project, {name: answer})``."""
    project, items = canard_sample(slug=slug)
    hit = publish_hit(project, items=items[:1], max_assignments=3)
    good, blocked, waiting = workers(3)
    models.WorkerProjectBlock.objects.create(worker=blocked, project=project, reason="spam")
    answers = {}
    for name, worker in (("good", good), ("blocked", blocked), ("waiting", waiting)):
        assignment = models.Assignment.objects.create(
            hit=hit, worker=worker, provider_assignment_id=f"ASG-{name}",
            status=models.Assignment.Status.SUBMITTED)
        answers[name] = annotate(items[0], worker, source="mturk", assignment=assignment,
                                 text=f"Rewrite by {name}")
    models.Annotation.objects.filter(pk=answers["waiting"].pk).update(
        state=models.Annotation.State.PROVISIONAL)
    answers["local"] = annotate(items[1], local_worker("ann"), source="local", text=local_text)
    return project, answers
