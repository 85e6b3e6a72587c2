"""TOML config -> frozen dataclasses. Every error is one line: `FILE: key: problem - fix`.

Lookup: --config PATH, then $STACKTOP_CONFIG, then the first of $XDG_CONFIG_HOME/stacktop/config.toml,
~/.config/stacktop/config.toml and /etc/stacktop/config.toml that exists (none is fine: then only what the CLI
and environment give is configured; a sourced openrc's OS_* variables are the cloud when nothing names one,
as the openstack CLI reads them). Precedence for values: CLI > environment > file.
Secrets are referenced (clouds.yaml, an env var name, a password file); a plain `password` is accepted only
when the file is not readable by group or others.
"""

from __future__ import annotations

import errno
import math
import os
import re
import shlex
import stat
from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from tui.records import record
from tui.rules.task_states import DEFAULT_STUCK_SECONDS, KNOWN_TASK_STATES

DEFAULT_PATH = Path("~/.config/stacktop/config.toml")
SYSTEM_PATH = Path("/etc/stacktop/config.toml")  # for a check run as another user (nagios, prometheus)
ENVVARS_CLOUD = "envvars"  # openstacksdk's name for the cloud the OS_* variables describe


class ConfigError(Exception):
    """A config problem: str() is the one line shown to the user."""

    def __init__(self, file: str, key: str, problem: str, fix: str) -> None:
        from tui.safetext import clean  # keys and values come from the file: controls shown escaped, one line

        self.file, self.key, self.problem, self.fix = file, key, problem, fix
        super().__init__(clean(f"{file}: {key}: {problem} - {fix}"))


@record
class Secret:
    """A password and where it came from (never printed)."""

    value: str | None = None
    origin: str = "none"

    def __repr__(self) -> str:
        return f"Secret(origin={self.origin!r})"

    __str__ = __repr__


@record
class OpenStackConfig:
    """[openstack]: the clouds.yaml entry the services and instances sources read, and how."""

    cloud: str | None = None
    clouds_file: str | None = None
    interval: float = 10.0
    timeout: float = 20.0
    cacert: str | None = None  # CA bundle for the cloud's TLS endpoints (overrides clouds.yaml's)
    insecure: bool = False  # TLS verification off: only when set explicitly; the header says INSECURE
    max_body_mb: float = 16.0  # a larger answer is refused before it is decoded (tui.deadline)
    audit_interval: float = 600.0  # the stale-allocation audit in the background, seconds; 0: off

    @property
    def audited(self) -> bool:
        return bool(self.cloud) and self.audit_interval > 0


@record
class RabbitMQConfig:
    """[rabbitmq]: the management API (or the CLI command) the RabbitMQ source reads, and how."""

    management_url: str | None = None
    user: str = "guest"
    password: Secret = field(default_factory=Secret)
    vhosts: tuple[str, ...] = ()
    amqp_url: str | None = None
    cli_command: str | None = None
    interval: float = 15.0
    timeout: float = 10.0
    cacert: str | None = None  # CA bundle for an https management_url (else the system's, or $SSL_CERT_FILE)
    insecure: bool = False  # TLS verification off for the management API: explicit only; the header says INSECURE
    max_body_mb: float = 16.0  # a larger answer is refused before it is decoded (tui.deadline)

    @property
    def configured(self) -> bool:
        return bool(self.management_url or self.cli_command)


@record
class GaleraConfig:
    """[galera]: the MariaDB Galera nodes the Galera source reads, and how."""

    nodes: tuple[str, ...] = ()
    user: str = "root"
    password: Secret = field(default_factory=Secret)
    expected_size: int | None = None  # members, arbitrators included (default: nodes + arbitrators)
    arbitrators: tuple[str, ...] = ()  # garbd members as host:port (gcomm): no SQL, never polled
    interval: float = 5.0
    timeout: float = 5.0
    tls: bool = False  # TLS to every node, verified against the system's CAs (or cacert)
    cacert: str | None = None  # CA bundle that signed the nodes' certificates (implies tls)
    insecure: bool = False  # TLS without verification (implies tls): explicit only; the header says INSECURE

    @property
    def configured(self) -> bool:
        return bool(self.nodes)

    @property
    def uses_tls(self) -> bool:
        return self.tls or bool(self.cacert) or self.insecure


