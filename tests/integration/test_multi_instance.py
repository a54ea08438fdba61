"""The deployment users grow into, as processes on this machine: two gunicorn instances (each
with ``gunicorn.conf.py``) on two ports behind a round-robin client, two Celery workers and one
celery beat, over one PostgreSQL (the test database) and one Redis (``UNPACK_TEST_REDIS_URL``:
broker, result backend, shared cache and sessions). docs/deployment.md describes it.

Shown here: nothing is published, collected or paid twice although both workers take jobs at
once; an answer sent to both app instances is stored once; a session is one session on both
instances (a login on one holds on the other, a logout on either ends it everywhere); beat's
periodic jobs run once per period, even when a second beat is started by mistake.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timedelta
from http.cookiejar import CookieJar
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation import tasks
from annotation.celery import app as celery_app
from annotation.fake_mturk import FakeMTurkSimulator
from annotation.models import Annotation, Assignment, Batch, Bonus
from annotation.services import decisions
from tests.factories import (
    batch_plausibility_project,
    hit_item_ids,
    launched_batch,
    page_answer_fields,
)
from tests.integration.conftest import (
    PUBLIC_URL,
    REPO_ROOT,
    _drop_connection_pools,
    service_environment,
    wait_for,
    wait_for_idle_worker,
)
from tests.network import free_port, listening_sockets

pytestmark = pytest.mark.integration

BEAT_PERIOD = 3.0  # seconds between two sends of each periodic job (both of them)
SUCCEEDED = re.compile(r"^\[(?P<at>[\d-]+ [\d:,]+): INFO/MainProcess\] Task (?P<name>[\w.]+)"
                       r"\[[\w-]+\] succeeded in (?P<runtime>[\d.e-]+)s: (?P<value>.*)$")


class Cluster:
    """The processes of one deployment and their logs."""

    def __init__(self, env: dict, folder: Path):
        self.env, self.folder = env, folder
        self.processes: dict[str, subprocess.Popen] = {}
        self.ports: list[int] = []

    def start(self, name: str, command: list[str]) -> subprocess.Popen:
        log = (self.folder / f"{name}.log").open("w")
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=self.env, stdout=log,
                                   stderr=subprocess.STDOUT)
        log.close()
        self.processes[name] = process
        return process

    def start_web(self, name: str) -> int:
        port = free_port()
        self.start(name, [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py",
                          "-b", f"127.0.0.1:{port}", "-w", "1", "--threads", "2"])
        self.ports.append(port)
        return port

    def start_worker(self, name: str) -> None:
        self.start(name, [sys.executable, "-m", "celery", "-A", "annotation", "worker",
                          "--pool=solo", "--loglevel=INFO", "--without-gossip",
                          "--without-mingle", "--without-heartbeat", "-n", f"{name}@%h"])

    def start_beat(self, name: str) -> None:
        self.start(name, [sys.executable, "-m", "celery", "-A", "annotation", "beat",
                          "--loglevel=INFO", "-s", str(self.folder / f"{name}-schedule")])

    def stop(self, name: str) -> None:
        process = self.processes.pop(name)
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def runs(self, task: str) -> list[tuple[datetime, str]]:
        """(started at, return value) of every run of ``task`` on either worker, in order
        (the log says when a run finished and how long it took)."""
        found = []
        for name in ("worker1", "worker2"):
            for line in self.log(name).splitlines():
                match = SUCCEEDED.match(line)
                if match and match["name"] == task:
                    finished = datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S,%f")
                    found.append((finished - timedelta(seconds=float(match["runtime"])),
                                  match["value"]))
        return sorted(found)


@pytest.fixture(scope="module")
def cluster(integration_services, django_db_setup, django_db_blocker, fake_mturk_server):
    redis_url = integration_services
    env = {
        **service_environment(redis_url, django_db_blocker, fake_mturk_server),
        "UNPACK_COLLECT_EVERY_SECONDS": str(BEAT_PERIOD),
        "UNPACK_ANALYZE_EVERY_SECONDS": str(BEAT_PERIOD),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
    }
    folder = Path(tempfile.mkdtemp(prefix="unpack-cluster-"))
    deployment = Cluster(env, folder)
    saved = {key: celery_app.conf.get(key) for key in
             ("CELERY_TASK_ALWAYS_EAGER", "CELERY_BROKER_URL")}
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=False, CELERY_BROKER_URL=redis_url)
    _drop_connection_pools()
    try:
        web = [deployment.start_web("web1"), deployment.start_web("web2")]
        deployment.start_worker("worker1")
        deployment.start_worker("worker2")
        deployment.start_beat("beat1")
        deadline = time.monotonic() + 90

        def ready() -> bool:
            for name, process in deployment.processes.items():
                if process.poll() is not None:
                    pytest.fail(f"{name} exited:\n{deployment.log(name)[-3000:]}")
            replies = celery_app.control.ping(timeout=0.5) or []
            return (len(replies) == 2 and all(listening_sockets(port) for port in web))

        while not ready():
            if time.monotonic() > deadline:
                pytest.fail("the cluster did not start:\n" + "\n".join(
                    f"--- {name}\n{deployment.log(name)[-1500:]}"
                    for name in deployment.processes))
            time.sleep(0.3)
        yield deployment
    finally:
        for name in list(deployment.processes):
            deployment.stop(name)
        celery_app.conf.update(saved)
        _drop_connection_pools()
        if os.environ.get("UNPACK_KEEP_WORKER_LOG") != "1":
            for path in folder.iterdir():
                path.unlink()
            folder.rmdir()


class RoundRobin:
    """A browser whose requests alternate between the app instances (one cookie jar)."""

    def __init__(self, ports: list[int]):
        self.cookies = CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), NoRedirect())
        self.turn = itertools.cycle(ports)

    def csrf(self) -> str:
        return next(c.value for c in self.cookies if c.name == "csrftoken")

    def request(self, path: str, *, port: int | None = None, data: bytes | None = None,
                headers: dict | None = None) -> tuple[int, str, str]:
        port = port or next(self.turn)
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                         headers={"Referer": f"http://127.0.0.1:{port}/",
                                                  **(headers or {})})
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.headers.get("Location", ""), \
                    response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Location", ""), error.read().decode()

    def post_form(self, path: str, fields: dict, *, port: int | None = None):
        body = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": self.csrf()}).encode()
        return self.request(path, port=port, data=body,
                            headers={"Content-Type": "application/x-www-form-urlencoded"})


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture
def deployment(cluster, fake_mturk_server, transactional_db, settings, monkeypatch):
    """The cluster, with an emptied stand-in seen by this process as the workers see it, and
    no leftover jobs of an earlier test."""
    fake_mturk_server.world.reset()
    settings.MTURK_ENDPOINT_URL = fake_mturk_server.base_url
    settings.UNPACK_PUBLIC_URL = PUBLIC_URL
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    wait_for_idle_worker()
    return cluster


@pytest.fixture
def simulator(fake_mturk_server) -> FakeMTurkSimulator:
    return FakeMTurkSimulator(fake_mturk_server.base_url)


def test_nothing_is_published_collected_or_paid_twice(deployment, simulator, fake_mturk_server):
    batch = launched_batch(batch_plausibility_project(items=12))  # 3 HITs x 4 assignments
    # The same publish job twice, as a redelivery after a crash would: both workers race.
    tasks.publish_batch.delay(batch.pk)
    wait_for(lambda: Batch.objects.get(pk=batch.pk).status == Batch.Status.PUBLISHED,
             what="the batch to be published")
    wait_for_idle_worker()
    assert len(fake_mturk_server.world.hits) == 3
    hits = list(batch.hits.order_by("pk"))
    assignment_ids = []
    for number, hit in enumerate(hits):
        for worker in range(4):
            worker_id = f"AMULTI{number}W{worker}"
            simulator.register_worker(worker_id)
            accepted = simulator.accept(worker_id, hit.provider_hit_id)
            simulator.external_submit(accepted["assignment_id"],
                                      page_answer_fields(hit_item_ids(hit), 1 + worker))
            assignment_ids.append(accepted["assignment_id"])
    # Beat collects every BEAT_PERIOD seconds; collections sent by hand race with it and with
    # each other on the two workers.
    for _ in range(4):
        tasks.collect_batch.delay(batch.pk)
    wait_for(lambda: Annotation.objects.count() == 48, timeout=90,
             what="every annotation to be collected")
    wait_for_idle_worker()
    time.sleep(BEAT_PERIOD * 1.5)  # at least one more collection by beat
    wait_for_idle_worker()
    assert Annotation.objects.count() == 48
    assert Assignment.objects.count() == 12
    good = Assignment.objects.get(provider_assignment_id=assignment_ids[0])
    decisions.assignment_approve(assignment_id=good.pk)
    bonus = decisions.bonus_create(assignment_id=good.pk, amount_cents=30,
                                   reason="Thank you").bonus
    wait_for(lambda: Bonus.objects.get(pk=bonus.pk).sent_at, what="the bonus to be paid")
    # The bonus job replayed on both workers at once: still one payment.
    Bonus.objects.filter(pk=bonus.pk).update(sent_at=None)
    tasks.send_bonus.delay(bonus.pk)
    tasks.send_bonus.delay(bonus.pk)
    wait_for(lambda: Bonus.objects.get(pk=bonus.pk).sent_at, what="the replayed bonus jobs")
    wait_for_idle_worker()
    assert [b["BonusAmount"] for b in simulator.ledger()["bonuses"]] == ["0.30"]
    assert len(fake_mturk_server.world.hits) == 3
    # Both workers did part of the work (else this showed nothing about two of them).
    assert "succeeded" in deployment.log("worker1") and "succeeded" in deployment.log("worker2")


def test_a_session_is_one_session_on_every_instance(deployment):
    get_user_model().objects.create_user("roundrobin", password="a-long-password")
    project = batch_plausibility_project(items=3, split="train", slug="rr")
    first, second = deployment.ports
    browser = RoundRobin(deployment.ports)
    status, _, _ = browser.request("/accounts/login/", port=first)
    assert status == 200
    status, location, _ = browser.post_form(
        "/accounts/login/", {"username": "roundrobin", "password": "a-long-password"},
        port=first)
    assert status == 302, location
    for port in (second, first, second):  # logged in on both instances
        status, _, page = browser.request(f"/annotate/{project.slug}/", port=port)
        assert status == 200 and '"item_id"' in page
    # The same answer sent to both instances (a retry after a lost response) is stored once.
    item_id = int(re.search(r'"item_id": ?(\d+)', page).group(1))
    body = (f'{{"item_id": {item_id}, "client_token": "{uuid.uuid4().hex}", '
            '"payload": {"rating": 3}}').encode()
    for port in (first, second):
        status, _, _ = browser.request(f"/annotate/{project.slug}/submit/", port=port,
                                       data=body, headers={"Content-Type": "application/json",
                                                           "X-CSRFToken": browser.csrf()})
        assert status == 200
    assert Annotation.objects.filter(item_id=item_id).count() == 1
    # A logout on one instance ends the session on the other too.
    status, _, _ = browser.post_form("/accounts/logout/", {}, port=second)
    assert status in (200, 302)
    status, location, _ = browser.request(f"/annotate/{project.slug}/", port=first)
    assert status == 302 and "/accounts/login/" in location


def test_beat_runs_each_periodic_job_once_per_period_even_with_two_beats(deployment):
    """One beat sends each job once per period, and one of the two workers runs it. A second
    beat (``worker -B`` on a second machine, by mistake) sends every job twice per period; the
    shared cache's turn (``tasks.beat_turn_take``) still lets only one run per 0.9 period."""
    task = "annotation.tasks.refresh_planner_statistics"
    time.sleep(BEAT_PERIOD * 2)
    assert [value for _, value in deployment.runs(task) if value != "None"]
    started = datetime.now()
    deployment.start_beat("beat2")
    window = BEAT_PERIOD * 6
    try:
        time.sleep(window)
    finally:
        deployment.stop("beat2")
    wait_for_idle_worker()
    later = [(at, value) for at, value in deployment.runs(task) if at >= started]
    ran = [at for at, value in later if value != "None"]
    skipped = [at for at, value in later if value == "None"]
    assert "Sending due task" in deployment.log("beat2")  # the second beat did send
    assert len(skipped) >= 2, ("the second beat's sends should find the period's turn taken",
                               later)
    assert ran, later
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(ran)]
    # The log's times have millisecond precision.
    assert all(gap >= BEAT_PERIOD * 0.9 - 0.01 for gap in gaps), (gaps, later)
