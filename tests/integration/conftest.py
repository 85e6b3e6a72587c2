"""Session fixtures for the integration tests: each starts the real server it needs, on demand, by running
`scripts/testcloud up <component>` (idempotent: a quick no-op when it already runs; `reset` in CI).

  openstack_cloud  -> OpenStackCloud: clouds_yaml, cloud, root, connect(), env, reset()
  rabbitmq_broker  -> tests.testbed.rabbitmq.Broker for a fresh per-run vhost (deleted at session end):
                      mgmt_url, user, password, vhost, amqp_url (with credentials, for pika), amqp_address
  galera_cluster   -> GaleraCluster: nodes ["127.0.0.1:3311", ...], user/password (root, empty: the harness),
                      reader_user/reader_password (stacktop/stacktop: what stacktop reads with), script
  galera11_cluster -> the same for the MariaDB 11.8 cluster (testcloud/trixie/galera11.sh, 3331-3333)
  galera_arb_cluster -> the same for 2 data nodes (3321-3322) + garbd (arbitrators ["127.0.0.1:4633"])
  rabbitmq4_cluster -> tests.testbed.rabbit4.Rabbit4Cluster: the 3-node RabbitMQ 4.0 cluster (broker(i),
                      stop_node(i) / start_node(i), running_nodes())
  tls_testbed      -> tests.testbed.tls.TlsTestbed: the cloud's APIs and the management API behind HAProxy with
                      the test CA, a Galera node requiring TLS (testcloud/tls.sh): ca, other_ca, clouds_yaml,
                      config(path, ...) (a stacktop config reading every source over TLS)
  expired_galera   -> "127.0.0.1:PORT": the TLS profile's Galera node behind a proxy serving the expired
                      certificate (tests.testbed.mysql_tls_proxy, in this process; closed after the module)
  ovn_testbed      -> tests.testbed.ovn.OvnTestbed: OVN with chassis compute-01/compute-02 and a private
                      ML2/OVN neutron-server as region RegionOVN (testcloud/ovn.sh): clouds_yaml, config(path),
                      kill_controller(host), restore() (up again: restarts a killed ovn-controller)
  ovn_nova         -> tests.testbed.ovn.OvnNova (after ovn_testbed): the profile's own nova with a compute-02 on
                      the OVN neutron, region RegionOVNNova (testcloud/ovn_nova.sh): clouds_yaml, connect(),
                      config(path, stuck=), ipam_held() (port creation waits in neutron-server)
  ssh_hosts        -> tests.testbed.sshd.SshTestbed: an OpenSSH server on 127.0.0.1 reached as compute-01 and
                      compute-02 through its own ssh config (testcloud/sshd.sh): config, identity, ssh()

A server that cannot be started FAILS the test with the script's output; it never skips. Skipping happens
only in tests/conftest.py, when STACKTOP_SKIP_REAL=1 is set explicitly.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.testbed import ovn as ovn_profile
from tests.testbed import paths
from tests.testbed import tls as tls_profile
from tests.testbed.openstack import OpenStackCloud, wait_all_healthy
from tests.testbed.ovn import OvnNova, OvnTestbed
from tests.testbed.rabbit4 import Rabbit4Cluster
from tests.testbed.rabbitmq import Broker, create_vhost, delete_vhost
from tests.testbed.sshd import SshTestbed, ssh_testbed
from tests.testbed.testcloud import TestbedError, run_script
from tests.testbed.testcloud import testcloud as _testcloud
from tests.testbed.tls import TlsTestbed

UP_TIMEOUT = {"openstack": 1200, "rabbitmq": 120, "galera": 600, "galera11": 900, "galera-arb": 600,
              "rabbitmq4": 600, "tls": 300, "ovn": 400, "ovn-nova": 400,
              "sshd": 300}
# In CI (CI=true) a session starts from the known state: `reset` (= up, then no servers / volumes / leftover
# allocations, memory watermark 0.4, Galera synced with an empty test table) instead of `up`. Elsewhere `up`
# only, so a developer's session never deletes what a parallel session is using; STACKTOP_TESTCLOUD_RESET=1
# asks for the reset there too.
START_VERB = "reset" if os.environ.get("CI") == "true" or os.environ.get("STACKTOP_TESTCLOUD_RESET") == "1" else "up"


def testcloud(verb: str, component: str, timeout: float | None = None) -> str:
    """Run scripts/testcloud VERB COMPONENT; return its output, or FAIL the test with it (never skip)."""
    try:
        return _testcloud(verb, component, timeout or UP_TIMEOUT.get(component, 600))
    except TestbedError as exc:
        pytest.fail(f"the real {component} test server could not be started: {exc}", pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/integration talks to a real server: mark it `integration` (before the
    suite-wide STACKTOP_SKIP_REAL rule in tests/conftest.py looks at the markers)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.integration)


# ---------------------------------------------------------------------------------------------- OpenStack
@pytest.fixture(scope="session")
def openstack_cloud() -> OpenStackCloud:
    testcloud(START_VERB, "openstack")
    yaml = paths.clouds_yaml()
    if not yaml.is_file():
        pytest.fail(f"scripts/testcloud up openstack succeeded but wrote no {yaml}", pytrace=False)
    return OpenStackCloud(clouds_yaml=yaml, reset_hook=lambda: testcloud("reset", "openstack"))


@pytest.fixture(scope="module")
def conn(openstack_cloud: OpenStackCloud) -> Iterator[Any]:
    """An admin openstacksdk connection for the test's own set-up and checks (never stacktop's client)."""
    c = openstack_cloud.connect()
    yield c
    c.close()


@pytest.fixture
def healthy(conn: Any) -> Any:
    """Start from a cloud where every service is up (another test may have just restarted one)."""
    wait_all_healthy(conn, timeout=120)
    return conn


# ----------------------------------------------------------------------------------------------- RabbitMQ
@pytest.fixture(scope="session")
def rabbitmq_broker() -> Iterator[Broker]:
    testcloud(START_VERB, "rabbitmq")
    base = Broker(
        mgmt_url=os.environ.get("STACKTOP_RABBITMQ_MGMT_URL", "http://127.0.0.1:15672"),
        user=os.environ.get("STACKTOP_RABBITMQ_USER", "guest"),
        password=os.environ.get("STACKTOP_RABBITMQ_PASSWORD", "guest"),
    )
    vhost = f"stacktop-test-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        broker = create_vhost(base, vhost)
    except Exception as exc:
        pytest.fail(f"cannot create the per-run vhost {vhost} through {base.mgmt_url}: {exc}", pytrace=False)
    try:
        yield broker
    finally:
        delete_vhost(base, vhost)


@pytest.fixture(scope="session")
def rabbitmq4_cluster() -> Rabbit4Cluster:
    """The 3-node RabbitMQ 4.0 cluster (testcloud/trixie/rabbit4.sh), brought up on demand (~25 s from cold,
    ~2 s when up; the trixie root is built first when missing, ~70 s)."""
    testcloud(START_VERB, "rabbitmq4")
    return Rabbit4Cluster()


# ------------------------------------------------------------------------------------------------- Galera
@dataclass(frozen=True)
class GaleraCluster:
    """One Galera test cluster: by default the 3-node MariaDB 10.11 cluster of testcloud/galera.sh (its header
    documents ports and accounts; the other profiles share them). `component` is its scripts/testcloud name;
    `arbitrators` the garbd members' gcomm addresses; `offers_tls`: the server offers TLS by itself (MariaDB
    11.4+ makes a self-signed certificate at start); `provider_plugin`: provider options are variables
    (wsrep_provider_pc_bootstrap, MariaDB 11.x), wsrep_provider_options cannot be changed."""

    nodes: tuple[str, ...] = ("127.0.0.1:3311", "127.0.0.1:3312", "127.0.0.1:3313")
    user: str = "root"
    password: str = ""
    reader_user: str = "stacktop"
    reader_password: str = "stacktop"
    script: Path = paths.REPO / "testcloud" / "galera.sh"
    component: str = "galera"
    server: str = "MariaDB 10.11"
    arbitrators: tuple[str, ...] = ()
    offers_tls: bool = False
    provider_plugin: bool = False

    def run(self, *args: str, timeout: float = 300) -> str:
        """The cluster's script ARGS... (kill N, start N, bootstrap-pc N, sql N "SQL", reset...)."""
        rc, text = run_script(["bash", str(self.script), *args], timeout)
        if rc != 0:
            raise RuntimeError(f"{self.script.name} {' '.join(args)} failed ({rc}): {text[-3000:]}")
        return text

    @property
    def indexes(self) -> tuple[int, ...]:
        """Data node numbers, 1-based, as the script's verbs take them."""
        return tuple(range(1, len(self.nodes) + 1))

    def address(self, node: int) -> str:
        return self.nodes[node - 1]

    def port(self, node: int) -> int:
        return int(self.address(node).rsplit(":", 1)[1])


