"""The data model for all five pipelines.

Source material (documents, dialogues, cloze items, complex sentences) is imported once; an
``Item`` is the unit a worker annotates and points at exactly one piece of source material.
Work flows Batch → Hit → Assignment → Annotation; review produces Flags and decisions.

State changes live in ``annotation.services``; these classes hold no behaviour beyond
constraints the database enforces and small derived properties.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .pseudonyms import pseudonym


class TaskKind(models.TextChoices):
    DECONTEXT = "decontext", "Decontextualization"
    PLAUSIBILITY = "plausibility", "Plausibility of clarifications"
    REWRITE = "rewrite", "Question-in-context rewriting"
    SPLIT_REPHRASE = "split_rephrase", "Split and rephrase"
    SLUICE = "sluice", "Sluice resolution"


class Split(models.TextChoices):
    TRAIN = "train", "train"
    DEV = "dev", "dev"
    TEST = "test", "test"


def default_redundancy() -> dict:
    return {"train": 1, "dev": 5, "test": 5}


class Project(models.Model):
    """One dataset being built."""

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=TaskKind.choices)
    instructions = models.TextField(blank=True)
    # Annotations wanted per item, by split, e.g. {"train": 1, "dev": 5, "test": 5}.
    redundancy = models.JSONField(default=default_redundancy)
    reward_cents = models.PositiveIntegerField(default=0)
    # Overrides of qc.livechecks / qc.flags thresholds; keys validated by the services.
    live_check_settings = models.JSONField(default=dict, blank=True)
    flag_settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set on the console's project pages; who may work: annotation/selectors/access.py.
    estimated_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="expected minutes per item (the batch form's default)")

    class Status(models.TextChoices):
        OPEN = "open", "open"
        PAUSED = "paused", "paused"
        CLOSED = "closed", "closed"

    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    # Who may work here as a local annotator: everyone (all annotators) or the chosen people.
    workers_everyone = models.BooleanField(default=True)
    allowed_users = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True,
                                           related_name="allowed_projects")
    allowed_groups = models.ManyToManyField("auth.Group", blank=True,
                                            related_name="allowed_projects")
    licence = models.CharField(max_length=200, blank=True)
    attribution = models.TextField(blank=True)
    # Gold items (``Item.is_gold``): the share of the items served to each worker that are gold
    # (0 = none are served), and whether a worker the gold rule flags is stopped in the project.
    gold_rate = models.FloatField(default=0.0)
    gold_failures_stop = models.BooleanField(default=False)
    # An optional budget in the smallest unit of ``budget_currency`` (ISO 4217): launching a
    # batch whose cost with fees would take spent + committed past it is refused
    # (``services/batches/budget.py``). NULL: no budget.
    budget_cents = models.PositiveIntegerField(null=True, blank=True)
    budget_currency = models.CharField(max_length=3, blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def redundancy_for(self, split: str) -> int:
        return int(self.redundancy.get(split, 1))


class ImportRecord(models.Model):
    """One successful import of one file; the checksum makes re-importing a no-op."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="imports")
    format = models.CharField(max_length=20)
    path = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64)
    split = models.CharField(max_length=8, blank=True)
    rows = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "format", "sha256", "split"], name="uniq_import_per_file"
            )
        ]

    def __str__(self) -> str:
        return f"{self.format}:{self.path}"


# --- Source material -------------------------------------------------------------------------


