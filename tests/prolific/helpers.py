"""Launching a Prolific batch and working on its task page in tests, through the real
services and views."""

from __future__ import annotations

from annotation.models import Batch
from annotation.services.batches.plan import LaunchOptions, batch_launch, batch_plan


def prolific_options(**overrides) -> LaunchOptions:
    values = {"title": "Rate fillers", "reward_cents": 150, "items_per_hit": 5,
              "splits": ("dev",), "provider": "prolific", "estimated_minutes": 10,
              "assignment_duration_seconds": 30 * 60, "min_percent_approved": 95}
    values.update(overrides)
    return LaunchOptions(**values)


def launch_prolific(project, capture, **overrides) -> Batch:
    """Plan, confirm and launch; the publish job runs inline when ``capture`` executes it."""
    options = prolific_options(**overrides)
    plan = batch_plan(project=project, options=options)
    with capture(execute=True):
        batch = batch_launch(project=project, options=options,
                             confirmed_total_cents=plan.estimate.total_cents)
    batch.refresh_from_db()
    return batch


def page_work(client, task_url: str, *, rating: int = 4, items: int | None = None,
              finish: bool = True) -> str | None:
    """What a participant's browser does on our task page (``/prolific/task/<slug>/``) for a
    plausibility study, through Django's test client: open the URL Prolific sends them to,
    save ``items`` items (all by default) and, with ``finish``, finish. Returns the completion
    code the page sends them back to Prolific with (None without ``finish``)."""
    import json
    import uuid
    from urllib.parse import parse_qs, parse_qsl, urlsplit

    parts = urlsplit(task_url)
    page = client.get(parts.path, dict(parse_qsl(parts.query)))
    assert page.status_code == 200, page.content.decode()[:500]
    config = page.context["config"]
    for item in config["items"][:items]:
        saved = client.post(config["submit_url"], json.dumps({
            "item_id": item["item_id"], "client_token": uuid.uuid4().hex,
            "task_token": config["task_token"], "payload": {"rating": rating}}),
            content_type="application/json")
        assert saved.status_code == 200, saved.content
    if not finish:
        return None
    done = client.post(config["finish_url"], json.dumps({"task_token": config["task_token"]}),
                       content_type="application/json")
    assert done.status_code == 200, done.content
    return parse_qs(urlsplit(done.json()["redirect_url"]).query)["cc"][0]


def participant_works(simulator, hit, *, client, finish: bool = True,
                      items: int | None = None, rating: int = 4):
    """A participant starts the study at Prolific (the stand-in's side door), works on our
    task page through ``client`` and, with ``finish``, completes at Prolific with the code
    the page gave them."""
    from annotation.models import Assignment

    started = simulator.start(simulator.participant(), hit.provider_hit_id)
    session = started["session_id"]
    code = page_work(client, started["task_url"], rating=rating, items=items, finish=finish)
    if finish:
        assert code == hit.batch.completion_code
        simulator.complete(session, code)
    return Assignment.objects.get(provider_assignment_id=session)
