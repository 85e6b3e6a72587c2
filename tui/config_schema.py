"""The config's sections as records, each key declared once (tui.config_keys.setting): its name, type, default,
bounds and the comment config.example.toml gives it. tui.config reads a file into these records;
tui.config_example writes the example file from them."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace

from tui.config_keys import Bounds, mb_bytes, setting
from tui.records import record
from tui.rules.task_states import DEFAULT_STUCK_SECONDS

SECONDS_POLL = Bounds(1, 3600)  # between two polls
SECONDS_TIMEOUT = Bounds(0.5, 600)  # one poll, one request or one command
SECONDS_DOWN = Bounds(1, 86400)  # a service's or an agent's down time
SECONDS_STUCK = Bounds(1, 7 * 86400)  # a task_state before it counts as stuck
BODY_MB = Bounds(1, 4096, "MB")  # an API answer's cap


@record
class Secret:
    """A password and where it came from (never printed)."""

    value: str | None = None
    origin: str = "none"

    def __repr__(self) -> str:
        return f"Secret(origin={self.origin!r})"

    __str__ = __repr__


PASSWORD_NAMES = ("password", "password_env", "password_file")


@record
class OpenStackConfig:
    """[openstack]: the clouds.yaml entry the services and instances sources read, and how."""

    cloud: str | None = setting(None, example="mycloud", doc="""
        clouds.yaml entry to use (default: $OS_CLOUD; without it, a sourced openrc's OS_* variables, as the
        openstack CLI reads them). stacktop reads with admin rights; it never writes.""")
    clouds_file: str | None = setting(None, read="file", example="/etc/openstack/clouds.yaml", commented=True,
                                      fix="point it at your clouds.yaml or remove the key", doc="""
        clouds.yaml to read instead of the usual ./, ~/.config/openstack/, /etc/openstack/ lookup.""")
    cacert: str | None = setting(None, read="cacert", example="/etc/ssl/certs/my-cloud-ca.pem", commented=True,
                                 fix="the cloud's certificates", doc="""
        TLS: verification is on by default. A CA bundle for a private CA (overrides the clouds.yaml entry's
        cacert), or (explicitly, shown in the header as INSECURE) no verification at all. The two conflict. A
        failed check is the source's error naming the endpoint and OpenSSL's reason, e.g. "TLS certificate
        expired (certificate verify failed: certificate has expired)" or "TLS certificate not trusted
        (certificate verify failed: unable to get local issuer certificate) - set [openstack] cacert ...": never
        a fallback to an unverified read (the same in [rabbitmq] and [galera]). A cacert OpenSSL cannot load is
        one line naming the key.""")
    insecure: bool = setting(False, commented=True)  # the header says INSECURE
    interval: float = setting(10.0, bounds=SECONDS_POLL, doc="""
        Seconds between polls of services and instances, and the timeout of one poll. Every request also ends
        within it, answer included (connect + headers + body): a server that trickles its answer costs no
        more.""")
    timeout: float = setting(20.0, bounds=SECONDS_TIMEOUT)
    max_body_mb: float = setting(16.0, bounds=BODY_MB, doc="""
        An answer larger than this (MB, 1-4096) is refused before it is decoded: "answer refused, larger than
        the 16 MB cap". The default is 4x the largest page stacktop asks for at 100,000 servers: listings are
        read in pages of 1,000 (nova's and cinder's max_limit), and a detailed server is ~3-4 KB of JSON
        (addresses, metadata, embedded flavor), so a page is ~4 MB; per-host listings (services, agents,
        providers) stay under 2 MB at 2,000 hosts. A source reads at most ~4 answers at once, so a hostile
        endpoint costs ~4 caps at most. Raise it for servers with very large metadata or many ERROR faults per
        page.""")
    audit_interval: float = setting(600.0, read="audit", bounds=Bounds(0, 86400), doc="""
        The stale-allocation audit in the background (what `:audit` shows, as findings: allocations in Placement
        for a consumer that is no instance, the usual cause of a cloud "full at 40 %"): seconds between audits,
        0 to turn it off, at least 60. Each audit reads every resource provider's allocations (about two
        requests per provider); the dashboard's first one starts 30 s after the start. `stacktop snapshot` runs
        it once.""")

    @property
    def audited(self) -> bool:
        return bool(self.cloud) and self.audit_interval > 0

    @property
    def max_body_bytes(self) -> int:
        return mb_bytes(self.max_body_mb)


@record
class RabbitMQConfig:
    """[rabbitmq]: the management API (or the CLI command) the RabbitMQ source reads, and how."""

    management_url: str | None = setting(None, read="url", schemes=("http", "https"),
                                         example="http://controller1:15672", doc="""
        Management API (rabbitmq_management plugin). Polling under 5 s is pointless: stats refresh every 5 s. In
        a cluster any node's API lists every node (a stopped one too) and every queue's members online: point
        this at one node (or a load balancer in front of all of them). RabbitMQ 3.x and 4.x are read alike.""")
    user: str = setting("guest", example="monitoring")
    password: Secret = setting(factory=Secret, read="secret", names=PASSWORD_NAMES,
                               example_toml='password_env = "RABBITMQ_PASSWORD"', doc="""
        Name of the environment variable holding the password (or: password_file = "/path/to/file").""")
    vhosts: tuple[str, ...] = setting((), example=["/"], doc="Virtual hosts to read (default: all).")
    amqp_url: str | None = setting(None, read="url", schemes=("amqp", "amqps"), example="amqp://controller1:5672/",
                                   commented=True, doc="""
        Optional: AMQP URL (no credentials in it) to confirm a zero-consumer queue live with a passive
        declare.""")
    cli_command: str | None = setting(None, example="docker exec rabbitmq rabbitmqctl", commented=True, doc="""
        Optional, for deployments without the management API: the prefix that runs rabbitmqctl.""")
    interval: float = setting(15.0, bounds=SECONDS_POLL)
    timeout: float = setting(10.0, bounds=SECONDS_TIMEOUT, doc="""
        Seconds for one poll; every request also ends within it, answer included (connect + headers +
        body).""")
    max_body_mb: float = setting(16.0, bounds=BODY_MB, doc="""
        An answer larger than this (MB, 1-4096) is refused before it is decoded. The default holds the unpaged
        light queue listing (names and totals, ~300 B a queue) of ~50,000 queues: 2.5x the ~20,000 queues of a
        100,000-server cloud (a few per compute host and per agent); the statistics listings are paged by
        500.""")
    cacert: str | None = setting(None, read="cacert", example="/etc/ssl/certs/rabbitmq-ca.pem", commented=True,
                                 fix="the management API's certificate", doc="""
        TLS for an https management_url and an amqps:// amqp_url: verification is on by default (the system's
        CAs, or $SSL_CERT_FILE). cacert adds a private CA; insecure = true turns verification off (explicit
        only, shown in the header as INSECURE). The two conflict.""")
    insecure: bool = setting(False, commented=True)

    @property
    def configured(self) -> bool:
        return bool(self.management_url or self.cli_command)

    @property
    def max_body_bytes(self) -> int:
        return mb_bytes(self.max_body_mb)


@record
class GaleraConfig:
    """[galera]: the MariaDB Galera nodes the Galera source reads, and how."""

    nodes: tuple[str, ...] = setting((), read="members", example=["db1:3306", "db2:3306", "db3:3306"],
                                     fix='write e.g. nodes = ["db1:3306"]', doc="""
        Every node of the cluster as host:port; each gets its own persistent read-only connection.""")
    user: str = setting("root", example="monitoring", doc="""
        A user that may run SHOW GLOBAL STATUS (no other grant is needed).""")
    password: Secret = setting(factory=Secret, read="secret", names=PASSWORD_NAMES,
                               example_toml='password_env = "GALERA_PASSWORD"')
    arbitrators: tuple[str, ...] = setting((), read="members", example=["garbd1:4567"], commented=True,
                                           fix="write the arbitrator's group address, e.g. "
                                               'arbitrators = ["garbd1:4567"]', doc="""
        Arbitrators (garbd): group members without SQL, as their group communication host:port. Never polled:
        the data nodes report them (wsrep_cluster_size, an empty entry in wsrep_incoming_addresses). A cluster
        of two data nodes and one garbd is healthy at 3 members; one data node down is told as still Primary
        with the arbitrator (writes work); garbd gone is a finding naming it (galera.arbitrator_missing).""")
    expected_size: int | None = setting(None, read="expected_size", example=3, doc="""
        How many members the cluster should have, arbitrators included (default: nodes + arbitrators).""")
    interval: float = setting(5.0, bounds=SECONDS_POLL)
    timeout: float = setting(5.0, bounds=SECONDS_TIMEOUT)
    tls: bool = setting(False, example=True, commented=True, doc="""
        TLS to every node (off by default: MySQL negotiates it per connection, ~40 ms per connect). tls = true
        verifies against the system's CAs; cacert (implies tls) against a private CA; insecure = true (implies
        tls) does not verify (explicit only, shown in the header as INSECURE; conflicts with cacert). Once
        asked, TLS is required: a node that offers none is reported, never read in plaintext. MariaDB 11.4+
        offers TLS by itself with a self-signed certificate it makes at start: without these keys stacktop
        reads in plaintext as before; tls = true refuses that certificate (one line naming cacert); give the
        servers a CA-signed certificate and set cacert, or insecure = true for an encrypted but unverified
        read.""")
    cacert: str | None = setting(None, read="cacert", example="/etc/mysql/ca.pem", commented=True,
                                 fix="the nodes' certificates")
    insecure: bool = setting(False, commented=True)

    @property
    def configured(self) -> bool:
        return bool(self.nodes)

    @property
    def uses_tls(self) -> bool:
        return self.tls or bool(self.cacert) or self.insecure


@record
class CloudConfig:
    """One cloud: its OpenStack cloud, RabbitMQ and Galera. `[[clouds]]` entries, or the top-level sections."""

    name: str
    openstack: OpenStackConfig = setting(factory=OpenStackConfig, read="section")
    rabbitmq: RabbitMQConfig = setting(factory=RabbitMQConfig, read="section")
    galera: GaleraConfig = setting(factory=GaleraConfig, read="section")


@record
class SnapshotConfig:
    """[snapshot]: `stacktop snapshot`'s overall deadline."""

    deadline: float = setting(30.0, bounds=Bounds(1, 3600), doc="""
        `stacktop snapshot` answers within this many seconds of starting (1-3600; `--deadline SECONDS`
        overrides): a source still being read then is reported late, named in one line on stderr, and the exit
        code is 3 (UNKNOWN), so a Nagios / Icinga check always gets its answer. Keep it under the check's own
        timeout and above [openstack] timeout (RabbitMQ's one-shot verdict may add a 6 s second sample to
        [rabbitmq] timeout, when a queue's own sample history is too short to confirm it).""")