class Document(models.Model):
    """A page: title, section titles and paragraphs (decontextualization)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=200)
    title = models.TextField()
    url = models.URLField(max_length=500, blank=True)
    # [{"section": ["Top", "Sub"], "text": "..."}, ...] in page order.
    paragraphs = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="uniq_document")
        ]

    def __str__(self) -> str:
        return self.title[:80]


class TargetSentence(models.Model):
    """A sentence to decontextualize: UTF-8 byte offsets into one paragraph of a document."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="targets")
    paragraph_index = models.PositiveIntegerField()
    start_byte = models.PositiveIntegerField()
    end_byte = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(end_byte__gt=models.F("start_byte")),
                                   name="target_offsets_ordered"),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class Dialogue(models.Model):
    """A QuAC/CoQA conversation (CANARD rewriting) or a sluice context (Q1, A1, Q2)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="dialogues")
    external_id = models.CharField(max_length=200)
    source = models.CharField(max_length=20, blank=True)  # quac | coqa | canard | sluice
    source_split = models.CharField(max_length=20, blank=True)  # the source's own split name
    title = models.TextField(blank=True)
    section_title = models.TextField(blank=True)
    background = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="uniq_dialogue")
        ]

    def __str__(self) -> str:
        return self.external_id


class DialogueTurn(models.Model):
    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE, related_name="turns")
    order = models.PositiveIntegerField()  # 1-based, as CANARD's Question_no
    question = models.TextField()
    answer = models.TextField(blank=True)

    class Meta:
        ordering = ["dialogue_id", "order"]
        constraints = [
            models.UniqueConstraint(fields=["dialogue", "order"], name="uniq_turn_order"),
            models.CheckConstraint(condition=Q(order__gte=1), name="turn_order_positive"),
        ]

    CANNOT_ANSWER = "CANNOTANSWER"

    def __str__(self) -> str:
        return f"{self.dialogue_id}#{self.order}: {self.question[:60]}"

    @property
    def shown_answer(self) -> str:
        """QuAC's CANNOTANSWER is shown to annotators as the paper did."""
        return "I don't know." if self.answer.strip() == self.CANNOT_ANSWER else self.answer


class ClozeItem(models.Model):
    """A wikiHow sentence with a gap and its context (CLAIRE / SemEval-2022 Task 7)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="cloze_items")
    external_id = models.CharField(max_length=100)
    resolved_pattern = models.CharField(max_length=40)
    article_title = models.TextField()
    section_header = models.TextField(blank=True)
    previous_context = models.TextField(blank=True)
    sentence = models.TextField()
    followup_context = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="uniq_cloze")
        ]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.sentence[:60]}"


class ClozeFiller(models.Model):
    cloze = models.ForeignKey(ClozeItem, on_delete=models.CASCADE, related_name="fillers")
    position = models.PositiveSmallIntegerField()  # 1..5 as in the released Id_<n>
    text = models.TextField()
    # True for the human insertion, False for generated ones, None when the source does not say.
    is_original = models.BooleanField(null=True)

    class Meta:
        ordering = ["cloze_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["cloze", "position"], name="uniq_filler_position"),
            models.CheckConstraint(condition=Q(position__gte=1, position__lte=5),
                                   name="filler_position_1_5"),
        ]

    def __str__(self) -> str:
        return f"{self.cloze_id}_{self.position}: {self.text[:40]}"


class ComplexSentence(models.Model):
    """A sentence to split and rephrase, with the RDF facts it expresses (WebSplit)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE,
                                related_name="complex_sentences")
    external_id = models.CharField(max_length=200)
    text = models.TextField()
    facts = models.ManyToManyField("Fact", related_name="sentences", blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="uniq_complex")
        ]

    def __str__(self) -> str:
        return self.text[:80]


