"""The fault matrix's TLS row for Galera: every node of the simulated cluster behind a small MySQL-protocol
endpoint (tests.testbed.mysql_wire: MySQL negotiates TLS inside its own handshake), read by the real pymysql client
with the TLS settings of [galera] (built by tui.collectors.galera.build from the config, as the app does).

- a node that switches to a self-signed certificate (verification on): only that node's row degrades, with one
  readable reason naming TLS and the key that fixes it; the other nodes and the source stand; the node
  recovers by itself once its trusted certificate is back;
- every node self-signed: the source fails with one line, keeping its last cluster view (marked stale by the
  runner: the error is set, ok_at stays), and recovers;
- verification is on by default (tls = true with the system's CAs refuses the test CA), insecure = true reads
  the self-signed certificate, and a node that offers no TLS is an error, never a plaintext read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from tests.reliability.world import assert_readable, make_config
from tests.testbed.faults import TlsKit
from tests.testbed.mysql_wire import MySQLWire
from tui.collectors.galera import GaleraCollector, build
from tui.config import Config, GaleraConfig
from tui.models.observation import Observation
from tui.runner import CollectorRunner


@dataclass
class GaleraTls:
    kit: TlsKit
    wires: list[MySQLWire]
    config: GaleraConfig  # the wires' addresses, cacert = the kit's CA

    def collector(self, **changes: Any) -> GaleraCollector:
        (collector,) = build(Config(galera=replace(self.config, **changes)))
        assert isinstance(collector, GaleraCollector)
        collector.max_backoff_s = 0.0  # a recovered node is read on the very next poll
        return collector

    def trust_all(self) -> None:
        for w in self.wires:
            w.use(self.kit.trusted)


@pytest.fixture(scope="module")
def galera_tls(sim: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GaleraTls]:
    kit = TlsKit(tmp_path_factory.mktemp("galera-tls"))
    sim_cfg = make_config(sim.demo).galera
    wires = []
    for node in sim_cfg.nodes:  # each wire answers with its simulated node's status and variables
        conn = sim.demo.galera_connector(node, sim_cfg.user, sim_cfg.password.value, 5.0)
        wires.append(MySQLWire(conn.query, kit.trusted))
    config = replace(sim_cfg, nodes=tuple(w.address for w in wires), cacert=str(kit.ca_file), timeout=5.0)
    try:
        yield GaleraTls(kit, wires, config)
    finally:
        for w in wires:
            w.close()


@pytest.fixture(autouse=True)
def _trusted_again(galera_tls: GaleraTls) -> Iterator[None]:
    galera_tls.trust_all()
    yield
    galera_tls.trust_all()


def _node_errors(obs: Observation) -> dict[str, str | None]:
    assert obs.snapshot is not None
    return {n.address: n.error for n in obs.snapshot.nodes}


async def test_verified_tls_reads_every_node(galera_tls: GaleraTls) -> None:
    collector = galera_tls.collector()
    before = [dict(w.logins) for w in galera_tls.wires]
    try:
        obs = await CollectorRunner(collector).run_once()
        assert obs.error is None and set(_node_errors(obs).values()) == {None}
        assert obs.snapshot is not None and all(n.reachable and n.cluster_status for n in obs.snapshot.nodes)
        for w, b in zip(galera_tls.wires, before, strict=True):  # every login travelled inside TLS
            assert (w.logins["tls"] - b["tls"], w.logins["plain"] - b["plain"]) == (1, 0), w.logins
    finally:
        await collector.aclose()


@pytest.mark.parametrize("index", [0, 1, 2])
async def test_self_signed_node_degrades_alone_and_recovers(galera_tls: GaleraTls, index: int,
                                                           capfd: pytest.CaptureFixture[str]) -> None:
    collector = galera_tls.collector()
    runner = CollectorRunner(collector)
    wire = galera_tls.wires[index]
    try:
        before = await runner.run_once()
        assert before.error is None and set(_node_errors(before).values()) == {None}
        wire.use(galera_tls.kit.untrusted)  # drops the kept connection: the collector reconnects and verifies
        during = await runner.run_once()
        errors = _node_errors(during)
        assert during.error is None, "the other nodes answer: the source stands"
        assert {a for a, e in errors.items() if e} == {wire.address}, errors
        reason = errors[wire.address] or ""
        assert_readable(reason, names=("TLS",))
        assert "certificate not trusted" in reason and "[galera] cacert" in reason, reason
        assert any(f.subject == wire.address for f in during.findings), "a finding names the failing node"
        wire.use(galera_tls.kit.trusted)
        after = await runner.run_once()
        assert after.error is None and set(_node_errors(after).values()) == {None}, "no recovery"
    finally:
        await collector.aclose()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


async def test_every_node_self_signed_keeps_the_last_cluster_view(galera_tls: GaleraTls,
                                                                 capfd: pytest.CaptureFixture[str]) -> None:
    collector = galera_tls.collector()
    runner = CollectorRunner(collector)
    try:
        before = await runner.run_once()
        assert before.error is None
        for w in galera_tls.wires:
            w.use(galera_tls.kit.untrusted)
        during = await runner.run_once()
        assert during.error is not None
        assert_readable(during.error, names=("TLS certificate not trusted",))
        assert during.snapshot is before.snapshot and during.ok_at == before.ok_at, "the last view is kept"
        galera_tls.trust_all()
        after = await runner.run_once()
        assert after.error is None and after.ok_at is not None and before.ok_at is not None
        assert after.ok_at > before.ok_at
    finally:
        await collector.aclose()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


async def test_verification_is_on_by_default(galera_tls: GaleraTls) -> None:
    wire = galera_tls.wires[0]
    wire.use(galera_tls.kit.untrusted)
    collector = galera_tls.collector(cacert=None, tls=True)  # the system's CAs: they do not know this one
    try:
        obs = await CollectorRunner(collector).run_once()
    finally:
        await collector.aclose()
    assert obs.error is not None, "no node is signed by a CA the system knows"
    assert_readable(obs.error, names=("TLS certificate not trusted",))


async def test_insecure_reads_a_certificate_nobody_trusts(galera_tls: GaleraTls) -> None:
    wire = galera_tls.wires[0]
    wire.use(galera_tls.kit.untrusted)
    collector = galera_tls.collector(cacert=None, insecure=True)
    try:
        obs = await CollectorRunner(collector).run_once()
    finally:
        await collector.aclose()
    assert obs.error is None and _node_errors(obs)[wire.address] is None


async def test_a_node_without_tls_is_refused_not_read_in_plaintext(galera_tls: GaleraTls) -> None:
    wire = galera_tls.wires[1]
    wire.use(None)
    collector = galera_tls.collector()
    try:
        obs = await CollectorRunner(collector).run_once()
    finally:
        await collector.aclose()
    reason = _node_errors(obs)[wire.address] or ""
    assert_readable(reason, names=("does not offer TLS",))
    plain = galera_tls.collector(cacert=None)  # TLS off in the config: the same node reads in plaintext
    try:
        assert _node_errors(await CollectorRunner(plain).run_once())[wire.address] is None
    finally:
        await plain.aclose()
