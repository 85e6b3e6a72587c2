"""Replay: the snapshot patch codec, rebuilding typed snapshots, and a recorded journal replayed through the
same runners giving the same findings, transitions and failures in the same order (simulated cloud)."""

from __future__ import annotations

import dataclasses
import enum
import json
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from tui.collectors.registry import build_collectors
from tui.journal_codec import HEARTBEAT_S, Encoder, SnapshotEncoder, absolute, apply, decode, diff
from tui.models.finding import Finding
from tui.models.instances import Fault, HostHealth, InstancesSnapshot, PollInfo, Server
from tui.models.observation import Observation
from tui.models.services import KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.recorder import ChangeTracker, Journal, Recorder, read_journal
from tui.replay import Player, ReplayClock, Timeline
from tui.runner import CollectorRunner
from tui.sim import start_demo

T = datetime(2026, 12, 2, 11, 0, tzinfo=UTC)


def test_patch_round_trips() -> None:
    rng = random.Random(7)
    old: list[dict[str, Any]] = [{"id": f"s{i}", "state": "up", "n": i, "tags": ["a"]} for i in range(40)]
    for _ in range(200):
        new = [dict(e) for e in old if rng.random() > 0.05]
        for e in rng.sample(new, k=min(3, len(new))):
            e["state"] = rng.choice(["up", "down", None])
            if rng.random() < 0.3:
                e.pop("n", None)
        new += [{"id": f"x{rng.randrange(10**6)}", "state": "new"} for _ in range(rng.randrange(3))]
        if rng.random() < 0.2:
            rng.shuffle(new)
        doc_old, doc_new = {"rows": old, "at": "1"}, {"rows": new, "at": "2"}
        patch = diff(doc_old, doc_new)
        assert patch is not None and apply(doc_old, patch) == doc_new
        old = new
    assert diff({"a": [1, 2]}, {"a": [1, 2]}) is None


def test_patch_applied_with_its_source_shares_the_rows_that_match() -> None:
    """apply(old, patch, new): the same value as apply(old, patch), with every changed row that ends up equal to
    its counterpart in `new` being that object (the writer keeps no copy of each changed row); a row whose
    change was not written (a heartbeat that moved little) stays the reader's."""
    rng = random.Random(11)
    old: list[dict[str, Any]] = [{"id": f"s{i}", "state": "up", "age_s": 1.0, "n": i} for i in range(60)]
    for _ in range(100):
        new = [e for e in old if rng.random() > 0.03]  # rows that did not change are the same objects
        for e in rng.sample(new, k=4):
            i = new.index(e)
            new[i] = {**e, "state": rng.choice(["up", "down"]), "age_s": e["age_s"] + rng.choice([1.0, 90.0])}
        new += [{"id": f"x{rng.randrange(10**6)}", "state": "new", "age_s": 0.0}]
        if rng.random() < 0.2:
            rng.shuffle(new)
        doc_old, doc_new = {"rows": old, "at": "1"}, {"rows": new, "at": "2"}
        patch = diff(doc_old, doc_new)
        assert patch is not None
        plain, shared = apply(doc_old, patch), apply(doc_old, patch, doc_new)
        assert shared == plain
        for row, source in zip(shared["rows"], new, strict=True):
            assert row is source or row != source, "a row equal to the new one is the new one"
        old = shared["rows"]


def test_patch_of_one_changed_server_is_small() -> None:
    servers = [{"id": f"{i:08d}", "status": "ACTIVE", "task_state": None} for i in range(5000)]
    changed = [dict(s) for s in servers]
    changed[1234]["task_state"] = "deleting"
    patch = diff({"servers": servers}, {"servers": changed})
    assert patch == {"d": {"servers": {"L": ["id"], "u": {"00001234": {"d": {"task_state": {"=": "deleting"}}}},
                                       "n": {}}}}


def test_encoder_reuses_the_json_of_unchanged_objects() -> None:
    enc = Encoder()
    a, b = Server(id="a", status="ACTIVE"), Server(id="b", status="BUILD")
    first = enc.encode(InstancesSnapshot(taken_at=T, servers=(a, b)))
    second = enc.encode(InstancesSnapshot(taken_at=T, servers=(a, Server(id="b", status="ACTIVE"))))
    assert second["servers"][0] is first["servers"][0]
    assert second["servers"][1]["status"] == "ACTIVE"