@record
class Thresholds:
    """[thresholds]: when the rules call a service, an agent or a server late or stuck."""

    service_down_time: float = 60.0
    agent_down_time: float = 75.0
    volume_service_down_time: float = 60.0
    fleet_down_fraction: float = 0.5
    consumer_lost_grace: float = 10.0
    stuck: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_STUCK_SECONDS))

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
    timeout: float = 10.0
    hosts: tuple[str, ...] = ()
    container: str | None = None
    max_mb: float = 64.0

    @property
    def label(self) -> str:
        return self.command or self.path or self.service

    @property
    def per_host(self) -> bool:
        return "{host}" in (self.command or self.path or "")

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


@record
class RecorderConfig:
    """[recorder]: where the journal goes, how big it may grow, and the logs the request trace reads."""

    dir: str = "~/.local/share/stacktop/recordings"
    trace_interval: float = 0.5  # seconds between polls of an exercise (boot trace, compute-down lag)
    log_sources: tuple[LogSource, ...] = ()
    max_file_mb: float = 20.0  # a journal file rotates at this size (at most 512: what export and replay read)
    max_total_mb: float = 1024.0  # every journal in `dir` together: the oldest files are deleted beyond this


@record
class SnapshotConfig:
    """[snapshot]: `stacktop snapshot`'s overall deadline."""

    deadline: float = 30.0  # `stacktop snapshot` answers within this, naming the sources still late


@record
class UIConfig:
    """[ui]: how often the dashboard polls the clouds not on screen."""

    inactive_cloud_interval: float = 60.0  # seconds between polls of each source of a cloud not on screen


@record
class CloudConfig:
    """One cloud: its OpenStack cloud, RabbitMQ and Galera. `[[clouds]]` entries, or the top-level sections."""

    name: str
    openstack: OpenStackConfig = field(default_factory=OpenStackConfig)
    rabbitmq: RabbitMQConfig = field(default_factory=RabbitMQConfig)
    galera: GaleraConfig = field(default_factory=GaleraConfig)


@record
class Config:
    """openstack / rabbitmq / galera are the active (first) cloud's; `clouds` lists every `[[clouds]]` entry
    (empty for the single-cloud form: then the top-level sections are the one cloud)."""

    path: str | None = None
    openstack: OpenStackConfig = field(default_factory=OpenStackConfig)
    rabbitmq: RabbitMQConfig = field(default_factory=RabbitMQConfig)
    galera: GaleraConfig = field(default_factory=GaleraConfig)
    thresholds: Thresholds = field(default_factory=Thresholds)
    recorder: RecorderConfig = field(default_factory=RecorderConfig)
    ui: UIConfig = field(default_factory=UIConfig)
    clouds: tuple[CloudConfig, ...] = ()
    snapshot: SnapshotConfig = field(default_factory=SnapshotConfig)
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


_SECTIONS: dict[str, set[str]] = {
    "openstack": {"cloud", "clouds_file", "interval", "timeout", "cacert", "insecure", "max_body_mb",
                  "audit_interval"},
    "rabbitmq": {
        "management_url", "user", "password", "password_env", "password_file", "vhosts", "amqp_url",
        "cli_command", "interval", "timeout", "cacert", "insecure", "max_body_mb",
    },
    "galera": {
        "nodes", "user", "password", "password_env", "password_file", "expected_size", "arbitrators", "interval",
        "timeout", "tls", "cacert", "insecure",
    },
    "thresholds": {
        "service_down_time", "agent_down_time", "volume_service_down_time", "fleet_down_fraction", "stuck",
        "consumer_lost_grace",
    },
    "recorder": {"dir", "trace_interval", "log_sources", "max_file_mb", "max_total_mb"},
    "ui": {"inactive_cloud_interval"},
    "snapshot": {"deadline"},
    "clouds": set(),  # [[clouds]]: checked entry by entry (_CLOUD_KEYS)
}
_CLOUD_SECTIONS = ("openstack", "rabbitmq", "galera")
_CLOUD_KEYS = {"name", *_CLOUD_SECTIONS}
_LOG_SOURCE_KEYS = {"service", "command", "path", "timeout", "hosts", "container", "max_mb"}


def _suggest(word: str, options: set[str] | list[str]) -> str:
    import difflib  # only a config with a mistake needs it

    match = difflib.get_close_matches(word, sorted(options), n=1, cutoff=0.6)
    return f"did you mean '{match[0]}'?" if match else f"known keys: {', '.join(sorted(options))}"


