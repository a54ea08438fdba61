"""The Content-Security-Policy header: on every kind of page, with exactly the directives the
settings promise (annotation/settings.py, CONTENT_SECURITY_POLICY), and pages that need nothing
the policy refuses (no inline script or style without the response's nonce).

The browser half (tests/browser/test_csp.py) loads the same pages in chromium and watches for
violations; this half pins the header itself.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import urlencode, urlsplit

import pytest
from django.conf import settings
from django.test import Client

from annotation.services.staff_jobs import job_start
from tests.factories import BUILDERS, annotate, claire_sample, publish_hit, sluice_project, workers

pytestmark = pytest.mark.django_db

MTURK = ("https://www.mturk.com", "https://workersandbox.mturk.com")
NONCE = re.compile(r"'nonce-[A-Za-z0-9+/=]+'")
PREVIEW = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "HIT123"}
ACCEPTED = {"assignmentId": "ASSIGN1", "hitId": "HIT123", "workerId": "AWORKER1",
            "turkSubmitTo": "https://workersandbox.mturk.com"}


def directives(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    parsed = {}
    for part in header.split(";"):
        name, *sources = part.split()
        assert name not in parsed, f"{name} twice in {header}"
        parsed[name] = sources
    return parsed


class InlineCode(HTMLParser):
    """The page's inline scripts, style blocks and style attributes, with their nonces."""

    def __init__(self):
        super().__init__()
        self.scripts: list[dict] = []
        self.styles: list[dict] = []
        self.style_attributes: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "script" and "src" not in attributes:
            self.scripts.append(attributes)
        if tag == "style":
            self.styles.append(attributes)
        if "style" in attributes:
            self.style_attributes.append(tag)
        self.handlers += [f"{tag} {name}" for name, _ in attrs if name.startswith("on")]


def inline_code(response) -> InlineCode:
    parser = InlineCode()
    parser.feed(response.content.decode())
    return parser


def assert_base_policy(policy: dict[str, list[str]], *, nonce: str | None = None) -> None:
    """The directives every page has; ``nonce`` is the page's own, if it asked for one."""
    own = [nonce] if nonce else []
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'", *own]
    assert policy["style-src"] == ["'self'", *own]
    assert policy["img-src"] == ["'self'", "data:"]
    assert policy["object-src"] == ["'none'"]
    assert policy["base-uri"] == ["'self'"]
    # X-Frame-Options decides framing; frame-ancestors would override it (and MTurk frames
    # the task page).
    assert "frame-ancestors" not in policy
    for name, sources in policy.items():
        assert "'unsafe-inline'" not in sources and "'unsafe-eval'" not in sources, name
    assert set(policy) == {"default-src", "script-src", "style-src", "img-src", "object-src",
                           "base-uri", "form-action"}


def assert_no_inline_code(response) -> None:
    """Nothing on the page needs 'unsafe-inline': scripts are files, or JSON data blocks."""
    code = inline_code(response)
    assert all(script.get("type") == "application/json" for script in code.scripts), code.scripts
    assert code.styles == [] and code.style_attributes == [] and code.handlers == []


@pytest.fixture
def world():
    project = sluice_project(slug="csp-demo", items=2)
    publish_hit(project)
    return project


def page_urls(project) -> dict[str, str]:
    return {
        "home": "/",
        "login": "/accounts/login/",
        "annotate": f"/annotate/{project.slug}/",
        "mturk-preview": f"/mturk/task/{project.slug}/?{urlencode(PREVIEW)}",
        "mturk-accepted": f"/mturk/task/{project.slug}/?{urlencode(ACCEPTED)}",
        "review": f"/staff/review/{project.slug}/",
        "dashboard": f"/staff/review/{project.slug}/dashboard/",
        "batches": "/staff/batches/",
        "admin": "/admin/",
        "admin-list": "/admin/annotation/project/",
        "admin-change": f"/admin/annotation/project/{project.pk}/change/",
    }


ANNOTATOR_PAGES = ("home", "annotate")
ANONYMOUS_PAGES = ("login", "mturk-preview", "mturk-accepted")


@pytest.mark.parametrize("name", ["home", "login", "annotate", "mturk-preview", "mturk-accepted",
                                  "review", "dashboard", "batches", "admin", "admin-list",
                                  "admin-change"])
