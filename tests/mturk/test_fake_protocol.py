"""The stand-in at the wire level: MTurk's JSON 1.1 framing, error shape, paging limits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from annotation.fake_mturk import FakeMTurkSimulator

TARGET = "MTurkRequesterServiceV20170117."


def _post(base_url: str, operation: str, body: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        base_url + "/", data=json.dumps(body).encode(), method="POST",
        headers={"X-Amz-Target": TARGET + operation,
                 "Content-Type": "application/x-amz-json-1.1",
                 "Authorization": "AWS4-HMAC-SHA256 Credential=ANY/20240101/us-east-1/mturk"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_success_uses_amz_json_content_type(fake_mturk):
    status, headers, body = _post(fake_mturk.base_url, "GetAccountBalance", {})
    assert status == 200
    assert headers["Content-Type"] == "application/x-amz-json-1.1"
    assert body == {"AvailableBalance": "10000.00", "OnHoldBalance": "0.00"}


def test_errors_have_mturk_shape(fake_mturk):
    status, _, body = _post(fake_mturk.base_url, "GetHIT", {"HITId": "3NOPE"})
    assert status == 400
    assert body["__type"] == "RequestError"
    assert body["Message"].startswith("Hit 3NOPE does not exist.")
    status, _, body = _post(fake_mturk.base_url, "ListHITs", {"MaxResults": 101})
    assert (status, body["__type"]) == (400, "RequestError")
    assert "less than or equal to 100" in body["Message"]
    status, _, body = _post(fake_mturk.base_url, "DescribeEverything", {})
    assert (status, body["__type"]) == (400, "UnknownOperationException")


def test_service_fault_injection_and_stats(fake_mturk):
    simulator = FakeMTurkSimulator(fake_mturk.base_url)
    simulator.inject_fault("GetAccountBalance", error="ServiceFault")
    status, _, body = _post(fake_mturk.base_url, "GetAccountBalance", {})
    assert (status, body["__type"]) == (500, "ServiceFault")
    assert _post(fake_mturk.base_url, "GetAccountBalance", {})[0] == 200
    assert simulator.stats() == {"calls": {"GetAccountBalance": 2}, "total": 2}


def test_next_token_pages_without_overlap(fake_mturk):
    base = fake_mturk.base_url
    hit_type = _post(base, "CreateHITType", {
        "AssignmentDurationInSeconds": 60, "Reward": "0.10", "Title": "t", "Description": "d",
    })[2]["HITTypeId"]
    for number in range(25):
        _post(base, "CreateHITWithHITType", {
            "HITTypeId": hit_type, "LifetimeInSeconds": 60, "Question": "<q/>",
            "UniqueRequestToken": f"t{number}",
        })
    seen, token = [], None
    while True:
        request = {"MaxResults": 10, **({"NextToken": token} if token else {})}
        page = _post(base, "ListHITs", request)[2]
        seen.extend(hit["HITId"] for hit in page["HITs"])
        token = page.get("NextToken")
        if not token:
            break
    assert len(seen) == len(set(seen)) == 25


def test_runs_as_a_module_on_loopback():
    process = subprocess.Popen(
        [sys.executable, "-m", "annotation.fake_mturk", "--port", "0"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("fake MTurk listening on http://127.0.0.1:")
        base_url = line.split(" on ")[1].split(" ")[0]
        deadline = time.time() + 5
        while True:
            try:
                assert _post(base_url, "GetAccountBalance", {})[0] == 200
                break
            except urllib.error.URLError:
                if time.time() > deadline:
                    pytest.fail("the stand-in did not answer")
                time.sleep(0.05)
    finally:
        process.terminate()
        process.wait(timeout=5)