class Fact(models.Model):
    """An RDF triple; shared by every complex sentence that expresses it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="facts")
    subject = models.TextField()
    property = models.CharField(max_length=200)
    object = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "subject", "property", "object"],
                                    name="uniq_fact")
        ]

    def __str__(self) -> str:
        return f"{self.subject} | {self.property} | {self.object}"


# --- Work ------------------------------------------------------------------------------------


class Item(models.Model):
    """The unit a worker annotates; points at exactly one piece of source material."""

    # No index of its own: uniq_item and the (project, …) indexes below lead with it.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items",
                                db_index=False)
    external_id = models.CharField(max_length=200)
    split = models.CharField(max_length=8, choices=Split.choices, default=Split.TRAIN)
    # Splits never cut a group (page, wikiHow article, dialogue, triple cluster).
    group_key = models.CharField(max_length=200)
    position = models.PositiveIntegerField(default=0)  # order within the group (turn order)
    target_sentence = models.ForeignKey(TargetSentence, null=True, blank=True,
                                        on_delete=models.CASCADE, related_name="items")
    turn = models.ForeignKey(DialogueTurn, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="items")
    filler = models.ForeignKey(ClozeFiller, null=True, blank=True, on_delete=models.CASCADE,
                               related_name="items")
    complex_sentence = models.ForeignKey(ComplexSentence, null=True, blank=True,
                                         on_delete=models.CASCADE, related_name="items")
    is_gold = models.BooleanField(default=False)
    gold_answer = models.JSONField(null=True, blank=True)
    # True only while counted answers fill every redundancy slot of the item's split: the work
    # queue walks the unfilled ones only (``item_unfilled``). False may be stale (a full item
    # the queue then checks by counting); True never is: every writer of ``Annotation.state``,
    # of the split and of the project's redundancy keeps it in the same transaction
    # (``annotation.services.annotations``, "Filled items").
    filled = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # Adaptive redundancy (``annotation.services.adaptive``): the counted answers this item
    # needs now, from its answers under the project's policy; NULL: the project's default for
    # its split (the policy's ``start``, or the split's fixed redundancy). Kept with ``filled``
    # by the same writers, so the work queue compares a column, never runs the rule.
    target_answers = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="uniq_item"),
            models.CheckConstraint(
                name="item_points_at_one_source",
                condition=(
                    Q(target_sentence__isnull=False, turn__isnull=True, filler__isnull=True,
                      complex_sentence__isnull=True)
                    | Q(target_sentence__isnull=True, turn__isnull=False, filler__isnull=True,
                        complex_sentence__isnull=True)
                    | Q(target_sentence__isnull=True, turn__isnull=True, filler__isnull=False,
                        complex_sentence__isnull=True)
                    | Q(target_sentence__isnull=True, turn__isnull=True, filler__isnull=True,
                        complex_sentence__isnull=False)
                ),
            ),
        ]
        indexes = [
            models.Index(fields=["project", "split", "id"], name="item_project_split"),
            # The work queue walks a project's items in id order from a pivot between the
            # project's MIN(id) and MAX(id); both are index end points with this.
            models.Index(fields=["project", "id"], name="item_project_id"),
            # The same walk over the items not yet filled: full items cost it nothing.
            models.Index(fields=["project", "id"], condition=Q(filled=False),
                         name="item_unfilled"),
            models.Index(fields=["project", "group_key", "position"], name="item_group"),
        ]

    def __str__(self) -> str:
        return f"{self.project_id}:{self.external_id}"


class SplitManifest(models.Model):
    """A frozen assignment of groups to splits; publishing respects it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="manifests")
    rule = models.CharField(max_length=20)  # group | websplit | canard
    seed = models.IntegerField()
    fractions = models.JSONField(default=dict)
    group_splits = models.JSONField(default=dict)  # {group_key: split}
    counts = models.JSONField(default=dict)
    frozen = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.project_id} {self.rule} seed={self.seed}"


class Worker(models.Model):
    """An MTurk worker (WorkerId), a Prolific participant (PROLIFIC_PID) or a local user."""

    class Provider(models.TextChoices):
        LOCAL = "local", "local"
        MTURK = "mturk", "MTurk"
        PROLIFIC = "prolific", "Prolific"
        IMPORT = "import", "imported"

    provider = models.CharField(max_length=10, choices=Provider.choices)
    external_id = models.CharField(max_length=100)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, null=True, blank=True,
                                on_delete=models.SET_NULL, related_name="worker")
    is_blocked = models.BooleanField(default=False)
    blocked_reason = models.TextField(blank=True)
    # Set once the provider's block list matches is_blocked; the outbox for block jobs.
    block_synced = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "external_id"], name="uniq_worker")
        ]

    def __str__(self) -> str:
        # Shown by the admin wherever a row names its worker: the pseudonym, as every staff
        # page and the API show it (the provider's id is on the worker's own admin page).
        return f"{self.provider}:{self.anonymous_id}"

    @property
    def anonymous_id(self) -> str:
        """A stable pseudonym for exports: never the MTurk WorkerId or the username."""
        return pseudonym(secret_key=settings.SECRET_KEY, provider=self.provider,
                         external_id=self.external_id)


