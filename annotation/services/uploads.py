"""Uploaded source files, between the console's preview and its import.

``upload_stage`` writes the uploaded files (already streamed to disk by Django's temporary-file
upload handler) into a folder of their own under ``UNPACK_UPLOAD_DIR``, named by an
unguessable token and bound to the user who uploaded them, the project, the format and the
split. ``upload_preview`` runs the import as a dry run (``import_files(dry_run=True)``: every
row parsed and checked, nothing kept); ``upload_commit`` runs it for real and removes the
folder. The importers and their messages (file, line, field) are those of ``import_data``.

Hostile input: a file's name is reduced to its last path component and to safe characters
(no ``..``, no folders, no leading dot); archives (zip, gzip, bzip2, xz, 7z, tar) are refused —
the importers read plain files, so nothing is ever unpacked and no zip bomb or path inside an
archive is looked at; the total size is bounded by ``UNPACK_UPLOAD_MAX_BYTES`` (checked while
streaming, by the view's upload handler, and again here).
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from ..importers import FORMATS
from ..models import Project
from .imports import ImportProgress, ImportResult, import_files

#: Leading bytes of the archive formats refused.
ARCHIVE_MAGIC = {b"PK\x03\x04": "zip", b"PK\x05\x06": "zip", b"\x1f\x8b": "gzip",
                 b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"7z\xbc\xaf\x27\x1c": "7z"}
TOKEN_PATTERN = re.compile(r"^[A-Za-z0-9_-]{20,64}$")
CHUNK = 1024 * 1024


class UploadError(Exception):
    """The upload cannot be taken; the message says why (and names the file)."""


@dataclass(frozen=True)
class StagedUpload:
    token: str
    project_slug: str
    fmt: str
    split: str | None
    names: list[str]
    size: int
    licence: str | None = None  # the source data's, stored on the project by the import
    attribution: str | None = None


def safe_name(name: str) -> str:
    """A file name without any folder, with safe characters only (``../../etc/passwd`` →
    ``passwd``; ``.env`` → ``env``)."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".")
    return base[:120] or "upload"


def _folder(token: str) -> Path:
    if not TOKEN_PATTERN.match(token or ""):
        raise UploadError("this upload is unknown or has expired; upload the files again")
    return Path(settings.UNPACK_UPLOAD_DIR) / token


def _sweep() -> None:
    """Remove staged uploads older than ``UNPACK_UPLOAD_KEEP_SECONDS`` (never imported)."""
    root = Path(settings.UNPACK_UPLOAD_DIR)
    if not root.is_dir():
        return
    cutoff = time.time() - settings.UNPACK_UPLOAD_KEEP_SECONDS
    for folder in root.iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)


def upload_stage(*, files, project: Project, fmt: str, split: str | None,
                 user_id: int, licence: str | None = None,
                 attribution: str | None = None) -> StagedUpload:
    """Keep ``files`` (objects with ``name`` and ``chunks()``, e.g. Django's uploaded files)
    for a preview and an import into ``project`` as ``fmt``. UploadError (nothing kept) for
    an unknown format, no file, too many or too big files, two files of one name, an archive
    or an empty file."""
    if fmt not in FORMATS:
        raise UploadError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    files = list(files)
    if not files:
        raise UploadError("choose at least one file")
    if len(files) > settings.UNPACK_UPLOAD_MAX_FILES:
        raise UploadError(f"at most {settings.UNPACK_UPLOAD_MAX_FILES} files at once")
    names = [safe_name(file.name) for file in files]
    if len(set(names)) != len(names):
        raise UploadError("two files have the same name; rename one")
    _sweep()
    token = secrets.token_urlsafe(24)
    folder = _folder(token)
    folder.mkdir(parents=True, mode=0o700)
    total = 0
    try:
        for file, name in zip(files, names, strict=True):
            size = 0
            with (folder / name).open("xb") as out:
                for index, chunk in enumerate(file.chunks(CHUNK)):
                    if index == 0:
                        for magic, kind in ARCHIVE_MAGIC.items():
                            if chunk.startswith(magic):
                                raise UploadError(
                                    f"{name}: a {kind} archive; archives are not accepted — "
                                    "upload the files themselves")
                    size += len(chunk)
                    total += len(chunk)
                    if total > settings.UNPACK_UPLOAD_MAX_BYTES:
                        raise UploadError(
                            f"the files are larger than the upload limit of "
                            f"{settings.UNPACK_UPLOAD_MAX_BYTES:,} bytes")
                    out.write(chunk)
            if size == 0:
                raise UploadError(f"{name}: the file is empty")
        meta = {"project": project.slug, "format": fmt, "split": split or None,
                "names": names, "user": user_id, "size": total, "licence": licence or None,
                "attribution": attribution or None}
        (folder / "upload.json").write_text(json.dumps(meta), encoding="utf-8")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return StagedUpload(token, project.slug, fmt, split or None, names, total,
                        licence or None, attribution or None)


