"""Bench the MTurk door against the local stand-in (no network beyond 127.0.0.1).

Measures, through ``MTurkProvider`` and the real boto3 client:

* HITs published per second (CreateHITWithHITType with a UniqueRequestToken, one thread and
  several threads);
* assignments collected per second (ListReviewableHITs + ListAssignmentsForHIT, paged, with the
  QuestionFormAnswers parsed);
* MTurk API calls per HIT for a whole publish -> collect -> approve cycle (from /_sim/stats).

Run: ``python bench/bench_mturk.py [--hits 500] [--assignments-per-hit 3] [--threads 8]``
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.fake_mturk import FakeMTurk, FakeMTurkSimulator
from annotation.hit_templates import render_external_question
from annotation.providers import HitTypeSpec, QualificationRequirementSpec
from annotation.providers.mturk import MTurkConfig, MTurkProvider, RetryPolicy


def build_provider(base_url: str) -> MTurkProvider:
    return MTurkProvider(
        MTurkConfig(
            endpoint_url=base_url,
            aws_access_key_id="AKIDBENCH",
            aws_secret_access_key="bench",  # noqa: S106 - dummy key for the stand-in
            retry=RetryPolicy(base_delay_seconds=0.01),
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=500)
    parser.add_argument("--assignments-per-hit", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8)
    arguments = parser.parse_args()

    with FakeMTurk() as fake:
        provider = build_provider(fake.base_url)
        simulator = FakeMTurkSimulator(fake.base_url)
        hit_type_id = provider.create_hit_type(
            HitTypeSpec(
                title="Rate how plausible a filler is",
                description="bench",
                reward=Decimal("0.13"),
                assignment_duration_seconds=600,
                auto_approval_delay_seconds=86400,
                qualification_requirements=(
                    QualificationRequirementSpec.locale_in("US", "GB"),
                    QualificationRequirementSpec.percent_approved_at_least(95),
                ),
            )
        )
        question = render_external_question(url="https://unpack.test/mturk/task/?item=1")

        def publish(number: int, prefix: str) -> str:
            return provider.create_hit(
                hit_type_id=hit_type_id,
                question_xml=question,
                max_assignments=arguments.assignments_per_hit,
                lifetime_seconds=86400,
                unique_request_token=f"{prefix}-{number}",
            ).hit_id

        # Publishing, one thread (what a single Celery worker does).
        started = time.perf_counter()
        hit_ids = [publish(number, "serial") for number in range(arguments.hits)]
        serial_rate = arguments.hits / (time.perf_counter() - started)

        # Publishing, several threads sharing one provider (boto3 clients are thread-safe).
        started = time.perf_counter()
        with ThreadPoolExecutor(arguments.threads) as pool:
            list(pool.map(lambda number: publish(number, "threaded"), range(arguments.hits)))
        threaded_rate = arguments.hits / (time.perf_counter() - started)

        # A crowd does the serial HITs (simulator calls are not MTurk API calls).
        workers = [
            simulator.register_worker(f"ABENCH{number:04d}", country="US")
            for number in range(arguments.assignments_per_hit)
        ]
        for hit_id in hit_ids:
            for worker in workers:
                accepted = simulator.accept(worker, hit_id)
                simulator.external_submit(accepted["assignment_id"], {"rating": "4"})

        calls_before_collect = simulator.stats()["calls"]
        started = time.perf_counter()
        reviewable = provider.list_reviewable_hits(hit_type_id=hit_type_id)
        collected = [
            assignment
            for hit in reviewable
            for assignment in provider.list_assignments_for_hit(hit.hit_id)
        ]
        collect_seconds = time.perf_counter() - started
        assert len(collected) == arguments.hits * arguments.assignments_per_hit
        for assignment in collected:
            provider.approve_assignment(assignment.assignment_id)
        calls = simulator.stats()["calls"]

    serial_cycle_calls = (
        arguments.hits  # CreateHITWithHITType for the serial HITs
        + calls.get("ListReviewableHITs", 0)
        + calls.get("ListAssignmentsForHIT", 0)
        + calls.get("ApproveAssignment", 0)
    )
    collect_calls = sum(calls.values()) - sum(calls_before_collect.values()) - calls.get(
        "ApproveAssignment", 0
    )
    print(f"HITs: {arguments.hits} x {arguments.assignments_per_hit} assignments")
    print(f"published per second, 1 thread:      {serial_rate:8.1f}")
    print(f"published per second, {arguments.threads} threads:     {threaded_rate:8.1f}")
    print(f"assignments collected per second:    {len(collected) / collect_seconds:8.1f}")
    print(f"API calls to collect everything:     {collect_calls:8d}")
    print(
        "API calls per HIT (publish, collect, approve each assignment): "
        f"{serial_cycle_calls / arguments.hits:.2f}"
    )
    print(f"calls by operation: {dict(sorted(calls.items()))}")


if __name__ == "__main__":
    main()
