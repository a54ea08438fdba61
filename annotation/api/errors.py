"""The API's answer to a refusal by a service (``django.core.exceptions.ValidationError``)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from rest_framework import status
from rest_framework.response import Response


def validation_error_response(error: ValidationError) -> Response:
    """A 400 with the refusal's reasons: by field when it names fields, else as ``detail``."""
    detail = error.message_dict if hasattr(error, "error_dict") else {"detail": error.messages}
    return Response(detail, status=status.HTTP_400_BAD_REQUEST)
