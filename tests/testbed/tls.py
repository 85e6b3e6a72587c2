"""The TLS profile of the test bed (testcloud/tls.sh): where its certificates, clouds.yaml and frontends are,
and stacktop configs that read the test bed through them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.testbed import paths

CLOUD = "stacktop-testcloud-tls"
REGION = "RegionTLS"
# service type -> the TLS frontend of its API (testcloud/tls.sh)
API_PORTS = {"identity": 13500, "compute": 13501, "placement": 13502, "network": 13503, "block-storage": 13504,
             "image": 13505}
MGMT_URL = "https://127.0.0.1:15671"
EXPIRED_KEYSTONE = "https://127.0.0.1:13510/v3"
EXPIRED_MGMT_URL = "https://127.0.0.1:13511"
GALERA_NODE = "127.0.0.1:3341"
GALERA_USER = "stacktop_tls"


@dataclass(frozen=True)
class TlsTestbed:
    """The files of the TLS profile, under <cache>/tls."""

    folder: Path

    @property
    def ca(self) -> Path:
        """The CA that signed every certificate served here."""
        return self.folder / "ca.pem"

    @property
    def other_ca(self) -> Path:
        """A CA that signed nothing served here: the wrong CA."""
        return self.folder / "other-ca.pem"

    @property
    def expired_cert(self) -> Path:
        """Signed by the CA, past its end date (the expired HAProxy frontends serve it)."""
        return self.folder / "expired.pem"

    @property
    def expired_key(self) -> Path:
        return self.folder / "expired.key"

    @property
    def clouds_yaml(self) -> Path:
        return self.folder / "clouds.yaml"

    @property
    def galera_password_file(self) -> Path:
        return self.folder / "galera.password"

    @property
    def rabbitmq_password_file(self) -> Path:
        """The broker's guest password, written by `scripts/testcloud up|reset rabbitmq` beside the profiles."""
        return self.folder.parent / "rabbitmq.password"

    def config(self, path: Path, *, clouds_file: Path | None = None, openstack_cacert: Path | None = None,
               mgmt_url: str = MGMT_URL, rabbitmq_cacert: Path | None = None,
               galera_cacert: Path | None = None, galera_node: str = GALERA_NODE,
               galera_insecure: bool = False) -> Path:
        """Write a stacktop config reading every source over TLS (the test CA unless told otherwise) to path.
        galera_insecure: [galera] insecure = true instead of a cacert."""
        lines = [
            "[openstack]", f'cloud = "{CLOUD}"', f'clouds_file = "{clouds_file or self.clouds_yaml}"',
            "interval = 5", "timeout = 20",
        ]
        if openstack_cacert is not None:
            lines.append(f'cacert = "{openstack_cacert}"')
        lines += [
            "", "[rabbitmq]", f'management_url = "{mgmt_url}"', f'cacert = "{rabbitmq_cacert or self.ca}"',
            'user = "guest"', f'password_file = "{self.rabbitmq_password_file}"', 'vhosts = ["openstack"]',
            "", "[galera]", f'nodes = ["{galera_node}"]', f'user = "{GALERA_USER}"',
            f'password_file = "{self.galera_password_file}"',
            "insecure = true" if galera_insecure else f'cacert = "{galera_cacert or self.ca}"',
            "expected_size = 1", "timeout = 20",  # the expired-certificate proxy is a Python thread
            "", "[thresholds]", "service_down_time = 20", "agent_down_time = 20", "volume_service_down_time = 20",
        ]
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o600)
        return path


def tls_testbed() -> TlsTestbed:
    return TlsTestbed(folder=paths.testcloud_home() / "tls")
