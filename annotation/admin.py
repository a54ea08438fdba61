"""Django admin for every model: search, filters, raw payloads read-only.

The work-tracking models (batches, HITs, assignments, bonuses, annotations, flags, workers,
status events) are read-only here: every change to them goes through a service, which keeps
the provider in sync and writes the audit trail. Their admin actions (approve, reject, bonus,
block, unblock, dismiss) call ``annotation.services.decisions`` like every other way in.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import ValidationError
from django.db import models as django_models
from django.template.response import TemplateResponse

from . import models
from .admin_scale import ScaledChangeListMixin
from .pseudonyms import is_pseudonym
from .roles import decision_action, may, may_see_worker_ids
from .services import decisions
from .services.annotations import item_filled_marks_kept
from .services.projects import (
    EDITABLE_FIELDS,
    project_create,
    project_fields_validate,
    project_update,
)


class ReadOnlyWorkMixin:
    """View only: no add, change or delete form (changes are made by the services)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_decide_permission(self, request):
        """The decision actions (``permissions=["decide"]``) follow ``annotation/roles.py``,
        as the review pages and the API do: ``change_<model>``, not the changelist's view."""
        return may(request.user, decision_action(self.model))


class RawWorkerIdsMixin:
    """Workers' raw provider ids (``Worker.external_id``: MTurk WorkerIds, Prolific PIDs) only
    for the roles that may see them (``roles.may_see_worker_ids``): for everyone else the
    admin neither shows them (columns, fields) nor finds anything by one (search, filters in
    the query string: a disallowed lookup is a 400)."""

    #: Search fields and query-string lookups that reveal or match a raw id.
    raw_worker_id_lookups: tuple[str, ...] = ("worker__external_id",)

    def _reveals_raw_id(self, name: str) -> bool:
        return any(name == lookup or name.startswith(lookup + "__")
                   for lookup in self.raw_worker_id_lookups)

    def get_search_fields(self, request):
        fields = super().get_search_fields(request)
        if may_see_worker_ids(request.user):
            return fields
        return tuple(name for name in fields if not self._reveals_raw_id(name.lstrip("^=@")))

    def lookup_allowed(self, lookup, value, request=None):
        if self._reveals_raw_id(lookup) and (request is None
                                             or not may_see_worker_ids(request.user)):
            return False
        return super().lookup_allowed(lookup, value, request)


class MessageForm(forms.Form):
    message = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}),
                              help_text="what the worker reads")


class RejectionForm(MessageForm):
    rejection_category = forms.CharField(
        required=False, max_length=32,
        help_text="Prolific (required there, with a message of 100+ characters): a rejection "
                  "category, e.g. LOW_EFFORT, FAILED_INSTRUCTIONS, NO_DATA, OTHER")


class OptionalMessageForm(forms.Form):
    message = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))


class NoteForm(forms.Form):
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))


class BonusForm(forms.Form):
    amount_cents = forms.IntegerField(min_value=1, max_value=decisions.MAX_BONUS_CENTS)
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))
    again = forms.BooleanField(required=False,
                               help_text="a second bonus for an assignment that got one")


def decide_each(modeladmin, request, queryset, *, title: str, form_class, decide):
    """An admin action that asks for its text first (an intermediate page), then calls
    ``decide(obj, actor, **form data)`` for every selected row; a refusal is reported per row
    and changes nothing for that row."""
    form = form_class(request.POST if request.POST.get("apply") == "yes" else None)
    if not form.is_bound or not form.is_valid():
        return TemplateResponse(request, "admin/annotation/decision_form.html", {
            **modeladmin.admin_site.each_context(request), "title": title, "form": form,
            "objects": list(queryset), "action": request.POST.get("action", ""),
            "opts": modeladmin.model._meta,
        })
    done = 0
    for obj in queryset:
        try:
            decide(obj, request.user, **form.cleaned_data)
        except ValidationError as error:
            modeladmin.message_user(request, f"{obj}: {'; '.join(error.messages)}",
                                    messages.ERROR)
        else:
            done += 1
    modeladmin.message_user(request, f"{title}: {done} of {len(queryset)} done.")
    return None