@record
class UIConfig:
    """[ui]: how the dashboard looks and how often it polls the clouds not on screen."""

    inactive_cloud_interval: float = setting(60.0, bounds=SECONDS_POLL, doc="""
        Seconds between polls of each source of the clouds not on screen (their header badge: worst severity,
        or STALE). The cloud on screen polls at its sections' own intervals; switching to a cloud polls it at
        once.""")


@record
class Thresholds:
    """[thresholds]: when the rules call a service, an agent or a server late or stuck."""

    service_down_time: float = setting(60.0, bounds=SECONDS_DOWN, doc="""
        Must match nova's / neutron's / cinder's own settings to predict "down in N s" correctly.""")
    agent_down_time: float = setting(75.0, bounds=SECONDS_DOWN)
    volume_service_down_time: float = setting(60.0, bounds=SECONDS_DOWN)
    fleet_down_fraction: float = setting(0.5, bounds=Bounds(0.01, 1, ""), doc="""
        When at least this share of one binary's services go down within one service_down_time, stacktop raises
        one fleet-wide finding (points at nova-conductor / RabbitMQ) instead of one per host.""")
    consumer_lost_grace: float = setting(10.0, bounds=Bounds(0, 3600), doc="""
        A service topic queue (compute.<host>, conductor, cinder-volume.<host>@<backend> ...) that had a consumer
        and has none names its process at once, as an info; still without one after this many seconds,
        critical. About one report_interval: a restarted service consumes again within it.""")
    stuck: dict[str, float] = setting(factory=lambda: dict(DEFAULT_STUCK_SECONDS), read="stuck",
                                      bounds=SECONDS_STUCK, doc="""
        Seconds an instance may stay in a task_state before it is reported stuck. `default` covers the
        rest.""")

    def stuck_after(self, task_state: str) -> float:
        return self.stuck.get(task_state, self.stuck["default"])


