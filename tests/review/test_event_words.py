"""Issue 24, point 6: audit events read as sentences, not Python dicts."""

from __future__ import annotations

from annotation.models import StatusEvent
from frontend.staff.events import describe_event


def test_events_read_as_sentences():
    assert describe_event(StatusEvent(kind="batch_publishing", old_status="draft",
                                      new_status="publishing", detail={"hits": 20})) == (
        "publishing started (draft → publishing); 20 HITs")
    assert describe_event(StatusEvent(kind="bonus_created", detail={
        "bonus_id": 7, "amount_cents": 25})) == "bonus queued; 25 cents"
    assert describe_event(StatusEvent(kind="assignments_added", detail={
        "hits": [3, 4], "count": 2, "token": "x"})) == "places added; HITs: 3, 4; 2 places"
    assert describe_event(StatusEvent(kind="something_new", detail={"odd_key": 1})) == (
        "something new; odd key: 1")
