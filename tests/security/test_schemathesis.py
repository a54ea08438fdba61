"""Schemathesis over ``/api/schema/`` (issue 11, point 4; issue 26, point 8): every operation the
schema describes, called with bodies and parameters generated from the schema (and beyond it),
as every role, with **all** of schemathesis's checks — never a server error, every answer's
status, content type and body as the schema says, schema-valid input accepted and invalid input
refused — and stateful runs that follow the schema's links.

Loopback only and bounded: the schema and every call go through the WSGI application in this
process (no socket), a fixed number of examples per operation and role (``EXAMPLES``) and of
stateful steps, so the whole file runs in a few minutes. The launch endpoint is called too; a
launch needs the exact confirmed cost of an existing project, which generated data does not
reach, and MTURK_ENDPOINT_URL points at a closed local port in case it ever does.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.factories import AnnotationFactory

pytestmark = pytest.mark.django_db

CSRF = "fuzzcsrf" * 4  # 32 characters: a CSRF secret the cookie and the header both carry
EXAMPLES = 3
ROLES = ("annotator", "reviewer", "researcher", "superuser")

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json",
                                        get_wsgi_application())
#: The session of the role under test (set by the ``session`` fixture).
CURRENT: dict[str, str] = {}


@schema.auth(refresh_interval=None)
class SessionAuth:
    """The schema's ``cookieAuth`` (the session cookie), with the CSRF pair the session needs:
    given to schemathesis as the schema's authentication, so that its negative cases (no
    cookie, a wrong one) and the ``ignored_auth`` check see what we send."""

    def get(self, case, context):
        return CURRENT.get("sessionid", "")

    def set(self, case, data, context):
        case.cookies = {**(case.cookies or {}), "sessionid": data, "csrftoken": CSRF}
        case.headers = {**(case.headers or {}), "X-CSRFToken": CSRF}


def _user(role: str, django_user_model):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(
        username=f"fuzz-{role}", is_staff=role != "annotator", is_superuser=role == "superuser")
    if role in ("reviewer", "researcher"):
        user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture(params=ROLES)
def session(request, client, django_user_model, settings):
    """Cookies of a logged-in ``role`` (parametrised), with a little data to act on."""
    settings.MTURK_ENDPOINT_URL = "http://127.0.0.1:9"
    # As Django's test client does: the test's transaction holds the database connection, so
    # the end of a request must not close it.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    client.force_login(_user(request.param, django_user_model))
    for _ in range(2):
        AnnotationFactory()
    CURRENT["sessionid"] = client.cookies["sessionid"].value
    yield request.param
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


HYPOTHESIS = {"deadline": None, "derandomize": True,
              "suppress_health_check": [HealthCheck.function_scoped_fixture,
                                        HealthCheck.too_slow, HealthCheck.filter_too_much]}


@schema.parametrize()
@settings(max_examples=EXAMPLES, **HYPOTHESIS)
def test_every_operation_as_every_role_passes_every_check(case, session):
    """No 5xx, and no answer outside the schema (statuses, content types, bodies), for every
    role; ``call_and_validate`` runs all of schemathesis's checks."""
    case.call_and_validate()


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_stateful_runs_follow_the_links(role, client, django_user_model):
    """Sequences of calls along the schema's links (a created project read, changed, listed),
    checked like single calls."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        client.force_login(_user(role, django_user_model))
        AnnotationFactory()
        CURRENT["sessionid"] = client.cookies["sessionid"].value
        run_state_machine_as_test(schema.as_state_machine(), settings=settings(
            max_examples=8, stateful_step_count=6, **HYPOTHESIS))
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
