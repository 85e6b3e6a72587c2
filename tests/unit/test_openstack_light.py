"""The dashboard's first OpenStack reads without openstacksdk (tui.openstack.light behind triage.TriageClient),
against the simulated cloud: the same rows and the same error lines as the openstacksdk path, only GETs and
the token POST on the wire, openstacksdk never imported for them, a fallback to openstacksdk for what the
light path does not handle, and the handover to openstacksdk after the first triage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fresh_python import fresh_python
from tui.collectors.instances import InstancesCollector
from tui.collectors.services import ServicesCollector
from tui.config import OpenStackConfig, Thresholds
from tui.errors import SourceError
from tui.openstack import client as client_mod
from tui.openstack.client import OpenStackClient, connect
from tui.openstack.cloudsyaml import LightUnsupported, load_cloud
from tui.openstack.light import LightClient
from tui.openstack.session import LIGHT_HANDOVER_S, OpenStackSession
from tui.openstack.triage import TriageClient, triage_client
from tui.readonly import WriteRefused
from tui.runner import CollectorRunner
from tui.sim import start_demo
from tui.sim.demo import Demo

NEVER = 10_000.0  # no handover during the test


@pytest.fixture(scope="module")
def demo() -> Iterator[Demo]:
    d = start_demo(instances=60, hosts=4, queues=5, churn=0, storyline=False, manual=True)
    try:
        yield d
    finally:
        d.stop()


def light(cfg: OpenStackConfig, after: float = NEVER) -> TriageClient:
    client = triage_client(cfg, handover_after_s=after)
    assert client is not None, "the demo's clouds.yaml is the common shape: the light path takes it"
    return client


def clouds_yaml(demo: Demo, tmp_path: Path, *, name: str = "clouds.yaml", drop: tuple[str, ...] = (),
                **changes: Any) -> Path:
    """The demo's clouds.yaml with auth keys changed (auth.KEY=...) or top-level keys added."""
    data = yaml.safe_load(demo.clouds_file.read_text())
    entry = next(iter(data["clouds"].values()))
    for key, value in changes.items():
        if key.startswith("auth_") and key != "auth_type":
            entry["auth"][key[5:]] = value
        else:
            entry[key] = value
    for key in drop:
        entry["auth"].pop(key, None)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    path.chmod(0o600)
    return path


def rows(snapshot: Any) -> dict[str, set[tuple[str, str, str, str]]]:
    return {s.name: {(r.binary, r.host, r.status, r.state) for r in s.rows} for s in snapshot.sections}


async def test_light_path_reads_the_same_rows_as_openstacksdk(demo: Demo) -> None:
    cfg = demo.config().openstack
    sdk, lite = connect(cfg), light(cfg)
    try:
        assert lite.backend == "light"
        got = {}
        for name, client in (("sdk", sdk), ("light", lite)):
            services = await ServicesCollector(cfg, Thresholds(), client_factory=lambda c=client: c).collect()
            instances = InstancesCollector(cfg, client_factory=lambda c=client: c, clock=demo.now,
                                           attention_first=True)
            first = await instances.collect()  # the dashboard's first read: the servers worth attention
            full = await instances.collect()
            got[name] = (rows(services), services.keystone.ok, [(c.service_type, c.ok) for c in services.catalog],
                         services.compute_microversion, first.poll.mode, sorted(s.id for s in first.servers),
                         sorted((s.id, s.status, s.task_state) for s in full.servers))
        assert got["light"] == got["sdk"]
        assert got["light"][0]["compute"] and len(got["light"][6]) == 60
        assert lite.backend == "light", "nothing the light path does not handle came up"
    finally:
        sdk.close()
        lite.close()


def test_only_gets_and_the_token_post_reach_the_cloud(demo: Demo) -> None:
    cfg = demo.config().openstack
    lite = light(cfg)
    try:
        demo.stats.reset()
        assert lite.compute_services() and lite.network_agents() and lite.volume_services()
        assert lite.servers() and lite.placement_microversion() and lite.endpoint_versions(timeout=2)
        sent = {(method, target.split("?")[0]) for _, method, target, _, _ in demo.stats.log}
        assert {m for m, _ in sent} <= {"GET", "POST"}
        assert {t for m, t in sent if m == "POST"} == {"/v3/auth/tokens"}
        demo.stats.reset()
        for method in ("DELETE", "PUT", "POST", "PATCH"):
            with pytest.raises(WriteRefused):
                lite.light._send(method, demo.url("compute") + "/servers/x", headers={})
        assert not demo.stats.log, "a refused write never leaves the machine"
    finally:
        lite.close()