def decide_all(modeladmin, request, queryset, *, title: str, form_class, decide):
    """Like ``decide_each`` for a service deciding the whole selection at once
    (``decide(ids, actor, **form data)``): all done, or a refusal and nothing changed."""
    form = form_class(request.POST if request.POST.get("apply") == "yes" else None)
    if not form.is_bound or not form.is_valid():
        return TemplateResponse(request, "admin/annotation/decision_form.html", {
            **modeladmin.admin_site.each_context(request), "title": title, "form": form,
            "objects": list(queryset), "action": request.POST.get("action", ""),
            "opts": modeladmin.model._meta,
        })
    ids = list(queryset.values_list("pk", flat=True))
    try:
        decide(ids, request.user, **form.cleaned_data)
    except ValidationError as error:
        modeladmin.message_user(request, f"{title}: nothing done: {'; '.join(error.messages)}",
                                messages.ERROR)
    else:
        modeladmin.message_user(request, f"{title}: {len(ids)} of {len(ids)} done.")
    return None


class BlockForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}),
                             help_text="the provider shows it to the worker")
    scope = forms.ChoiceField(choices=[("everywhere", "everywhere (and the provider's block "
                                                      "list)"),
                                       ("project", "this project only")])
    project = forms.ModelChoiceField(queryset=models.Project.objects.order_by("slug"),
                                     required=False, to_field_name="slug",
                                     help_text="with 'this project only'")
    pending = forms.ChoiceField(choices=[("leave", "leave their pending work for review"),
                                         ("reject", "reject their pending work")])
    message = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                              help_text="with 'reject': what the worker reads (Prolific: "
                                        "100+ characters)")
    rejection_category = forms.CharField(required=False, help_text="Prolific, with 'reject'")


class PseudonymSearchMixin:
    """The admin's search also finds a worker by the pseudonym every staff page shows
    (``Worker.anonymous_id``, e.g. ``w6eb9818d1391``): rows of that worker (the ``worker``
    path of ``pseudonym_search_field``). A pseudonym is a keyed hash, so it is matched by
    computing each worker's, once per search of one."""

    pseudonym_search_field = "worker"

    def get_search_results(self, request, queryset, search_term):
        from .pseudonyms import is_pseudonym

        term = search_term.strip()
        if not is_pseudonym(term):
            return super().get_search_results(request, queryset, search_term)
        ids = [worker.pk for worker in models.Worker.objects.only("provider", "external_id")
               .iterator() if worker.anonymous_id == term]
        return queryset.filter(**{f"{self.pseudonym_search_field}__in": ids}), False


class ReadOnlyRawMixin:
    """Raw payloads and provenance come from workers or files; they are evidence, not forms."""

    raw_fields_read_only = ("payload", "provenance", "edit_operations", "client_warnings",
                            "overridden_warnings", "server_warnings", "raw_answer", "detail")

    def get_readonly_fields(self, request, obj=None):
        own = tuple(super().get_readonly_fields(request, obj))
        model_fields = {field.name for field in self.model._meta.get_fields()}
        return own + tuple(name for name in self.raw_fields_read_only if name in model_fields)


class ProjectAdminForm(forms.ModelForm):
    """The project's settings checked by the one validation the console, the API and the CLI
    use (``project_fields_validate``): bad redundancy or thresholds are form errors beside
    their fields, never a saved row that breaks other pages."""

    class Meta:
        model = models.Project
        fields = "__all__"  # noqa: DJ007 — the admin shows every field of a project

    def clean(self):
        data = super().clean()
        try:
            project_fields_validate({name: data[name] for name in EDITABLE_FIELDS
                                     if name in data})
        except ValidationError as error:
            for name, field_errors in error.message_dict.items():
                self.add_error(name if name in self.fields else None, field_errors)
        return data


