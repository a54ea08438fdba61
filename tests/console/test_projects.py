"""The console's project pages, the one validation behind pages, admin and API, and stored
settings that fail it (they break nothing but that project's work)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.utils.html import escape

from annotation.models import Annotation, Item, Project
from annotation.services.projects import project_settings_errors
from tests.factories import local_submit, plausibility_project, rewrite_project
from tests.security.test_access import TABLE as ACCESS_TABLE
from tests.security.test_access import send as send_row
from tests.security.test_access import url_patterns, world  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

NEW = {"name": "My rewrite set", "slug": "my-rewrites", "kind": "rewrite",
       "instructions": "Rewrite **each** question.", "reward_cents": "35",
       "estimated_minutes": "4", "status": "open", "redundancy_train": "1",
       "redundancy_dev": "3", "redundancy_test": "3"}


def test_a_researcher_creates_a_project_on_the_page(staff_client):
    response = staff_client.post("/staff/projects/new/", {
        **NEW, "live__rewrite_too_short__min_tokens": "5", "flag__fast_z": "2.5"})
    assert response.status_code == 302
    project = Project.objects.get(slug="my-rewrites")
    assert response["Location"] == "/staff/projects/my-rewrites/settings/"
    assert project.redundancy == {"train": 1, "dev": 3, "test": 3}
    assert project.reward_cents == 35 and project.estimated_minutes == 4
    assert project.live_check_settings == {"rewrite_too_short.min_tokens": 5}
    assert project.flag_settings == {"fast_z": 2.5}


def test_a_settings_page_shows_every_threshold_with_its_default_and_meaning(staff_client):
    project = rewrite_project()
    page = staff_client.get(f"/staff/projects/{project.slug}/settings/").content.decode()
    assert "rewrite_too_short.min_tokens" in page and "default 3." in page
    assert "fewer than min_tokens tokens" in page  # the rule's own description
    assert "flag: fast_z" in page and "default 3.5." in page
    assert "modified z-scores" in page  # what the flag threshold does


def test_bad_settings_are_form_errors_and_change_nothing(staff_client):
    project = rewrite_project()
    response = staff_client.post(f"/staff/projects/{project.slug}/settings/", {
        **NEW, "redundancy_train": "lots", "live__split_low_coverage__min_coverage": "7"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "Enter a whole number." in page
    assert "Ensure this value is less than or equal to 1" in page
    project.refresh_from_db()
    assert project.redundancy == {"train": 1, "dev": 1, "test": 1}
    assert project.name == "CANARD demo"


def test_a_taken_slug_is_a_form_error(staff_client):
    rewrite_project(slug="my-rewrites")
    response = staff_client.post("/staff/projects/new/", NEW)
    assert response.status_code == 200
    assert "a project &#x27;my-rewrites&#x27; exists already" in response.content.decode()
    assert Project.objects.filter(slug="my-rewrites").count() == 1


def test_the_instructions_preview_is_rendered_markdown_with_html_escaped(staff_client):
    response = staff_client.post("/staff/projects/new/", {
        **NEW, "instructions": "**Be brief** <script>alert(1)</script> [x](javascript:alert(1))",
        "preview": "yes"})
    page = response.content.decode()
    assert "<strong>Be brief</strong>" in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;" in page
    assert 'href="javascript:' not in page
    assert not Project.objects.filter(slug="my-rewrites").exists()  # a preview writes nothing


#: Stored settings that fail the validation (as written before it, or by hand in the database).
BROKEN_ROWS = [
    {"redundancy": {"train": "lots"}},
    {"redundancy": "lots"},
    {"flag_settings": {"fast_z": "very"}},
    {"flag_settings": [1]},
    {"live_check_settings": {"no_such_rule.min_tokens": 2}},
    {"live_check_settings": "x"},
]


@pytest.mark.parametrize("broken", BROKEN_ROWS)
def test_a_stored_row_failing_validation_breaks_no_page(broken, client, staff_user,
                                                        annotator_user):
    sound = plausibility_project(slug="sound")
    bad = plausibility_project(slug="broken")
    Project.objects.filter(pk=bad.pk).update(**broken)  # as written before this validation
    assert project_settings_errors(Project.objects.get(pk=bad.pk))
    client.force_login(annotator_user)
    home = client.get("/")
    assert home.status_code == 200
    page = home.content.decode()
    assert "cannot take work until its researchers fix its settings" in page
    assert f"/annotate/{sound.slug}/" in page  # the sound project is unaffected
    refused = client.get(f"/annotate/{bad.slug}/")
    assert refused.status_code == 403
    assert "fix its settings" in refused.content.decode()
    client.force_login(staff_user)
    home = client.get("/")
    assert home.status_code == 200
    assert "Settings error:" in home.content.decode()
    settings_page = client.get(f"/staff/projects/{bad.slug}/settings/")
    assert settings_page.status_code == 200
    assert 'id="settings-errors"' in settings_page.content.decode()
    gold_page = client.get(f"/staff/projects/{bad.slug}/gold/")
    assert gold_page.status_code == 200
    gold_text = gold_page.content.decode()
    assert 'id="settings-errors"' in gold_text
    for error in project_settings_errors(bad):  # each one named, escaped as any text
        assert escape(error) in gold_text
    assert client.get(f"/admin/annotation/project/{bad.pk}/change/").status_code == 200


def test_an_update_repairs_a_broken_row_or_is_refused_naming_it(staff_client):
    project = plausibility_project(slug="broken")
    Project.objects.filter(pk=project.pk).update(redundancy={"train": "lots"})
    renamed = staff_client.patch(f"/api/projects/{project.slug}/", {"name": "Renamed"},
                                 content_type="application/json")
    assert renamed.status_code == 400
    assert "redundancy[train]: must be an integer from 1 to 50" in renamed.content.decode()
    assert Project.objects.get(pk=project.pk).name != "Renamed"
    fixed = staff_client.patch(f"/api/projects/{project.slug}/",
                               {"redundancy": {"train": 2, "dev": 3, "test": 3}},
                               content_type="application/json")
    assert fixed.status_code == 200
    project.refresh_from_db()
    assert project.redundancy == {"train": 2, "dev": 3, "test": 3}
    assert project_settings_errors(project) == []


def test_a_decision_on_a_broken_project_is_refused_naming_its_settings(staff_client):
    from tests.factories import local_answer, local_worker

    project = plausibility_project(slug="broken")
    answer = local_answer(project, project.items.get(), local_worker("ann")).annotation
    Project.objects.filter(pk=project.pk).update(redundancy={"train": "lots"})
    response = staff_client.post(
        f"/staff/review/{project.slug}/annotations/{answer.pk}/decide/",
        {"action": "reject", "message": "Not what was asked."}, follow=True)
    assert response.status_code == 200
    assert ("project broken: fix its settings before deciding on its work "
            "(redundancy[train]: must be an integer from 1 to 50)") in response.content.decode()
    answer.refresh_from_db()
    assert answer.review_status == Annotation.Review.PENDING


def _requests_naming_the_project():
    """(role, row) for every URL pattern the resolver lists that is about one project (a
    ``slug`` in its route, or the project in its query), with the requests of its row in the
    access table (``tests/security/test_access.py``, which has a row for every pattern): a new
    project page cannot escape the check below."""
    for route, _ in url_patterns():
        if route.startswith("admin/"):
            continue
        assert route in ACCESS_TABLE, f"{route}: no row in the access table"
        for row in ACCESS_TABLE[route]:
            if "slug" not in route and "{slug}" not in row.url:
                continue
            yield "staff", row
            if row.annotator not in (302, 401, 403):  # pages an annotator may open
                yield "annotator", row


@pytest.mark.parametrize("broken", BROKEN_ROWS)
def test_a_stored_row_failing_validation_breaks_no_project_url(broken, world, staff_user,  # noqa: F811
                                                               annotator_user):
    """Every project-scoped page and API endpoint of a project whose stored settings fail the
    validation answers (a page, a refusal, an error naming the settings), never a 500."""
    Project.objects.filter(slug=world["slug"]).update(**broken)
    project = Project.objects.get(slug=world["slug"])
    assert project_settings_errors(project)
    clients = {}
    for role, user in (("staff", staff_user), ("annotator", annotator_user)):
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(user)
    requests = list(_requests_naming_the_project())
    tried = {row.url for _, row in requests}
    assert {"/staff/projects/{slug}/gold/", "/api/projects/{slug}/counts/",
            "/annotate/{slug}/"} <= tried
    failures = []
    for role, row in requests:
        response = send_row(clients[role], row, world)
        if response.status_code >= 500:
            failures.append(f"{role} {row.method} {row.url}: {response.status_code}")
    for url in ("/admin/annotation/project/", f"/admin/annotation/project/{project.pk}/change/"):
        response = clients["staff"].get(url)
        if response.status_code >= 500:
            failures.append(f"staff GET {url}: {response.status_code}")
    assert not failures, "\n".join(failures)


def test_admin_refuses_bad_redundancy_on_add_as_a_form_error(staff_client):
    response = staff_client.post("/admin/annotation/project/add/", {
        "slug": "admin-made", "name": "Admin made", "kind": "plausibility",
        "instructions": "", "redundancy": json.dumps({"train": "lots"}), "reward_cents": "0",
        "live_check_settings": "{}", "flag_settings": "{}", "status": "open",
        "workers_everyone": "on", "licence": "", "attribution": ""})
    assert response.status_code == 200  # the form again, not "added successfully"
    assert "redundancy[train]: must be an integer from 1 to 50" in response.content.decode()
    assert not Project.objects.filter(slug="admin-made").exists()
    assert staff_client.get("/").status_code == 200


def test_admin_refuses_bad_flag_settings_on_change(staff_client):
    project = plausibility_project()
    response = staff_client.post(f"/admin/annotation/project/{project.pk}/change/", {
        "name": project.name, "instructions": "", "redundancy": json.dumps(project.redundancy),
        "reward_cents": "0", "live_check_settings": "{}",
        "flag_settings": json.dumps({"fast_z": "fast"}), "status": "open",
        "workers_everyone": "on", "licence": "", "attribution": ""})
    assert response.status_code == 200
    assert "flag_settings:" in response.content.decode()
    project.refresh_from_db()
    assert project.flag_settings == {}


def test_admin_adds_a_valid_project_through_the_service(staff_client):
    response = staff_client.post("/admin/annotation/project/add/", {
        "slug": "admin-made", "name": "Admin made", "kind": "plausibility",
        "instructions": "", "redundancy": json.dumps({"train": 2, "dev": 4, "test": 4}),
        "reward_cents": "10", "live_check_settings": "{}", "flag_settings": "{}",
        "status": "open", "workers_everyone": "on", "licence": "", "attribution": "",
        "gold_rate": "0"})
    assert response.status_code == 302
    assert Project.objects.get(slug="admin-made").redundancy == {"train": 2, "dev": 4, "test": 4}


def test_the_api_gives_the_same_errors(staff_client):
    response = staff_client.post("/api/projects/", json.dumps(
        {"slug": "api-made", "kind": "plausibility", "name": "API",
         "redundancy": {"train": "lots"}}), content_type="application/json")
    assert response.status_code == 400
    assert "redundancy[train]: must be an integer from 1 to 50" in json.dumps(response.json())
    response = staff_client.post("/api/projects/", json.dumps(
        {"slug": "api-made", "kind": "plausibility", "name": "API", "estimated_minutes": 3,
         "live_check_settings": {"sluice_too_short.min_tokens": 4}}),
        content_type="application/json")
    assert response.status_code == 201, response.content
    project = Project.objects.get(slug="api-made")
    assert project.redundancy == {"train": 2, "dev": 4, "test": 4}  # the kind's default
    assert project.estimated_minutes == 3


def test_the_batch_form_starts_from_the_projects_reward_and_time(staff_client):
    project = plausibility_project()
    Project.objects.filter(pk=project.pk).update(reward_cents=35, estimated_minutes=7)
    page = staff_client.get(f"/staff/batches/new/?project={project.slug}").content.decode()
    assert 'name="reward" value="0.35"' in page
    assert 'name="estimated_minutes" value="7"' in page
    plain = staff_client.get("/staff/batches/new/").content.decode()
    assert 'name="reward" value="0.50"' in plain


def test_live_checks_use_the_projects_thresholds_in_the_page_and_on_the_server(
        annotator_client):
    project = rewrite_project()
    item = Item.objects.filter(project=project).order_by("position").first()
    page = annotator_client.get(f"/annotate/{project.slug}/").content.decode()
    assert '"min_tokens": 3' in page
    # Seven tokens: enough for the default (3), too short once the project asks for 8.
    rewrite = "What was Frank Zappa's band's first album?"
    local_submit(annotator_client, project, item.pk, {"rewrite": rewrite})
    first = Annotation.objects.get(item=item)
    assert "rewrite_too_short" not in {w["code"] for w in first.server_warnings}
    Project.objects.filter(pk=project.pk).update(
        live_check_settings={"rewrite_too_short.min_tokens": 8})
    page = annotator_client.get(f"/annotate/{project.slug}/").content.decode()
    assert '"min_tokens": 8' in page
    other = Item.objects.filter(project=project).exclude(pk=item.pk).order_by("position").first()
    local_submit(annotator_client, project, other.pk, {"rewrite": rewrite})
    second = Annotation.objects.get(item=other)
    assert "rewrite_too_short" in {w["code"] for w in second.server_warnings}


def test_the_page_for_a_group_limited_project_lists_it_only_for_its_team(client,
                                                                         annotator_user):
    project = plausibility_project()
    project.workers_everyone = False
    project.save()
    client.force_login(annotator_user)
    assert f"/annotate/{project.slug}/" not in client.get("/").content.decode()
    team = Group.objects.create(name="team-a")
    annotator_user.groups.add(team)
    project.allowed_groups.add(team)
    assert f"/annotate/{project.slug}/" in client.get("/").content.decode()
