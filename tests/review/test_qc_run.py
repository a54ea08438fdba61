""""Run QC now" on the review queue and dashboard: staff only, POST + CSRF, a summary message,
flags stored idempotently, worker text escaped in the queue it fills."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Flag
from tests.exports.builders import annotate, canard_project, workers

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"


def pronoun_rewrite_project():
    """A rewrite that keeps its pronoun (and carries markup): QC must flag it."""
    project, items = canard_project()
    worker = workers(1)[0]
    annotation = annotate(items[1], worker, text=f"When did they disband? {SCRIPT}")
    return project, annotation


def test_run_qc_from_the_queue_stores_flags_and_reports_them(staff_client):
    project, annotation = pronoun_rewrite_project()
    url = f"/staff/review/{project.slug}/"
    empty = staff_client.get(url).content.decode()
    assert "No open flags" in empty and "Run QC now" in empty
    assert f"qc_report {project.slug}" in empty  # the CLI stays mentioned as secondary text
    response = staff_client.post(f"/staff/review/{project.slug}/qc/", {"next": url},
                                 follow=True)
    assert response.redirect_chain == [(url, 302)]
    page = response.content.decode()
    flag = Flag.objects.get(project=project, reason="rewrite_pronoun_left")
    assert flag.annotation == annotation and flag.status == Flag.Status.OPEN
    assert "QC ran on 1 annotations" in page and "rewrite_pronoun_left 1" in page
    assert "1 new, 0 kept, 0 cleared" in page
    # Worker text reaches the queue only escaped.
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # Running again keeps the flag (no duplicate) and says so.
    again = staff_client.post(f"/staff/review/{project.slug}/qc/", {"next": url},
                              follow=True).content.decode()
    assert Flag.objects.filter(project=project).count() == 1
    assert "0 new, 1 kept, 0 cleared" in again


def test_run_qc_clears_flags_that_no_longer_hold_and_returns_to_the_dashboard(staff_client):
    project, annotation = pronoun_rewrite_project()
    staff_client.post(f"/staff/review/{project.slug}/qc/")
    annotation.text = "When did Frank Zappa and the Mothers of Invention disband?"
    annotation.save(update_fields=["text"])
    dashboard = f"/staff/review/{project.slug}/dashboard/"
    assert "Run QC now" in staff_client.get(dashboard).content.decode()
    response = staff_client.post(f"/staff/review/{project.slug}/qc/", {"next": dashboard},
                                 follow=True)
    assert response.redirect_chain == [(dashboard, 302)]
    assert "0 new, 0 kept, 1 cleared" in response.content.decode()
    assert not Flag.objects.filter(project=project).exists()


def test_run_qc_reports_bad_flag_settings_instead_of_failing(staff_client):
    project, _ = pronoun_rewrite_project()
    project.flag_settings = {"no_such_threshold": 1}
    project.save(update_fields=["flag_settings"])
    page = staff_client.post(f"/staff/review/{project.slug}/qc/", follow=True).content.decode()
    assert "QC did not run" in page and "no_such_threshold" in page
    assert not Flag.objects.filter(project=project).exists()


def test_run_qc_is_staff_only_post_only_and_csrf_protected(annotator_client, client,
                                                            staff_user):
    project, _ = pronoun_rewrite_project()
    url = f"/staff/review/{project.slug}/qc/"
    response = Client().post(url)
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert annotator_client.post(url).status_code == 403  # logged in, not a reviewer
    assert not Flag.objects.exists()
    client.force_login(staff_user)
    assert client.get(url).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(staff_user)
    assert strict.post(url).status_code == 403
    assert not Flag.objects.exists()
    page = strict.get(f"/staff/review/{project.slug}/").content.decode()
    assert f'action="{url}"' in page and "csrfmiddlewaretoken" in page


def test_next_must_stay_on_this_site(staff_client):
    project, _ = pronoun_rewrite_project()
    response = staff_client.post(f"/staff/review/{project.slug}/qc/",
                                 {"next": "https://evil.example/phish"})
    assert response.status_code == 302
    assert response["Location"] == f"/staff/review/{project.slug}/"