@admin.register(models.Project)
class ProjectAdmin(admin.ModelAdmin):
    form = ProjectAdminForm
    list_display = ("slug", "name", "kind", "status", "reward_cents", "created_at")
    list_filter = ("kind", "status")
    search_fields = ("slug", "name")
    filter_horizontal = ("allowed_users", "allowed_groups")

    def get_readonly_fields(self, request, obj=None):
        # Slug and kind are fixed once the project exists (its URLs, its items' shape).
        return ("slug", "kind") if obj is not None else ()

    def save_model(self, request, obj, form, change):
        # Through the services the console and the API use: their validation, and the items'
        # "filled" marks when the redundancy changes.
        if not change:
            created = project_create(slug=obj.slug, kind=obj.kind, name=obj.name, **{
                name: form.cleaned_data[name] for name in EDITABLE_FIELDS
                if name in form.cleaned_data and name != "name"})
            obj.pk = created.pk
            obj.created_at = created.created_at
            return None
        return project_update(project=obj, **{name: form.cleaned_data[name]
                                              for name in form.changed_data
                                              if name in EDITABLE_FIELDS})


@admin.register(models.ImportRecord)
class ImportRecordAdmin(admin.ModelAdmin):
    list_display = ("project", "format", "path", "split", "rows", "created_at")
    list_filter = ("format", "project")
    search_fields = ("path", "sha256")


@admin.register(models.Document)
class DocumentAdmin(admin.ModelAdmin):
    # A page URL typed without a scheme is https (Django 6's default; said explicitly now).
    formfield_overrides = {django_models.URLField: {"assume_scheme": "https"}}
    list_display = ("external_id", "title", "project")
    list_filter = ("project",)
    search_fields = ("external_id", "title")


@admin.register(models.TargetSentence)
class TargetSentenceAdmin(admin.ModelAdmin):
    list_display = ("id", "document", "paragraph_index", "start_byte", "end_byte")
    search_fields = ("text", "document__title")
    list_select_related = ("document",)
    raw_id_fields = ("document",)


class DialogueTurnInline(admin.TabularInline):
    model = models.DialogueTurn
    extra = 0


@admin.register(models.Dialogue)
class DialogueAdmin(admin.ModelAdmin):
    list_display = ("external_id", "title", "section_title", "source", "source_split",
                    "project")
    list_filter = ("project", "source", "source_split")
    search_fields = ("external_id", "title", "section_title")
    inlines = [DialogueTurnInline]


@admin.register(models.DialogueTurn)
class DialogueTurnAdmin(admin.ModelAdmin):
    list_display = ("dialogue", "order", "question", "answer")
    search_fields = ("question", "answer", "dialogue__external_id")
    list_select_related = ("dialogue",)
    raw_id_fields = ("dialogue",)


class ClozeFillerInline(admin.TabularInline):
    model = models.ClozeFiller
    extra = 0


@admin.register(models.ClozeItem)
class ClozeItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "resolved_pattern", "article_title", "project")
    list_filter = ("project", "resolved_pattern")
    search_fields = ("external_id", "article_title", "sentence")
    inlines = [ClozeFillerInline]


@admin.register(models.ClozeFiller)
class ClozeFillerAdmin(admin.ModelAdmin):
    list_display = ("cloze", "position", "text", "is_original")
    list_filter = ("is_original",)
    search_fields = ("text", "cloze__external_id")
    list_select_related = ("cloze",)
    raw_id_fields = ("cloze",)


@admin.register(models.ComplexSentence)
class ComplexSentenceAdmin(admin.ModelAdmin):
    list_display = ("external_id", "text", "project")
    list_filter = ("project",)
    search_fields = ("external_id", "text")
    filter_horizontal = ("facts",)


@admin.register(models.Fact)
class FactAdmin(admin.ModelAdmin):
    list_display = ("subject", "property", "object", "project")
    list_filter = ("project", "property")
    search_fields = ("subject", "property", "object")