def test_every_page_has_the_policy_and_no_inline_code(name, world, staff_user, annotator_user):
    client = Client()
    if name in ANNOTATOR_PAGES:
        client.force_login(annotator_user)
    elif name not in ANONYMOUS_PAGES:
        client.force_login(staff_user)
    response = client.get(page_urls(world)[name])
    assert response.status_code == 200
    policy = directives(response)
    assert_base_policy(policy)
    if name.startswith("mturk"):
        assert policy["form-action"] == ["'self'", *settings.UNPACK_MTURK_SUBMIT_ORIGINS]
    else:
        assert policy["form-action"] == ["'self'"]
    assert_no_inline_code(response)


def test_every_task_kind_page_needs_no_inline_code(annotator_client):
    for kind, build in BUILDERS.items():
        project = build(slug=f"csp-{kind}".replace("_", "-"))
        response = annotator_client.get(f"/annotate/{project.slug}/")
        assert response.status_code == 200, kind
        assert_base_policy(directives(response))
        assert_no_inline_code(response)
        # The page's data reach its module as a JSON block, never as code.
        assert len(inline_code(response).scripts) == 1


def test_the_mturk_task_page_may_post_the_hit_to_mturk_and_nowhere_else(client, world):
    """The page's form posts to turkSubmitTo + /mturk/externalSubmit: that origin is allowed,
    MTurk's two sites are by default, and only that page allows them."""
    assert set(MTURK) <= set(settings.UNPACK_MTURK_SUBMIT_ORIGINS)
    response = client.get(page_urls(world)["mturk-accepted"])
    form_action = directives(response)["form-action"]
    assert set(MTURK) <= set(form_action)
    config = json.loads(re.search(r'id="task-config" type="application/json">(.*?)</script>',
                                  response.content.decode()).group(1))
    target = urlsplit(config["turk_submit_to"])
    assert f"{target.scheme}://{target.netloc}" in form_action
    # MTurk shows the page in its iframe: no X-Frame-Options, and no frame-ancestors either.
    assert "X-Frame-Options" not in response
    assert "frame-ancestors" not in directives(response)
    # Every other page: forms post to this site only, and X-Frame-Options forbids framing.
    login = client.get("/accounts/login/")
    assert directives(login)["form-action"] == ["'self'"]
    assert login["X-Frame-Options"] == "DENY"


def test_form_action_follows_the_submit_origins_setting(client, world, settings):
    """Read per request, as the view's own check of turkSubmitTo is (a rehearsal against the
    local MTurk stand-in sets the setting, and its page must be able to post there)."""
    settings.UNPACK_MTURK_SUBMIT_ORIGINS = ("http://127.0.0.1:8765",)
    response = client.get(page_urls(world)["mturk-preview"])
    assert directives(response)["form-action"] == ["'self'", "http://127.0.0.1:8765"]


def test_staff_dashboard_plots_are_inline_svg_without_style(staff_client):
    """The plots are SVG markup with classes (styled from review.css), not style attributes."""
    project, items = claire_sample()
    for worker in workers(3):
        for k, item in enumerate(items):
            annotate(item, worker, rating=1 + k % 5, duration_ms=1000 * (k + 1))
    # The per-worker plot is drawn from the latest QC job (inline here).
    job_start(kind="qc", project=project)
    response = staff_client.get(f"/staff/review/{project.slug}/dashboard/")
    assert response.content.decode().count("<svg") == 3
    assert_base_policy(directives(response))
    assert_no_inline_code(response)


def test_swagger_ui_runs_its_inline_script_by_nonce_only(client):
    """/api/docs/: drf-spectacular's start-up script and style block are inline; they carry
    this response's nonce (a fresh one each time), and the policy allows that nonce alone."""
    response = client.get("/api/docs/")
    assert response.status_code == 200
    policy = directives(response)
    nonces = NONCE.findall(response["Content-Security-Policy"])
    assert len(set(nonces)) == 1
    nonce = nonces[0]
    assert_base_policy(policy, nonce=nonce)
    code = inline_code(response)
    value = nonce.removeprefix("'nonce-").removesuffix("'")
    assert [script.get("nonce") for script in code.scripts] == [value]
    assert [style.get("nonce") for style in code.styles] == [value]
    assert code.style_attributes == [] and code.handlers == []
    assert "SwaggerUIBundle(" in response.content.decode()  # drf-spectacular's own script
    again = client.get("/api/docs/")
    assert NONCE.findall(again["Content-Security-Policy"])[0] != nonce