# a host or container name put into a log source's template: a name, never shell or ssh syntax (no spaces,
# quotes, `;`, `$`, `|`, `&`, redirections, globs) and never an option (no leading `-`)
LOG_TEMPLATE_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@:-]{0,252}")
LOG_PLACEHOLDER = re.compile(r"\{(\w*)\}")


def log_value_problem(what: str, value: str) -> str | None:
    """None when `value` may stand for {host} / {container}; else one line saying why not."""
    if LOG_TEMPLATE_VALUE.fullmatch(value):
        return None
    return (f"{what} {value!r} is not a plain name (letters, digits, . _ - @ : only, not starting with -): "
            "it is never put into a command")


@record
class LogSource:
    """A log the request trace and the log-lines view read (read-only): a file path (globs allowed) or a
    command whose output is read (`docker logs nova_api`), run without a shell and killed after `timeout`
    seconds or once it gave `max_mb` MB. With `hosts`, the command or path is a template read once per host:
    `{host}` becomes the host and `{container}` the container (or unit); the template is split into arguments
    before the values go in, so each value stays one argument."""

    service: str
    command: str | None = None
    path: str | None = None
    timeout: float = setting(10.0, bounds=SECONDS_TIMEOUT)
    hosts: tuple[str, ...] = setting((), read="log_hosts")
    container: str | None = None
    max_mb: float = setting(64.0, bounds=Bounds(1, 4096, "MB"))

    @property
    def label(self) -> str:
        return self.command or self.path or self.service

    @property
    def per_host(self) -> bool:
        return "{host}" in (self.command or self.path or "")

    @property
    def max_bytes(self) -> int:
        return mb_bytes(self.max_mb)

    def argv_for(self, host: str | None) -> list[str]:
        """The command's arguments for one host (ValueError with one line when a value is not a plain name)."""
        assert self.command is not None
        return [self._fill(arg, host) for arg in shlex.split(self.command)]

    def path_for(self, host: str | None) -> str:
        assert self.path is not None
        return self._fill(self.path, host)

    def _fill(self, text: str, host: str | None) -> str:
        for what, value in (("host", host), ("container", self.container)):
            if "{" + what + "}" not in text:
                continue
            if value is None:
                raise ValueError(f"{{{what}}} has no value: give the source {what}s" if what == "host"
                                 else "{container} has no value: give the source container = \"...\"")
            problem = log_value_problem(what, value)
            if problem:
                raise ValueError(problem)
            text = text.replace("{" + what + "}", value)
        return text