@admin.register(models.Item)
class ItemAdmin(ScaledChangeListMixin, admin.ModelAdmin):
    list_display = ("external_id", "project", "split", "group_key", "is_gold", "created_at")
    list_filter = ("project", "split", "is_gold")
    search_fields = ("external_id", "group_key")
    list_select_related = ("project",)
    raw_id_fields = ("target_sentence", "turn", "filler", "complex_sentence")
    readonly_fields = ("filled",)

    def save_model(self, request, obj, form, change):
        # Another split needs another number of answers: the item's "filled" mark follows.
        with item_filled_marks_kept([obj.pk] if change else []):
            super().save_model(request, obj, form, change)


@admin.register(models.SplitManifest)
class SplitManifestAdmin(ReadOnlyWorkMixin, admin.ModelAdmin):
    """Read-only: one service makes manifests (``project_split``: the console's splits page,
    ``make_splits``, the API), moving the items with them; a hand-made manifest would claim a
    split the items are not in."""

    list_display = ("project", "rule", "seed", "frozen", "created_at")
    list_filter = ("project", "rule", "frozen")


@admin.register(models.Worker)
class WorkerAdmin(PseudonymSearchMixin, RawWorkerIdsMixin, ReadOnlyWorkMixin, admin.ModelAdmin):
    list_display = ("pseudonym", "external_id", "provider", "user", "is_blocked", "created_at")
    list_select_related = ("user",)  # nullable: Django's automatic select_related skips it
    pseudonym_search_field = "pk"
    list_filter = ("provider", "is_blocked")
    search_fields = ("external_id", "user__username")
    raw_id_fields = ("user",)
    actions = ["block", "unblock"]
    raw_worker_id_lookups = ("external_id",)

    @admin.display(description="pseudonym")
    def pseudonym(self, worker):
        return worker.anonymous_id

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        if may_see_worker_ids(request.user):
            return shown
        return tuple(name for name in shown if name != "external_id")

    def get_fields(self, request, obj=None):
        fields = list(dict.fromkeys([*super().get_fields(request, obj), "pseudonym"]))
        if may_see_worker_ids(request.user):
            return fields
        return [name for name in fields if name != "external_id"]

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), "pseudonym")

    @admin.action(description="Block the selected workers",
                  permissions=["decide"])
    def block(self, request, queryset):
        return decide_each(self, request, queryset, title="Block workers", form_class=BlockForm,
                           decide=lambda worker, actor, project, **choices: decisions.worker_block(
                               worker_id=worker.pk, actor=actor,
                               project_id=project.pk if project else None, **choices))

    @admin.action(description="Unblock the selected workers",
                  permissions=["decide"])
    def unblock(self, request, queryset):
        return decide_each(self, request, queryset, title="Unblock workers", form_class=NoteForm,
                           decide=lambda worker, actor, note: decisions.worker_unblock(
                               worker_id=worker.pk, actor=actor, reason=note))


class HitInline(admin.TabularInline):
    model = models.Hit
    extra = 0
    fields = ("provider_hit_id", "status", "max_assignments", "expires_at", "error")
    readonly_fields = fields
    show_change_link = True


@admin.register(models.Batch)
class BatchAdmin(ReadOnlyWorkMixin, admin.ModelAdmin):
    list_display = ("id", "project", "title", "provider", "live", "status", "created_at")
    list_filter = ("project", "provider", "status", "live")
    search_fields = ("title", "provider_hit_type_id")
    inlines = [HitInline]


@admin.register(models.Hit)
class HitAdmin(ReadOnlyWorkMixin, admin.ModelAdmin):
    list_display = ("id", "batch", "provider_hit_id", "status", "max_assignments", "created_at")
    list_filter = ("status", "batch__project")
    search_fields = ("provider_hit_id", "unique_request_token")
    list_select_related = ("batch",)
    raw_id_fields = ("batch",)