GALERA_PROFILES = {
    "galera": GaleraCluster(),
    "galera11": GaleraCluster(nodes=("127.0.0.1:3331", "127.0.0.1:3332", "127.0.0.1:3333"),
                              script=paths.REPO / "testcloud" / "trixie" / "galera11.sh", component="galera11",
                              server="MariaDB 11.8", offers_tls=True, provider_plugin=True),
    "galera-arb": GaleraCluster(nodes=("127.0.0.1:3321", "127.0.0.1:3322"),
                                script=paths.REPO / "testcloud" / "galera-arb.sh", component="galera-arb",
                                arbitrators=("127.0.0.1:4633",)),
}


def start_galera(component: str) -> GaleraCluster:
    """Bring a Galera test cluster up (idempotent, a quick no-op when it runs) and describe it."""
    testcloud(START_VERB, component)
    return GALERA_PROFILES[component]


@pytest.fixture(scope="session")
def galera_cluster() -> GaleraCluster:
    return start_galera("galera")


@pytest.fixture(scope="session")
def galera11_cluster() -> GaleraCluster:
    return start_galera("galera11")


@pytest.fixture(scope="session")
def galera_arb_cluster() -> GaleraCluster:
    return start_galera("galera-arb")


# ---------------------------------------------------------------------------------------------------- TLS
@pytest.fixture(scope="session")
def tls_testbed(openstack_cloud: OpenStackCloud, rabbitmq_broker: Broker) -> TlsTestbed:
    """The TLS profile in front of the running cloud and broker (testcloud/tls.sh; ~5 s from cold once haproxy
    is installed, ~3 s when up)."""
    testcloud(START_VERB, "tls")
    bed = tls_profile.tls_testbed()
    for f in (bed.ca, bed.other_ca, bed.clouds_yaml, bed.galera_password_file, bed.rabbitmq_password_file):
        if not f.is_file():
            pytest.fail(f"scripts/testcloud up tls succeeded but wrote no {f}", pytrace=False)
    return bed