def test_the_browsable_api_styles_by_nonce_only(staff_client, world):
    """DRF's pages: their syntax-highlighting style block carries the nonce."""
    response = staff_client.get("/api/projects/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    nonce = NONCE.findall(response["Content-Security-Policy"])[0]
    assert_base_policy(directives(response), nonce=nonce)
    code = inline_code(response)
    value = nonce.removeprefix("'nonce-").removesuffix("'")
    assert code.styles and all(style.get("nonce") == value for style in code.styles)
    assert all(script.get("type") == "application/json" for script in code.scripts)


def test_json_answers_carry_the_policy_too(annotator_client, world):
    response = annotator_client.get("/api/projects/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert_base_policy(directives(response))


# The settings' policy is built once per process (annotation/csp.py): a response that changes
# nothing must get exactly what django-csp itself would write, and a changed policy must show.

def _both_middlewares(request, make_response):
    from csp.middleware import CSPMiddleware

    from annotation.csp import UnpackCSPMiddleware

    answers = []
    for middleware_class in (CSPMiddleware, UnpackCSPMiddleware):
        middleware = middleware_class(lambda request: None)
        middleware.process_request(request)
        answers.append(dict(middleware.process_response(request, make_response()).headers))
    return answers


@pytest.mark.parametrize("shape", ["plain", "exempt", "updated", "nonce", "report-only",
                                   "excluded"])
def test_a_reused_policy_is_the_one_django_csp_builds(shape, settings, rf):
    from django.http import HttpResponse

    if shape == "report-only":
        settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {
            "DIRECTIVES": {"default-src": ["'none'"], "report-uri": "/csp-report/"}}
    if shape == "excluded":
        settings.CONTENT_SECURITY_POLICY = {
            **settings.CONTENT_SECURITY_POLICY, "EXCLUDE_URL_PREFIXES": ["/legacy/"]}
    request = rf.get("/legacy/page/" if shape == "excluded" else "/some/page/")

    def make_response():
        response = HttpResponse("ok")
        if shape == "exempt":
            response._csp_exempt = True
        if shape == "updated":
            response._csp_update = {"img-src": ["https://example.org"]}
        return response

    if shape == "nonce":
        request = rf.get("/some/page/")
        from csp.middleware import CSPMiddleware

        from annotation.csp import UnpackCSPMiddleware

        headers = []
        for middleware_class in (CSPMiddleware, UnpackCSPMiddleware):
            middleware = middleware_class(lambda request: None)
            middleware.process_request(request)
            nonce = str(request.csp_nonce)
            header = middleware.process_response(request, make_response())[
                "Content-Security-Policy"]
            headers.append(header.replace(nonce, "NONCE"))
            request = rf.get("/some/page/")
        assert headers[0] == headers[1] and "'nonce-NONCE'" in headers[1]
        return
    library, ours = _both_middlewares(request, make_response)
    assert ours == library
    expected = {"plain": True, "exempt": False, "updated": True, "report-only": True,
                "excluded": False}[shape]
    assert ("Content-Security-Policy" in ours) is expected
    if shape == "report-only":
        assert ours["Content-Security-Policy-Report-Only"].startswith(("default-src", "report"))


def test_a_changed_policy_setting_is_not_served_stale(client, settings):
    first = client.get("/accounts/login/")["Content-Security-Policy"]
    assert "https://cdn.example.org" not in first
    directives_now = dict(settings.CONTENT_SECURITY_POLICY["DIRECTIVES"])
    directives_now["img-src"] = [*directives_now["img-src"], "https://cdn.example.org"]
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": directives_now}
    assert "https://cdn.example.org" in client.get("/accounts/login/")["Content-Security-Policy"]


def test_a_template_asking_for_the_nonce_after_the_header_is_an_error(rf):
    from csp.exceptions import CSPNonceError
    from django.http import HttpResponse

    from annotation.csp import UnpackCSPMiddleware

    request = rf.get("/some/page/")
    middleware = UnpackCSPMiddleware(lambda request: None)
    middleware.process_request(request)
    middleware.process_response(request, HttpResponse("ok"))
    with pytest.raises(CSPNonceError):
        str(request.csp_nonce)
