"""The TLS profile of the real test bed (testcloud/tls.sh): the cloud's APIs and catalog behind HAProxy with a
certificate from the test bed's CA, the RabbitMQ management API over TLS, a Galera node that requires TLS of
stacktop's account. `stacktop snapshot --json` reads every source over TLS with the test CA; with a wrong CA
each source's error names its endpoint and "certificate verify failed", and the other sources are unaffected;
an expired certificate (the Keystone and RabbitMQ management frontends, the Galera node behind a proxy serving
it) is said to be expired. Verification is never dropped silently."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testbed.tls import API_PORTS, EXPIRED_KEYSTONE, EXPIRED_MGMT_URL, GALERA_NODE, MGMT_URL, TlsTestbed

pytestmark = pytest.mark.integration

SOURCES = ("services", "instances", "placement", "rabbitmq", "galera")
KEYSTONE = f"https://127.0.0.1:{API_PORTS['identity']}/v3"


def snapshot(config: Path) -> dict[str, Any]:
    """`stacktop snapshot --json` with config; trust comes from the config only (no CA from the environment)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OS_", "STACKTOP_CONFIG", "SSL_CERT_", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"))}
    proc = subprocess.run([sys.executable, "-m", "tui", "snapshot", "--config", str(config), "--json",
                           "--deadline", "120"], capture_output=True, text=True, timeout=180, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1, 2, 3), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def errors(report: dict[str, Any]) -> dict[str, str | None]:
    """Each source's error; for services (which stays readable without Keystone) Keystone's error."""
    out = {name: report["sources"][name]["error"] for name in SOURCES}
    services = report["data"].get("services")
    if services:  # read without a token (Keystone's row says why); else the source's own error
        out["services"] = services["keystone"]["error"]
    return out


def clouds_yaml(bed: TlsTestbed, path: Path, **changes: Any) -> Path:
    """A copy of the TLS clouds.yaml entry with changes (auth_url=..., cacert=...), mode 600."""
    data = yaml.safe_load(bed.clouds_yaml.read_text())
    entry = next(iter(data["clouds"].values()))
    if "auth_url" in changes:
        entry["auth"]["auth_url"] = changes.pop("auth_url")
    entry.update(changes)
    path.write_text(yaml.safe_dump(data))
    path.chmod(0o600)
    return path


def test_every_source_is_read_over_tls_with_the_test_ca(tmp_path: Path, tls_testbed: TlsTestbed) -> None:
    report = snapshot(tls_testbed.config(tmp_path / "tls.toml"))
    for name in SOURCES:
        assert report["sources"][name]["ok"], (name, report["sources"][name])
    data = report["data"]
    keystone = data["services"]["keystone"]
    assert keystone["auth_url"] == KEYSTONE and keystone["ok"], keystone
    for section in ("compute", "network", "volume"):
        assert data["services"][section]["error"] is None and data["services"][section]["rows"], section
    assert {row["binary"] for row in data["services"]["compute"]["rows"]} >= {"nova-compute", "nova-scheduler"}
    assert data["placement"]["providers"] == 2 and not data["placement"]["errors"], data["placement"]
    assert any(q["vhost"] == "openstack" for q in data["rabbitmq"]["queues"]), "no queue of vhost openstack read"
    [node] = data["galera"]["nodes"]
    assert node["address"] == GALERA_NODE and node["reachable"] and not node["auth_error"], node
    assert (node["cluster_status"], node["cluster_size"]) == ("Primary", 1), node


def test_the_catalog_endpoints_are_tls(tmp_path: Path, tls_testbed: TlsTestbed) -> None:
    """Keystone read in plain HTTP, region RegionTLS, the wrong CA: every API the catalog names fails on its
    own https endpoint. So the services are read through the catalog's TLS endpoints, not around them."""
    yaml_path = clouds_yaml(tls_testbed, tmp_path / "clouds.yaml", auth_url="http://127.0.0.1:5000/v3",
                            cacert=str(tls_testbed.other_ca))
    report = snapshot(tls_testbed.config(tmp_path / "catalog.toml", clouds_file=yaml_path))
    services = report["data"]["services"]
    assert services["keystone"]["ok"], services["keystone"]
    for section, service_type in (("compute", "compute"), ("network", "network"), ("volume", "block-storage")):
        error = services[section]["error"] or ""
        assert f"https://127.0.0.1:{API_PORTS[service_type]}/" in error, (section, error)
        assert "certificate verify failed: unable to get local issuer certificate" in error, (section, error)
    assert f"https://127.0.0.1:{API_PORTS['compute']}/" in report["sources"]["instances"]["error"]
    for name in ("rabbitmq", "galera"):  # their own CA is right: untouched
        assert report["sources"][name]["ok"], (name, report["sources"][name])


