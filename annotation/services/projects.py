from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from qc import flags

from ..models import Annotation, Project, Split, TaskKind
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
    if not isinstance(overrides, dict):
        raise ValidationError("live_check_settings: must be an object")
    return overrides


SETTINGS_VALIDATORS = {"redundancy": validate_redundancy, "flag_settings": validate_flag_settings,
                       "live_check_settings": validate_live_check_settings}


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
    API PUT does, recounts nothing)."""
    for name, validate in SETTINGS_VALIDATORS.items():
        if name in fields:
            validate(fields[name])
    # As stored, not as the instance says: an admin form has already set the new values on it.
    stored = Project(redundancy=Project.objects.select_for_update().values_list(
        "redundancy", flat=True).get(pk=project.pk))
    required_before = {split: stored.redundancy_for(split) for split in Split.values}
    for name, value in fields.items():
        setattr(project, name, value)
    project.full_clean()
    changed_splits = [split for split in Split.values
                      if project.redundancy_for(split) != required_before[split]]
    answered = (Annotation.objects.filter(project=project, state=Annotation.State.COUNTED,
                                          item__split__in=changed_splits)
                .values_list("item_id", flat=True).distinct()
                if changed_splits else [])
    with item_filled_marks_kept(answered):
        project.save()
    return project