class _Colour(enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


class _Word(enum.StrEnum):
    UP = "up"


class _HasDict:
    def to_dict(self) -> dict[str, Any]:
        return {1: _Colour.RED}


@dataclasses.dataclass(frozen=True)
class _Inner:
    when: datetime
    day: date


@dataclasses.dataclass(frozen=True)
class _Every:  # no defaults: a field at its default is left out of the JSON (the next test)
    text: str
    flag: bool
    count: int
    ratio: float
    none: None
    colour: _Colour
    level: _Level
    word: _Word
    inner: _Inner
    inners: tuple[_Inner, ...]
    tags: frozenset[str]
    by_key: Any
    has_dict: Any
    other: Any
    kind: Any


def _every() -> _Every:
    return _Every(text="x", flag=True, count=2, ratio=0.5, none=None, colour=_Colour.RED, level=_Level.HIGH,
                  word=_Word.UP, inner=_Inner(T, date(2026, 12, 2)), inners=(_Inner(T, date(2026, 12, 1)),),
                  tags=frozenset({"a"}), by_key={3: ("a", 1), "k": [None, 1.5]}, has_dict=_HasDict(),
                  other=Path("/x"), kind=_Inner)


def test_encoder_writes_every_kind_of_value() -> None:
    expected = {"text": "x", "flag": True, "count": 2, "ratio": 0.5, "none": None, "colour": "red", "level": 3,
                "word": "up", "inner": {"when": T.isoformat(), "day": "2026-12-02"},
                "inners": [{"when": T.isoformat(), "day": "2026-12-01"}], "tags": ["a"],
                "by_key": {"3": ["a", 1], "k": [None, 1.5]}, "has_dict": {"1": "red"}, "other": "/x",
                "kind": str(_Inner)}
    enc = Encoder()
    value = _every()
    first = enc.encode([value, value, (1, "b", None)])
    assert first == [expected, expected, [1, "b", None]]
    assert json.loads(json.dumps(first)) == first
    assert type(first[0]["level"]) is _Level and type(first[0]["word"]) is _Word  # int and str: as they are
    again = enc.encode((value,))
    assert again[0] is first[0]  # the same object: its JSON from the memo


def test_a_field_at_its_default_is_left_out_and_rebuilt() -> None:
    """A row holds and writes only what differs from its class's defaults (a server in ERROR: 6 keys of 22);
    decode() gives the others their defaults back. (A value of another type than its default is written: the
    snapshot's empty `hosts`, a read-only view of its default {}.)"""
    server = Server(id="s1", name="web-1", status="ERROR", host="compute-01", fault=Fault(500, "No valid host", T),
                    created=T)
    encoded = Encoder().encode(server)
    assert encoded == {"id": "s1", "name": "web-1", "status": "ERROR", "host": "compute-01",
                       "fault": {"code": 500, "message": "No valid host", "created": T.isoformat()},
                       "created": T.isoformat()}
    assert decode(Server, encoded) == server
    bare = InstancesSnapshot(taken_at=T)
    assert Encoder().encode(bare) == {"taken_at": T.isoformat(), "hosts": {}}
    assert decode(InstancesSnapshot, Encoder().encode(bare)) == bare
    # back to a default: the key goes (a patch with "x"), and the rebuilt row is the default again
    before, after = Encoder().encode(Server(id="s1", task_state="spawning")), Encoder().encode(Server(id="s1"))
    patch = diff(before, after)
    assert patch == {"d": {}, "x": ["task_state"]}
    assert decode(Server, apply(before, patch)) == Server(id="s1")


def test_rows_without_string_ids_and_rows_keyed_by_vhost_and_name_patch_by_identity() -> None:
    rows = [{"id": i, "v": 0} for i in range(1, 9)]
    changed = [dict(r) for r in rows]
    changed[2]["v"] = 1
    assert diff(rows, changed) == {"L": ["id"], "u": {"3": {"d": {"v": {"=": 1}}}}, "n": {}}
    queues = [{"vhost": "/", "name": f"q{i}", "messages": 0} for i in range(8)]
    grown = [*queues[:5], {**queues[5], "messages": 4}, *queues[6:]]
    assert diff(queues, grown) == {"L": ["vhost", "name"], "u": {"/\x1fq5": {"d": {"messages": {"=": 4}}}}, "n": {}}
    assert diff(queues, list(queues)) is None
    unnamed = [{"vhost": "/", "name": ""}, *queues[1:]]
    assert apply(unnamed, diff(unnamed, grown)) == grown  # no identity for every row: the list patched whole


def test_typed_snapshots_rebuild_equal() -> None:
    services = ServicesSnapshot(
        taken_at=T, keystone=KeystoneCheck(auth_url="http://k:5000/v3", cloud="c"),
        compute=SectionRead("compute", (ServiceRow("compute", "nova-compute", "compute-01", id="u1", state="down",
                                                   updated_at=T, age_at_read_s=21.5, forced_down=False),),
                            read_at=T),
        missing_types=("image",))
    instances = InstancesSnapshot(
        taken_at=T, servers=(Server(id="s1", status="ERROR", fault=Fault(500, "No valid host", T), created=T,
                                    volumes=("v1",), task_since=T, task_since_basis="observed"),),
        hosts={"compute-01": HostHealth("compute-01", compute_state="up")}, poll=PollInfo(mode="full", requests=2))
    for snap in (services, instances):
        rebuilt = decode(type(snap), absolute(Encoder().encode(snap)))
        assert rebuilt == snap and type(rebuilt) is type(snap)


def test_snapshot_events_full_then_patches_then_silence() -> None:
    enc = SnapshotEncoder(full_every=2)
    s1 = InstancesSnapshot(taken_at=T, servers=(Server(id="a", status="BUILD", task_state="spawning"),))
    f = Finding("warning", "instance.stuck", "a", "stuck")
    e1 = enc.event("instances", 1.0, s1, [f])
    assert e1 is not None and "full" in e1 and e1["findings"][0]["kind"] == "instance.stuck"
    assert enc.event("instances", 2.0, s1, [f]) is None, "nothing changed: nothing written"
    s2 = InstancesSnapshot(taken_at=T, servers=(Server(id="a", status="ACTIVE"),))
    e2 = enc.event("instances", 3.0, s2, [])
    assert e2 is not None and "delta" in e2 and e2["findings"] == []


def test_clock_pauses_and_changes_speed() -> None:
    real = [100.0]
    clock = ReplayClock(1000.0, 2.0, real=lambda: real[0])
    real[0] = 105.0
    assert clock.now() == 1010.0
    clock.pause()
    real[0] = 200.0
    assert clock.now() == 1010.0
    clock.resume()
    clock.set_speed(10)
    real[0] = 201.0
    assert clock.now() == 1020.0


def _key(event: dict[str, Any]) -> tuple[Any, ...]:
    kind = event["type"]
    if kind == "finding_raised":
        f = event["finding"]
        return (kind, event["source"], f["kind"], f["subject"], f["severity"], f["summary"], event["ts"])
    if kind == "finding_cleared":
        return (kind, event["source"], event["kind"], event["subject"], event["ts"])
    if kind == "state_changed":
        return (kind, event["source"], event["object"], str(event["before"]), str(event["after"]), event["ts"])
    return (kind, event.get("source"), event.get("error"), event.get("objects"), event["ts"])


async def test_recorded_journal_replays_the_same_findings_in_order(tmp_path: Path) -> None:
    demo = start_demo(instances=30, hosts=3, queues=10, churn=0, storyline=False, manual=True,
                      service_down_time=20, agent_down_time=20)
    try:
        config = demo.config()
        collectors = [c for c in build_collectors(config, galera_connector=demo.galera_connector)
                      if c.name in ("services", "instances", "rabbitmq")]
        recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
        original: list[dict[str, Any]] = []
        tracker = ChangeTracker()

        def publish(obs: Observation) -> None:
            recorder.observe(obs)
            original.extend(tracker.observe(obs))

        runners = [CollectorRunner(c, publish, clock=lambda: demo.now().timestamp()) for c in collectors]
        host = demo.engine.hosts[1].name
        for step in range(14):
            if step == 2:
                demo.inject("kill_compute", host=host)
            if step == 6:
                demo.set_refusing("rabbitmq")
            if step == 8:
                demo.set_refusing("rabbitmq", False)
            if step == 10:
                demo.inject("start_compute", host=host)
            for runner in runners:
                await runner.run_once()
            demo.advance(5)
        for c in collectors:
            await c.aclose()
        recorder.note("compute-02 killed on purpose", subject="host:" + host)
        recorder.close()
    finally:
        demo.stop()
    kinds = [e["type"] for e in original]
    assert "finding_raised" in kinds and "finding_cleared" in kinds and "source_failed" in kinds
    assert any(e["type"] == "finding_raised" and host in e["finding"]["subject"] for e in original)

    timeline = Timeline.from_journal(tmp_path / "j.jsonl")
    player = Player(timeline)
    assert sorted(timeline.sources) == ["instances", "rabbitmq", "services"]
    player.clock.pause()
    replayed: list[dict[str, Any]] = []
    tracker2 = ChangeTracker()
    runners2 = {c.name: CollectorRunner(c, lambda o: replayed.extend(tracker2.observe(o)), clock=player.clock.now)
                for c in player.collectors}
    raw = read_journal(tmp_path / "j.jsonl")
    polls = [(e.get("at") or datetime.fromisoformat(e["ts"]).timestamp(), e["source"]) for e in raw
             if e["type"] in ("snapshot", "source_failed", "source_recovered")]
    for at, source in polls:
        player.clock.jump(at)
        await runners2[source].run_once()
    assert [_key(e) for e in replayed] == [_key(e) for e in original]
    assert timeline.notes and timeline.notes[0][1]["text"] == "compute-02 killed on purpose"


async def test_every_source_snapshot_rebuilds_equal() -> None:
    """Every source's real snapshot type (read from the simulated cloud) survives encode -> decode."""
    demo = start_demo(instances=20, hosts=3, queues=10, churn=0, storyline=False, manual=True)
    try:
        names = []
        for c in build_collectors(demo.config(), galera_connector=demo.galera_connector):
            await c.collect()
            demo.advance(5)
            snap = await c.collect()
            assert decode(type(snap), absolute(Encoder().encode(snap))) == snap, c.name
            names.append(c.name)
            await c.aclose()
    finally:
        demo.stop()
    assert names == ["services", "instances", "rabbitmq", "galera", "placement"]


def _services(at: datetime, beats: list[datetime], states: list[str]) -> ServicesSnapshot:
    rows = tuple(ServiceRow("compute", "nova-compute", f"c{i}", id=f"svc{i}", state=state, updated_at=beat,
                            age_at_read_s=(at - beat).total_seconds())
                 for i, (beat, state) in enumerate(zip(beats, states, strict=True)))
    return ServicesSnapshot(taken_at=at, keystone=KeystoneCheck(auth_url="http://k:5000/v3", cloud="c"),
                            compute=SectionRead("compute", rows, read_at=at))


def test_heartbeats_are_ages_and_a_healthy_cloud_rewrites_no_row() -> None:
    """Heartbeats are written as ages at the snapshot's time: a healthy service (a heartbeat every poll, age
    a few seconds) is never patched; a stopped one (its heartbeat frozen, age growing) is patched once its
    age moved HEARTBEAT_S; a state change is written at once. A reader's rebuilt heartbeats (absolute())
    are off by less than HEARTBEAT_S."""
    enc = SnapshotEncoder()
    reader: Any = None
    patched: list[set[str]] = []
    frozen = T  # svc0 stops heartbeating at once
    for step in range(30):  # 10 s polls
        at = T + timedelta(seconds=10 * step + 3)
        beats = [frozen] + [at - timedelta(seconds=3 + step % 4)] * 9
        states = ["down" if step >= 17 else "up"] + ["up"] * 9
        snap = _services(at, beats, states)
        event = enc.event("services", float(step), snap, [])
        assert event is not None
        reader = event["full"] if "full" in event else apply(reader, event["delta"])
        rows = (event.get("delta") or {}).get("d", {}).get("compute", {}).get("d", {}).get("rows", {})
        patched.append(set(rows.get("u", {})) if isinstance(rows, dict) else set())
        rebuilt = decode(ServicesSnapshot, absolute(reader))
        for mine, real in zip(rebuilt.compute.rows, snap.compute.rows, strict=True):
            assert mine.updated_at is not None and real.updated_at is not None
            assert abs((mine.updated_at - real.updated_at).total_seconds()) < HEARTBEAT_S
            assert mine.state == real.state, "a state change is never held back"
    assert all(p <= {"svc0"} for p in patched), "a healthy service's heartbeat is never rewritten"
    assert 3 <= sum(1 for p in patched if p) <= 30 * 10 / HEARTBEAT_S + 2, patched


def test_heartbeat_ages_rebuild_the_exact_time() -> None:
    at = datetime(2026, 12, 4, 20, 29, 9, 127569, tzinfo=UTC)
    snap = _services(at, [datetime(2026, 12, 4, 20, 28, 51, tzinfo=UTC)], ["up"])
    body = Encoder().encode(snap)
    assert body["compute"]["rows"][0]["updated_at"].startswith("@18.127569")
    assert decode(ServicesSnapshot, absolute(body)) == snap
    hostile = {"taken_at": at.isoformat(), "rows": [{"host": "@12", "updated_at": "@12"}]}
    assert absolute(hostile)["rows"][0]["host"] == "@12", "only heartbeat fields are ages"


def test_order_change_of_a_long_list_is_runs_not_every_id() -> None:
    servers = [{"id": f"{i:08d}", "status": "ACTIVE"} for i in range(5000)]
    new = [{"id": "new-one", "status": "BUILD"}] + [s for s in servers if s["id"] != "00002500"]
    patch = diff({"servers": servers}, {"servers": new})
    assert patch is not None and apply({"servers": servers}, patch) == {"servers": new}
    assert len(json.dumps(patch)) < 200, "the new order as runs of the old one, not 5,000 ids"
    rng = random.Random(3)
    shuffled = servers[:]
    rng.shuffle(shuffled)
    patch = diff({"servers": servers}, {"servers": shuffled})
    assert patch is not None and apply({"servers": servers}, patch) == {"servers": shuffled}


def test_old_journals_with_every_id_in_order_still_apply() -> None:
    old = [{"id": f"s{i}", "v": i} for i in range(6)]
    patch = {"L": ["id"], "u": {}, "n": {"s9": {"id": "s9", "v": 9}}, "o": ["s9", "s5", "s4", "s3", "s2", "s1", "s0"]}
    assert [e["id"] for e in apply(old, patch)] == ["s9", "s5", "s4", "s3", "s2", "s1", "s0"]


def test_the_writers_rebuilt_snapshot_holds_no_copy_of_a_changed_server() -> None:
    enc = SnapshotEncoder()
    servers = tuple(Server(id=f"{i:04d}", status="ACTIVE") for i in range(50))
    assert enc.event("instances", 1.0, InstancesSnapshot(taken_at=T, servers=servers), []) is not None
    changed = (*servers[:10], Server(id="0010", status="ERROR"), *servers[11:])
    event = enc.event("instances", 2.0, InstancesSnapshot(taken_at=T, servers=changed), [])
    assert event is not None and "delta" in event
    rebuilt = enc._last["instances"][0]["servers"]
    memo = {id(v[0]): v[1] for v in enc._encoders["instances"]._memo.values()}
    assert rebuilt[10] == {**rebuilt[9], "id": "0010", "status": "ERROR"}
    assert all(row is memo[id(server)] for row, server in zip(rebuilt, changed, strict=True)), \
        "every row of the rebuilt snapshot is the encoder's own JSON of that server"


def test_full_snapshot_again_once_patches_outweigh_it() -> None:
    enc = SnapshotEncoder()
    kinds = []
    for step in range(400):
        doc = {"taken_at": str(step), "rows": [{"id": f"r{i}", "v": f"{step if i == step % 80 else 0:>1000}"}
                                             for i in range(80)]}
        event = enc.event("s", float(step), doc, [])
        assert event is not None
        line = json.dumps(event)
        enc.written("s", len(line), full="full" in event)
        kinds.append("full" if "full" in event else "delta")
    fulls = [i for i, k in enumerate(kinds) if k == "full"]
    assert fulls[0] == 0 and len(fulls) >= 2, "a full snapshot again once the patches since outweigh the last"
    assert len(fulls) < 400 / 20, "but not every few polls"


def test_a_heartbeat_crossing_its_late_or_down_mark_is_written_at_once() -> None:
    """With the session's liveness marks (late at 30 s, down at 60 s) a stopped heartbeat is written as it
    turns late and down, and a late one that beats again as soon as it does: each recorded poll's rows then
    rebuild on the same side of each mark as they were (a replay judges them as the live session did)."""
    enc = SnapshotEncoder(marks={"compute": (30.0, 60.0)})
    reader: Any = None
    ages = [3, 13, 23, 33, 43, 3, 13, 23, 33, 43, 53, 63, 73]  # late at 33, beats again, late, down at 63
    for step, age in enumerate(ages):
        at = T + timedelta(seconds=10 * step + 3)
        snap = _services(at, [at - timedelta(seconds=age)] + [at - timedelta(seconds=3)] * 9, ["up"] * 10)
        event = enc.event("services", float(step), snap, [])
        assert event is not None
        reader = event["full"] if "full" in event else apply(reader, event["delta"])
        rebuilt = decode(ServicesSnapshot, absolute(reader)).compute.rows[0].updated_at
        assert rebuilt is not None
        replayed = (at - rebuilt).total_seconds()
        for mark in (30.0, 60.0):
            assert (replayed > mark) == (age > mark), f"poll {step}: age {age} replayed as {replayed}"


def test_the_replay_clock_stops_at_the_end_of_the_recording() -> None:
    real = [0.0]
    clock = ReplayClock(1000.0, 8.0, real=lambda: real[0], end=1100.0)
    real[0] = 10.0
    assert clock.now() == 1080.0
    real[0] = 3600.0
    assert clock.now() == 1100.0, "past END no age may grow"
    clock.jump(5000.0)
    assert clock.now() == 1100.0
