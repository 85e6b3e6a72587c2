"""TLS: every endpoint of the simulated cloud served over https with a certificate from a test CA.

- verification is on by default: without the CA, the OpenStack sources and RabbitMQ fail with a TLS reason
  naming the key that fixes it;
- clouds.yaml `cacert`, `[openstack] cacert` and `[rabbitmq] cacert` are honoured; `[openstack] insecure = true`
  and `[rabbitmq] insecure = true` read an endpoint nobody trusts;
- the fault matrix's TLS row: one endpoint switches to a self-signed certificate (verification on): only that
  source degrades with a readable TLS reason, and it recovers when the trusted certificate is back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from tests.reliability.conftest import Sim
from tests.reliability.world import OWN_PARTS, World, assert_readable, degraded
from tests.testbed.faults import TlsKit
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.config import RabbitMQConfig
from tui.errors import SourceError
from tui.openstack.client import connect

TLS_SERVICES = ("keystone", "nova", "neutron", "cinder", "placement", "rabbitmq")


class TlsSim(Sim):
    def __init__(self) -> None:
        super().__init__()
        self.kit = TlsKit()
        for service in TLS_SERVICES:
            self.kit.serve(self.faults, service)
        self.kit.rewrite_clouds_yaml(self.demo)  # https auth_url + cacert

    def world(self, slow: float = 1.0, client_kind: str = "sdk") -> World:
        """RabbitMQ trusts the kit's CA through [rabbitmq] cacert (OpenStack through clouds.yaml's cacert)."""
        w = super().world(slow, client_kind)
        w.config = replace(w.config, rabbitmq=replace(w.config.rabbitmq, cacert=str(self.kit.ca_file)))
        return w


@pytest.fixture(scope="module")
def sim() -> Iterator[TlsSim]:
    s = TlsSim()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(autouse=True)
def _no_ca_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust comes from the config under test only, never from the caller's SSL_CERT_FILE / SSL_CERT_DIR."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def _without_cacert(sim: TlsSim) -> str:
    text = sim.demo.clouds_file.read_text()
    path = sim.demo.clouds_file.with_name("clouds-nocacert.yaml")
    path.write_text("\n".join(ln for ln in text.splitlines() if "cacert:" not in ln) + "\n")
    return str(path)


def test_everything_is_https(sim: TlsSim) -> None:
    assert sim.demo.auth_url.startswith("https://") and sim.demo.rabbitmq_url.startswith("https://")


def test_verification_is_on_by_default(sim: TlsSim) -> None:
    cfg = replace(sim.world().config.openstack, clouds_file=_without_cacert(sim))
    client = connect(cfg)
    try:
        with pytest.raises(SourceError) as err:
            client.compute_services()
        assert_readable(str(err.value), names=("TLS",))
        assert "cacert" in str(err.value), "the reason says which key fixes it"
    finally:
        client.close()


@pytest.mark.parametrize("how", ["config cacert", "config insecure"])
def test_cacert_and_insecure_keys_are_honoured(sim: TlsSim, how: str) -> None:
    base = replace(sim.world().config.openstack, clouds_file=_without_cacert(sim))
    cfg = replace(base, cacert=str(sim.kit.ca_file)) if how == "config cacert" else replace(base, insecure=True)
    if how == "config insecure":  # insecure reads even an endpoint with a certificate nobody trusts
        sim.faults.set("nova", "tls")
    client = connect(cfg)
    try:
        assert client.compute_services()
        assert client.conn.session.verify == (str(sim.kit.ca_file) if how == "config cacert" else False)
    finally:
        client.close()


@pytest.mark.parametrize("source", TLS_SERVICES)
async def test_untrusted_certificate_degrades_only_that_source(sim: TlsSim, source: str,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    world: World = sim.shared_world()
    try:
        before = await world.poll()
        assert degraded(before) == {}, "all sources read over verified TLS"
        sim.faults.set(source, "tls")
        try:
            during = await world.poll()
            detail_errors = None
            if source == "placement":
                server = next(iter(during["instances"].snapshot.servers))
                detail_errors = (await world.collectors["instances"].instance_detail(server.id)).errors
        finally:
            sim.faults.clear()
        bad = degraded(during)
        own, primary = OWN_PARTS[source]
        assert set(bad) <= own, f"TLS failure on {source} degraded: {sorted(set(bad) - own)}"
        if primary:
            assert primary in bad
        for reason in [*bad.values(), *(detail_errors or {}).values()]:
            assert_readable(reason, names=("TLS",))
        if detail_errors is not None:
            assert set(detail_errors) == {"allocations"}
        after = await world.poll()
        assert degraded(after) == {}, f"no recovery after the trusted certificate came back on {source}"
    finally:
        await world.end_test()
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


async def _read_rabbitmq(cfg: RabbitMQConfig) -> str | None:
    """One collect of the RabbitMQ source: None when it read, else its error line."""
    collector = RabbitMQCollector.from_config(cfg)
    try:
        await collector.collect()
        return None
    except SourceError as exc:
        return str(exc)
    finally:
        await collector.aclose()


async def test_rabbitmq_verification_is_on_by_default(sim: TlsSim) -> None:
    cfg = replace(sim.world().config.rabbitmq, cacert=None)
    error = await _read_rabbitmq(cfg)
    assert error is not None, "an https management API signed by an unknown CA must not be read"
    assert_readable(error, names=("TLS",))
    assert "[rabbitmq] cacert" in error, "the reason says which key fixes it"


@pytest.mark.parametrize("how", ["config cacert", "config insecure"])
async def test_rabbitmq_cacert_and_insecure_are_honoured(sim: TlsSim, how: str) -> None:
    base = sim.world().config.rabbitmq
    if how == "config insecure":  # insecure reads even a certificate nobody trusts
        cfg = replace(base, cacert=None, insecure=True)
        sim.faults.set("rabbitmq", "tls")
    else:
        cfg = base
        assert cfg.cacert == str(sim.kit.ca_file)
    assert await _read_rabbitmq(cfg) is None
    if how == "config cacert":  # the same config refuses the self-signed certificate: cacert is what trusts
        sim.faults.set("rabbitmq", "tls")
        error = await _read_rabbitmq(cfg)
        assert error is not None and "TLS certificate not trusted" in error, error


def test_tls_kit_certificates(sim: TlsSim) -> None:
    """The fault is the certificate, not the endpoint: the same URL verifies again once it is cleared."""
    import ssl
    import urllib.request

    url = sim.demo.url("compute")
    ctx = ssl.create_default_context(cafile=str(sim.kit.ca_file))
    with urllib.request.urlopen(url, context=ctx, timeout=5) as resp:
        assert resp.status == 200
    sim.faults.set("nova", "tls")
    with pytest.raises(Exception) as err:
        urllib.request.urlopen(url, context=ctx, timeout=5)
    assert "CERTIFICATE_VERIFY_FAILED" in str(err.value) or "certificate verify failed" in str(err.value)


def test_light_path_verifies_like_openstacksdk(sim: TlsSim) -> None:
    """The dashboard's first reads (tui.openstack.light): verification on by default, the same TLS line."""
    from tui.openstack.triage import triage_client

    cfg = replace(sim.world().config.openstack, clouds_file=_without_cacert(sim))
    sdk, lite = connect(cfg), triage_client(cfg, handover_after_s=1e4)
    assert lite is not None
    try:
        lines = []
        for client in (sdk, lite):
            with pytest.raises(SourceError) as err:
                client.compute_services()
            lines.append(str(err.value))
        assert_readable(lines[1], names=("TLS",))
        assert "cacert" in lines[1] and lite.backend == "light"
        assert lines[1] == lines[0]
    finally:
        sdk.close()
        lite.close()


@pytest.mark.parametrize("how", ["clouds.yaml cacert", "config cacert", "config insecure"])
def test_light_path_honours_cacert_and_insecure(sim: TlsSim, how: str) -> None:
    from tui.openstack.triage import triage_client

    base = sim.world().config.openstack
    if how != "clouds.yaml cacert":
        base = replace(base, clouds_file=_without_cacert(sim))
    cfg = replace(base, cacert=str(sim.kit.ca_file)) if how == "config cacert" else \
        replace(base, insecure=True) if how == "config insecure" else base
    if how == "config insecure":
        sim.faults.set("nova", "tls")
    lite = triage_client(cfg, handover_after_s=1e4)
    assert lite is not None
    try:
        assert lite.compute_services() and lite.backend == "light"
        assert lite.light.cloud.verify == (False if how == "config insecure" else str(sim.kit.ca_file))
    finally:
        lite.close()
