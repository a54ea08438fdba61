"""The console's gold page: the rate and stop settings go through the one project validation,
the binomial advice is shown beside them, items are marked gold and made ordinary again."""

import json

import pytest

from annotation.models import Item, StatusEvent
from qc.gold import gold_reliability
from tests.factories import decontext_project, plausibility_project

pytestmark = pytest.mark.django_db


def url(project) -> str:
    return f"/staff/projects/{project.slug}/gold/"


def test_the_rate_is_saved_and_the_advice_shown_beside_it(staff_client):
    project = plausibility_project(items=3)
    response = staff_client.post(url(project), {"settings": "yes", "gold_rate": "0.1",
                                                "gold_failures_stop": "on"})
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.gold_rate, project.gold_failures_stop) == (0.1, True)
    page = staff_client.get(url(project)).content.decode()
    twenty = gold_reliability(20)
    assert f"{twenty.false_flag_rate:.1%}" in page and f"{twenty.recall:.0%}" in page
    assert "at least <strong>20</strong> gold items" in page
    assert "a worker who is served 200 items" in page
    assert "This project has 0 gold items" in page


def test_a_rate_out_of_range_is_refused_with_nothing_saved(staff_client):
    project = plausibility_project(items=1)
    response = staff_client.post(url(project), {"settings": "yes", "gold_rate": "0.9"})
    assert response.status_code == 400
    assert "Ensure this value is less than or equal to 0.5" in response.content.decode()
    project.refresh_from_db()
    assert project.gold_rate == 0.0


def test_mark_and_unmark_an_item(staff_client):
    project = plausibility_project(items=2)
    response = staff_client.post(url(project), {"mark": "yes", "external_id": "p1",
                                                "answer": "3|4"})
    assert response.status_code == 302
    item = Item.objects.get(project=project, external_id="p1")
    assert (item.is_gold, item.gold_answer) == (True, [3, 4])
    assert StatusEvent.objects.filter(kind="item_gold", new_status="gold").exists()
    page = staff_client.get(url(project)).content.decode()
    assert "Gold items (1)" in page and "<code>[3, 4]</code>" in page
    staff_client.post(url(project), {"unmark": str(item.pk)})
    item.refresh_from_db()
    assert (item.is_gold, item.gold_answer) == (False, None)


@pytest.mark.parametrize(("external_id", "answer", "message"), [
    ("nope", "3", "No item with this id in the project."),
    ("d0", "MAYBE", "gold answer: a decontext gold answer is one of DONE, IMPOSSIBLE, "
                    "UNNECESSARY, or a list of them"),
])
def test_a_bad_mark_says_why_and_changes_nothing(staff_client, external_id, answer, message):
    project = decontext_project(items=1)
    response = staff_client.post(url(project), {"mark": "yes", "external_id": external_id,
                                                "answer": answer})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Item.objects.filter(is_gold=True).exists()


def test_a_dataset_answer_is_escaped(staff_client):
    project = decontext_project(items=1)
    Item.objects.filter(project=project).update(is_gold=True, gold_answer="<b>x</b>")
    page = staff_client.get(url(project)).content.decode()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_admin_and_api_refuse_a_bad_rate_with_the_same_message(staff_client):
    project = plausibility_project(items=1)
    message = "gold_rate: must be a share from 0 to 0.5 of the items each worker is served"
    response = staff_client.post(f"/admin/annotation/project/{project.pk}/change/", {
        "name": project.name, "instructions": "", "redundancy": json.dumps(project.redundancy),
        "reward_cents": "0", "live_check_settings": "{}", "flag_settings": "{}",
        "status": "open", "workers_everyone": "on", "licence": "", "attribution": "",
        "gold_rate": "0.9"})
    assert response.status_code == 200 and message in response.content.decode()
    response = staff_client.patch(f"/api/projects/{project.slug}/",
                                  json.dumps({"gold_rate": 0.9}),
                                  content_type="application/json")
    assert response.status_code == 400 and message in response.content.decode()
    project.refresh_from_db()
    assert (project.gold_rate, project.gold_failures_stop) == (0.0, False)


def test_the_page_says_whether_a_workers_first_items_are_gold(staff_client):
    project = plausibility_project(items=3)
    page = staff_client.get(url(project)).content.decode()
    assert "Every worker's gold items are spread over their work at the rate" in page
    project.flag_settings = {**(project.flag_settings or {}), "gold_first": 3}
    project.save(update_fields=["flag_settings"])
    page = staff_client.get(url(project)).content.decode()
    assert "serves each worker's first 3 items from the gold items" in page
