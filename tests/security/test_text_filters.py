"""Every text filter and path parameter of the API and the admin, with generated text (NUL
bytes, lone surrogates, huge strings), never answers 5xx; text PostgreSQL cannot store is a
400 (issue 26, points 4 and 8). Plus the schema points: ``category`` is null, not "", and
``limit``/``offset`` are refused when they are not one whole number."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Annotation
from tests.factories import AnnotationFactory

pytestmark = pytest.mark.django_db

FILTERS = ["/api/annotations/?project={}", "/api/items/?project={}", "/api/items/?split={}",
           "/api/batches/?project={}", "/api/projects/{}/", "/api/projects/?limit={}",
           "/api/items/?offset={}", "/admin/annotation/annotation/?source={}",
           "/admin/annotation/annotation/?q={}", "/admin/annotation/worker/?q={}",
           "/staff/review/?project={}"]

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
    answer = staff_client.get(url.format(encoded(text)))
    assert answer.status_code < 500, (url, text[:50], answer.status_code)
    if "\x00" in text:
        assert answer.status_code == 400


@pytest.mark.parametrize("query", ["offset=null&offset=null", "offset=null", "offset=-1",
                                   "limit=0", "limit=abc", "limit=1&limit=2",
                                   "offset=" + "9" * 4001])
def test_limit_and_offset_must_be_one_whole_number(staff_client, query):
    answer = staff_client.get(f"/api/annotations/?{query}")
    assert answer.status_code == 400
    name = query.split("=")[0]
    assert name in answer.json()


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