def test_placement_and_image_endpoints_are_tls(tmp_path: Path, tls_testbed: TlsTestbed) -> None:
    """The endpoints no snapshot source reaches first (placement is read after compute, glance not at all):
    stacktop's own client, on the catalog of region RegionTLS."""
    from tui.config import OpenStackConfig
    from tui.errors import SourceError
    from tui.openstack.client import connect

    yaml_path = clouds_yaml(tls_testbed, tmp_path / "clouds.yaml", auth_url="http://127.0.0.1:5000/v3",
                            cacert=str(tls_testbed.other_ca))
    client = connect(OpenStackConfig(cloud="stacktop-testcloud-tls", clouds_file=str(yaml_path)))
    try:
        with pytest.raises(SourceError) as err:
            client.placement_microversion()
        assert f"https://127.0.0.1:{API_PORTS['placement']}" in str(err.value), err.value
        assert "certificate verify failed" in str(err.value), err.value
        urls = {svc["type"]: [ep["url"] for ep in svc["endpoints"] if ep.get("region_id") == "RegionTLS"]
                for svc in client.catalog()}
        for service_type, port in API_PORTS.items():
            kind = "volumev3" if service_type == "block-storage" else service_type
            assert urls[kind] and all(u.startswith(f"https://127.0.0.1:{port}") for u in urls[kind]), urls
    finally:
        client.close()


def test_wrong_ca_each_source_names_its_endpoint(tmp_path: Path, tls_testbed: TlsTestbed) -> None:
    wrong = tls_testbed.other_ca
    report = snapshot(tls_testbed.config(tmp_path / "wrong.toml", openstack_cacert=wrong, rabbitmq_cacert=wrong,
                                         galera_cacert=wrong))
    found = errors(report)
    endpoints = {"services": KEYSTONE, "instances": KEYSTONE, "placement": KEYSTONE, "rabbitmq": MGMT_URL,
                 "galera": GALERA_NODE}
    fixes = {"services": "[openstack] cacert", "instances": "[openstack] cacert", "placement": "[openstack] cacert",
             "rabbitmq": "[rabbitmq] cacert", "galera": "[galera] cacert"}
    for name in SOURCES:
        error = found[name] or ""
        assert endpoints[name] in error and "certificate verify failed" in error, (name, error)
        assert "TLS certificate not trusted" in error and fixes[name] in error, (name, error)
        assert "\n" not in error, (name, error)
    for name in ("instances", "placement", "rabbitmq", "galera"):
        assert not report["sources"][name]["ok"], name  # never read without verification


@pytest.mark.parametrize("wrong", ["openstack", "rabbitmq", "galera"])
def test_a_wrong_ca_degrades_only_its_source(tmp_path: Path, tls_testbed: TlsTestbed, wrong: str) -> None:
    report = snapshot(tls_testbed.config(tmp_path / f"{wrong}.toml", **{f"{wrong}_cacert": tls_testbed.other_ca}))
    found = errors(report)
    broken = {"openstack": ("services", "instances", "placement")}.get(wrong, (wrong,))
    for name in SOURCES:
        if name in broken:
            assert "certificate verify failed" in (found[name] or ""), (name, found[name])
        else:
            assert report["sources"][name]["ok"] and found[name] is None, (name, found[name])


def test_an_expired_certificate_is_said_to_be_expired(tmp_path: Path, tls_testbed: TlsTestbed) -> None:
    """The expired frontends serve a certificate signed by the right CA, past its end date."""
    yaml_path = clouds_yaml(tls_testbed, tmp_path / "clouds.yaml", auth_url=EXPIRED_KEYSTONE)
    report = snapshot(tls_testbed.config(tmp_path / "expired.toml", clouds_file=yaml_path,
                                         mgmt_url=EXPIRED_MGMT_URL))
    found = errors(report)
    for name, endpoint in (("services", EXPIRED_KEYSTONE), ("instances", EXPIRED_KEYSTONE),
                           ("rabbitmq", EXPIRED_MGMT_URL)):
        error = found[name] or ""
        assert endpoint in error and "certificate verify failed: certificate has expired" in error, (name, error)
        assert "TLS certificate expired" in error and "renewed certificate" in error, (name, error)
        assert "cacert" not in error, (name, error)  # the CA is right: trusting another would not help
    assert report["sources"]["galera"]["ok"], report["sources"]["galera"]


def test_an_expired_galera_certificate_is_said_to_be_expired(tmp_path: Path, tls_testbed: TlsTestbed,
                                                             expired_galera: str) -> None:
    """The Galera node behind a certificate signed by the right CA, past its end date: the galera source's error
    names the node and says the certificate expired; the node is not read, and every other source is."""
    report = snapshot(tls_testbed.config(tmp_path / "expired-galera.toml", galera_node=expired_galera))
    galera = report["sources"]["galera"]
    error = galera["error"] or ""
    assert not galera["ok"], galera  # never read without verification
    assert expired_galera in error and "certificate verify failed: certificate has expired" in error, error
    assert "TLS certificate expired" in error and "renewed certificate" in error, error
    assert "cacert" not in error and "\n" not in error, error  # the CA is right: trusting another would not help
    assert report["data"]["galera"] is None, report["data"]["galera"]  # nothing read from the node
    for name in ("services", "instances", "placement", "rabbitmq"):
        assert report["sources"][name]["ok"], (name, report["sources"][name])


