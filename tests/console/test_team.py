"""Team: accounts and roles, who may work on a project, open / paused / closed — one rule
(``annotation/selectors/access.py``) asked by the local queue, the crowd pages and the API."""

from __future__ import annotations

import json
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.test import Client

from annotation.models import Annotation, Item, Project
from annotation.selectors.access import REFUSALS
from annotation.services.accounts import account_create
from tests.factories import local_submit, plausibility_project, prolific_study_hit, publish_hit

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(staff_user) -> Client:
    """A researcher's own browser (the annotator's is ``client``)."""
    browser = Client()
    browser.force_login(staff_user)
    return browser


def test_a_researcher_creates_accounts_with_roles(staff_client):
    response = staff_client.post("/staff/team/", {"username": "ana", "password": "long-Pass-92x",
                                                  "role": "annotator"})
    assert response.status_code == 302
    response = staff_client.post("/staff/team/", {"username": "rev", "password": "long-Pass-92x",
                                                  "role": "reviewer"})
    users = get_user_model().objects
    assert not users.get(username="ana").is_staff
    reviewer = users.get(username="rev")
    assert reviewer.is_staff and list(reviewer.groups.values_list("name", flat=True)) == [
        "reviewer"]
    assert reviewer.has_perm("annotation.change_assignment")
    staff_client.post("/staff/team/", {"role_of": reviewer.pk, "role": "researcher"})
    reviewer = users.get(username="rev")
    assert list(reviewer.groups.values_list("name", flat=True)) == ["researcher"]
    assert reviewer.has_perm("auth.add_user")  # migration 0018: researchers manage the team