class Batch(models.Model):
    """A launch of work for a project through one provider."""

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        PUBLISHING = "publishing", "publishing"
        PUBLISHED = "published", "published"
        COMPLETE = "complete", "complete"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="batches")
    provider = models.CharField(max_length=10, default="local")
    live = models.BooleanField(default=False)  # MTurk production rather than the sandbox
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DRAFT)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    keywords = models.CharField(max_length=500, blank=True)
    reward_cents = models.PositiveIntegerField(default=0)
    items_per_hit = models.PositiveIntegerField(default=1)
    lifetime_seconds = models.PositiveIntegerField(default=7 * 24 * 3600)
    assignment_duration_seconds = models.PositiveIntegerField(default=3600)
    auto_approval_delay_seconds = models.PositiveIntegerField(default=3 * 24 * 3600)
    qualification_requirements = models.JSONField(default=list, blank=True)
    # Prolific: the study's estimated completion time (the reward per hour is computed from it),
    # its two completion codes (finished work; a failed attention check) and its filters
    # (Prolific filter objects: first language, approval rate, previous submissions...).
    estimated_minutes = models.PositiveSmallIntegerField(null=True, blank=True)
    completion_code = models.CharField(max_length=32, blank=True)
    failed_check_code = models.CharField(max_length=32, blank=True)
    participant_filters = models.JSONField(default=list, blank=True)
    # Prolific: the devices the study admits ("desktop", "tablet", "mobile").
    device_compatibility = models.JSONField(default=list, blank=True)
    # Which items: {"splits": [...], "item_ids": [...]} as chosen at launch.
    selection = models.JSONField(default=dict, blank=True)
    provider_hit_type_id = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "batches"

    def __str__(self) -> str:
        return f"batch {self.pk}: {self.title}"


class Hit(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "pending"  # built, not yet created at the provider
        ASSIGNABLE = "assignable", "assignable"
        UNASSIGNABLE = "unassignable", "unassignable"
        REVIEWABLE = "reviewable", "reviewable"
        REVIEWING = "reviewing", "reviewing"
        DISPOSED = "disposed", "disposed"
        FAILED = "failed", "failed"

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="hits")
    provider_hit_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    # Sent as MTurk's UniqueRequestToken: a retried publish can never create a second HIT.
    unique_request_token = models.CharField(max_length=64, unique=True)
    items = models.ManyToManyField(Item, through="HitItem", related_name="hits")
    max_assignments = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["batch", "status"], name="hit_batch_status")]

    def __str__(self) -> str:
        return self.provider_hit_id or f"hit {self.pk} (not published)"


class HitItem(models.Model):
    hit = models.ForeignKey(Hit, on_delete=models.CASCADE)
    item = models.ForeignKey(Item, on_delete=models.CASCADE)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["hit_id", "order"]
        constraints = [
            models.UniqueConstraint(fields=["hit", "item"], name="uniq_hit_item"),
        ]

    def __str__(self) -> str:
        return f"{self.hit_id}/{self.item_id}"


class Assignment(models.Model):
    class Status(models.TextChoices):
        ACCEPTED = "accepted", "accepted"
        SUBMITTED = "submitted", "submitted"
        APPROVED = "approved", "approved"
        REJECTED = "rejected", "rejected"
        RETURNED = "returned", "returned"
        ABANDONED = "abandoned", "abandoned"

    hit = models.ForeignKey(Hit, on_delete=models.CASCADE, related_name="assignments")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="assignments")
    provider_assignment_id = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACCEPTED)
    accepted_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    raw_answer = models.TextField(blank=True)
    review_message = models.TextField(blank=True)
    # Prolific: the rejection category sent with a rejection (Prolific requires one).
    rejection_category = models.CharField(max_length=32, blank=True)
    # Set once the decision reached the provider; the outbox for approve/reject jobs.
    decision_synced = models.BooleanField(default=True)
    # When the provider vouched for it (this worker, this HIT): at collection, or at the first
    # save when the provider can see work in progress. Only a confirmed assignment holds one
    # of the HIT's slots (services/annotations.py, live_assignments_q).
    confirmed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["worker", "status"], name="assignment_worker_status")]

    def __str__(self) -> str:
        return self.provider_assignment_id