@admin.register(models.Assignment)
class AssignmentAdmin(PseudonymSearchMixin, RawWorkerIdsMixin,
                ScaledChangeListMixin, ReadOnlyWorkMixin,
                      ReadOnlyRawMixin, admin.ModelAdmin):
    list_display = ("provider_assignment_id", "hit", "worker", "status", "submitted_at")
    list_filter = ("status",)
    search_fields = ("provider_assignment_id", "worker__external_id", "hit__provider_hit_id")
    list_select_related = ("hit", "worker")
    raw_id_fields = ("hit", "worker")
    actions = ["approve", "reject", "bonus"]

    @admin.action(description="Approve the selected assignments (whole HITs)",
                  permissions=["decide"])
    def approve(self, request, queryset):
        if queryset.count() > 1:
            # Several at once is a bulk approval: one service, which never pays a blocked
            # worker (all or none, as on the API).
            return decide_all(self, request, queryset, title="Approve assignments",
                              form_class=OptionalMessageForm,
                              decide=lambda ids, actor, message: decisions.assignments_approve(
                                  assignment_ids=ids, actor=actor, message=message))
        return decide_each(self, request, queryset, title="Approve assignments",
                           form_class=OptionalMessageForm,
                           decide=lambda assignment, actor, message: decisions.assignment_approve(
                               assignment_id=assignment.pk, actor=actor, message=message))

    @admin.action(description="Reject the selected assignments (whole HITs)",
                  permissions=["decide"])
    def reject(self, request, queryset):
        return decide_each(self, request, queryset, title="Reject assignments",
                           form_class=RejectionForm,
                           decide=lambda assignment, actor, message, rejection_category:
                           decisions.assignment_reject(
                               assignment_id=assignment.pk, actor=actor, message=message,
                               rejection_category=rejection_category))

    @admin.action(description="Pay a bonus for the selected assignments",
                  permissions=["decide"])
    def bonus(self, request, queryset):
        return decide_each(self, request, queryset, title="Pay bonuses", form_class=BonusForm,
                           decide=lambda assignment, actor, **data: decisions.bonus_create(
                               assignment_id=assignment.pk, actor=actor, **data))


@admin.register(models.Bonus)
class BonusAdmin(ReadOnlyWorkMixin, admin.ModelAdmin):
    list_display = ("assignment", "amount_cents", "sent_at", "created_at")
    search_fields = ("assignment__provider_assignment_id", "unique_request_token")
    raw_id_fields = ("assignment",)


@admin.register(models.Annotation)
class AnnotationAdmin(PseudonymSearchMixin, RawWorkerIdsMixin,
                ScaledChangeListMixin, ReadOnlyWorkMixin,
                      ReadOnlyRawMixin, admin.ModelAdmin):
    list_display = ("id", "project", "item", "worker", "source", "category", "rating",
                    "skipped", "review_status", "submitted_at")
    list_filter = ("project", "source", "category", "skipped", "review_status")
    # Whole values on indexed columns (get_search_results): a substring of a million answers'
    # text is a scan of all of them per search.
    search_fields = ("=id", "=worker__external_id", "=item__external_id")
    search_help_text = ("An answer id, a worker's id (e.g. an MTurk WorkerId) or an item's id "
                        "in its dataset, whole.")
    list_select_related = ("project", "item", "worker")
    raw_id_fields = ("item", "worker", "assignment")
    actions = ["approve", "reject"]

    def get_search_results(self, request, queryset, search_term):
        """Exact matches through indexes: the answer id (primary key), the workers and items
        of that external id (subqueries: each index probe, then the answers' own indexes)."""
        term = search_term.strip()
        if not term:
            return queryset, False
        if is_pseudonym(term):  # a worker by the name staff pages show (PseudonymSearchMixin)
            return super().get_search_results(request, queryset, search_term)
        # The ids first (two small reads): an OR of subqueries is planned as a scan of every
        # answer; an OR of id lists is one index range per column.
        # A raw worker id finds answers only for the roles that may see raw ids (a reviewer
        # could otherwise map a WorkerId to its answers).
        worker_ids = (list(models.Worker.objects.filter(external_id=term)
                           .values_list("pk", flat=True))
                      if may_see_worker_ids(request.user) else [])
        item_ids = list(models.Item.objects.filter(external_id=term)
                        .values_list("pk", flat=True)[:1000])
        match = (django_models.Q(worker_id__in=worker_ids)
                 | django_models.Q(item_id__in=item_ids))
        if term.isdigit() and int(term) < 2**63:
            match |= django_models.Q(pk=int(term))
        return queryset.filter(match), False

    def has_delete_permission(self, request, obj=None):
        # Deleting a hostile or broken answer is cleanup, not a decision (Django's own rule).
        return admin.ModelAdmin.has_delete_permission(self, request, obj)

    @admin.action(description="Approve the selected answers (inside a HIT: the whole HIT)",
                  permissions=["decide"])
    def approve(self, request, queryset):
        return decide_each(self, request, queryset, title="Approve answers",
                           form_class=OptionalMessageForm,
                           decide=lambda annotation, actor, message: decisions.annotation_approve(
                               annotation_id=annotation.pk, actor=actor, message=message))

    @admin.action(description="Reject the selected answers (inside a HIT: the whole HIT)",
                  permissions=["decide"])
    def reject(self, request, queryset):
        return decide_each(self, request, queryset, title="Reject answers",
                           form_class=MessageForm,
                           decide=lambda annotation, actor, message: decisions.annotation_reject(
                               annotation_id=annotation.pk, actor=actor, message=message))


