"""Adding places names the Prolific study by its own id, never by our database id (issue 24:
"Add places to study # 1")."""

from __future__ import annotations

import pytest

from annotation.models import Hit
from tests.factories import batch_plausibility_project, launch_prolific

pytestmark = pytest.mark.django_db


def test_the_form_lists_studies_by_id_and_the_message_names_the_study(
        prolific_app, staff_client, django_capture_on_commit_callbacks):
    project = batch_plausibility_project(items=4)
    batch = launch_prolific(project, django_capture_on_commit_callbacks)
    hit = batch.hits.get()
    detail = staff_client.get(f"/staff/batches/{batch.pk}/").content.decode()
    assert f'<option value="{hit.pk}">study {hit.provider_hit_id}</option>' in detail
    assert 'to study # <input' not in detail
    with django_capture_on_commit_callbacks(execute=True):
        done = staff_client.post(f"/staff/batches/{batch.pk}/manage/",
                                 {"action": "add", "count": "2", "hit": str(hit.pk)},
                                 follow=True).content.decode()
    assert f"Add places (2): requested for 1 study: {hit.provider_hit_id}." in done
    assert Hit.objects.get(pk=hit.pk).max_assignments == 6
