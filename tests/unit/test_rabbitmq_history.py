"""The verdict on a suspect queue from the broker's sample history (tui.collectors.rabbitmq_history): held long
enough with no consumer and no delivery, contradicted, or not told (then the tick wait decides)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.collectors.rabbitmq_history import MAX_SAMPLES, judge_history

NEWEST_MS = 1_796_526_560_000
INCR_MS = 5000


def samples(values: list[int], newest: int = NEWEST_MS) -> dict[str, Any]:
    """A `*_details` object as the broker answers it: newest first, every INCR_MS."""
    return {"avg": 0.0, "avg_rate": 0.0, "rate": 0.0,
            "samples": [{"sample": v, "timestamp": newest - k * INCR_MS} for k, v in enumerate(values)]}


def queue(lengths: list[int], deliveries: list[int] | None = None, consumers: Any = 0,
          stats: bool = True) -> dict[str, Any]:
    """A queue's GET with its history; deliveries None: no delivery ever counted (only `publish`)."""
    body: dict[str, Any] = {"consumers": consumers, "messages": lengths[0] if lengths else 0,
                            "messages_details": samples(lengths)}
    if stats:
        body["message_stats"] = {"publish": 3, "publish_details": samples([3] * len(lengths), NEWEST_MS - INCR_MS)}
        if deliveries is not None:
            body["message_stats"].update({"deliver_get": deliveries[0],
                                          "deliver_get_details": samples(deliveries, NEWEST_MS - INCR_MS)})
    return body


def test_held_for_the_window_with_nothing_delivered_is_confirmed() -> None:
    verdict = judge_history(queue([3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))  # the broker's zero pad before
    assert verdict.kind == "held" and verdict.held_s == 10.0
    assert judge_history(queue([5] * 13)).held_s == 60.0


def test_a_queue_younger_than_the_window_is_not_told() -> None:
    verdict = judge_history(queue([3, 3, 0, 0, 0]))
    assert verdict.kind == "short" and verdict.held_s == 5.0
    assert judge_history(queue([3, 0, 3, 3, 3, 3])).kind == "short"  # emptied 5 s ago: the stretch restarts


def test_a_consumer_now_or_an_empty_newest_sample_contradicts_the_listing() -> None:
    assert judge_history(queue([3] * 13, consumers=1)).kind == "clear"
    assert judge_history(queue([0, 3, 3, 3, 3])).kind == "clear"


def test_deliveries_inside_the_window_shorten_it() -> None:
    # messages held all along, but a consumer took one up to the deliveries' newest sample (5 s before the
    # lengths' newest, which the broker carries to the current interval): quiet for 5 s only
    verdict = judge_history(queue([4] * 13, deliveries=[9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0]))
    assert verdict.kind == "short" and verdict.held_s == 5.0
    # the last delivery before the deliveries' second sample: held 10 s
    verdict = judge_history(queue([4] * 13, deliveries=[9, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0]))
    assert verdict.kind == "held" and verdict.held_s == 10.0
    # a counter that never moved in the window: held as long as the lengths say
    assert judge_history(queue([4] * 13, deliveries=[9] * 13)).held_s == 60.0


def test_without_message_statistics_deliveries_are_not_told() -> None:
    assert judge_history(queue([3] * 13, stats=False)).kind == "short"
    body = queue([3] * 13)
    body["message_stats"]["deliver_get"] = 4  # counted, but no samples of it
    assert judge_history(body).kind == "short"


def test_missing_and_odd_answers_are_not_told() -> None:
    for payload in (None, [], "queue", 3, {}):
        assert judge_history(payload).kind == "short", payload
    for consumers in (None, "0", True, -1, 0.0):
        assert judge_history(queue([3] * 13, consumers=consumers)).kind == "short", consumers
    for details in (None, [], "x", {"samples": None}, {"samples": []}, {"samples": "[]"}, {"rate": 0.0}):
        body = queue([3] * 13)
        body["messages_details"] = details
        assert judge_history(body).kind == "short", details


def test_hostile_samples_are_not_told() -> None:
    bad_entries = [
        ["not a sample"],
        [{"sample": 3.0, "timestamp": NEWEST_MS}],
        [{"sample": True, "timestamp": NEWEST_MS}],
        [{"sample": -3, "timestamp": NEWEST_MS}],
        [{"sample": 3, "timestamp": str(NEWEST_MS)}],
        [{"sample": 3}],
        [{"sample": 3, "timestamp": NEWEST_MS}, {"sample": 3, "timestamp": NEWEST_MS}],  # one time twice
    ]
    for entries in bad_entries:
        body = queue([3] * 13)
        body["messages_details"]["samples"] = entries + body["messages_details"]["samples"][1:]
        assert judge_history(body).kind == "short", entries
    body = queue([3] * 13)
    body["messages_details"]["samples"] = [{"sample": 3, "timestamp": NEWEST_MS - k} for k in range(MAX_SAMPLES + 1)]
    assert judge_history(body).kind == "short"
    body = queue([3] * 13, deliveries=[1] * 13)
    body["message_stats"]["deliver_get_details"]["samples"][4]["sample"] = None
    assert judge_history(body).kind == "short"


def test_the_samples_order_does_not_matter() -> None:
    body = queue([3, 3, 3, 0, 0])
    body["messages_details"]["samples"].reverse()
    assert judge_history(body).held_s == 10.0


def test_the_window_is_the_callers() -> None:
    body = queue([3, 3, 3, 3, 0])
    assert judge_history(body, window_s=15).kind == "held"
    assert judge_history(body, window_s=20).kind == "short"


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                                   max_size=4), max_leaves=20)
SAMPLE = st.fixed_dictionaries({"sample": JSON | st.integers(0, 9), "timestamp": JSON | st.integers(0, 10**6)})


@settings(max_examples=300, deadline=None)
@given(payload=JSON, consumers=JSON | st.just(0), lengths=st.lists(SAMPLE | JSON, max_size=6),
       deliveries=st.lists(SAMPLE | JSON, max_size=6) | JSON)
def test_any_answer_gives_a_verdict_never_an_error(payload: Any, consumers: Any, lengths: list[Any],
                                                   deliveries: Any) -> None:
    assert judge_history(payload).kind in ("held", "clear", "short")
    body = {"consumers": consumers, "messages_details": {"samples": lengths},
            "message_stats": {"deliver_get_details": {"samples": deliveries}}}
    verdict = judge_history(body)
    assert verdict.kind in ("held", "clear", "short") and verdict.held_s >= 0