@admin.register(models.Flag)
class FlagAdmin(PseudonymSearchMixin, RawWorkerIdsMixin,
                ScaledChangeListMixin, ReadOnlyWorkMixin, ReadOnlyRawMixin,
                admin.ModelAdmin):
    list_display = ("id", "project", "reason", "score", "status", "worker", "annotation",
                    "created_at")
    list_filter = ("project", "reason", "status")
    # Whole values: a reason, a worker's id; no substring scan of every flag's detail.
    search_fields = ("=reason", "=worker__external_id")
    search_help_text = "A reason (e.g. too_fast) or a worker's id, whole."
    # worker and annotation are nullable: Django's automatic select_related skips them and
    # the list read each row's in a query of its own.
    list_select_related = ("project", "worker", "annotation")
    # Newest first, by primary key: the page is an index range (by score, every flag was
    # joined to its answer and sorted before the first 100 were shown).
    ordering = ("-id",)
    raw_id_fields = ("annotation", "worker", "assignment", "reviewed_by")
    actions = ["dismiss"]

    @admin.action(description="Dismiss the selected flags (the work is fine)",
                  permissions=["decide"])
    def dismiss(self, request, queryset):
        return decide_each(self, request, queryset, title="Dismiss flags", form_class=NoteForm,
                           decide=lambda flag, actor, note: decisions.flag_dismiss(
                               flag_id=flag.pk, actor=actor, note=note))


@admin.register(models.Qualification)
class QualificationAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "passing_score", "provider_qualification_type_id")
    list_filter = ("project",)
    search_fields = ("name",)


@admin.register(models.StatusEvent)
class StatusEventAdmin(ScaledChangeListMixin, ReadOnlyWorkMixin, ReadOnlyRawMixin,
                       admin.ModelAdmin):
    list_display = ("at", "kind", "batch", "hit", "assignment", "worker", "flag", "actor",
                    "old_status", "new_status")
    # Every one is nullable: without this, one query per row and column.
    list_select_related = ("batch", "hit", "assignment", "worker", "flag", "actor")
    list_filter = ("kind",)
    raw_id_fields = ("batch", "hit", "assignment", "worker", "annotation", "flag", "actor")


class SuperuserOnlyUserAdmin(UserAdmin):
    """Accounts in the admin are for superusers only. Researchers hold ``add_user`` and
    ``change_user`` to run the console's team page (``services/accounts.py``), which gives only
    the roles it offers; Django's user admin would let them edit anyone's groups, permissions
    and superuser flag, their own included."""

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), SuperuserOnlyUserAdmin)
