"""Content-Security-Policy: django-csp's middleware, plus the one thing only a request knows.

The policy is ``settings.CONTENT_SECURITY_POLICY``. The MTurk task page alone posts a form off
our site: the finished assignment goes to ``turkSubmitTo + /mturk/externalSubmit``, where
``turkSubmitTo`` must be one of ``settings.UNPACK_MTURK_SUBMIT_ORIGINS`` (the view refuses any
other). So that page's ``form-action`` adds exactly those origins, read from settings on every
response rather than copied into the policy at start-up: the view's check and the browser's can
never disagree, also when a rehearsal or a test points the setting at a local stand-in.
Every other page may post forms to ``'self'`` only.
"""

from __future__ import annotations

from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings

MTURK_TASK_VIEW = "frontend:mturk-task"


def mturk_submit_origins() -> list[str]:
    """Where an MTurk task page may post the finished assignment (``turkSubmitTo``): the
    view's check and the page's CSP both read it here, from settings, on every request."""
    return list(settings.UNPACK_MTURK_SUBMIT_ORIGINS)


class UnpackCSPMiddleware(CSPMiddleware):
    """django-csp's middleware (get_policy_parts is its documented extension point); on the
    MTurk task page, form-action also allows the MTurk submit origins."""

    def get_policy_parts(self, request, response, report_only: bool = False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        match = getattr(request, "resolver_match", None)
        if match is not None and match.view_name == MTURK_TASK_VIEW:
            update = dict(parts.update or {})
            earlier = update.get("form-action") or ()
            earlier = (earlier,) if isinstance(earlier, str) else tuple(earlier)
            update["form-action"] = [*earlier, *mturk_submit_origins()]
            parts.update = update
        return parts