class _Reader:
    def __init__(self, file: str, mode: int | None, env: dict[str, str]) -> None:
        self.file = file
        self.mode = mode
        self.env = env
        self.warnings: list[str] = []  # not fatal: one line each on stderr (Config.warnings)

    def err(self, key: str, problem: str, fix: str) -> ConfigError:
        return ConfigError(self.file, key, problem, fix)

    def table(self, data: dict[str, Any], section: str, label: str | None = None) -> dict[str, Any]:
        """data[section], checked against the section's keys; errors name it `label` (default: section)."""
        label = label or section
        value = data.get(section, {})
        if not isinstance(value, dict):
            where = f"[{label}]" if "[" not in label else f"[clouds.{section}] in its [[clouds]] entry"
            raise self.err(label, f"must be a table, got {_typename(value)}", f"write it as {where}")
        for key in value:
            if key not in _SECTIONS[section]:
                raise self.err(f"{label}.{key}", "unknown key", _suggest(key, _SECTIONS[section]))
        return value

    def string(self, sec: dict[str, Any], section: str, key: str, default: str | None) -> str | None:
        value = sec.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.err(f"{section}.{key}", f"must be a string, got {_typename(value)}",
                           f'quote it: {key} = "..."')
        if isinstance(value, str) and not value.strip():
            raise self.err(f"{section}.{key}", "is empty", "remove the key or give it a value")
        return value

    def number(self, sec: dict[str, Any], section: str, key: str, default: float, *, minimum: float = 0.0,
               maximum: float | None = None) -> float:
        """A finite number in its bounds: _BOUNDS for the known keys (inclusive, with a unit), else above
        `minimum` and at most `maximum` (or _CEILING). NaN, inf and absurd values never reach a timer."""
        value = sec.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.err(f"{section}.{key}", f"must be a number, got {_typename(value)}",
                           f"write a number, e.g. {key} = {default:g}")
        bounds = _bounds(section, key)
        if bounds is not None:
            low, high, unit = bounds
            if not (math.isfinite(value) and low <= value <= high):
                raise self.err(f"{section}.{key}", f"must be between {low:g} and {high:g}{unit}, got {value}",
                               f"e.g. {key} = {default:g}")
            return float(value)
        high = _CEILING if maximum is None else maximum
        if not math.isfinite(value) or value <= minimum or value > high:
            rng = f"between {minimum:g} (excluded) and {high:g}" if maximum is not None else f"> {minimum:g}"
            if maximum is None and math.isfinite(value) and value > minimum:
                rng = f"at most {high:g}"
            raise self.err(f"{section}.{key}", f"must be {rng}, got {value}", f"e.g. {key} = {default:g}")
        return float(value)

    def bounded(self, sec: dict[str, Any], section: str, key: str, default: float, low: float, high: float,
                unit: str) -> float:
        """A finite number in [low, high] (NaN and inf refused)."""
        value = sec.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.err(f"{section}.{key}", f"must be a number, got {_typename(value)}",
                           f"write a number, e.g. {key} = {default:g}")
        if not math.isfinite(value) or not low <= value <= high:
            raise self.err(f"{section}.{key}", f"must be between {low:g} and {high:g} {unit}, got {value}",
                           f"e.g. {key} = {default:g}")
        return float(value)

    def boolean(self, sec: dict[str, Any], section: str, key: str, default: bool) -> bool:
        value = sec.get(key, default)
        if not isinstance(value, bool):
            raise self.err(f"{section}.{key}", f"must be true or false, got {_typename(value)}",
                           f"write {key} = true (unquoted)")
        return value

    def tls_pair(self, section: str, cacert: str | None, insecure: bool, what: str) -> None:
        """[section] cacert must be a file, and cannot be combined with insecure = true."""
        if cacert and not Path(cacert).expanduser().is_file():
            raise self.err(f"{section}.cacert", f"{cacert} does not exist",
                           f"point it at the PEM bundle of the CA that signed {what}")
        if cacert and insecure:
            raise self.err(f"{section}.insecure", f"conflicts with {section}.cacert",
                           "keep cacert (verification on) or insecure = true (verification off), not both")

    def str_list(self, sec: dict[str, Any], section: str, key: str) -> tuple[str, ...]:
        value = sec.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.err(f"{section}.{key}", "must be a list of strings",
                           f'write e.g. {key} = ["a", "b"]')
        return tuple(value)

    def url(self, sec: dict[str, Any], section: str, key: str, schemes: tuple[str, ...]) -> str | None:
        """A URL of one of `schemes`, without user:password@ (a password there would be logged and shown)."""
        value = self.string(sec, section, key, None)
        if value is None:
            return None
        if url_has_userinfo(value):
            raise self.err(f"{section}.{key}", "contains credentials (user:password@)",
                           f"drop them from the URL; set [{section}] user and password_env or password_file")
        if not value.startswith(tuple(f"{s}://" for s in schemes)):
            raise self.err(f"{section}.{key}", f"'{value}' is not a {'/'.join(schemes)} URL",
                           f"write it as {schemes[0]}://host:port")
        return value

    def secret(self, sec: dict[str, Any], section: str) -> Secret:
        given = [k for k in ("password", "password_env", "password_file") if k in sec]
        if len(given) > 1:
            raise self.err(f"{section}.{given[1]}", f"conflicts with {section}.{given[0]}",
                           "keep only one of password, password_env, password_file")
        if not given:
            return Secret()
        key = given[0]
        value = self.string(sec, section, key, None)
        assert value is not None
        if key == "password":
            if self.mode is not None and self.mode & (stat.S_IRGRP | stat.S_IROTH):
                raise self.err(f"{section}.password",
                               "plain password in a file readable by group or others",
                               f"chmod 600 {self.file} or use password_env")
            return Secret(value, "config file")
        if key == "password_env":
            if value not in self.env:
                raise self.err(f"{section}.password_env", f"environment variable {value} is not set",
                               f"export {value}=... before starting stacktop")
            return Secret(self.env[value], f"${value}")
        path = Path(value).expanduser()
        fix = "point it at a readable file holding only the password"
        try:
            raw = read_regular_file(path)
        except NotRegularFile as exc:
            raise self.err(f"{section}.password_file", f"{path} is {exc.kind}, not a regular file", fix) from None
        except FileTooLarge as exc:
            raise self.err(f"{section}.password_file", f"{path} is {exc.strerror}: not a password file", fix) \
                from None
        except OSError as exc:
            raise self.err(f"{section}.password_file", f"cannot read {path}: {exc.strerror}", fix) from None
        try:
            return Secret(raw.decode("utf-8").rstrip("\r\n"), str(path))
        except UnicodeDecodeError:
            raise self.err(f"{section}.password_file", f"{path} is not UTF-8 text",
                           "write the password as UTF-8 text in that file") from None


