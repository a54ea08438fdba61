"""Schemathesis over ``/api/schema/`` (issue 11, point 4): every operation the schema
describes, called by a staff user with bodies and parameters generated from the schema (and
beyond it), never answers 500.

Loopback only and bounded: the schema and every call go through the WSGI application in this
process (no socket), a fixed number of examples per operation. The launch endpoint is called
too; a launch needs the exact confirmed cost of an existing project, which generated data does
not reach, and MTURK_ENDPOINT_URL points at a closed local port in case it ever does.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from tests.factories import AnnotationFactory

pytestmark = pytest.mark.django_db

CSRF = "fuzzcsrf" * 4  # 32 characters: a CSRF secret the cookie and the header both carry

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json",
                                        get_wsgi_application())


@pytest.fixture
def staff_session(client, django_user_model, settings):
    settings.MTURK_ENDPOINT_URL = "http://127.0.0.1:9"
    # As Django's test client does: the test's transaction holds the database connection, so
    # the end of a request must not close it.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    staff = django_user_model.objects.create_user(username="fuzz-staff", is_staff=True,
                                                  is_superuser=True)
    client.force_login(staff)
    for _ in range(2):
        AnnotationFactory()
    yield {"sessionid": client.cookies["sessionid"].value, "csrftoken": CSRF}
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much])
def test_no_operation_answers_a_server_error(case, staff_session):
    response = case.call(headers={"X-CSRFToken": CSRF}, cookies=staff_session)
    assert response.status_code < 500, (case.method, case.path, case.body, response.text[:500])
