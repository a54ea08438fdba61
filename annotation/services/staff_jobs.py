"""Staff jobs: long work (QC, exports, …) run in the background with progress and a result.

The contract (docs/jobs.md has the walk-through for adding a kind):

* ``job_start(*, kind, project, user, params)`` validates the parameters with the kind's
  ``check``, then creates a ``Job`` row (state ``queued``) and enqueues the Celery task
  ``annotation.tasks.run_staff_job`` once the transaction commits. It is idempotent: while a
  job of the same kind, project and parameters is queued or running, it returns that job
  (``created=False``) instead of starting a second one. Two concurrent starts are serialised
  by ``select_for_update`` on the project row, and the partial unique constraint
  ``uniq_active_job`` makes a second active job impossible whatever happens.
* ``job_run(*, job_id)`` (the task) claims the job (compare-and-set ``queued`` → ``running``)
  and calls the kind's ``run(job, progress)``; ``progress(done, total, message)`` writes the
  figures on the row (``job_report_progress``, at most every ``PROGRESS_EVERY_SECONDS``).
  The run ends with ``job_finish`` (result JSON, optional file to download) or ``job_fail``
  (the error, shown to the staff on the job page). A second delivery of the task does
  nothing (the claim fails), so the task is safe to retry.
* Without a broker (no ``REDIS_URL``: Celery runs tasks inline) ``job_start`` runs the job
  at once in the process that started it (inside the caller's transaction, if it has one),
  through the same task and ``job_run``: its progress and final state are recorded the same
  way, and the returned job is already ``done`` or ``failed``.
* A running job whose progress stayed silent for ``UNPACK_JOB_STALE_SECONDS`` has died (its
  worker was killed): the next start marks it failed, saying so, and starts a new one.

Entry points: the staff pages (``frontend/staff_jobs.py``, the review pages' "Run QC now" and
export buttons) start jobs; the commands (``qc_report``, ``export_data``) call the same
services the runners call, with a progress bar instead of a job row.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import Job, Project
from .jobs import check_job_queue, enqueue_after_commit, enqueue_now

logger = logging.getLogger(__name__)

TASK_NAME = "annotation.tasks.run_staff_job"
ACTIVE_STATES = (Job.State.QUEUED, Job.State.RUNNING)
PROGRESS_EVERY_SECONDS = 0.5

#: ``progress(done, total, message)``: what runners and the services they call report to.
ProgressCallback = Callable[[int, "int | None", str], None]


class JobRefused(ValueError):
    """The job cannot start with these parameters (nothing was created)."""


class JobError(Exception):
    """A runner's expected failure: its message is shown to the staff as it is."""


@dataclass(frozen=True)
class JobOutcome:
    result: dict
    result_path: str = ""


@dataclass(frozen=True)
class JobKind:
    """How to check the parameters of a kind of job and how to run it."""

    check: Callable[[Project | None, dict], dict]
    run: Callable[[Job, ProgressCallback], JobOutcome]


#: kind → how to check and run it; a kind without an entry cannot be started.
KINDS: dict[str, JobKind] = {}


def register(kind: str, *, check: Callable, run: Callable) -> None:
    KINDS[Job.Kind(kind)] = JobKind(check=check, run=run)


@dataclass(frozen=True)
class JobStarted:
    job: Job
    created: bool  # False: an identical job was already queued or running


def params_key(params: dict) -> str:
    canonical = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _stale_before():
    return timezone.now() - timedelta(seconds=settings.UNPACK_JOB_STALE_SECONDS)


def _dead(job: Job) -> bool:
    return (job.state == Job.State.RUNNING and job.heartbeat_at is not None
            and job.heartbeat_at < _stale_before())


