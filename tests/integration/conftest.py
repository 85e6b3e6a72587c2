"""Session fixtures for the integration tests: each starts the real server it needs, on demand, by running
`scripts/testcloud up <component>` (idempotent: a quick no-op when it already runs).

  openstack_cloud  -> OpenStackCloud: clouds_yaml, cloud, root, connect(), env, reset()
  rabbitmq_broker  -> tests.testbed.rabbitmq.Broker for a fresh per-run vhost (deleted at session end):
                      mgmt_url, user, password, vhost, amqp_url (with credentials, for pika), amqp_address
  galera_cluster   -> GaleraCluster: nodes ["127.0.0.1:3311", ...], user/password (root, empty: the harness),
                      reader_user/reader_password (stacktop/stacktop: what stacktop reads with), script

A server that cannot be started FAILS the test with the script's output; it never skips. Skipping happens
only in tests/conftest.py, when STACKTOP_SKIP_REAL=1 is set explicitly.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.testbed import paths
from tests.testbed.rabbitmq import Broker, create_vhost, delete_vhost

UP_TIMEOUT = {"openstack": 1200, "rabbitmq": 120, "galera": 600}


def run_script(cmd: list[str], timeout: float) -> tuple[int | str, str]:
    """Run a test-bed script; return (exit code or "timeout ...", output).

    Output goes through a temporary file, not a pipe: daemons started by the script must not be able to keep
    a pipe open (and this call waiting)."""
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                  timeout=timeout, check=False)
            rc: int | str = proc.returncode
        except subprocess.TimeoutExpired:
            rc = f"timeout after {timeout:.0f} s"
        out.seek(0)
        return rc, out.read().decode(errors="replace")


def testcloud(verb: str, component: str, timeout: float | None = None) -> str:
    """Run scripts/testcloud VERB COMPONENT; return its output, or fail the test with it."""
    rc, text = run_script([str(paths.TESTCLOUD_SCRIPT), verb, component], timeout or UP_TIMEOUT.get(component, 600))
    if rc != 0:
        tail = "\n".join(text.splitlines()[-60:])
        pytest.fail(f"`scripts/testcloud {verb} {component}` failed ({rc}); the real {component} test server "
                    f"could not be started. Output:\n{tail}", pytrace=False)
    return text


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/integration talks to a real server: mark it `integration` (before the
    suite-wide STACKTOP_SKIP_REAL rule in tests/conftest.py looks at the markers)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.integration)


# ---------------------------------------------------------------------------------------------- OpenStack
@dataclass(frozen=True)
class OpenStackCloud:
    clouds_yaml: Path
    cloud: str = "stacktop-testcloud"
    root: Path = field(default_factory=paths.openstack_root)

    def connect(self, compute_api_version: str = "2.96"):  # type: ignore[no-untyped-def]
        """A fresh openstacksdk Connection (admin, project-scoped) to the test cloud."""
        import openstack.config
        import openstack.connection

        region = openstack.config.OpenStackConfig(config_files=[str(self.clouds_yaml)]).get_one(cloud=self.cloud)
        return openstack.connection.Connection(config=region, compute_api_version=compute_api_version)

    @property
    def env(self) -> dict[str, str]:
        """Environment for a subprocess (e.g. stacktop itself) to reach the cloud."""
        return {"OS_CLIENT_CONFIG_FILE": str(self.clouds_yaml), "OS_CLOUD": self.cloud}

    def reset(self) -> str:
        """No servers, no volumes, no leftover allocations, every service up (scripts/testcloud reset)."""
        return testcloud("reset", "openstack")


@pytest.fixture(scope="session")
def openstack_cloud() -> OpenStackCloud:
    testcloud("up", "openstack")
    yaml = paths.clouds_yaml()
    if not yaml.is_file():
        pytest.fail(f"scripts/testcloud up openstack succeeded but wrote no {yaml}", pytrace=False)
    return OpenStackCloud(clouds_yaml=yaml)


# ----------------------------------------------------------------------------------------------- RabbitMQ
@pytest.fixture(scope="session")
def rabbitmq_broker() -> Iterator[Broker]:
    testcloud("up", "rabbitmq")
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


# ------------------------------------------------------------------------------------------------- Galera
@dataclass(frozen=True)
class GaleraCluster:
    """The 3-node cluster of testcloud/galera.sh (its header documents ports and accounts)."""

    nodes: tuple[str, ...] = ("127.0.0.1:3311", "127.0.0.1:3312", "127.0.0.1:3313")
    user: str = "root"
    password: str = ""
    reader_user: str = "stacktop"
    reader_password: str = "stacktop"
    script: Path = paths.REPO / "testcloud" / "galera.sh"

    def run(self, *args: str, timeout: float = 300) -> str:
        """testcloud/galera.sh ARGS... (kill N, start N, bootstrap-pc N, sql N "SQL", reset...)."""
        rc, text = run_script(["bash", str(self.script), *args], timeout)
        if rc != 0:
            raise RuntimeError(f"galera.sh {' '.join(args)} failed ({rc}): {text[-3000:]}")
        return text


@pytest.fixture(scope="session")
def galera_cluster() -> GaleraCluster:
    testcloud("up", "galera")
    return GaleraCluster()
