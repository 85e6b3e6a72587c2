"""TOML config -> frozen dataclasses. Every error is one line: `FILE: key: problem - fix`.

Lookup: --config PATH, then $STACKTOP_CONFIG, then the first of $XDG_CONFIG_HOME/stacktop/config.toml,
~/.config/stacktop/config.toml and /etc/stacktop/config.toml that exists (none is fine: then only what the CLI
and environment give is configured; a sourced openrc's OS_* variables are the cloud when nothing names one,
as the openstack CLI reads them). Precedence for values: CLI > environment > file.
Secrets are referenced (clouds.yaml, an env var name, a password file); a plain `password` is accepted only
when the file is not readable by group or others.

The keys, their types, defaults, bounds and docs are declared once, in tui.config_schema; this module finds
the file and reads it section by section (tui.config_reader reads each key by its declaration), with the
checks that span keys (TLS pairs, Galera members, [[clouds]] entries, log-source templates).
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui.config_keys import declared, default_of, toml_names
from tui.config_reader import (
    ConfigError,
    FileTooLarge,
    NotRegularFile,
    Reader,
    file_kind,
    read_regular_file,
    suggest,
    typename,
    url_has_userinfo,
)
from tui.config_schema import (
    LOG_PLACEHOLDER,
    LOG_TEMPLATE_VALUE,
    CloudConfig,
    Config,
    GaleraConfig,
    LogSource,
    OpenStackConfig,
    RabbitMQConfig,
    RecorderConfig,
    Secret,
    SnapshotConfig,
    Thresholds,
    UIConfig,
    log_value_problem,
)
from tui.rules.task_states import KNOWN_TASK_STATES

__all__ = [
    "LOG_PLACEHOLDER", "LOG_TEMPLATE_VALUE", "CloudConfig", "Config", "ConfigError", "FileTooLarge", "GaleraConfig",
    "LogSource", "NotRegularFile", "OpenStackConfig", "RabbitMQConfig", "RecorderConfig", "Secret", "SnapshotConfig",
    "Thresholds", "UIConfig", "config_candidates", "default_cloud", "file_kind", "find_config_path", "load_config",
    "log_value_problem", "parse_config", "read_regular_file", "url_has_userinfo",
]

DEFAULT_PATH = Path("~/.config/stacktop/config.toml")
SYSTEM_PATH = Path("/etc/stacktop/config.toml")  # for a check run as another user (nagios, prometheus)
ENVVARS_CLOUD = "envvars"  # openstacksdk's name for the cloud the OS_* variables describe

# the file's sections: Config's fields read as a section, each the record of its keys
SECTIONS: dict[str, type] = {f.name: type(default_of(f)) for f, key in declared(Config) if key.read == "section"}
CLOUD_SECTIONS = tuple(f.name for f, key in declared(CloudConfig) if key.read == "section")


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


def _openstack(r: Reader, data: dict[str, Any], label: str, default_cloud: str | None) -> OpenStackConfig:
    values = r.keys(r.table(data, "openstack", OpenStackConfig, label), label, OpenStackConfig)
    return OpenStackConfig(**{**values, "cloud": values["cloud"] or default_cloud})


def _rabbitmq(r: Reader, data: dict[str, Any], label: str) -> RabbitMQConfig:
    return RabbitMQConfig(**r.keys(r.table(data, "rabbitmq", RabbitMQConfig, label), label, RabbitMQConfig))


def _members(r: Reader, values: tuple[str, ...], label: str, key: str, example: str) -> None:
    """host:port strings without credentials, each listed once."""
    for i, value in enumerate(values):
        if "@" in value:  # user:password@host:port: never echoed
            raise r.err(f"{label}.{key}[{i}]", "contains credentials (user:password@)",
                        f"write host:port only; set [{label}] user and password_env or password_file")
        host, _, port = value.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise r.err(f"{label}.{key}", f"'{value}' is not host:port", example)
        if values.index(value) != i:
            raise r.err(f"{label}.{key}", f"'{value}' is listed twice", "list each member once")


def _galera(r: Reader, data: dict[str, Any], label: str) -> GaleraConfig:
    ga = r.table(data, "galera", GaleraConfig, label)
    values = {f.name: r.str_list(ga, label, f.name) for f, key in declared(GaleraConfig) if key.read == "members"}
    for f, key in declared(GaleraConfig):
        if key.read == "members":
            _members(r, values[f.name], label, f.name, key.fix)
    nodes, arbitrators = values["nodes"], values["arbitrators"]
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
    galera = GaleraConfig(**{**r.keys(ga, label, GaleraConfig), **values, "expected_size": expected})
    if expected is not None and nodes and expected < members:
        # a warning, not an error: the cluster may really be shrinking (a node being retired is still
        # listed); at run time a bigger cluster is the info finding galera.size_mismatch
        listed = f"{len(nodes)} nodes" + (f" + {len(arbitrators)} arbitrator(s)" if arbitrators else "")
        r.warnings.append(f"{r.file}: {label}.expected_size: {expected} is less than the {listed} "
                          f"listed - raise it to {members}, or drop the retired nodes from {label}.nodes")
    return galera


def _clouds(r: Reader, data: dict[str, Any]) -> tuple[CloudConfig, ...]:
    """[[clouds]] entries: a unique `name` each, and their own [clouds.openstack/rabbitmq/galera]."""
    raw = data.get("clouds")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw or not all(isinstance(e, dict) for e in raw):
        raise r.err("clouds", f"must be an array of tables, got {typename(raw)}",
                    'write each cloud as [[clouds]] with name = "prod" and its [clouds.openstack] ...')
    given = [key for key in CLOUD_SECTIONS if key in data]
    if given:
        raise r.err(given[0], "conflicts with [[clouds]]",
                    f"move [{given[0]}] into each [[clouds]] entry as [clouds.{given[0]}]")
    known = toml_names(CloudConfig)
    out: list[CloudConfig] = []
    for i, entry in enumerate(raw):
        for key in entry:
            if key not in known:
                raise r.err(f"clouds[{i}].{key}", "unknown key", suggest(key, known))
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


def _thresholds(r: Reader, data: dict[str, Any]) -> Thresholds:
    th = r.table(data, "thresholds", Thresholds)
    stuck_raw = th.get("stuck", {})
    if not isinstance(stuck_raw, dict):
        raise r.err("thresholds.stuck", f"must be a table, got {typename(stuck_raw)}",
                    "write it as [thresholds.stuck] with task_state = seconds")
    stuck_field, stuck_key = next((f, key) for f, key in declared(Thresholds) if key.read == "stuck")
    assert stuck_key.bounds is not None
    stuck: dict[str, float] = default_of(stuck_field)
    for state in stuck_raw:
        if state not in stuck and state not in KNOWN_TASK_STATES:
            raise r.err(f"thresholds.stuck.{state}", "unknown task_state",
                        suggest(state, set(KNOWN_TASK_STATES) | {"default"}))
        stuck[state] = r.number(stuck_raw, "thresholds.stuck", state, stuck.get(state, stuck["default"]),
                                stuck_key.bounds)
    return Thresholds(**r.keys(th, "thresholds", Thresholds), stuck=stuck)


def _recorder(r: Reader, data: dict[str, Any]) -> RecorderConfig:
    rec = r.table(data, "recorder", RecorderConfig)
    return RecorderConfig(**r.keys(rec, "recorder", RecorderConfig),
                          log_sources=_log_sources(r, rec.get("log_sources", [])))


def _log_sources(r: Reader, raw: Any) -> tuple[LogSource, ...]:
    """[[recorder.log_sources]] entries: service plus exactly one of command / path."""
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise r.err("recorder.log_sources", f"must be an array of tables, got {typename(raw)}",
                    'write each as [[recorder.log_sources]] with service = "nova-api" and command or path')
    known = toml_names(LogSource)
    out = []
    for i, entry in enumerate(raw):
        key = f"recorder.log_sources[{i}]"
        for name in entry:
            if name not in known:
                raise r.err(f"{key}.{name}", "unknown key", suggest(name, known))
        service = r.string(entry, key, "service", None)
        if service is None:
            raise r.err(f"{key}.service", "is missing", 'name the service, e.g. service = "nova-api"')
        given = [k for k in ("command", "path") if k in entry]
        if len(given) != 1:
            problem = "has both command and path" if given else "has neither command nor path"
            raise r.err(key, problem, 'give one: command = "docker logs nova_api" or path = "/var/log/..."')
        values = r.keys(entry, key, LogSource)
        src = LogSource(**{**values, "service": service, "hosts": _log_hosts(r, entry, key)})
        _check_log_template(r, key, src)
        out.append(src)
    return tuple(out)


def _log_hosts(r: Reader, entry: dict[str, Any], key: str) -> tuple[str, ...]:
    raw = entry.get("hosts", [])
    if not isinstance(raw, list) or not all(isinstance(h, str) for h in raw):
        raise r.err(f"{key}.hosts", f"must be a list of host names, got {typename(raw)}",
                    'write hosts = ["compute-01", "compute-02"]')
    for host in raw:
        problem = log_value_problem("host", host)
        if problem:
            raise r.err(f"{key}.hosts", problem, "name the host as ssh or the log folder knows it")
    return tuple(dict.fromkeys(raw))


def _check_log_template(r: Reader, key: str, src: LogSource) -> None:
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


def parse_config(data: dict[str, Any], *, file: str, mode: int | None, env: dict[str, str]) -> Config:
    r = Reader(file, mode, env)
    for key in data:
        if key not in SECTIONS and key != "clouds":
            raise r.err(key, "unknown section", suggest(key, {*SECTIONS, "clouds"}))

    clouds = _clouds(r, data)
    if clouds:
        openstack, rabbitmq, galera = clouds[0].openstack, clouds[0].rabbitmq, clouds[0].galera
    else:
        openstack = _openstack(r, data, "openstack", default_cloud(env))
        rabbitmq = _rabbitmq(r, data, "rabbitmq")
        galera = _galera(r, data, "galera")
    thresholds = _thresholds(r, data)
    recorder = _recorder(r, data)
    ui = UIConfig(**r.keys(r.table(data, "ui", UIConfig), "ui", UIConfig))
    snapshot = SnapshotConfig(**r.keys(r.table(data, "snapshot", SnapshotConfig), "snapshot", SnapshotConfig))
    return Config(path=None if mode is None else file, openstack=openstack, rabbitmq=rabbitmq, galera=galera,
                  thresholds=thresholds, recorder=recorder, ui=ui, clouds=clouds, snapshot=snapshot,
                  warnings=tuple(r.warnings))
