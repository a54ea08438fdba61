from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction
from django.db.models import Q

from qc import flags, livechecks

from ..models import Annotation, Item, Project, Split, TaskKind
from .adaptive import adaptive_policy
from .annotations import item_filled_marks_kept

DEFAULT_REDUNDANCY = {
    # From the papers: decontext 1/5/5, CLAIRE 2/4/4 ratings per filler, sluices 1/1/3.
    TaskKind.DECONTEXT: {"train": 1, "dev": 5, "test": 5},
    TaskKind.PLAUSIBILITY: {"train": 2, "dev": 4, "test": 4},
    TaskKind.REWRITE: {"train": 1, "dev": 1, "test": 1},
    TaskKind.SPLIT_REPHRASE: {"train": 1, "dev": 3, "test": 3},
    TaskKind.SLUICE: {"train": 1, "dev": 1, "test": 3},
}


def validate_redundancy(redundancy) -> dict:
    if not isinstance(redundancy, dict):
        raise ValidationError("redundancy: must be an object such as {\"train\": 1, \"dev\": 5}")
    unknown = set(redundancy) - set(Split.values)
    if unknown:
        raise ValidationError(f"redundancy: unknown split(s) {sorted(unknown)}")
    for split, count in redundancy.items():
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 50:
            raise ValidationError(f"redundancy[{split}]: must be an integer from 1 to 50")
    return redundancy


def validate_flag_settings(overrides) -> dict:
    """``overrides`` of the QC flag thresholds (``qc.flags.FlagSettings``), or ValidationError:
    an object whose keys are settings and whose values have the setting's type."""
    if not isinstance(overrides, dict):
        raise ValidationError("flag_settings: must be an object of threshold overrides")
    try:
        flags.FlagSettings.from_dict(overrides)
    except ValueError as error:
        raise ValidationError(f"flag_settings: {error}") from None
    return overrides


def validate_live_check_settings(overrides) -> dict:
    """Overrides of the live checks' thresholds (``qc.livechecks.thresholds``: keys such as
    ``"sluice_too_short.min_tokens"``), or ValidationError naming the key."""
    try:
        livechecks.validate_overrides(overrides)
    except ValueError as error:
        raise ValidationError(f"live_check_settings: {error}") from None
    return overrides