LOG_SOURCE_EXAMPLES = """\
[[recorder.log_sources]]
service = "nova-api"
command = "docker logs nova_api"
timeout = 10

[[recorder.log_sources]]
service = "nova-compute"
path = "/var/log/kolla/nova/nova-compute.log"

# kolla-ansible: the container's log over ssh (your ssh user: USER@{host} or your ssh config)
# [[recorder.log_sources]]
# service = "nova-compute"
# hosts = ["compute-01", "compute-02"]
# container = "nova_compute"
# command = "ssh {host} sudo docker exec {container} tail -n 200000 /var/log/kolla/nova/nova-compute.log"
# timeout = 20

# OpenStack-Ansible: the journald unit
# [[recorder.log_sources]]
# service = "nova-compute"
# hosts = ["compute1", "compute2"]
# container = "nova-compute"
# command = "ssh {host} sudo journalctl -u {container} --since -2h --no-pager -o short-iso"

# a central log folder
# [[recorder.log_sources]]
# service = "nova-compute"
# hosts = ["compute-01", "compute-02"]
# path = "/srv/logs/{host}/nova-compute.log"
"""


@record
class RecorderConfig:
    """[recorder]: where the journal goes, how big it may grow, and the logs the request trace reads."""

    dir: str = setting("~/.local/share/stacktop/recordings", doc="""
        Where exercise recordings (JSON lines) and exports are written.""")
    trace_interval: float = setting(0.5, bounds=Bounds(0.1, 60), doc="""
        Seconds between polls of an exercise (:trace-boot, :trace-down); the report states this resolution.""")
    max_file_mb: float = setting(20.0, bounds=Bounds(1, 512, "MB"), doc="""
        The journal (one file per session, JSON lines) rotates at max_file_mb (1 to 512: what export and replay
        read); rotated files are gzipped (export and replay read them as they are). Notes and exercise results
        are carried into each new file; a snapshot bigger than half a file is recorded cut (marked). Every
        journal in `dir` together stays under max_total_mb: beyond it the oldest files are deleted (never the
        one being written). At 10,000 instances a day of journal is well under 100 MB.""")
    max_total_mb: float = setting(1024.0, bounds=Bounds(10, 1048576, "MB"))
    log_sources: tuple[LogSource, ...] = setting((), read="log_sources", example_toml=LOG_SOURCE_EXAMPLES,
                                                 doc="""
        Logs :trace-request REQUEST_ID greps and `l` on the finding and instance screens reads, read-only: a
        command whose output is read (run without a shell, killed after `timeout` seconds or once it gave
        `max_mb` MB, 64 by default) or a file path (globs allowed; its last `max_mb` read). `service` names the
        service (keystone, nova-api, nova-scheduler, placement, nova-conductor, nova-compute, glance,
        neutron-server, cinder-volume, neutron-openvswitch-agent ...). Per host: list `hosts` and put {host}
        (and {container}, from `container`) in the command or path; the template is split into arguments first,
        each value is one argument and must be a plain name (letters, digits, . _ - @ :). Hosts are read in
        parallel (8 at once); one that cannot be read is one line. `stacktop init --kolla` / `--osa` writes
        these for the deployment's hosts.""")

    @property
    def max_file_bytes(self) -> int:
        return mb_bytes(self.max_file_mb)

    @property
    def max_total_bytes(self) -> int:
        return mb_bytes(self.max_total_mb)