def job_start(*, kind: str, project: Project | None, user=None,
              params: dict | None = None) -> JobStarted:
    """Start a job, or return the identical one already queued or running (module doc).

    Raises ``JobRefused`` for an unknown kind or bad parameters and
    ``annotation.services.jobs.JobQueueUnavailable`` when the broker is down; either way
    nothing was created.
    """
    if kind not in KINDS:
        raise JobRefused(f"no job of kind {kind!r} can be started here "
                         f"(known: {', '.join(sorted(KINDS))})")
    params = KINDS[kind].check(project, dict(params or {}))
    key = params_key(params)
    check_job_queue()
    with transaction.atomic():
        if project is not None:
            # Serialises starts for the project: the second click waits, then finds the first.
            Project.objects.select_for_update().filter(pk=project.pk).first()
        active = (Job.objects.select_for_update()
                  .filter(kind=kind, project=project, params_key=key, state__in=ACTIVE_STATES)
                  .first())
        if active is not None and not _dead(active):
            if active.state == Job.State.QUEUED:
                # Its wake-up may have been lost (broker restarted): send it again; a second
                # delivery finds the job claimed and does nothing.
                enqueue_after_commit(TASK_NAME, active.pk)
            return JobStarted(active, created=False)
        if active is not None:
            _mark_failed(active.pk, f"the job stopped reporting progress after "
                         f"{timezone.localtime(active.heartbeat_at):%Y-%m-%d %H:%M:%S} "
                         f"(its worker stopped); job started again as a new job")
        try:
            with transaction.atomic():
                job = Job.objects.create(kind=kind, project=project, requested_by=user,
                                         params=params, params_key=key,
                                         progress_message="waiting for a worker")
        except IntegrityError:  # another process won the race the lock did not cover
            job = Job.objects.get(kind=kind, project=project, params_key=key,
                                  state__in=ACTIVE_STATES)
            return JobStarted(job, created=False)
        if not current_app.conf.task_always_eager:
            enqueue_after_commit(TASK_NAME, job.pk)
    if current_app.conf.task_always_eager:
        # Inline (no broker): run it now, in this process, through the same task and job_run;
        # the row records its progress and outcome as a worker's run would.
        enqueue_now(TASK_NAME, job.pk)
        job.refresh_from_db()
    return JobStarted(job, created=True)


def _claim(job_id: int) -> Job | None:
    now = timezone.now()
    claimable = Job.objects.filter(pk=job_id, state=Job.State.QUEUED) | Job.objects.filter(
        pk=job_id, state=Job.State.RUNNING, heartbeat_at__lt=_stale_before())
    if not Job.objects.filter(pk__in=claimable.values("pk")).update(
            state=Job.State.RUNNING, started_at=now, heartbeat_at=now, progress_done=0,
            progress_message="started"):
        return None
    return Job.objects.select_related("project").get(pk=job_id)


class DatabaseProgress:
    """The ``progress`` callback of a running job: writes at most every ``every`` seconds
    (and always the last step, ``done == total``)."""

    def __init__(self, job_id: int, *, every: float | None = None) -> None:
        self.job_id = job_id
        self.every = PROGRESS_EVERY_SECONDS if every is None else every
        self._last = float("-inf")

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None:
        now = time.monotonic()
        if now - self._last < self.every and not (total is not None and done >= total):
            return
        self._last = now
        job_report_progress(job_id=self.job_id, done=done, total=total, message=message)


def job_run(*, job_id: int) -> str:
    """Run the job if it is still to run (the task's body); return its final state."""
    job = _claim(job_id)
    if job is None:
        state = Job.objects.filter(pk=job_id).values_list("state", flat=True).first()
        return state or "missing"
    try:
        outcome = KINDS[job.kind].run(job, DatabaseProgress(job.pk))
    except (JobError, JobRefused) as error:
        job_fail(job_id=job.pk, error=str(error))
        return Job.State.FAILED
    except Exception as error:  # whatever broke, the job must say it failed
        logger.exception("staff job %s (%s) failed", job.pk, job.kind)
        job_fail(job_id=job.pk, error=f"unexpected error ({type(error).__name__}: {error}); "
                                      "the worker's log has the details")
        return Job.State.FAILED
    job_finish(job_id=job.pk, result=outcome.result, result_path=outcome.result_path)
    return Job.State.DONE


