"""The REST API: permissions, worker isolation, schema."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import AnnotationFactory, ItemFactory, ProjectFactory

pytestmark = pytest.mark.django_db


def test_schema_is_served(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/projects/" in response.content


def test_anonymous_users_are_refused(client):
    ProjectFactory()
    assert client.get("/api/projects/").status_code in (401, 403)


def test_annotator_reads_projects_but_cannot_write(annotator_client):
    ProjectFactory(slug="claire-dev")
    listed = annotator_client.get("/api/projects/").json()
    assert [project["slug"] for project in listed["results"]] == ["claire-dev"]
    response = annotator_client.post("/api/projects/",
                                     {"slug": "x", "name": "X", "kind": "sluice"},
                                     content_type="application/json")
    assert response.status_code == 403


def test_staff_creates_a_project_with_default_redundancy(staff_client):
    response = staff_client.post("/api/projects/",
                                 {"slug": "sluices", "name": "Sluices", "kind": "sluice"},
                                 content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["redundancy"] == {"train": 1, "dev": 1, "test": 3}


def test_bad_redundancy_is_a_clear_error(staff_client):
    response = staff_client.post(
        "/api/projects/",
        {"slug": "p", "name": "P", "kind": "sluice", "redundancy": {"validation": 2}},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "redundancy" in response.json()


def test_project_kind_cannot_change(staff_client):
    ProjectFactory(slug="fixed", kind="sluice")
    response = staff_client.patch("/api/projects/fixed/", {"kind": "rewrite"},
                                  content_type="application/json")
    assert response.status_code == 400


def test_items_are_staff_only(annotator_client):
    ItemFactory()
    assert annotator_client.get("/api/items/").status_code == 403


def test_workers_see_only_their_own_annotations(annotator_client, annotator_user):
    from annotation.services.workers import worker_for_user

    mine = AnnotationFactory(worker=worker_for_user(user=annotator_user))
    AnnotationFactory()  # someone else's
    listed = annotator_client.get("/api/annotations/").json()["results"]
    assert [row["id"] for row in listed] == [mine.id]
    other = AnnotationFactory()
    assert annotator_client.get(f"/api/annotations/{other.id}/").status_code == 404


def test_staff_annotation_list_runs_a_fixed_number_of_queries(staff_client):
    project = ProjectFactory()
    for _ in range(3):
        AnnotationFactory(item__project=project)
    with CaptureQueriesContext(connection) as few:
        staff_client.get("/api/annotations/")
    for _ in range(20):
        AnnotationFactory(item__project=project)
    with CaptureQueriesContext(connection) as many:
        staff_client.get("/api/annotations/")
    assert len(many) == len(few)


def test_item_list_shows_the_source_without_n_plus_one(staff_client):
    project = ProjectFactory()
    ItemFactory(project=project)
    with CaptureQueriesContext(connection) as few:
        staff_client.get(f"/api/items/?project={project.slug}")
    for _ in range(15):
        ItemFactory(project=project)
    with CaptureQueriesContext(connection) as many:
        body = staff_client.get(f"/api/items/?project={project.slug}").json()
    assert len(many) == len(few)
    assert body["results"][0]["source"]["type"] == "filler"


def test_api_docs_are_served_without_a_cdn(client):
    page = client.get("/api/docs/").content.decode()
    assert "cdn.jsdelivr" not in page and "unpkg" not in page
    assert "/static/drf_spectacular_sidecar/" in page


def test_home_links_staff_to_review_and_hides_it_from_annotators(staff_client, client,
                                                                  annotator_user):
    ProjectFactory(slug="claire-dev")
    staff_page = staff_client.get("/").content.decode()
    assert "/staff/review/claire-dev/dashboard/" in staff_page
    assert "/staff/batches/" in staff_page
    client.force_login(annotator_user)
    annotator_page = client.get("/").content.decode()
    assert "/staff/review/" not in annotator_page
    assert "/annotate/claire-dev/" in annotator_page


def test_task_page_scripts_are_served_without_debug(client):
    """gunicorn deployments (DEBUG off, no collectstatic) still get the task pages' JS."""
    response = client.get("/static/frontend/annotate/page.js")
    assert response.status_code == 200
    assert b"import" in b"".join(response.streaming_content)


@pytest.mark.django_db
def test_the_favicon_browsers_ask_every_site_for_is_served(client):
    """Chromium asks for /favicon.ico on every page (the admin's and the API's too); our pages
    also name the icon in their <head>."""
    redirect = client.get("/favicon.ico")
    assert redirect.status_code == 301
    assert redirect["Location"] == "/static/frontend/favicon.svg"
    icon = client.get(redirect["Location"])
    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(icon.streaming_content)
    assert 'rel="icon" href="/static/frontend/favicon.svg"' in client.get(
        "/accounts/login/").content.decode()