def test_the_expired_galera_endpoint_is_the_node_itself(tmp_path: Path, tls_testbed: TlsTestbed,
                                                        expired_galera: str) -> None:
    """What makes the test above about the certificate alone: with insecure = true (verification off, explicit)
    the same endpoint reads the TLS profile's node through the proxy."""
    report = snapshot(tls_testbed.config(tmp_path / "insecure-galera.toml", galera_node=expired_galera,
                                         galera_insecure=True))
    assert report["sources"]["galera"]["ok"], report["sources"]["galera"]
    [node] = report["data"]["galera"]["nodes"]
    assert node["address"] == expired_galera and node["reachable"], node
    assert (node["cluster_status"], node["cluster_size"]) == ("Primary", 1), node


def test_the_galera_account_is_refused_without_tls(tls_testbed: TlsTestbed) -> None:
    """What makes the Galera read above a TLS read: the server refuses stacktop_tls in plaintext."""
    import pymysql

    host, port = GALERA_NODE.rsplit(":", 1)
    password = tls_testbed.galera_password_file.read_text().strip()
    with pytest.raises(pymysql.err.OperationalError) as err:
        pymysql.connect(host=host, port=int(port), user="stacktop_tls", password=password, connect_timeout=5,
                        ssl_disabled=True)
    assert err.value.args[0] == 1045, err.value  # access denied: REQUIRE SSL


async def test_the_dashboard_reads_every_source_over_tls(tmp_path: Path, tls_testbed: TlsTestbed,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The full dashboard on the TLS config: every source pane reads; the header does not say INSECURE."""
    from tests.testbed.wait import until_pilot
    from tui.app import StacktopApp
    from tui.config import load_config
    from tui.widgets.source_pane import SourcePane

    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "OS_CLOUD", "OS_CLIENT_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    config = load_config(str(tls_testbed.config(tmp_path / "tls.toml")), env={})
    app = StacktopApp(config)
    async with app.run_test(size=(200, 60)) as pilot:
        panes = {p.SOURCE: p for p in app.query(SourcePane) if p.SOURCE in ("services", "instances", "rabbitmq",
                                                                            "galera")}
        assert set(panes) == {"services", "instances", "rabbitmq", "galera"}, set(panes)

        def all_read() -> bool:
            return all(p.observation is not None and p.observation.snapshot is not None
                       and p.observation.error is None for p in panes.values())

        await until_pilot(pilot, all_read, "every source pane read over TLS", timeout=120)
        assert "INSECURE" not in app._topbar_text()  # verification on everywhere


async def test_the_dashboard_with_a_wrong_ca_shows_each_sources_tls_error(
        tmp_path: Path, tls_testbed: TlsTestbed, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.testbed.wait import until_pilot
    from tui.app import StacktopApp
    from tui.config import load_config
    from tui.widgets.source_pane import SourcePane

    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "OS_CLOUD", "OS_CLIENT_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    wrong = tls_testbed.other_ca
    path = tls_testbed.config(tmp_path / "wrong.toml", openstack_cacert=wrong, rabbitmq_cacert=wrong,
                              galera_cacert=wrong)
    app = StacktopApp(load_config(str(path), env={}))
    async with app.run_test(size=(200, 60)) as pilot:
        panes = {p.SOURCE: p for p in app.query(SourcePane) if p.SOURCE in ("instances", "rabbitmq", "galera")}
        endpoints = {"instances": KEYSTONE, "rabbitmq": MGMT_URL, "galera": GALERA_NODE}

        def all_failed() -> bool:
            return all(p.observation is not None and p.observation.error is not None for p in panes.values())

        await until_pilot(pilot, all_failed, "every source pane's error", timeout=120)
        for name, pane in panes.items():
            error = pane.observation.error or ""
            assert endpoints[name] in error and "certificate verify failed" in error, (name, error)
            assert pane.has_class("-error"), name


def test_a_ca_bundle_openssl_cannot_load_is_one_line_per_source(tmp_path: Path, tls_testbed: TlsTestbed) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("this is not a certificate\n")
    report = snapshot(tls_testbed.config(tmp_path / "junk.toml", openstack_cacert=junk, rabbitmq_cacert=junk,
                                         galera_cacert=junk))
    found = errors(report)
    for name, key in (("instances", "[openstack] cacert"), ("rabbitmq", "[rabbitmq] cacert"),
                      ("galera", "[galera] cacert")):
        error = found[name] or ""
        assert f"{key} {junk} holds no CA certificate OpenSSL can load" in error and "\n" not in error, (name, error)
        assert not report["sources"][name]["ok"], name
