"""The home page's and the review list's totals come from ``ProjectCount``, kept by database
triggers: whatever wrote or removed the rows, the totals equal the live counts (issue 21)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotation.models import Annotation, Assignment, Batch, Hit, Item, Project, ProjectCount
from annotation.selectors.projects import project_list_with_progress
from annotation.services.imports import import_files
from tests.factories import annotate, claire_sample, local_answer, workers

pytestmark = pytest.mark.django_db

DEMO_DATA = Path(__file__).resolve().parents[2] / "annotation" / "demo_data"


def totals() -> dict[str, tuple[int, int]]:
    return {project.slug: (project.item_count, project.annotation_count)
            for project in project_list_with_progress()}


def live() -> dict[str, tuple[int, int]]:
    return {project.slug: (Item.objects.filter(project=project).count(),
                           Annotation.objects.filter(project=project).count())
            for project in Project.objects.all()}


def test_every_writer_keeps_the_totals_equal_to_the_live_counts():
    project, items = claire_sample()
    assert totals() == live() == {project.slug: (5, 0)}
    crowd = workers(3)
    local_answer(project, items[0], crowd[0])  # the submit's own SQL
    annotate(items[1], crowd[1], rating=2)  # the ORM, one row
    Annotation.objects.bulk_create(  # one statement, many rows (imports, collections)
        Annotation(project=project, item=item, worker=crowd[2], source="import", rating=4,
                   state="imported") for item in items)
    assert totals() == live() == {project.slug: (5, 7)}
    import_files(fmt="claire", paths=[DEMO_DATA / "claire" / "dev_data.tsv"],
                 project_slug="imported", split="dev")
    imported = Project.objects.get(slug="imported")
    assert totals() == live() and totals()["imported"][0] > 0
    # Deletions: one answer, an assignment's answers by cascade, an item with its answers
    Annotation.objects.filter(item=items[1]).delete()
    batch = Batch.objects.create(project=project, title="b", provider="mturk")
    hit = Hit.objects.create(batch=batch, unique_request_token="t")
    assignment = Assignment.objects.create(hit=hit, worker=crowd[0],
                                           provider_assignment_id="A1")
    annotate(items[3], crowd[0], assignment=assignment, source="mturk", rating=5)
    assert totals() == live()
    assignment.delete()
    items[4].delete()
    assert totals() == live() == {project.slug: (4, 4), "imported": live()["imported"]}
    # A deleted project takes its counts with it; a new project starts from zero.
    imported.delete()
    assert not ProjectCount.objects.filter(project_id=imported.pk).exists()
    assert totals() == live() == {project.slug: (4, 4)}


def test_the_home_page_and_the_review_list_show_the_totals(staff_client,
                                                           django_assert_num_queries):
    _, items = claire_sample()
    for worker in workers(2):
        annotate(items[0], worker, rating=3)
    for url in ("/", "/staff/review/"):
        page = staff_client.get(url).content.decode()
        assert re.search(r"<td[^>]*>5</td><td[^>]*>2</td>", page), page
        # A researcher starts a project from either list (not only from the empty state).
        assert 'id="new-project" href="/staff/projects/new/"' in page
    # session, user, the projects with their totals (+ on the home page: the user's own
    # progress, one statement per project)
    with django_assert_num_queries(3):
        staff_client.get("/staff/review/")


def test_only_those_who_may_create_projects_see_new_project(annotator_client):
    claire_sample()
    page = annotator_client.get("/").content.decode()
    assert "Annotate" in page
    assert "new-project" not in page


@pytest.mark.parametrize(("group", "shown", "hidden"), [
    ("reviewer", {"Dashboard", "Review", "Answers", "Export"},
     {"Settings", "Team", "Import", "Splits", "Gold"}),
    ("researcher", {"Settings", "Team", "Import", "Splits", "Gold", "Dashboard", "Review",
                    "Answers", "Export"}, set()),
])
def test_the_project_bar_shows_the_pages_the_role_opens(client, django_user_model, group,
                                                        shown, hidden):
    from django.contrib.auth.models import Group

    project, _ = claire_sample()
    user = django_user_model.objects.create_user("member", password="pw-member-1",
                                                 is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client.force_login(user)
    for url in (f"/staff/review/{project.slug}/dashboard/", f"/staff/review/{project.slug}/",
                f"/staff/projects/{project.slug}/export/"):
        page = client.get(url).content.decode()
        bar = page[page.index('<nav class="console-nav"'):]
        bar = bar[:bar.index("</nav>")]
        links = set(re.findall(r">([A-Z][a-z]+)</a>", bar)) - {"Projects"}
        assert shown <= links and not (hidden & links), (url, links)
        for label in links:  # every page the bar offers opens for this role
            href = re.search(rf'href="([^"]+)">{label}</a>', bar).group(1)
            assert client.get(href.replace("&amp;", "&")).status_code == 200, (label, href)