class Bonus(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="bonuses")
    amount_cents = models.PositiveIntegerField()
    reason = models.TextField()
    unique_request_token = models.CharField(max_length=64, unique=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # Prolific pays a bonus in two calls (set up, then pay) and paying is not idempotent there:
    # the set-up id is stored before paying, and ``paying_started_at`` is set just before the pay
    # call, so a retry after an unknown outcome never pays twice (it needs a human's check).
    provider_setup_id = models.CharField(max_length=64, blank=True)
    paying_started_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "bonuses"
        constraints = [
            models.CheckConstraint(condition=Q(amount_cents__gt=0), name="bonus_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.amount_cents}c for {self.assignment_id}"


class Annotation(models.Model):
    """One worker's answer for one item.

    ``payload`` holds the typed answer of the task kind (see ``annotation.payloads``); the most
    queried parts are denormalised into columns: ``category``, ``rating``, ``text``, ``skipped``.
    """

    class Source(models.TextChoices):
        LOCAL = "local", "local annotator"
        MTURK = "mturk", "MTurk"
        PROLIFIC = "prolific", "Prolific"
        IMPORT = "import", "imported"

    class Category(models.TextChoices):
        DONE = "DONE", "DONE"
        IMPOSSIBLE = "IMPOSSIBLE", "IMPOSSIBLE"
        UNNECESSARY = "UNNECESSARY", "UNNECESSARY"

    class Review(models.TextChoices):
        PENDING = "pending", "pending"
        APPROVED = "approved", "approved"
        REJECTED = "rejected", "rejected"

    class State(models.TextChoices):
        """What the answer is worth to the project; kept by the services from the source, the
        review status and whether the MTurk page's answer is confirmed
        (``annotation.services.annotations.annotation_state``, the one definition)."""

        #: fills one of the item's redundancy slots: every reader counts these, and only these
        COUNTED = "counted", "counted"
        #: an MTurk task page's answer whose assignment MTurk has not reported (yet): nowhere
        PROVISIONAL = "provisional", "provisional (not confirmed by MTurk)"
        #: rejected by a reviewer: no slot, no dataset export; QC and the generic export see it
        REJECTED = "rejected", "rejected"
        #: a released dataset's answer: exported and in QC, fills no slot
        IMPORTED = "imported", "imported"
        #: an older version the annotator changed (``supersedes`` of the newer row points
        #: here): kept for the audit trail, counted, exported and checked nowhere
        SUPERSEDED = "superseded", "superseded (changed by the annotator)"
        #: not an answer: the annotator reported a problem with the item (``problem``); fills
        #: no slot, in no export or QC row; reviewers see it through its annotator flag
        REPORTED = "reported", "problem reported"

    class Problem(models.TextChoices):
        """Why an annotator skipped an item ("Skip / report a problem with this item")."""

        BROKEN_SOURCE = "broken_source", "the source text is broken"
        OFFENSIVE = "offensive", "offensive content"
        UNCLEAR = "unclear", "I can't understand it"

    # No single-column indexes on these three: the composite indexes below lead with each of
    # them (item: annotation_item_state, project: annotation_project_time, worker:
    # annotation_worker_project) and serve every lookup and cascade by it, and each index
    # more is one more insertion on every submit.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotations",
                                db_index=False)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations",
                             db_index=False)
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="annotations",
                               db_index=False)
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="annotations")
    source = models.CharField(max_length=8, choices=Source.choices)
    payload = models.JSONField(default=dict)
    category = models.CharField(max_length=12, choices=Category.choices, blank=True)
    # An individual 1–5 rating, or the released mean score for imported CLAIRE rows.
    rating = models.FloatField(null=True, blank=True)
    text = models.TextField(blank=True)
    skipped = models.BooleanField(default=False)
    # A problem report instead of an answer (state REPORTED): the reason, and the annotator's
    # optional words about it.
    problem = models.CharField(max_length=16, choices=Problem.choices, blank=True)
    problem_note = models.TextField(blank=True)
    # Decontextualization: [{"op": "delete"|"add"|"swap", "start": int, "end": int,
    #   "text": str, "source": {"paragraph": int, "start": int, "end": int} | null,
    #   "edit_type": str | null}, ...] — spans are character offsets into the original sentence.
    edit_operations = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)  # the browser's claim
    # When the server served the item to this worker (the page view), by the server's clock:
    # served_at -> submitted_at is the server's own measure of the work (qc: timing flags).
    served_at = models.DateTimeField(null=True, blank=True)
    client_warnings = models.JSONField(default=list, blank=True)  # shown in the browser
    # How a text answer was written, as its page measured it: counts and milliseconds only,
    # never what was typed (``qc.effort.EffortSummary``; docs/annotating.md). NULL: not
    # recorded (ratings, imports, MTurk's own form, an older page).
    effort = models.JSONField(null=True, blank=True)
    overridden_warnings = models.JSONField(default=list, blank=True)  # submitted anyway
    server_warnings = models.JSONField(default=list, blank=True)  # re-checked on arrival
    review_status = models.CharField(max_length=8, choices=Review.choices,
                                     default=Review.PENDING)
    # Derived from source, review_status and confirmation; written only by the services.
    state = models.CharField(max_length=12, choices=State.choices, default=State.COUNTED)
    # Idempotency key sent by the browser: a double submit stores one annotation.
    client_token = models.CharField(max_length=64, null=True, blank=True, unique=True)
    provenance = models.JSONField(default=dict, blank=True)  # file, line, original ids
    # The version this one replaces: an annotator changed their answer (``annotation_revise``);
    # the older row is kept, its state SUPERSEDED.
    supersedes = models.OneToOneField("self", null=True, blank=True, on_delete=models.CASCADE,
                                      related_name="superseded_by")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # One live answer per worker and item: older versions are superseded.
            models.UniqueConstraint(fields=["worker", "item"],
                                    condition=Q(assignment__isnull=True)
                                    & ~Q(state="superseded"),
                                    name="uniq_annotation_worker_item_live"),
            models.UniqueConstraint(fields=["worker", "item", "assignment"],
                                    condition=Q(assignment__isnull=False),
                                    name="uniq_annotation_worker_item_assignment"),
            models.CheckConstraint(condition=Q(rating__isnull=True)
                                   | Q(rating__gte=1, rating__lte=5),
                                   name="rating_1_5"),
        ]
        indexes = [
            models.Index(fields=["item", "worker"], name="annotation_item_worker"),
            # The work queue and the submit count an item's counted answers: one index range.
            models.Index(fields=["item", "state"], name="annotation_item_state"),
            models.Index(fields=["project", "submitted_at"], name="annotation_project_time"),
            # With id: a worker's latest annotation in a project is one index probe (the work
            # queue starts after it).
            models.Index(fields=["worker", "project", "id"], name="annotation_worker_project"),
            # The data browser's keyset pages, newest first: a project's answers, and those of
            # one state or one source, are each one index range (selectors/answer_browser.py).
            models.Index(fields=["project", "id"], name="annotation_project_id"),
            models.Index(fields=["project", "state", "id"], name="annotation_project_state_id"),
            models.Index(fields=["project", "source", "id"], name="annotation_project_source_id"),
            # "Has this assignment unconfirmed work?" (every bulk-approvable list, the review
            # queue's unflagged assignments): a probe of the few provisional answers, not a
            # scan of the (item, state) index (23 ms warm at 1,000,000 answers, issue 21).
            models.Index(fields=["assignment"], name="annotation_provisional",
                         condition=models.Q(state="provisional")),
            # The data browser sorted by worker or by item (keyset on the column and id).
            models.Index(fields=["project", "worker", "id"], name="annotation_project_worker_id"),
            models.Index(fields=["project", "item", "id"], name="annotation_project_item_id"),
        ]

    def __str__(self) -> str:
        return f"annotation {self.pk} of item {self.item_id} by {self.worker_id}"