def test_first_reads_do_not_import_openstacksdk(demo: Demo) -> None:
    cfg = demo.config().openstack
    code = (
        "import sys\n"
        "from tui.config import OpenStackConfig\n"
        "from tui.openstack.triage import triage_client\n"
        f"c = triage_client(OpenStackConfig(cloud={cfg.cloud!r}, clouds_file={cfg.clouds_file!r}),"
        " handover_after_s=1e4)\n"
        "n = len(c.compute_services()) + len(c.servers(status='ERROR')) + len(c.network_agents())\n"
        "print(n, c.backend, sorted(m for m in ('openstack', 'keystoneauth1') if m in sys.modules))\n"
    )
    stdout = fresh_python(code)
    count, backend, heavy = stdout.split(" ", 2)
    assert int(count) > 0 and backend == "light" and heavy.strip() == "[]", stdout


@pytest.mark.parametrize("change", [
    {"auth_type": "token", "auth_token": "x"},  # another auth type
    {"compute_endpoint_override": "http://127.0.0.1:1/v2.1"},  # a key the light path does not know
    {"auth_domain_name": "Default"},  # a domain-scoped token
    {"region_name": "RegionOne,RegionTwo"},  # several regions
])
def test_configs_the_light_path_does_not_handle_go_to_openstacksdk(demo: Demo, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 change: dict[str, str]) -> None:
    cfg = replace(demo.config().openstack, clouds_file=str(clouds_yaml(demo, tmp_path, **change)))
    with pytest.raises(LightUnsupported):
        load_cloud(cfg)
    assert triage_client(cfg, handover_after_s=NEVER) is None
    sdk = object()
    monkeypatch.setattr(client_mod, "connect", lambda c: sdk if c is cfg else None)
    assert OpenStackSession(cfg, light_first=NEVER).client() is sdk, "the dashboard's client is openstacksdk's"


