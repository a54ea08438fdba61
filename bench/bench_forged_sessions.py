"""Forged MTurk sessions against real workers: can invented ids lock real workers out?

    python3 bench/bench_forged_sessions.py [--hits 50] [--forged 100]

One batch of ``--hits`` one-item HITs, one assignment each (the audit's setup). An attacker who
knows the HIT ids opens ``--forged`` task pages with invented assignmentId/workerId (spread over
the HITs) and saves an answer on each; then one real worker per HIT opens its page, saves every
item and finishes. Reports how many real workers could work, and the forged sessions' rate.
The attacker sends from ``--addresses`` client addresses (round robin), each real worker from
an address of their own: the crowd saves' rate limits (``annotation/crowd_throttle.py``) count
per address and per HIT.

Runs in process through Django's test client on a throw-away SQLite database (or DATABASE_URL,
which must be disposable).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

SUBMIT_TO = "https://workersandbox.mturk.com"
ANSWER = {"full_question": "Why did he leave the band?", "skipped": False}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=50)
    parser.add_argument("--forged", type=int, default=100)
    parser.add_argument("--addresses", type=int, default=1)
    args = parser.parse_args()

    from scratch_django import setup_scratch_django

    setup_scratch_django("unpack-bench-forged-")
    from django.test import Client

    from tests.factories import publish_hit, sluice_project

    project = sluice_project(slug=f"forged-{uuid.uuid4().hex[:8]}", items=args.hits)
    hit_ids = []
    for index, item in enumerate(project.items.order_by("id")):
        hit_id = f"HITB{index:05d}{uuid.uuid4().hex[:8].upper()}"
        publish_hit(project, hit_id=hit_id, items=[item], max_assignments=1)
        hit_ids.append((hit_id, item.pk))
    attackers = [Client(REMOTE_ADDR=f"203.0.113.{k % 250 + 1}") for k in range(args.addresses)]

    def session(client, assignment_id: str, worker_id: str, hit_id: str, item_id: int,
                *, finish: bool) -> str:
        """Open the page and save the item (and finish); "ok" or the refusal code."""
        page = client.get(f"/mturk/task/{project.slug}/", {
            "assignmentId": assignment_id, "hitId": hit_id, "workerId": worker_id,
            "turkSubmitTo": SUBMIT_TO})
        if page.status_code != 200:
            return f"page_{page.status_code}"
        token = page.context["config"]["task_token"]
        body = {"item_id": item_id, "client_token": uuid.uuid4().hex, "task_token": token,
                "payload": ANSWER}
        saved = client.post(f"/mturk/task/{project.slug}/submit/", json.dumps(body),
                            content_type="application/json")
        if saved.status_code != 200:
            return saved.json().get("error", str(saved.status_code))
        if finish:
            done = client.post(f"/mturk/task/{project.slug}/finish/",
                               json.dumps({"task_token": token}),
                               content_type="application/json")
            if done.status_code != 200:
                return done.json().get("error", str(done.status_code))
        return "ok"

    started = time.perf_counter()
    forged_outcomes: dict[str, int] = {}
    for k in range(args.forged):
        hit_id, item_id = hit_ids[k % len(hit_ids)]
        outcome = session(attackers[k % len(attackers)], f"AFORGED{k:06d}", f"AFAKE{k:06d}",
                          hit_id, item_id, finish=False)
        forged_outcomes[outcome] = forged_outcomes.get(outcome, 0) + 1
    attack_seconds = time.perf_counter() - started

    real_outcomes: dict[str, int] = {}
    for k, (hit_id, item_id) in enumerate(hit_ids):
        outcome = session(Client(REMOTE_ADDR=f"10.{k // 250}.{k % 250}.1"), f"AREAL{k:06d}",
                          f"AWREAL{k:06d}", hit_id, item_id, finish=True)
        real_outcomes[outcome] = real_outcomes.get(outcome, 0) + 1

    print(f"HITs (1 assignment each): {len(hit_ids)}")
    print(f"forged sessions: {args.forged} in {attack_seconds:.2f} s "
          f"({args.forged / attack_seconds:.0f}/s), outcomes {forged_outcomes}")
    print(f"real workers who saved and finished: {real_outcomes.get('ok', 0)} of {len(hit_ids)}"
          f", outcomes {real_outcomes}")


if __name__ == "__main__":
    main()