def validate_reward_cents(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:
        raise ValidationError("reward_cents: must be a whole number of cents from 0 to 1000000")
    return value


def validate_estimated_minutes(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 24 * 60:
        raise ValidationError("estimated_minutes: must be a whole number of minutes from 1 "
                              "to 1440, or empty")
    return value


def validate_status(value) -> str:
    if value not in Project.Status.values:
        raise ValidationError(f"status: must be one of {', '.join(Project.Status.values)}")
    return value


#: The largest share of a worker's items that may be gold: the rest must be the project's work.
MAX_GOLD_RATE = 0.5


def validate_gold_rate(value) -> float:
    """The share of the items served to each worker that are gold items, from 0 (none) to
    :data:`MAX_GOLD_RATE`."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            0 <= value <= MAX_GOLD_RATE):
        raise ValidationError(f"gold_rate: must be a share from 0 to {MAX_GOLD_RATE} of the "
                              "items each worker is served, e.g. 0.1 for one in ten")
    return float(value)


def validate_gold_failures_stop(value) -> bool:
    if not isinstance(value, bool):
        raise ValidationError("gold_failures_stop: must be true or false")
    return value


#: The largest budget the column holds (about 21 million in the currency's main unit).
MAX_BUDGET_CENTS = 2_147_483_647


def validate_budget_cents(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BUDGET_CENTS:
        raise ValidationError("budget_cents: must be empty (no budget) or a whole number of the "
                              f"currency's smallest unit (cents, pence) from 0 to "
                              f"{MAX_BUDGET_CENTS}")
    return value


def validate_budget_currency(value) -> str:
    if not isinstance(value, str) or (value and (len(value) != 3 or not value.isalpha()
                                                 or not value.isupper())):
        raise ValidationError("budget_currency: must be a three-letter currency code such as "
                              "USD or GBP (what the provider pays in), or empty")
    return value


def budget_errors(budget_cents, budget_currency) -> dict[str, list[str]]:
    """A budget needs its currency (the provider's the batches are paid in)."""
    if budget_cents is not None and not budget_currency:
        return {"budget_currency": ["budget_currency: a budget needs its currency, e.g. USD "
                                    "for MTurk"]}
    return {}


SETTINGS_VALIDATORS = {"redundancy": validate_redundancy, "flag_settings": validate_flag_settings,
                       "live_check_settings": validate_live_check_settings,
                       "reward_cents": validate_reward_cents,
                       "estimated_minutes": validate_estimated_minutes,
                       "status": validate_status, "gold_rate": validate_gold_rate,
                       "gold_failures_stop": validate_gold_failures_stop,
                       "budget_cents": validate_budget_cents,
                       "budget_currency": validate_budget_currency}

#: What a project page, the admin, the API and the CLI may set on a project (slug and kind only
#: when creating it).
EDITABLE_FIELDS = ("name", "instructions", "redundancy", "reward_cents", "estimated_minutes",
                   "live_check_settings", "flag_settings", "status", "workers_everyone",
                   "licence", "attribution", "gold_rate", "gold_failures_stop",
                   "budget_cents", "budget_currency")


def project_fields_validate(fields: dict) -> dict:
    """The one validation of a project's settings: every field of ``fields`` with a validator
    is checked; all the errors at once as ``ValidationError({field: [message]})`` (a form puts
    each beside its field; the API answers 400 with them)."""
    errors: dict[str, list[str]] = {}
    for name, validate in SETTINGS_VALIDATORS.items():
        if name in fields:
            try:
                validate(fields[name])
            except ValidationError as error:
                errors[name] = error.messages
    if "name" in fields and not str(fields["name"] or "").strip():
        errors["name"] = ["name: must not be empty"]
    if errors:
        raise ValidationError(errors)
    return fields


def project_settings_errors(project: Project) -> list[str]:
    """What is wrong with a stored project's settings (rows written before the validation, or
    by hand in the database): one message per field, empty when it is sound. Pages show these
    on that project alone instead of failing."""
    try:
        project_fields_validate({name: getattr(project, name) for name in SETTINGS_VALIDATORS})
    except ValidationError as error:
        return [message for messages in error.message_dict.values() for message in messages]
    return []


@transaction.atomic
def project_create(*, slug: str, kind: str, name: str, **fields) -> Project:
    """A new project; ``fields`` from :data:`EDITABLE_FIELDS` (the redundancy defaults to the
    kind's). ValidationError (by field) on bad input or a slug in use; nothing is written then."""
    errors: dict[str, list[str]] = {}
    if kind not in TaskKind.values:
        errors["kind"] = [f"kind: unknown task kind {kind!r}"]
    try:
        validate_slug(slug)
    except ValidationError as error:
        errors["slug"] = error.messages
    else:
        if Project.objects.filter(slug=slug).exists():
            errors["slug"] = [f"slug: a project {slug!r} exists already"]
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ValueError(f"not project settings: {sorted(unknown)}")  # a caller's bug
    if fields.get("redundancy") is None and kind in TaskKind.values:
        fields["redundancy"] = dict(DEFAULT_REDUNDANCY[kind])
    try:
        project_fields_validate({"name": name, **fields})
    except ValidationError as error:
        errors.update(error.message_dict)
    else:
        errors.update(budget_errors(fields.get("budget_cents"), fields.get("budget_currency")))
    if errors:
        raise ValidationError(errors)
    project = Project(slug=slug, kind=kind, name=name.strip(), **fields)
    project.full_clean()
    project.save()
    return project


@transaction.atomic
def project_get_or_create(*, slug: str, kind: str, name: str | None = None,
                          redundancy: dict | None = None) -> tuple[Project, bool]:
    """Return the project ``slug``, creating it with the kind's default redundancy.

    An existing project of another kind is an error: importing CLAIRE rows into a CANARD
    project would mix incompatible items.
    """
    if kind not in TaskKind.values:
        raise ValidationError(f"kind: unknown task kind {kind!r}")
    project = Project.objects.select_for_update().filter(slug=slug).first()
    if project is not None:
        if project.kind != kind:
            raise ValidationError(
                f"project {slug!r} is a {project.kind} project, not {kind}"
            )
        return project, False
    project = Project.objects.create(
        slug=slug,
        kind=kind,
        name=name or slug.replace("-", " ").capitalize(),
        redundancy=validate_redundancy(dict(redundancy or DEFAULT_REDUNDANCY[kind])),
    )
    return project, True


@transaction.atomic
def project_update(*, project: Project, **fields) -> Project:
    """Change the project's settings. A new redundancy changes how many answers fill an item:
    the "filled" marks of its items with counted answers in the splits whose number changed
    follow (an item without any is never marked; an update that restates the redundancy, as an
    API PUT does, recounts nothing). A new adaptive policy (``flag_settings``'s
    ``adaptive_redundancy``: set, changed or removed) recomputes every answered item's target
    (``services.adaptive``) and mark."""
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ValidationError({name: [f"{name}: cannot be changed"] for name in sorted(unknown)})
    project_fields_validate(fields)
    # As stored, not as the instance says: an admin form has already set the new values on it.
    redundancy, flag_settings = Project.objects.select_for_update().values_list(
        "redundancy", "flag_settings").get(pk=project.pk)
    stored = Project(kind=project.kind, redundancy=redundancy, flag_settings=flag_settings)
    # A row stored before the validation (or by hand) may fail it: nothing can be read from
    # it, so every answered item is recounted below, as for a new adaptive policy.
    stored_sound = not project_settings_errors(stored)
    required_before = ({split: stored.redundancy_for(split) for split in Split.values}
                       if stored_sound else {})
    for name, value in fields.items():
        setattr(project, name, value)
    # An update of other fields leaves no stored setting failing the validation: it is
    # refused, naming them, until they are fixed (in this update or an earlier one).
    project_fields_validate({name: getattr(project, name) for name in SETTINGS_VALIDATORS})
    if problems := budget_errors(project.budget_cents, project.budget_currency):
        raise ValidationError(problems)
    project.full_clean()
    if not stored_sound or adaptive_policy(project) != adaptive_policy(stored):
        # Another adaptive policy (or none): every item's target is recomputed, or cleared,
        # with its mark: those with counted answers or a stored target (the others need the
        # project's default, which the queue reads from the project).
        answered = (Item.objects.filter(project=project)
                    .filter(Q(target_answers__isnull=False)
                            | Q(annotations__state=Annotation.State.COUNTED))
                    .values_list("pk", flat=True).distinct())
        with item_filled_marks_kept(answered):
            project.save()
        return project
    changed_splits = [split for split in Split.values
                      if project.redundancy_for(split) != required_before[split]]
    answered = (Annotation.objects.filter(project=project, state=Annotation.State.COUNTED,
                                          item__split__in=changed_splits)
                .values_list("item_id", flat=True).distinct()
                if changed_splits else [])
    with item_filled_marks_kept(answered):
        project.save()
    return project


@transaction.atomic
def project_team_set(*, project: Project, everyone: bool, users=(), groups=()) -> Project:
    """Who may work on ``project`` as a local annotator: every annotator (``everyone``), or
    only ``users`` and the members of ``groups`` (the rule: ``annotation/selectors/access.py``)."""
    project.workers_everyone = everyone
    project.save(update_fields=["workers_everyone"])
    project.allowed_users.set(users)
    project.allowed_groups.set(groups)
    return project