_CEILING = 1e6  # a number key without bounds of its own: anything above is a typo (or 1e9)
# (low, high, unit) of the known number keys, inclusive: seconds unless said otherwise
_BOUNDS: dict[str, tuple[float, float, str]] = {
    "interval": (1, 3600, " seconds"),
    "timeout": (0.5, 600, " seconds"),
    "trace_interval": (0.1, 60, " seconds"),
    "inactive_cloud_interval": (1, 3600, " seconds"),
    "service_down_time": (1, 86400, " seconds"),
    "agent_down_time": (1, 86400, " seconds"),
    "volume_service_down_time": (1, 86400, " seconds"),
    "fleet_down_fraction": (0.01, 1, ""),
    "consumer_lost_grace": (0, 3600, " seconds"),
}
_STUCK_BOUNDS = (1.0, 7 * 86400.0, " seconds")


def _bounds(section: str, key: str) -> tuple[float, float, str] | None:
    if section == "thresholds.stuck":
        return _STUCK_BOUNDS
    return _BOUNDS.get(key)


def url_has_userinfo(url: str) -> bool:
    """True when the URL holds `user@` or `user:password@`. Any `@` after the scheme counts: a password may
    hold `/`, `?` or `#`, which end the authority for a URL parser (its tail would then be read as a port or a
    path, and echoed in errors); the service URLs of a config have no `@` of their own."""
    rest = url.split("://", 1)[1] if "://" in url else url
    return "@" in rest


class NotRegularFile(OSError):
    """A path that is a FIFO, a device, a socket or a directory: never opened (a FIFO would block)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


class FileTooLarge(OSError):
    """A file over the size limit: refused whole, never cut to the limit (a cut password or YAML file would be
    read as another value)."""

    def __init__(self, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit / (1024 * 1024):g} MB")
        self.limit = limit


def read_regular_file(path: Path, limit: int | None = 16 * 1024 * 1024) -> bytes:
    """The bytes of a regular file (os.stat first: a FIFO or device is refused before open, never read);
    FileTooLarge when it holds more than `limit` bytes (None: no limit)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(file_kind(st.st_mode))
    if limit is not None and st.st_size > limit:
        raise FileTooLarge(limit)
    with open(path, "rb") as handle:
        data = handle.read(-1 if limit is None else limit + 1)  # one byte more: a file that grew is seen too
    if limit is not None and len(data) > limit:
        raise FileTooLarge(limit)
    return data