class ItemLease(models.Model):
    """An item shown to a local annotator is reserved for them until ``expires_at`` (renewed
    while their page is open): the work queue counts live leases as taken slots, so near the end
    of a project nobody is shown an item others are already working on
    (``annotation.services.work_queue``)."""

    # item: no index of its own, uniq_item_lease (item, worker) leads with it.
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="leases",
                             db_index=False)
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="leases")
    expires_at = models.DateTimeField()
    # When the work queue last handed the item to the worker (a page load, or the next item in
    # a submit's answer; a renewal keeps it): their answer's ``Annotation.served_at``, read by
    # the INSERT that stores it. NULL for a lease that only a renewal wrote.
    served_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "worker"], name="uniq_item_lease"),
        ]

    def __str__(self) -> str:
        return f"item {self.item_id} leased to {self.worker_id} until {self.expires_at}"


class Flag(models.Model):
    """A reason for a reviewer to look at an annotation, an assignment or a worker."""

    class Status(models.TextChoices):
        OPEN = "open", "open"
        UPHELD = "upheld", "upheld (work rejected)"
        DISMISSED = "dismissed", "dismissed (work approved)"

    class RaisedBy(models.TextChoices):
        """Which component raised the flag: each one replaces only its own flags."""

        QC = "qc", "quality control run"
        COLLECTION = "collection", "MTurk collection"
        REVIEWER = "reviewer", "reviewer"
        ANNOTATOR = "annotator", "annotator (problem report)"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="flags")
    annotation = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="flags")
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.CASCADE,
                               related_name="flags")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="flags")
    reason = models.CharField(max_length=40)
    raised_by = models.CharField(max_length=12, choices=RaisedBy.choices, default=RaisedBy.QC)
    score = models.FloatField(default=0.0)
    detail = models.TextField(blank=True)
    # Identifies what was flagged for what, so re-running QC never duplicates a flag.
    fingerprint = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-score", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "fingerprint"], name="uniq_flag"),
        ]
        indexes = [models.Index(fields=["project", "status"], name="flag_project_status")]

    def __str__(self) -> str:
        return f"{self.reason} ({self.score:.2f})"


