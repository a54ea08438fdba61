"""Post-processing of the generated OpenAPI schema, so that it says what the API answers
(issue 26, point 8; checked by schemathesis, ``tests/security/test_schemathesis.py``):

* every operation documents its refusals — 400 (bad input), 401/403 (not logged in, not
  allowed), 404 (no such object, or not yours), and for a body 413 (above
  ``UNPACK_MAX_REQUEST_BYTES``, ``annotation.request_guard``) and 415 (not JSON or a form);
* a required text field of a request body has ``minLength: 1`` and a non-blank ``pattern``:
  the serializers trim whitespace and refuse what is left empty.
"""

from __future__ import annotations

ERROR = {"type": "object", "additionalProperties": {},
         "description": "Why the request was refused: ``detail``, or a list of reasons per "
                        "field, or ``error``/``message``/``field``."}
REFUSALS = {"400": "Bad input: nothing was changed.",
            "401": "Not logged in (HTTP Basic authentication, when turned on).",
            "403": "Not logged in, not allowed, or no CSRF token.",
            "404": "No such object (or not one the caller may see)."}
BODY_REFUSALS = {"413": "The request body is larger than the server accepts.",
                 "415": "The body is neither JSON nor a form."}
NOT_BLANK = r"\S"


def _refusal(description: str) -> dict:
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def document_refusals(result, **_context):
    """drf-spectacular ``POSTPROCESSING_HOOKS`` entry (see the module)."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            refusals = {**REFUSALS, **(BODY_REFUSALS if "requestBody" in operation else {})}
            for status, description in refusals.items():
                operation["responses"].setdefault(status, _refusal(description))
    for component in schemas.values():
        properties = component.get("properties", {})
        for name in component.get("required", []):
            field = properties.get(name, {})
            if field.get("type") == "string" and not field.get("readOnly") and (
                    "format" not in field and "enum" not in field):
                field.setdefault("minLength", 1)
                field.setdefault("pattern", NOT_BLANK)
    return result