@pytest.fixture(scope="module")
def expired_galera(tls_testbed: TlsTestbed) -> Iterator[str]:
    """The Galera node of the TLS profile as a client meets it through an expired certificate: a TLS-terminating
    proxy (MySQL negotiates TLS in its own protocol: HAProxy cannot front it) serving tls/expired.pem."""
    from tests.testbed.mysql_tls_proxy import MySQLTlsProxy

    host, port = tls_profile.GALERA_NODE.rsplit(":", 1)
    for f in (tls_testbed.expired_cert, tls_testbed.expired_key):
        if not f.is_file():
            pytest.fail(f"scripts/testcloud up tls wrote no {f}", pytrace=False)
    proxy = MySQLTlsProxy((host, int(port)), tls_testbed.expired_cert, tls_testbed.expired_key, tls_testbed.ca)
    yield proxy.address
    proxy.close()


# ---------------------------------------------------------------------------------------------------- OVN
@pytest.fixture(scope="session")
def ovn_testbed(openstack_cloud: OpenStackCloud) -> OvnTestbed:
    """The ML2/OVN profile beside the running cloud (testcloud/ovn.sh; ~60 s from cold with the package
    download, ~5 s when up). `up` again restores a killed ovn-controller and waits until its agents are alive."""
    testcloud(START_VERB, "ovn")
    bed = ovn_profile.ovn_testbed()
    if not bed.clouds_yaml.is_file():
        pytest.fail(f"scripts/testcloud up ovn succeeded but wrote no {bed.clouds_yaml}", pytrace=False)
    return bed


@pytest.fixture(scope="session")
def ovn_nova(ovn_testbed: OvnTestbed) -> OvnNova:
    """The OVN profile's own nova-api/conductor/scheduler/placement and compute-02 on the OVN neutron
    (testcloud/ovn_nova.sh; ~45 s from nothing, 10-26 s with the databases made, 3-8 s when up)."""
    testcloud(START_VERB, "ovn-nova")
    nova = ovn_profile.ovn_nova()
    if not nova.clouds_yaml.is_file():
        pytest.fail(f"scripts/testcloud up ovn-nova succeeded but wrote no {nova.clouds_yaml}", pytrace=False)
    return nova



# ---------------------------------------------------------------------------------------------------- SSH
@pytest.fixture(scope="session")
def ssh_hosts() -> SshTestbed:
    """The SSH profile (testcloud/sshd.sh; apt-get install openssh-server the first time, ~1 s when up)."""
    testcloud(START_VERB, "sshd")
    bed = ssh_testbed()
    for f in (bed.config, bed.identity, bed.known_hosts):
        if not f.is_file():
            pytest.fail(f"scripts/testcloud up sshd succeeded but wrote no {f}", pytrace=False)
    return bed