class Qualification(models.Model):
    """A qualification test (questions + answer key) and its MTurk qualification type."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE,
                                related_name="qualifications")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # [{"id": "q1", "text": "...", "options": ["1", ..., "5"], "answer": "5"}, ...]
    questions = models.JSONField(default=list)
    passing_score = models.PositiveSmallIntegerField()
    provider_qualification_type_id = models.CharField(max_length=64, null=True, blank=True,
                                                      unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class StatusEvent(models.Model):
    """The audit trail: one row for every state change of a batch, HIT, assignment, worker,
    annotation or flag, whoever made it (``actor`` is the staff user; empty for jobs)."""

    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="events")
    hit = models.ForeignKey(Hit, null=True, blank=True, on_delete=models.CASCADE,
                            related_name="events")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="events")
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.CASCADE,
                               related_name="events")
    annotation = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="events")
    flag = models.ForeignKey(Flag, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=40)
    old_status = models.CharField(max_length=20, blank=True)
    new_status = models.CharField(max_length=20, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.old_status}→{self.new_status}"




class ProjectCount(models.Model):
    """How many items and answers a project has: the home page's and the review list's totals,
    read in one index probe per project instead of counting 1,000,000 answers per request.

    Kept by database triggers (migration 0023_h21_pages), not by Python: every writer of an
    item or an answer — the submit's hand-written SQL, imports' bulk inserts, collections,
    deletions and the cascades of a deleted project — keeps the count in the statement that
    changes the rows, so no code path can forget it. PostgreSQL: one statement-level trigger per
    INSERT/DELETE adds the statement's rows per project into one of 8 rows (``shard``) chosen by
    the backend's pid, so concurrent submits do not queue on one counter row; SQLite (writers
    are serialised) keeps shard 0. A project's total is the sum of its shards
    (``annotation.selectors.projects.project_list_with_progress``). Neither an item's nor an
    answer's project ever changes, so an UPDATE needs no trigger.
    """

    project = models.ForeignKey(Project, on_delete=models.DO_NOTHING, db_constraint=False,
                                db_index=False, related_name="+")
    shard = models.PositiveSmallIntegerField()
    items = models.BigIntegerField(default=0)
    annotations = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "shard"], name="uniq_project_count"),
        ]

    def __str__(self) -> str:
        return f"project {self.project_id} shard {self.shard}: {self.items}/{self.annotations}"


class Job(models.Model):
    """Long staff work run in the background with its progress: QC, exports, splits, imports.

    Written only by ``annotation.services.staff_jobs`` (see docs/jobs.md): a page or a command
    calls ``job_start``, a Celery task (inline without a broker) runs it, the runner reports
    progress and the job ends ``done`` with its ``result`` (and ``result_path`` for a
    download) or ``failed`` with its ``error``. At most one job of a kind, project and
    parameters is queued or running at a time (``uniq_active_job``): two clicks start one job.
    """

    class Kind(models.TextChoices):
        QC = "qc", "quality control"
        EXPORT = "export", "export"
        SPLITS = "splits", "train/dev/test split"
        IMPORT = "import", "import"
        APPROVALS = "approvals", "approval of the unflagged work"

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE,
                                related_name="jobs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    params = models.JSONField(default=dict, blank=True)
    # sha256 of the canonical JSON of ``params``: what "the same job" means in the constraint.
    params_key = models.CharField(max_length=64)
    progress_done = models.PositiveBigIntegerField(default=0)
    progress_total = models.PositiveBigIntegerField(null=True, blank=True)
    progress_message = models.CharField(max_length=300, blank=True)
    result = models.JSONField(null=True, blank=True)
    # A file the job wrote for download (an export's zip), under UNPACK_JOB_FILES_DIR.
    result_path = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Touched by every progress report: a running job whose heartbeat stopped has died.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "project", "params_key"],
                condition=Q(state__in=("queued", "running")),
                name="uniq_active_job"),
        ]
        indexes = [models.Index(fields=["project", "kind", "state"], name="job_project_kind")]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.state})"

    @property
    def active(self) -> bool:
        return self.state in (self.State.QUEUED, self.State.RUNNING)


class WorkerProjectBlock(models.Model):
    """A worker blocked from one project only (a block "everywhere" is ``Worker.is_blocked``,
    which is also sent to the provider's block list). The app refuses them this project's work
    and holds their pending work back from bulk approvals (``selectors/blocks.py``, the rule)."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="project_blocks")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="worker_blocks")
    reason = models.TextField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["worker", "project"],
                                               name="uniq_worker_project_block")]

    def __str__(self) -> str:
        return f"{self.worker} blocked from {self.project_id}"