def job_report_progress(*, job_id: int, done: int, total: int | None = None,
                        message: str = "") -> None:
    """Record a running job's progress (and that it is alive)."""
    Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
        progress_done=max(int(done), 0), progress_total=total,
        progress_message=message[:300], heartbeat_at=timezone.now())


def job_finish(*, job_id: int, result: dict, result_path: str = "") -> None:
    now = timezone.now()
    Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(
        state=Job.State.DONE, result=result, result_path=result_path, finished_at=now,
        heartbeat_at=now, progress_message="done")


def job_record_finished(*, kind: str, project: Project, result: dict,
                        params: dict | None = None) -> Job:
    """Record work a caller already ran in its own process (the demo's QC) as a finished job,
    so the pages that show a job's result (the dashboard's per-worker agreement) show it."""
    params = KINDS[kind].check(project, dict(params or {}))
    now = timezone.now()
    return Job.objects.create(kind=kind, project=project, params=params,
                              params_key=params_key(params), state=Job.State.DONE,
                              result=result, started_at=now, heartbeat_at=now,
                              finished_at=now, progress_message="done")


def job_fail(*, job_id: int, error: str) -> None:
    _mark_failed(job_id, error)


def _mark_failed(job_id: int, error: str) -> None:
    now = timezone.now()
    Job.objects.filter(pk=job_id, state__in=ACTIVE_STATES).update(
        state=Job.State.FAILED, error=error, finished_at=now, heartbeat_at=now,
        progress_message="failed")


def job_files_dir(job: Job) -> Path:
    return Path(settings.UNPACK_JOB_FILES_DIR) / str(job.pk)


# --- the kinds ---------------------------------------------------------------------------------


def _check_qc(project: Project | None, params: dict) -> dict:
    if project is None:
        raise JobRefused("QC runs on a project")
    unknown = set(params) - {"store_flags"}
    if unknown:
        raise JobRefused(f"QC job: unknown parameter(s) {', '.join(sorted(unknown))}")
    return {"store_flags": bool(params.get("store_flags", True))}


def _run_qc(job: Job, progress: ProgressCallback) -> JobOutcome:
    from .qc import project_qc_run

    try:
        report = project_qc_run(project=job.project, store_flags=job.params["store_flags"],
                                progress=progress)
    except ValueError as error:  # e.g. an unknown key in the project's flag_settings
        raise JobError(str(error)) from None
    return JobOutcome(result=report)


def _check_export(project: Project | None, params: dict) -> dict:
    from ..exporters import EXPORTERS

    if project is None:
        raise JobRefused("an export is of a project")
    unknown = set(params) - {"format"}
    if unknown:
        raise JobRefused(f"export job: unknown parameter(s) {', '.join(sorted(unknown))}")
    name = params.get("format")
    exporter = EXPORTERS.get(name) if isinstance(name, str) else None
    if exporter is None or (exporter.kinds and project.kind not in exporter.kinds):
        raise JobRefused(f"{project.name} has no export format {name!r}.")
    return {"format": name}