def test_a_weak_password_or_taken_name_is_a_form_error(staff_client, annotator_user):
    response = staff_client.post("/staff/team/", {"username": "annotator", "password": "x",
                                                  "role": "annotator"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "is taken" in page and "too short" in page


@pytest.mark.parametrize("username", ["ana maria", "<b>x</b>", "a/b", "semi;colon", "x" * 151])
def test_a_username_the_auth_model_refuses_is_a_form_error(staff_client, username):
    response = staff_client.post("/staff/team/", {"username": username,
                                                  "password": "long-Pass-92x",
                                                  "role": "annotator"})
    page = response.content.decode()
    assert response.status_code == 200 and 'class="errorlist' in page
    assert ("letters, digits and @ . + - _" in page or "150 characters" in page)
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["researcher"]


@pytest.mark.parametrize("username", ["ana maria", "tab\tname", "a/b", "<b>", "x" * 151])
def test_the_account_service_refuses_a_bad_username_by_field(username):
    with pytest.raises(ValidationError) as refused:
        account_create(username=username, password="long-Pass-92x", role="annotator")
    assert list(refused.value.message_dict) == ["username"]
    assert refused.value.message_dict["username"][0].startswith("username: ")
    assert not get_user_model().objects.exists()


def test_the_account_service_takes_the_auth_models_characters():
    user = account_create(username="ana.m+1@lab-x_y", password="long-Pass-92x",
                          role="annotator")
    assert user.username == "ana.m+1@lab-x_y"


def test_a_reviewer_may_not_create_accounts(client):
    reviewer = get_user_model().objects.create_user("rev", password="x", is_staff=True)
    reviewer.groups.add(Group.objects.get(name="reviewer"))
    client.force_login(reviewer)
    assert client.post("/staff/team/", {"username": "eve", "password": "long-Pass-92x",
                                        "role": "researcher"}).status_code == 403
    assert not get_user_model().objects.filter(username="eve").exists()


@pytest.mark.parametrize("status", ["paused", "closed"])
def test_a_paused_or_closed_project_takes_no_local_work(status, researcher, client,
                                                        annotator_user):
    project = plausibility_project(items=2)
    item = Item.objects.filter(project=project).first()
    response = researcher.post(f"/staff/projects/{project.slug}/team/", {"status": status})
    assert response.status_code == 302
    assert Project.objects.get(pk=project.pk).status == status
    client.force_login(annotator_user)
    page = client.get(f"/annotate/{project.slug}/")
    assert page.status_code == 403
    assert REFUSALS[status] in page.content.decode()
    saved = local_submit(client, project, item.pk, {"rating": 3})
    assert saved.status_code == 409
    assert saved.json()["error"] == status
    assert not Annotation.objects.exists()
    assert REFUSALS[status] in client.get("/").content.decode()
    lease = client.post(f"/annotate/{project.slug}/lease/", '{"item_ids": []}',
                        content_type="application/json")
    assert lease.status_code == 409
    api = client.get("/api/projects/").json()
    assert project.slug not in str(api)
    researcher.post(f"/staff/projects/{project.slug}/team/", {"status": "open"})
    assert client.get(f"/annotate/{project.slug}/").status_code == 200
    assert local_submit(client, project, item.pk, {"rating": 3}).status_code == 200


def test_only_the_chosen_people_and_groups_work_on_a_limited_project(researcher, client,
                                                                     annotator_user):
    project = plausibility_project(items=2)
    item = Item.objects.filter(project=project).first()
    researcher.post(f"/staff/projects/{project.slug}/team/", {"everyone": "0"})
    assert not Project.objects.get(pk=project.pk).workers_everyone
    client.force_login(annotator_user)
    page = client.get(f"/annotate/{project.slug}/")
    assert page.status_code == 403
    assert REFUSALS["not_chosen"] in page.content.decode()
    refused = local_submit(client, project, item.pk, {"rating": 3})
    assert refused.status_code == 403 and refused.json()["error"] == "not_chosen"
    team = Group.objects.create(name="cohort-1")
    annotator_user.groups.add(team)
    researcher.post(f"/staff/projects/{project.slug}/team/",
                      {"everyone": "0", "groups": [team.pk]})
    assert client.get(f"/annotate/{project.slug}/").status_code == 200
    assert local_submit(client, project, item.pk, {"rating": 3}).status_code == 200
    annotator_user.groups.remove(team)
    researcher.post(f"/staff/projects/{project.slug}/team/",
                      {"everyone": "0", "users": [annotator_user.pk]})
    assert client.get(f"/annotate/{project.slug}/").status_code == 200


@pytest.mark.parametrize("state", ["paused", "closed"])
def test_the_mturk_and_prolific_pages_honour_a_paused_or_closed_project(client, state):
    project = plausibility_project(items=2)
    publish_hit(project, hit_id="HITPAUSE")
    hit = prolific_study_hit(project, study_id="64d3ab4de4bae1091e5de441")
    Project.objects.filter(pk=project.pk).update(status=state)
    mturk = client.get(f"/mturk/task/{project.slug}/?hitId=HITPAUSE"
                       "&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    assert mturk.status_code == 409
    assert REFUSALS[state] in mturk.content.decode()
    prolific = client.get(f"/prolific/task/{project.slug}/?PROLIFIC_PID=5a9d64f5f6dfdd0001eaa73d"
                          f"&STUDY_ID={hit.provider_hit_id}&SESSION_ID=6500aa00bb11cc22dd33ee44")
    assert prolific.status_code == 409
    assert REFUSALS[state] in prolific.content.decode()
    assert "config" not in (mturk.context or {}) and "config" not in (prolific.context or {})


#: A crowd worker's task link on each door (the worker's own, not a preview).
CROWD_LINKS = {
    "mturk": "/mturk/task/{slug}/?hitId=HITPAUSE&assignmentId=ASGPAUSE0001"
             "&workerId=AWORKERPAUSE1&turkSubmitTo=https://www.mturk.com",
    "prolific": "/prolific/task/{slug}/?PROLIFIC_PID=5a9d64f5f6dfdd0001eaa73d"
                "&STUDY_ID=64d3ab4de4bae1091e5de441&SESSION_ID=6500aa00bb11cc22dd33ee44",
}


@pytest.mark.parametrize("state", ["paused", "closed"])
@pytest.mark.parametrize("door", sorted(CROWD_LINKS))
def test_a_crowd_save_after_the_project_paused_is_refused_with_the_message(client, door, state):
    """The worker opened the task while the project was open; it is paused (or closed) before
    they save: the save is refused with the project's message and nothing is stored."""
    project = plausibility_project(items=2)
    publish_hit(project, hit_id="HITPAUSE")
    prolific_study_hit(project, study_id="64d3ab4de4bae1091e5de441")
    page = client.get(CROWD_LINKS[door].format(slug=project.slug))
    assert page.status_code == 200, page.content.decode()[:300]
    config = page.context["config"]
    Project.objects.filter(pk=project.pk).update(status=state)
    saved = client.post(config["submit_url"], json.dumps({
        "item_id": config["items"][0]["item_id"], "client_token": uuid.uuid4().hex,
        "task_token": config["task_token"], "payload": {"rating": 4}}),
        content_type="application/json")
    assert saved.status_code == 409
    assert saved.json()["error"] == state
    assert saved.json()["message"] == REFUSALS[state]
    assert not Annotation.objects.exists()