class Invite(models.Model):
    """A single-use link that lets one person make their own account with ``role`` (and
    access to ``projects``) once, before ``expires_at`` and unless revoked
    (``services/invites.py``). Only the
    SHA-256 of the link's token is stored: the link cannot be rebuilt from the database."""

    token_sha256 = models.CharField(max_length=64, unique=True)
    role = models.CharField(max_length=20)
    projects = models.ManyToManyField(Project, blank=True, related_name="invites")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.OneToOneField(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="invite")
    # Withdrawn by the team before anyone used it (``invite_revoke``): the link answers as a
    # used one does (410), saying it was withdrawn.
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")

    def __str__(self) -> str:
        return f"invite {self.pk} ({self.role})"


class ItemReference(models.Model):
    """The reference a reviewer settled for one item after comparing its answers
    (adjudication): one of the answers picked, or a text / rating the reviewer wrote. Set only
    by ``services/adjudication.py`` (each change also a ``reference_set`` audit row); exports
    write it to ``adjudicated.jsonl`` beside the dataset's files."""

    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="reference")
    # The picked answer; NULL when the reviewer wrote the reference (or the answer was deleted).
    chosen = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    text = models.TextField(blank=True)  # text kinds: the reference sentence(s)
    rating = models.FloatField(null=True, blank=True)  # plausibility: the reference rating
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"reference of item {self.item_id}"