def _run_export(job: Job, progress: ProgressCallback) -> JobOutcome:
    """Write the export's files, then zip them (streamed from disk to disk) for download."""
    from ..exporters import (
        ZIP_LEVEL,
        ExportError,
        export_manifest,
        export_project,
        export_warnings,
    )

    project, format_name = job.project, job.params["format"]
    folder = job_files_dir(job)
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / f"{project.slug}-{format_name}.zip"
    with tempfile.TemporaryDirectory(dir=folder) as work:
        try:
            written = export_project(project=project, format_name=format_name,
                                     out_dir=Path(work), progress=progress)
        except ExportError as error:
            raise JobError(f"The export failed: {error}") from None
        progress(len(written), len(written), "zipping the files")
        partial = archive.with_suffix(".zip.part")
        # The same MANIFEST.json (files and warnings) as the console's download and the words
        # export_data prints as notes (exporters.export_manifest / export_warnings).
        manifest = export_manifest(project=project, format_name=format_name, written=written,
                                   out_dir=Path(work))
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED,
                             compresslevel=ZIP_LEVEL) as bundle:
            for file in written:
                bundle.write(file.path, arcname=Path(file.path).relative_to(work))
            bundle.writestr("MANIFEST.json", json.dumps(manifest, indent=2, sort_keys=True))
        partial.replace(archive)
    files = [{"name": Path(file.path).name, "records": file.records,
              "bytes": file.bytes_written, "notes": file.notes} for file in written]
    return JobOutcome(result={"format": format_name, "files": files,
                              "warnings": export_warnings(written),
                              "zip_bytes": archive.stat().st_size},
                      result_path=str(archive))


def _check_import(project: Project | None, params: dict) -> dict:
    from .uploads import TOKEN_PATTERN

    if project is None:
        raise JobRefused("an import is into a project")
    unknown = set(params) - {"upload"}
    if unknown:
        raise JobRefused(f"import job: unknown parameter(s) {', '.join(sorted(unknown))}")
    token = params.get("upload")
    if not isinstance(token, str) or not TOKEN_PATTERN.match(token):
        raise JobRefused("this upload is unknown or has expired; upload the files again")
    # The upload (staged files) is the job's identity: a second click on "Import" for the
    # same upload finds the job already running instead of importing twice.
    return {"upload": token}


def _run_import(job: Job, progress: ProgressCallback) -> JobOutcome:
    """Import a staged upload (the console's), all-or-nothing, through ``upload_commit``."""
    from ..importers.base import ImportInputError
    from .uploads import UploadError, upload_commit, upload_get_for_job, upload_summary

    try:
        staged = upload_get_for_job(token=job.params["upload"], project=job.project)
        result = upload_commit(staged=staged, progress=progress)
    except UploadError as error:
        raise JobError(str(error)) from None
    except ImportInputError as error:
        raise JobError(f"{error} — nothing was imported.") from None
    return JobOutcome(result=upload_summary(result))


register(Job.Kind.QC, check=_check_qc, run=_run_qc)
register(Job.Kind.EXPORT, check=_check_export, run=_run_export)
register(Job.Kind.IMPORT, check=_check_import, run=_run_import)


# --- splits (issue 21: the console's "freeze" ran inside the request) ---------------------------

SPLIT_FRACTION_NAMES = ("train", "dev", "test")


def _check_splits(project: Project | None, params: dict) -> dict:
    from .splits import RULES, rule_fits

    if project is None:
        raise JobRefused("a split is of a project")
    unknown = set(params) - {"rule", "seed", "fractions", "force", "preview"}
    if unknown:
        raise JobRefused(f"split job: unknown parameter(s) {', '.join(sorted(unknown))}")
    rule, seed, fractions = params.get("rule"), params.get("seed"), params.get("fractions")
    if rule not in RULES:
        raise JobRefused(f"split job: the rule is one of {', '.join(RULES)}, not {rule!r}")
    try:
        rule_fits(project, rule)
    except ValueError as error:
        raise JobRefused(str(error)) from None
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise JobRefused(f"split job: the seed is a whole number, not {seed!r}")
    if (not isinstance(fractions, dict) or set(fractions) != set(SPLIT_FRACTION_NAMES)
            or not all(isinstance(value, int | float) and not isinstance(value, bool)
                       and value >= 0 for value in fractions.values())
            or not sum(fractions.values()) > 0):
        raise JobRefused("split job: fractions are train, dev and test, non-negative numbers "
                         f"adding up to more than 0, not {fractions!r}")
    checked = {"rule": rule, "seed": seed,
               "fractions": {name: float(fractions[name]) for name in SPLIT_FRACTION_NAMES}}
    if params.get("preview"):
        # A preview writes nothing, so ``force`` plays no part (and no freeze job of the
        # same choices is "the same job").
        return {**checked, "preview": True}
    return {**checked, "force": bool(params.get("force", False))}


