"""Every text filter and path parameter of the API and the admin, with generated text (NUL
bytes, lone surrogates, huge strings), never answers 5xx; text PostgreSQL cannot store is a
400 (issue 26, points 4 and 8). Plus the schema points: ``category`` is null, not "", and
``limit``/``offset`` are refused when they are not one whole number."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Annotation, Project
from tests.factories import AnnotationFactory, sluice_project

pytestmark = pytest.mark.django_db

#: Text filters outside the API's schema (the admin's list filters, the staff pages).
PAGE_FILTERS = ["/admin/annotation/annotation/?source={}", "/staff/review/?project={}",
                "/api/projects/?limit={}", "/api/items/?offset={}",
                # The data browser's text filters (project "x").
                "/staff/projects/x/answers/?q={}", "/staff/projects/x/answers/?answer={}",
                "/staff/projects/x/answers/?worker={}", "/staff/projects/x/answers/?flag={}"]


def schema_text_parameters() -> list[str]:
    """Every text parameter (query or path) of every GET operation the API's schema
    describes, as a URL with ``{}`` where the text goes (other path parameters: ``x``)."""
    from drf_spectacular.generators import SchemaGenerator

    urls = []
    for path, operations in SchemaGenerator().get_schema(request=None, public=True)[
            "paths"].items():
        parameters = operations.get("get", {}).get("parameters", [])
        for parameter in parameters:
            if parameter.get("schema", {}).get("type") != "string":
                continue
            name, in_path = parameter["name"], parameter["in"] == "path"
            # The other path parameters name a project the test makes (slug "x").
            filled = re.sub(r"\{(\w+)\}", lambda found, name=name, in_path=in_path: (
                "{}" if in_path and found[1] == name else "x"), path)
            urls.append(filled if in_path else f"{filled}?{name}={{}}")
    return urls


def admin_searches() -> list[str]:
    """The search box (``?q=``) of every admin changelist that has one."""
    from django.contrib import admin

    return [f"/admin/{model._meta.app_label}/{model._meta.model_name}/?q={{}}"
            for model, model_admin in admin.site._registry.items() if model_admin.search_fields]


FILTERS = PAGE_FILTERS + schema_text_parameters() + admin_searches()

TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from("a\x00\ud800\udfff\uffff/%?&#"), max_size=20),
    st.integers(min_value=1000, max_value=200_000).map(lambda n: "x" * n),
)


def encoded(text: str) -> str:
    return quote(text, safe="", errors="surrogatepass")


@pytest.mark.parametrize("url", FILTERS)
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=TEXT)
def test_no_text_in_a_filter_gives_a_server_error(staff_client, url, text):
    if "/x/" in url and not Project.objects.filter(slug="x").exists():
        sluice_project(slug="x")  # the other path parameters name a real project
    answer = staff_client.get(url.format(encoded(text)))
    assert answer.status_code < 500, (url, text[:50], answer.status_code)
    if "\x00" in text:
        assert answer.status_code == 400


def test_the_generated_filters_include_the_known_ones():
    """The schema and the admin are read, not assumed: the filters an audit found 500s in are
    among those generated."""
    for url in ["/api/annotations/?project={}", "/api/items/?project={}", "/api/items/?split={}",
                "/api/batches/?project={}", "/api/projects/{}/",
                "/admin/annotation/annotation/?q={}", "/admin/annotation/worker/?q={}"]:
        assert url in FILTERS, url


@pytest.mark.parametrize("query", ["offset=null&offset=null", "offset=null", "offset=-1",
                                   "limit=0", "limit=abc", "limit=1&limit=2",
                                   "offset=" + "9" * 4001])
def test_limit_and_offset_must_be_one_whole_number(staff_client, query):
    answer = staff_client.get(f"/api/annotations/?{query}")
    assert answer.status_code == 400
    name, refusal = query.split("=")[0], answer.json()
    # The paginator names the parameter as DRF does; an over-long one is refused before, by
    # the request guard, in its own shape.
    assert name in refusal or refusal["field"] == name


def test_a_limit_above_the_ceiling_is_the_ceiling(staff_client):
    assert staff_client.get("/api/annotations/?limit=9223372036854775807&offset=0"
                            ).status_code == 200


def test_an_answer_without_a_category_reads_null(staff_client):
    """Before: ``category: ""``, outside the schema's enum."""
    annotation = AnnotationFactory()
    Annotation.objects.filter(pk=annotation.pk).update(category="")
    assert staff_client.get(f"/api/annotations/{annotation.pk}/").json()["category"] is None


def test_the_schema_documents_refusals_and_non_blank_text(client):
    schema = client.get("/api/schema/?format=json").json()
    reject = schema["components"]["schemas"]["Rejection"]["properties"]["message"]
    assert reject["minLength"] == 1 and reject["pattern"] == r"\S"
    for operations in schema["paths"].values():
        for operation in operations.values():
            assert {"400", "403", "404"} <= set(operation["responses"])
    category = schema["components"]["schemas"]["Annotation"]["properties"]["category"]
    assert category["nullable"] is True