def _log_sources(r: _Reader, raw: Any) -> tuple[LogSource, ...]:
    """[[recorder.log_sources]] entries: service plus exactly one of command / path."""
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise r.err("recorder.log_sources", f"must be an array of tables, got {_typename(raw)}",
                    'write each as [[recorder.log_sources]] with service = "nova-api" and command or path')
    out = []
    for i, entry in enumerate(raw):
        key = f"recorder.log_sources[{i}]"
        for name in entry:
            if name not in _LOG_SOURCE_KEYS:
                raise r.err(f"{key}.{name}", "unknown key", _suggest(name, _LOG_SOURCE_KEYS))
        service = r.string(entry, key, "service", None)
        if service is None:
            raise r.err(f"{key}.service", "is missing", 'name the service, e.g. service = "nova-api"')
        given = [k for k in ("command", "path") if k in entry]
        if len(given) != 1:
            problem = "has both command and path" if given else "has neither command nor path"
            raise r.err(key, problem, 'give one: command = "docker logs nova_api" or path = "/var/log/..."')
        src = LogSource(service=service, command=r.string(entry, key, "command", None),
                        path=r.string(entry, key, "path", None),
                        timeout=r.number(entry, key, "timeout", 10.0, maximum=600.0),
                        hosts=_log_hosts(r, entry, key), container=r.string(entry, key, "container", None),
                        max_mb=r.number(entry, key, "max_mb", 64.0, maximum=4096.0))
        _check_log_template(r, key, src)
        out.append(src)
    return tuple(out)


def _log_hosts(r: _Reader, entry: dict[str, Any], key: str) -> tuple[str, ...]:
    raw = entry.get("hosts", [])
    if not isinstance(raw, list) or not all(isinstance(h, str) for h in raw):
        raise r.err(f"{key}.hosts", f"must be a list of host names, got {_typename(raw)}",
                    'write hosts = ["compute-01", "compute-02"]')
    for host in raw:
        problem = log_value_problem("host", host)
        if problem:
            raise r.err(f"{key}.hosts", problem, "name the host as ssh or the log folder knows it")
    return tuple(dict.fromkeys(raw))


def _check_log_template(r: _Reader, key: str, src: LogSource) -> None:
    """Placeholders are {host} and {container} only; a {host} template needs hosts, hosts need a {host}."""
    field_name = "command" if src.command is not None else "path"
    template = src.command if src.command is not None else src.path or ""
    for name in LOG_PLACEHOLDER.findall(template):
        if name not in ("host", "container"):
            raise r.err(f"{key}.{field_name}", f"unknown placeholder {{{name}}}", "use {host} and {container}")
    if src.command is not None:
        try:
            shlex.split(src.command)
        except ValueError as exc:
            raise r.err(f"{key}.command", f"cannot be split into arguments ({exc})",
                        "close the quote; no shell is used, so write the command as its arguments") from None
    if src.container is not None:
        problem = log_value_problem("container", src.container)
        if problem:
            raise r.err(f"{key}.container", problem, 'name the container or unit, e.g. container = "nova_compute"')
    elif "{container}" in template:
        raise r.err(f"{key}.container", "is missing but the template names {container}",
                    'give container = "nova_compute" (the container or unit the template reads)')
    if src.hosts and not src.per_host:
        raise r.err(f"{key}.hosts", f"given but the {field_name} has no {{host}}",
                    'put {host} where the host goes, e.g. command = "ssh {host} docker logs nova_compute"')
    if src.per_host and not src.hosts:
        raise r.err(f"{key}.hosts", f"is missing but the {field_name} names {{host}}",
                    'list the hosts it runs on, e.g. hosts = ["compute-01", "compute-02"]')