def _run_splits(job: Job, progress: ProgressCallback) -> JobOutcome:
    """``project_split``, the service ``make_splits`` calls; its progress is written outside
    the split's transaction so the job page follows it (``job_progress``). With ``preview``:
    ``split_preview`` (nothing written; 3.4 s at 200,000 items, too long for a request)."""
    from .job_progress import CommittedProgress
    from .splits import SplitRefused, project_split, split_preview

    params = job.params
    if params.get("preview"):
        try:
            preview = split_preview(project=job.project, rule=params["rule"],
                                    seed=params["seed"], fractions=params["fractions"],
                                    progress=progress)
        except ValueError as error:
            raise JobError(str(error)) from None
        return JobOutcome(result={**preview.as_result(), "rule": params["rule"],
                                  "seed": params["seed"]})
    try:
        with CommittedProgress(job.pk) as committed:
            result = project_split(project=job.project, rule=params["rule"],
                                   seed=params["seed"], fractions=params["fractions"],
                                   force=params["force"], progress=committed)
    except (SplitRefused, ValueError) as error:
        raise JobError(str(error)) from None
    return JobOutcome(result={"manifest": result.manifest.pk, "rule": params["rule"],
                              "seed": params["seed"], "counts": result.counts,
                              "moved_items": result.moved_items,
                              "unchanged": result.unchanged})


register(Job.Kind.SPLITS, check=_check_splits, run=_run_splits)


# --- approvals (issue 21: "Approve all unflagged" decided one by one inside the request) --------

#: Assignments decided in one transaction (one Prolific bulk call per account each).
APPROVAL_CHUNK = 500


def _check_approvals(project: Project | None, params: dict) -> dict:
    if project is None:
        raise JobRefused("an approval of the unflagged work is of a project")
    unknown = set(params) - {"message"}
    if unknown:
        raise JobRefused(f"approval job: unknown parameter(s) {', '.join(sorted(unknown))}")
    message = params.get("message", "")
    if not isinstance(message, str):
        raise JobRefused(f"approval job: the message is text, not {message!r}")
    return {"message": message.strip()}


def _run_approvals(job: Job, progress: ProgressCallback) -> JobOutcome:
    """Approve the project's submitted assignments without an open flag, as they are when the
    job runs: ``decisions.unflagged_assignments_approve`` (what ``review approve
    --all-pending`` runs too) in transactions of ``APPROVAL_CHUNK``."""
    from .decisions import unflagged_assignments_approve

    return JobOutcome(result=unflagged_assignments_approve(
        project=job.project, actor=job.requested_by, message=job.params["message"],
        chunk_size=APPROVAL_CHUNK, progress=progress))


register(Job.Kind.APPROVALS, check=_check_approvals, run=_run_approvals)


# --- who may see a job, and its file (the job pages and the API's /api/jobs/ share these) ------

#: The staff action a user needs to see a job of each kind (the page that starts it).
KIND_ACTION = {
    Job.Kind.QC: "decide_flags",
    Job.Kind.EXPORT: "see_work",
    Job.Kind.SPLITS: "change_projects",
    Job.Kind.IMPORT: "change_projects",
    Job.Kind.APPROVALS: "decide_assignments",
}


def job_result_file(job: Job) -> Path | None:
    """The finished job's file (an export's zip) when it is still there, under
    ``UNPACK_JOB_FILES_DIR``; None otherwise (no file, not done, gone, or a path outside)."""
    if job.state != Job.State.DONE or not job.result_path:
        return None
    file = Path(job.result_path)
    root = Path(settings.UNPACK_JOB_FILES_DIR).resolve()
    if not file.resolve().is_relative_to(root) or not file.is_file():
        return None
    return file