CLOUDS_EXAMPLE = """\
#
# [[clouds]]
# name = "prod-east"
# [clouds.openstack]
# cloud = "prod-east"
# [clouds.rabbitmq]
# management_url = "http://east-ctl1:15672"
# user = "monitoring"
# password_env = "EAST_RABBITMQ_PASSWORD"
# [clouds.galera]
# nodes = ["east-db1:3306", "east-db2:3306", "east-db3:3306"]
# user = "monitoring"
# password_env = "EAST_GALERA_PASSWORD"
#
# [[clouds]]
# name = "prod-west"
# [clouds.rabbitmq]
# management_url = "http://west-ctl1:15672"
# password_env = "WEST_RABBITMQ_PASSWORD"
"""


@record
class Config:
    """openstack / rabbitmq / galera are the active (first) cloud's; `clouds` lists every `[[clouds]]` entry
    (empty for the single-cloud form: then the top-level sections are the one cloud). The fields declared with
    read="section" are the file's sections, in the example file's order."""

    path: str | None = None
    openstack: OpenStackConfig = setting(factory=OpenStackConfig, read="section")
    rabbitmq: RabbitMQConfig = setting(factory=RabbitMQConfig, read="section")
    galera: GaleraConfig = setting(factory=GaleraConfig, read="section")
    clouds: tuple[CloudConfig, ...] = setting((), read="clouds", example_toml=CLOUDS_EXAMPLE, doc="""
        Several clouds in one session: instead of the [openstack] / [rabbitmq] / [galera] sections above (not
        both), one [[clouds]] entry per cloud, each with a unique `name` (typed in `:cloud NAME`; `c` cycles)
        and its own sections with the same keys. [clouds.openstack] cloud (the clouds.yaml entry) has no
        default there ($OS_CLOUD is not used): an entry without it has no OpenStack panes. The first entry is
        shown first (or `stacktop --cloud NAME`). [thresholds], [recorder] and [ui] are shared.""")
    snapshot: SnapshotConfig = setting(factory=SnapshotConfig, read="section")
    ui: UIConfig = setting(factory=UIConfig, read="section")
    thresholds: Thresholds = setting(factory=Thresholds, read="section")
    recorder: RecorderConfig = setting(factory=RecorderConfig, read="section")
    demo: bool = False
    warnings: tuple[str, ...] = ()  # config lines worth a look but not fatal, `FILE: key: problem - fix`

    def all_clouds(self) -> tuple[CloudConfig, ...]:
        """Every cloud, in file order; the single-cloud form is one cloud named after its clouds.yaml entry."""
        if self.clouds:
            return self.clouds
        name = "demo" if self.demo else (self.openstack.cloud or "default")
        return (CloudConfig(name, self.openstack, self.rabbitmq, self.galera),)

    @property
    def several_clouds(self) -> bool:
        return len(self.clouds) > 1

    def for_cloud(self, name: str) -> Config:
        """This config with `name`'s sections as the active ones (KeyError for an unknown name)."""
        for cloud in self.all_clouds():
            if cloud.name == name:
                return replace(self, openstack=cloud.openstack, rabbitmq=cloud.rabbitmq, galera=cloud.galera)
        raise KeyError(name)

    def secrets(self) -> list[str | None]:
        """Every configured password (for the journal's redaction)."""
        return [s for c in self.all_clouds() for s in (c.rabbitmq.password.value, c.galera.password.value)]