def test_what_the_light_client_cannot_answer_openstacksdk_answers_at_once(demo: Demo,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    lite = light(demo.config().openstack)
    try:
        def odd(service: str) -> str:
            raise LightUnsupported("an odd catalog")

        monkeypatch.setattr(lite.light, "_catalog_lookup", odd)
        assert lite.compute_services()
        assert lite.backend == "openstacksdk"
    finally:
        lite.close()


def test_handover_to_openstacksdk_after_the_first_triage(demo: Demo) -> None:
    lite = light(demo.config().openstack, after=0.2)
    try:
        before = lite.compute_services()
        deadline = time.monotonic() + 60
        while lite.backend != "openstacksdk":
            assert time.monotonic() < deadline, "openstacksdk never took over"
            time.sleep(0.05)
        assert isinstance(lite.sdk, OpenStackClient) and lite.has_usable_token()
        assert {r["id"] for r in lite.compute_services()} == {r["id"] for r in before}
    finally:
        lite.close()


def test_secure_yaml_os_cloud_and_auth_url_without_v3(demo: Demo, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The password in secure.yaml (OS_CLIENT_SECURE_FILE), the cloud from OS_CLOUD, auth_url unversioned."""
    data = yaml.safe_load(demo.clouds_file.read_text())
    name, entry = next(iter(data["clouds"].items()))
    password = entry["auth"].pop("password")
    entry["auth"]["auth_url"] = demo.auth_url.removesuffix("/v3")
    (tmp_path / "clouds.yaml").write_text(yaml.safe_dump(data))
    (tmp_path / "secure.yaml").write_text(yaml.safe_dump({"clouds": {name: {"auth": {"password": password}}}}))
    monkeypatch.setenv("OS_CLIENT_SECURE_FILE", str(tmp_path / "secure.yaml"))
    monkeypatch.setenv("OS_CLOUD", name)
    cfg = OpenStackConfig(cloud=None, clouds_file=str(tmp_path / "clouds.yaml"), timeout=10)
    lite = light(cfg)
    try:
        assert lite.compute_services() and lite.backend == "light"
        assert lite.where.cloud == name
    finally:
        lite.close()


def test_application_credential_token_request() -> None:
    from tui.openstack.cloudsyaml import LightCloud
    from tui.openstack.errors import Where

    cloud = LightCloud(name="c", auth_type="v3applicationcredential", auth={
        "auth_url": "https://k/v3", "application_credential_id": "ID", "application_credential_secret": "S"},
        auth_url="https://k/v3", region=None, interface="public", verify=True, clouds_file=None)
    body = LightClient(cloud, where=Where("c", None), timeout=5)._auth_body()
    assert body == {"auth": {"identity": {"methods": ["application_credential"],
                                          "application_credential": {"id": "ID", "secret": "S"}}}}
    assert "S" not in repr(cloud), "the secret is never printed"


async def _errors(cfg: OpenStackConfig, client: Any, demo: Demo) -> dict[str, str | None]:
    services = ServicesCollector(cfg, Thresholds(), client_factory=lambda: client)
    instances = InstancesCollector(cfg, client_factory=lambda: client, clock=demo.now, attention_first=True)
    out: dict[str, str | None] = {}
    for c in (services, instances):
        obs = await CollectorRunner(c).run_once()
        out[c.name] = obs.error
        if obs.snapshot is not None and c.name == "services":
            out["keystone"] = obs.snapshot.keystone.error
            out.update({s.name: s.error for s in obs.snapshot.sections})
    return out


async def test_wrong_password_is_the_same_one_line_error(demo: Demo, tmp_path: Path) -> None:
    path = clouds_yaml(demo, tmp_path, auth_password="pw-Not-This-0ne")
    cfg = replace(demo.config().openstack, clouds_file=str(path))
    sdk, lite = connect(cfg), light(cfg)
    try:
        want, got = await _errors(cfg, sdk, demo), await _errors(cfg, lite, demo)
        assert got == want
        assert got["services"] and "\n" not in got["services"] and "401" in got["services"]
        assert "pw-Not-This-0ne" not in str(got), "the password is never in an error line"
    finally:
        sdk.close()
        lite.close()


async def test_keystone_refusing_is_the_same_lines(demo: Demo) -> None:
    cfg = demo.config().openstack
    sdk, lite = connect(cfg), light(cfg)
    demo.keystone_refusing(True)
    try:
        want, got = await _errors(cfg, sdk, demo), await _errors(cfg, lite, demo)
        assert got == want
        assert got["keystone"] and "connection refused" in got["keystone"]
    finally:
        demo.keystone_refusing(False)
        sdk.close()
        lite.close()


def test_a_config_error_is_openstacksdks_line(demo: Demo) -> None:
    """A cloud missing from clouds.yaml: the light path steps aside, openstacksdk's line names the clouds."""
    cfg = replace(demo.config().openstack, cloud="no-such-cloud")
    assert triage_client(cfg, handover_after_s=NEVER) is None
    with pytest.raises(SourceError, match="no-such-cloud"):
        connect(cfg)


@pytest.mark.filterwarnings("ignore:You are specifying a cacert")
@pytest.mark.parametrize("entry, cfg_kw", [
    ({"region_name": "RegionTwo", "interface": "internal", "cacert": "/ca.pem"}, {}),
    ({"verify": False, "cacert": "/ca.pem"}, {"cacert": "/other.pem"}),
    ({"insecure": True}, {}),
    ({"cacert": "/ca.pem"}, {"cacert": "/mine.pem"}),
    ({}, {"insecure": True}),
])
def test_clouds_yaml_is_read_as_openstacksdk_reads_it(tmp_path: Path, entry: dict[str, Any],
                                                     cfg_kw: dict[str, Any]) -> None:
    """Region, interface and TLS settings: the light loader agrees with openstacksdk's loader."""
    from openstack.config import loader

    auth = {"auth_url": "https://k.example:5000", "username": "u", "password": "p", "project_name": "p",
            "user_domain_name": "Default", "project_domain_name": "Default"}
    path = tmp_path / "clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {"c": {"auth": auth, **entry}}}))
    cfg = OpenStackConfig(cloud="c", clouds_file=str(path), **cfg_kw)
    mine = load_cloud(cfg)
    tls: dict[str, Any] = {"verify": False} if cfg.insecure else {"cacert": cfg.cacert} if cfg.cacert else {}
    region = loader.OpenStackConfig(config_files=[str(path)], secure_files=[]).get_one(cloud="c", **tls)
    verify, _ = region.get_requests_verify_args()
    assert mine.verify == verify
    assert mine.region == (region.get_region_name() or None)
    assert mine.interface == region.get_interface()
    assert mine.identity_v3 == "https://k.example:5000/v3"


# ---------------------------------------------------------------------------- the steady state (issue #12)
def test_the_dashboard_stays_on_the_light_client(demo: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dashboard's shared client never hands over on its own: every steady poll goes through httpx."""
    from tui.collectors.registry import build_collectors

    cols = {c.name: c for c in build_collectors(demo.config(), dashboard=True)}
    session = cols["services"].session
    assert session is cols["instances"].session, "one session per cloud"
    assert session.light_first == LIGHT_HANDOVER_S == float("inf")
    shared = session.client()
    try:
        assert isinstance(shared, TriageClient) and shared._timer is None, "no handover is scheduled"
        for _ in range(3):
            assert shared.compute_services() and shared.network_agents() and shared.volume_services()
        assert shared.backend == "light"
    finally:
        session.close()


def test_steady_polls_never_import_openstacksdk(demo: Demo) -> None:
    """The dashboard's collectors, several polls each (placement's async reads too): no openstacksdk, no
    keystoneauth in the process, and the light client still answers."""
    cfg = demo.config().openstack
    code = (
        "import asyncio, sys\n"
        "from tui.collectors.registry import build_collectors\n"
        "from tui.config import Config, OpenStackConfig\n"

        f"config = Config(openstack=OpenStackConfig(cloud={cfg.cloud!r}, clouds_file={cfg.clouds_file!r}))\n"
        "cols = [c for c in build_collectors(config, dashboard=True) if c.name in ('services', 'instances')]\n"
        "async def main():\n"
        "    for _ in range(3):\n"
        "        for c in cols:\n"
        "            await c.collect()\n"
        "    client = cols[0].session.client()\n"
        "    mv = client.placement_microversion()\n"
        "    got = await client.aio.aget_json_many('placement', ['/resource_providers'], microversion=mv)\n"
        "    assert isinstance(got[0], dict) and got[0]['resource_providers'], got\n"
        "    return client.backend\n"
        "backend = asyncio.run(main())\n"
        "print(backend, sorted(m for m in ('openstack', 'keystoneauth1', 'requests') if m in sys.modules))\n"
    )
    stdout = fresh_python(code)
    backend, heavy = stdout.strip().split(" ", 1)
    assert backend == "light" and heavy == "[]", stdout


def _token_posts(demo: Demo) -> int:
    return sum(1 for _, method, target, _, _ in demo.stats.log if method == "POST" and "auth/tokens" in target)


def test_the_light_client_renews_a_token_before_it_expires(demo: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.openstack import light as light_mod

    monkeypatch.setattr(light_mod, "TOKEN_MARGIN_S", 1.0)
    demo.auth.token_ttl_s = 3.0
    lite = light(demo.config().openstack)
    try:
        demo.stats.reset()
        assert lite.compute_services()
        first = lite.light._token
        assert lite.has_usable_token(margin_s=1.0) and not lite.has_usable_token(margin_s=5.0)
        time.sleep(2.2)  # now within the margin of its expiry
        assert lite.compute_services() and lite.network_agents()
        assert lite.light._token != first and _token_posts(demo) == 2
        assert lite.backend == "light"
        statuses = {status for _, method, _, status, _ in demo.stats.log if method == "GET"}
        assert statuses <= {200}, "no request went out with the expired token"
    finally:
        demo.auth.token_ttl_s = 86400.0
        lite.close()


async def test_a_refused_token_is_renewed_once_on_the_light_path(demo: Demo) -> None:
    """Keystone forgot every token (a restart with new keys): the next read and the async placement reads
    get a 401, renew the token once and answer."""
    lite = light(demo.config().openstack)
    try:
        assert lite.compute_services()
        mv = lite.placement_microversion()
        first = lite.light._token
        demo.auth.revoke_all()
        demo.stats.reset()
        assert lite.compute_services()
        second = lite.light._token
        assert second != first and _token_posts(demo) == 1
        demo.auth.revoke_all()
        got = await lite.aio.aget_json_many("placement", ["/resource_providers"] * 3, microversion=mv)
        assert all(isinstance(g, dict) and g["resource_providers"] for g in got), got
        assert lite.light._token not in (first, second) and _token_posts(demo) == 2
        assert lite.backend == "light"
    finally:
        lite.close()


def test_a_snapshot_never_imports_openstacksdk(demo: Demo) -> None:
    """`stacktop snapshot`'s one poll of every OpenStack source (every server listed, placement too) reads
    through the light client: no openstacksdk, no keystoneauth in the process, and every source answers."""
    cfg = demo.config().openstack
    code = (
        "import sys\n"
        "from tui.collectors.registry import build_collectors\n"
        "from tui.config import Config, OpenStackConfig\n"
        "from tui.snapshot import run_snapshot\n"
        f"config = Config(openstack=OpenStackConfig(cloud={cfg.cloud!r}, clouds_file={cfg.clouds_file!r}))\n"
        "cols = build_collectors(config)\n"
        "observations, _ = run_snapshot(cols, 60)\n"
        "print(sorted((o.source, o.ok, o.error) for o in observations),\n"
        "      sorted(m for m in ('openstack', 'keystoneauth1', 'requests') if m in sys.modules), sep='|')\n"
    )
    observed, heavy = fresh_python(code).strip().split("|")
    assert "'services', True, None" in observed and "'instances', True, None" in observed, observed
    assert "'placement', True, None" in observed, observed
    assert heavy == "[]", heavy
