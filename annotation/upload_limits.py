"""How an upload request is read: its files streamed to temporary files on disk (never held
in memory), and the request stopped once they pass ``UNPACK_UPLOAD_MAX_BYTES``. Used by the
console's import page (``frontend/staff/imports.py``) and its API twin (``api/console.py``)."""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import (
    FileUploadHandler,
    StopUpload,
    TemporaryFileUploadHandler,
)


class SizeLimitHandler(FileUploadHandler):
    """Counts the bytes of every uploaded file as they stream in and stops the upload past
    ``UNPACK_UPLOAD_MAX_BYTES`` (a request without a Content-Length included)."""

    def __init__(self, request=None):
        super().__init__(request)
        self.total = 0
        self.exceeded = False

    def receive_data_chunk(self, raw_data, start):
        self.total += len(raw_data)
        if self.total > settings.UNPACK_UPLOAD_MAX_BYTES:
            self.exceeded = True
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size):
        del file_size  # the next handler (TemporaryFileUploadHandler) makes the file
        return None


def upload_handlers(request) -> SizeLimitHandler:
    """Stream this request's files to disk, bounded; returns the size handler to ask after."""
    limit = SizeLimitHandler(request)
    request.upload_handlers = [limit, TemporaryFileUploadHandler(request)]
    return limit


def too_large(request) -> bool:
    """True when the request says up front it is larger than the limit (refused unread)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False
    return length > settings.UNPACK_UPLOAD_MAX_BYTES + 64 * 1024  # the form's own fields


def over_limit_message() -> str:
    """What the page and the API answer (413) for an upload over the limit."""
    return (f"The files are larger than the upload limit of "
            f"{settings.UNPACK_UPLOAD_MAX_BYTES:,} bytes; nothing was imported.")