def upload_get(*, token: str, user_id: int, project: Project) -> StagedUpload:
    """The staged upload ``token`` of this user and project, or UploadError."""
    return _staged(token, project, user_id=user_id)


def upload_get_for_job(*, token: str, project: Project) -> StagedUpload:
    """The staged upload ``token`` of ``project`` (the import job's: the page that started
    the job checked it was the user's), or UploadError."""
    return _staged(token, project, user_id=None)


def _staged(token: str, project: Project, *, user_id: int | None) -> StagedUpload:
    """The upload's metadata, when it is ``project``'s (and ``user_id``'s, unless None)."""
    unknown = "this upload is unknown or has expired; upload the files again"
    try:
        meta = json.loads((_folder(token) / "upload.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UploadError(unknown) from None
    if meta["project"] != project.slug or (user_id is not None and meta["user"] != user_id):
        raise UploadError(unknown)
    return StagedUpload(token, meta["project"], meta["format"], meta["split"], meta["names"],
                        meta["size"], meta.get("licence"), meta.get("attribution"))


def upload_runs_as_job(staged: StagedUpload) -> bool:
    """Whether the import of ``staged`` is a staff job (big) rather than the request's work."""
    return staged.size >= settings.UNPACK_UPLOAD_JOB_MIN_BYTES


def _import(staged: StagedUpload, *, dry_run: bool,
            progress: ImportProgress | None = None) -> ImportResult:
    folder = _folder(staged.token)
    return import_files(fmt=staged.fmt, paths=[folder / name for name in staged.names],
                        project_slug=staged.project_slug, split=staged.split, dry_run=dry_run,
                        progress=progress, licence=staged.licence,
                        attribution=staged.attribution)


def upload_preview(*, staged: StagedUpload) -> ImportResult:
    """The import of ``staged`` as a dry run: ImportInputError (file, line, field) for bad
    input, else what it would add; nothing is written either way."""
    return _import(staged, dry_run=True)


def upload_commit(*, staged: StagedUpload,
                  progress: ImportProgress | None = None) -> ImportResult:
    """Import ``staged`` (all-or-nothing) and remove its files once imported; ``progress``
    as ``import_files`` tells it (the import job's)."""
    result = _import(staged, dry_run=False, progress=progress)
    shutil.rmtree(_folder(staged.token), ignore_errors=True)
    return result


def upload_summary(result: ImportResult) -> dict:
    """An import's outcome as JSON (what the import job keeps) with the one sentence the
    import page and the job's page both show."""
    message = (f"Imported {result.rows} row(s) from {', '.join(result.files_imported)}."
               if result.files_imported else
               f"Nothing new: {', '.join(result.files_skipped)} had been imported already.")
    return {"message": message, "rows": result.rows,
            "files_imported": result.files_imported, "files_skipped": result.files_skipped,
            "created": result.created, "warnings": result.warnings}


def upload_discard(*, staged: StagedUpload) -> None:
    shutil.rmtree(_folder(staged.token), ignore_errors=True)