def _typename(value: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


def config_candidates(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where stacktop looks for its config when none is named, in order (the first that exists wins)."""
    env = os.environ if env is None else env
    out = []
    if env.get("XDG_CONFIG_HOME"):
        out.append(Path(env["XDG_CONFIG_HOME"]).expanduser() / "stacktop" / "config.toml")
    out += [DEFAULT_PATH.expanduser(), SYSTEM_PATH]
    return list(dict.fromkeys(out))


def find_config_path(cli_path: str | None, env: Mapping[str, str] | None = None) -> tuple[Path | None, bool]:
    """Return (path, explicit). An explicit path (CLI or env) must exist; the default ones may be missing."""
    env = os.environ if env is None else env
    if cli_path:
        return Path(cli_path).expanduser(), True
    if env.get("STACKTOP_CONFIG"):
        return Path(env["STACKTOP_CONFIG"]).expanduser(), True
    return next(((p, False) for p in config_candidates(env) if p.exists()), (None, False))


def default_cloud(env: Mapping[str, str]) -> str | None:
    """The cloud when the config names none: $OS_CLOUD, else the OS_* variables of a sourced openrc (as the
    openstack CLI reads them, openstacksdk's `envvars` cloud)."""
    if env.get("OS_CLOUD"):
        return env["OS_CLOUD"]
    return ENVVARS_CLOUD if env.get("OS_AUTH_URL") else None


def load_config(cli_path: str | None = None, env: dict[str, str] | None = None) -> Config:
    env = dict(os.environ) if env is None else env
    path, explicit = find_config_path(cli_path, env)
    if path is None:
        return parse_config({}, file="(no config file)", mode=None, env=env)
    name = str(path)
    try:
        st = path.stat()
        raw = read_regular_file(path)
    except NotRegularFile as exc:
        raise ConfigError(name, "(file)", f"is {exc.kind}, not a regular file",
                          "point --config / $STACKTOP_CONFIG at a TOML file") from None
    except FileTooLarge as exc:
        raise ConfigError(name, "(file)", f"is {exc.strerror}, too large for a config file",
                          "point --config / $STACKTOP_CONFIG at the stacktop TOML file") from None
    except FileNotFoundError:
        raise ConfigError(name, "(file)", "does not exist",
                          "create it from config.example.toml or fix --config / $STACKTOP_CONFIG") from None
    except OSError as exc:
        raise ConfigError(name, "(file)", f"cannot be read: {exc.strerror}", "check the path and permissions") \
            from None
    import tomllib  # here: `stacktop --demo` reads no file, and the parser is ~2 ms before the first frame

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(name, "(file)", "is not UTF-8 text", "save it as UTF-8 TOML") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(name, "(syntax)", f"invalid TOML: {exc}", "fix the line it names") from None
    del explicit
    return parse_config(data, file=name, mode=stat.S_IMODE(st.st_mode), env=env)


def _audit_interval(r: _Reader, sec: dict[str, Any], label: str) -> float:
    value = r.bounded(sec, label, "audit_interval", 600.0, 0.0, 86400.0, "seconds")
    if 0 < value < 60:
        raise r.err(f"{label}.audit_interval", f"must be 0 (off) or at least 60 seconds, got {value:g}",
                    "e.g. audit_interval = 600 (each audit reads every resource provider)")
    return value


def _openstack(r: _Reader, data: dict[str, Any], label: str, default_cloud: str | None) -> OpenStackConfig:
    os_sec = r.table(data, "openstack", label)
    openstack = OpenStackConfig(
        cloud=r.string(os_sec, label, "cloud", None) or default_cloud or None,
        clouds_file=r.string(os_sec, label, "clouds_file", None),
        interval=r.number(os_sec, label, "interval", 10.0),
        timeout=r.number(os_sec, label, "timeout", 20.0),
        cacert=r.string(os_sec, label, "cacert", None),
        insecure=r.boolean(os_sec, label, "insecure", False),
        max_body_mb=r.bounded(os_sec, label, "max_body_mb", 16.0, 1.0, 4096.0, "MB"),
        audit_interval=_audit_interval(r, os_sec, label),
    )
    r.tls_pair(label, openstack.cacert, openstack.insecure, "the cloud's certificates")
    if openstack.clouds_file and not Path(openstack.clouds_file).expanduser().is_file():
        raise r.err(f"{label}.clouds_file", f"{openstack.clouds_file} does not exist",
                    "point it at your clouds.yaml or remove the key")
    return openstack


def _rabbitmq(r: _Reader, data: dict[str, Any], label: str) -> RabbitMQConfig:
    rq = r.table(data, "rabbitmq", label)
    rabbitmq = RabbitMQConfig(
        management_url=r.url(rq, label, "management_url", ("http", "https")),
        user=r.string(rq, label, "user", "guest") or "guest",
        password=r.secret(rq, label),
        vhosts=r.str_list(rq, label, "vhosts"),
        amqp_url=r.url(rq, label, "amqp_url", ("amqp", "amqps")),
        cli_command=r.string(rq, label, "cli_command", None),
        interval=r.number(rq, label, "interval", 15.0),
        timeout=r.number(rq, label, "timeout", 10.0),
        cacert=r.string(rq, label, "cacert", None),
        insecure=r.boolean(rq, label, "insecure", False),
        max_body_mb=r.bounded(rq, label, "max_body_mb", 16.0, 1.0, 4096.0, "MB"),
    )
    r.tls_pair(label, rabbitmq.cacert, rabbitmq.insecure, "the management API's certificate")
    return rabbitmq


def _host_ports(r: _Reader, sec: dict[str, Any], label: str, key: str, example: str) -> tuple[str, ...]:
    """A list of host:port strings without credentials, each listed once."""
    values = r.str_list(sec, label, key)
    for i, value in enumerate(values):
        if "@" in value:  # user:password@host:port: never echoed
            raise r.err(f"{label}.{key}[{i}]", "contains credentials (user:password@)",
                        f"write host:port only; set [{label}] user and password_env or password_file")
        host, _, port = value.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise r.err(f"{label}.{key}", f"'{value}' is not host:port", example)
        if values.index(value) != i:
            raise r.err(f"{label}.{key}", f"'{value}' is listed twice", "list each member once")
    return values


def _galera(r: _Reader, data: dict[str, Any], label: str) -> GaleraConfig:
    ga = r.table(data, "galera", label)
    nodes = _host_ports(r, ga, label, "nodes", 'write e.g. nodes = ["db1:3306"]')
    arbitrators = _host_ports(r, ga, label, "arbitrators",
                              'write the arbitrator\'s group address, e.g. arbitrators = ["garbd1:4567"]')
    if arbitrators and not nodes:
        raise r.err(f"{label}.arbitrators", "is set but nodes is empty",
                    "list the data nodes in nodes: an arbitrator has no SQL port, it is seen through them")
    both = sorted(set(nodes) & set(arbitrators))
    if both:
        raise r.err(f"{label}.arbitrators", f"'{both[0]}' is also in {label}.nodes",
                    "a member is either a data node (SQL host:port) or an arbitrator (garbd, no SQL), not both")
    members = len(nodes) + len(arbitrators)
    expected = ga.get("expected_size", members or None)
    if expected is not None and (isinstance(expected, bool) or not isinstance(expected, int) or expected < 1):
        raise r.err(f"{label}.expected_size", f"must be a positive integer, got {expected!r}",
                    "set it to the number of members the cluster should have (data nodes + arbitrators)")
    galera = GaleraConfig(
        nodes=nodes,
        user=r.string(ga, label, "user", "root") or "root",
        password=r.secret(ga, label),
        expected_size=expected,
        arbitrators=arbitrators,
        interval=r.number(ga, label, "interval", 5.0),
        timeout=r.number(ga, label, "timeout", 5.0),
        tls=r.boolean(ga, label, "tls", False),
        cacert=r.string(ga, label, "cacert", None),
        insecure=r.boolean(ga, label, "insecure", False),
    )
    r.tls_pair(label, galera.cacert, galera.insecure, "the nodes' certificates")
    if expected is not None and nodes and expected < members:
        # a warning, not an error: the cluster may really be shrinking (a node being retired is still
        # listed); at run time a bigger cluster is the info finding galera.size_mismatch
        listed = f"{len(nodes)} nodes" + (f" + {len(arbitrators)} arbitrator(s)" if arbitrators else "")
        r.warnings.append(f"{r.file}: {label}.expected_size: {expected} is less than the {listed} "
                          f"listed - raise it to {members}, or drop the retired nodes from {label}.nodes")
    return galera


def _clouds(r: _Reader, data: dict[str, Any]) -> tuple[CloudConfig, ...]:
    """[[clouds]] entries: a unique `name` each, and their own [clouds.openstack/rabbitmq/galera]."""
    raw = data.get("clouds")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw or not all(isinstance(e, dict) for e in raw):
        raise r.err("clouds", f"must be an array of tables, got {_typename(raw)}",
                    'write each cloud as [[clouds]] with name = "prod" and its [clouds.openstack] ...')
    given = [key for key in _CLOUD_SECTIONS if key in data]
    if given:
        raise r.err(given[0], "conflicts with [[clouds]]",
                    f"move [{given[0]}] into each [[clouds]] entry as [clouds.{given[0]}]")
    out: list[CloudConfig] = []
    for i, entry in enumerate(raw):
        for key in entry:
            if key not in _CLOUD_KEYS:
                raise r.err(f"clouds[{i}].{key}", "unknown key", _suggest(key, _CLOUD_KEYS))
        name = r.string(entry, f"clouds[{i}]", "name", None)
        if name is None:
            raise r.err(f"clouds[{i}].name", "is missing", 'name the cloud, e.g. name = "prod"')
        if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise r.err(f"clouds[{i}].name", f"'{name}' has characters other than letters, digits, - _ .",
                        'use a short word, e.g. name = "prod-east" (it is typed in :cloud NAME)')
        if any(c.name == name for c in out):
            raise r.err(f"clouds[{i}].name", f"'{name}' is used twice", "give every [[clouds]] entry its own name")
        label = f"clouds[{name}]"
        out.append(CloudConfig(name=name, openstack=_openstack(r, entry, f"{label}.openstack", None),
                               rabbitmq=_rabbitmq(r, entry, f"{label}.rabbitmq"),
                               galera=_galera(r, entry, f"{label}.galera")))
    return tuple(out)


def parse_config(data: dict[str, Any], *, file: str, mode: int | None, env: dict[str, str]) -> Config:
    r = _Reader(file, mode, env)
    for key in data:
        if key not in _SECTIONS:
            raise r.err(key, "unknown section", _suggest(key, set(_SECTIONS)))

    clouds = _clouds(r, data)
    if clouds:
        openstack, rabbitmq, galera = clouds[0].openstack, clouds[0].rabbitmq, clouds[0].galera
    else:
        openstack = _openstack(r, data, "openstack", default_cloud(env))
        rabbitmq = _rabbitmq(r, data, "rabbitmq")
        galera = _galera(r, data, "galera")

    th = r.table(data, "thresholds")
    stuck_raw = th.get("stuck", {})
    if not isinstance(stuck_raw, dict):
        raise r.err("thresholds.stuck", f"must be a table, got {_typename(stuck_raw)}",
                    "write it as [thresholds.stuck] with task_state = seconds")
    stuck = dict(DEFAULT_STUCK_SECONDS)
    for state, _seconds in stuck_raw.items():
        if state not in stuck and state not in KNOWN_TASK_STATES:
            raise r.err(f"thresholds.stuck.{state}", "unknown task_state",
                        _suggest(state, set(KNOWN_TASK_STATES) | {"default"}))
        stuck[state] = r.number(stuck_raw, "thresholds.stuck", state, stuck.get(state, stuck["default"]))
    thresholds = Thresholds(
        service_down_time=r.number(th, "thresholds", "service_down_time", 60.0),
        agent_down_time=r.number(th, "thresholds", "agent_down_time", 75.0),
        volume_service_down_time=r.number(th, "thresholds", "volume_service_down_time", 60.0),
        fleet_down_fraction=r.number(th, "thresholds", "fleet_down_fraction", 0.5, maximum=1.0),
        consumer_lost_grace=r.number(th, "thresholds", "consumer_lost_grace", 10.0),
        stuck=stuck,
    )

    rec = r.table(data, "recorder")
    recorder = RecorderConfig(dir=r.string(rec, "recorder", "dir", RecorderConfig.dir) or RecorderConfig.dir,
                              trace_interval=r.number(rec, "recorder", "trace_interval", 0.5, maximum=60.0),
                              log_sources=_log_sources(r, rec.get("log_sources", [])),
                              max_file_mb=r.bounded(rec, "recorder", "max_file_mb", 20.0, 1.0, 512.0, "MB"),
                              max_total_mb=r.bounded(rec, "recorder", "max_total_mb", 1024.0, 10.0, 1048576.0, "MB"))
    ui = r.table(data, "ui")
    ui_config = UIConfig(inactive_cloud_interval=r.number(ui, "ui", "inactive_cloud_interval", 60.0))
    snap = r.table(data, "snapshot")
    snapshot = SnapshotConfig(deadline=r.bounded(snap, "snapshot", "deadline", 30.0, 1.0, 3600.0, "seconds"))
    return Config(path=None if mode is None else file, openstack=openstack, rabbitmq=rabbitmq, galera=galera,
                  thresholds=thresholds, recorder=recorder, ui=ui_config, clouds=clouds, snapshot=snapshot,
                  warnings=tuple(r.warnings))
