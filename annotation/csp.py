"""Content-Security-Policy: django-csp's middleware, plus the one thing only a request knows.

The policy is ``settings.CONTENT_SECURITY_POLICY``. The MTurk task page alone posts a form off
our site: the finished assignment goes to ``turkSubmitTo + /mturk/externalSubmit``, where
``turkSubmitTo`` must be one of ``settings.UNPACK_MTURK_SUBMIT_ORIGINS`` (the view refuses any
other). So that page's ``form-action`` adds exactly those origins, read from settings on every
response rather than copied into the policy at start-up: the view's check and the browser's can
never disagree, also when a rehearsal or a test points the setting at a local stand-in.
Every other page may post forms to ``'self'`` only.

Most responses carry the settings' policy unchanged (no nonce asked for, no per-view change):
that header is built once per process and reused. django-csp builds it anew for every response
(copying the policy parts and the settings' directives), which was about a third of the CPU a
refused login costs the app (``bench/bench_login_abuse.py``, docs/security.md).
"""

from __future__ import annotations

import functools
import http

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware, PolicyParts
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

MTURK_TASK_VIEW = "frontend:mturk-task"

#: What a view or decorator sets on a response to change its policy (django-csp's names).
_PER_RESPONSE_POLICY = ("_csp_config", "_csp_update", "_csp_replace",
                        "_csp_config_ro", "_csp_update_ro", "_csp_replace_ro")
#: (header, report only, the response attribute exempting it, the settings holding it)
_HEADERS = ((HEADER, False, "_csp_exempt", "CONTENT_SECURITY_POLICY"),
            (HEADER_REPORT_ONLY, True, "_csp_exempt_ro", "CONTENT_SECURITY_POLICY_REPORT_ONLY"))


def mturk_submit_origins() -> list[str]:
    """Where an MTurk task page may post the finished assignment (``turkSubmitTo``): the
    view's check and the page's CSP both read it here, from settings, on every request."""
    return list(settings.UNPACK_MTURK_SUBMIT_ORIGINS)


@functools.cache
def settings_policy(report_only: bool) -> str:
    """The header of a response that changes nothing: the settings' policy, without nonce."""
    return build_policy(report_only=report_only)


@functools.cache
def _excluded_prefixes(setting: str) -> tuple[str, ...]:
    return tuple((getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES") or ())


@receiver(setting_changed)
def _forget_built_policies(*, setting: str, **kwargs) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        settings_policy.cache_clear()
        _excluded_prefixes.cache_clear()


def _is_mturk_task_page(request) -> bool:
    match = getattr(request, "resolver_match", None)
    return match is not None and match.view_name == MTURK_TASK_VIEW


class UnpackCSPMiddleware(CSPMiddleware):
    """django-csp's middleware (get_policy_parts is its documented extension point); on the
    MTurk task page, form-action also allows the MTurk submit origins. A response that changes
    nothing gets the settings' policy built once (``settings_policy``)."""

    def get_policy_parts(self, request, response, report_only: bool = False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if _is_mturk_task_page(request):
            update = dict(parts.update or {})
            earlier = update.get("form-action") or ()
            earlier = (earlier,) if isinstance(earlier, str) else tuple(earlier)
            update["form-action"] = [*earlier, *mturk_submit_origins()]
            parts.update = update
        return parts

    def process_response(self, request, response):
        if (getattr(request, "_csp_nonce", None) is not None or _is_mturk_task_page(request)
                or any(getattr(response, name, None) is not None
                       for name in _PER_RESPONSE_POLICY)):
            return super().process_response(request, response)
        # From here, what django-csp's process_response does, with the built policy reused.
        if settings.DEBUG and response.status_code in (http.HTTPStatus.INTERNAL_SERVER_ERROR,
                                                       http.HTTPStatus.NOT_FOUND):
            return response
        for header, report_only, exempt, setting in _HEADERS:
            policy = settings_policy(report_only)
            if (policy and header not in response and not getattr(response, exempt, False)
                    and not request.path_info.startswith(_excluded_prefixes(setting))):
                response[header] = policy
        # A template asking for the nonce after the header is written is an error (as in
        # django-csp): the header could not carry it.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
