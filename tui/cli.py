"""Command line: `stacktop [--config F] [--demo]` opens the dashboard; `stacktop snapshot` reports once."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from tui.config import Config, ConfigError, load_config
from tui.recorder import JournalError
from tui.snapshot import EXIT_UNKNOWN

if TYPE_CHECKING:
    from tui.uistate import UIState

_STARTED = time.monotonic()  # `stacktop snapshot`'s deadline counts from here: a Nagios timeout covers it all


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit 3 (UNKNOWN), like every other bad input; on stdout in
    the plugin format when the command line asks for `--format nagios` (a check's console shows stdout only)."""

    nagios = False

    def error(self, message: str) -> None:  # type: ignore[override]
        """A usage error names the command it is about and that command's own help (`stacktop snapshot: ...
        - see stacktop snapshot --help`)."""
        fail(f"{self.prog}: {message} - see {self.prog} --help", nagios=self.nagios)


def fail(line: str, *, nagios: bool = False, code: int = EXIT_UNKNOWN) -> NoReturn:
    """One error line and exit `code`: on stderr, or with nagios on stdout as `STACKTOP UNKNOWN - <line>`."""
    if nagios:
        from tui.safetext import clean

        sys.stdout.write(f"STACKTOP UNKNOWN - {clean(line).replace('|', '/')}\n")
        sys.stdout.flush()
    else:
        sys.stderr.write(f"{line}\n")
    raise SystemExit(code)


def asks_nagios(argv: Sequence[str]) -> bool:
    """Whether a `stacktop snapshot` command line asks for the Nagios format (read before argparse, whose own
    errors must then be plugin output too)."""
    args = list(argv)
    if "snapshot" not in args:
        return False
    for i, arg in enumerate(args):
        if arg == "--format=nagios" or (arg == "--format" and args[i + 1:i + 2] == ["nagios"]):
            return True
    return False


class _Version(argparse.Action):
    """--version, read from the package metadata only when asked (an import the other commands do not pay)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from tui import version

        sys.stdout.write(f"stacktop {version()}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stacktop", description="A terminal dashboard for the on-call engineer of an "
                     "OpenStack cloud. Read-only: it never changes the cloud.")
    parser.add_argument("--version", action=_Version, nargs=0, help="print stacktop's version and exit")
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: an option given before the subcommand (stacktop --config F snapshot) is not reset by it
    common.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                        help="config file (default: $STACKTOP_CONFIG, then $XDG_CONFIG_HOME/stacktop/config.toml, "
                        "~/.config/stacktop/config.toml, /etc/stacktop/config.toml)")
    common.add_argument("--demo", action="store_true", default=argparse.SUPPRESS,
                        help="use the built-in simulated cloud")
    common.add_argument("--cloud", metavar="NAME", default=argparse.SUPPRESS,
                        help="clouds.yaml entry (overrides [openstack] cloud); with [[clouds]]: which of them")
    parser.add_argument("--config", metavar="PATH", help="config file (default: $STACKTOP_CONFIG, then "
                        "$XDG_CONFIG_HOME/stacktop/config.toml, ~/.config/stacktop/config.toml, "
                        "/etc/stacktop/config.toml; `stacktop config path` says which one is read)")
    parser.add_argument("--demo", action="store_true", help="open on the built-in simulated cloud")
    parser.add_argument("--cloud", metavar="NAME", help="clouds.yaml entry (overrides [openstack] cloud); "
                        "with [[clouds]] entries: the one shown first")
    _demo_knobs(parser)
    _demo_knobs(common, suppress=True)
    sub = parser.add_subparsers(dest="command")
    snap = sub.add_parser("snapshot", parents=[common], help="collect every source once and report",
                          description="Collect every configured source once. Exit: 0 OK, 1 WARNING, "
                          "2 CRITICAL, 3 UNKNOWN (a source could not be read, or a config error).")
    snap.add_argument("--format", choices=SNAPSHOT_FORMATS, default=None,
                      help="text (the default: on a terminal, wrapped between words at its width; else one line "
                      "per finding), json, nagios (plugin output with performance data) or prometheus "
                      "(node_exporter textfile)")
    snap.add_argument("--json", action="store_true", help="the same as --format json")
    snap.add_argument("--deadline", metavar="SECONDS", type=_deadline, default=None,
                      help="answer within this, naming the sources still late (exit 3); default [snapshot] "
                      "deadline, 30 (under check_nrpe's 10 s timeout: --deadline 8)")
    snap.add_argument("-o", "--output", metavar="FILE", default=None,
                      help="write the report to FILE (a temporary file beside it, renamed over it: never half "
                      "a file), whatever the exit code; for node_exporter's textfile collector")
    exp = sub.add_parser("export", help="turn a recorded journal into a review-ready report",
                         description="Turn a journal the dashboard recorded into a report for an incident review: "
                         "the findings as they came and went, the notes, the exercises and screenshots, in time "
                         "order. Nothing is read from the cloud.")
    exp.add_argument("journal", help="a journal file (JSON lines, or a rotated .gz) from [recorder] dir "
                     "(default ~/.local/share/stacktop/recordings)")
    exp.add_argument("--markdown", action="store_true", help="Markdown (the default and only format for now)")
    exp.add_argument("-o", "--output", metavar="FILE", help="write there instead of stdout")
    _init_parser(sub)
    conf = sub.add_parser("config", help="print the example config, or which config file stacktop reads",
                          description="stacktop config example: the example config, every key commented (start "
                          "yours from it: stacktop config example > ~/.config/stacktop/config.toml). stacktop "
                          "config path: the file stacktop would read, and where it looks.")
    conf.add_argument("config_action", choices=("example", "path"), metavar="example|path",
                      help="example: print the example config; path: the config file read, and where stacktop looks")
    rep = sub.add_parser("replay", help="play a recorded journal back through the panes (pause, speed)",
                         description="Play a journal back through the same panes: p pauses, + and - change "
                         "the speed, ] skips a minute. Nothing is read from the cloud.")
    rep.add_argument("journal", help="a journal file (JSON lines, or a rotated .gz) from [recorder] dir "
                     "(default ~/.local/share/stacktop/recordings)")
    rep.add_argument("--speed", dest="replay_speed", metavar="X", type=_positive_float, default=1.0,
                     help="recorded seconds per second (default 1)")
    rep.add_argument("--config", metavar="PATH", default=argparse.SUPPRESS,
                     help="config whose [thresholds] the panes use (default: the usual lookup)")
    return parser


def _init_parser(sub: Any) -> None:
    init = sub.add_parser("init", help="write a config from a kolla-ansible or OpenStack-Ansible deployment's files",
                          description="Write a stacktop config from a deployment's own files. No secret goes into "
                          "the TOML: passwords go to files (mode 600) beside it, or --password-env. The release's "
                          "defaults apply (the release is read from the deployment's files). A missing or ambiguous "
                          "value: one line naming "
                          "the file and key, exit 3, nothing written. Something the deployment lacks (e.g. no "
                          "RabbitMQ monitoring user): one line per gap with the exact fix, the rest written, exit 4.")
    where = init.add_mutually_exclusive_group(required=True)
    where.add_argument("--kolla", metavar="DIR", help="kolla-ansible's config folder (/etc/kolla)")
    where.add_argument("--osa", metavar="DIR", help="OpenStack-Ansible's config folder (/etc/openstack_deploy)")
    init.add_argument("--inventory", metavar="FILE", help="kolla: the Ansible inventory with the [mariadb] hosts "
                      "(default: multinode, all-in-one or ansible/inventory/all-in-one in DIR)")
    init.add_argument("--openrc", metavar="FILE", help="OSA: the admin openrc (default: DIR/openrc)")
    init.add_argument("--release", dest="init_release", metavar="SERIES", help="the deployment's release, e.g. "
                      "2025.1 or master (default: globals.yml openstack_release, else the installed kolla-ansible "
                      "/ OpenStack-Ansible version)")
    init.add_argument("--cloud", dest="init_cloud", metavar="NAME", help="the clouds.yaml entry to use (default: "
                      "kolla-admin-internal / kolla-admin, OSA's default, or the only one)")
    init.add_argument("-o", "--output", metavar="FILE", default=None,
                      help="where to write the config (default: ~/.config/stacktop/config.toml)")
    init.add_argument("--password-env", action="store_true", help="reference $STACKTOP_RABBITMQ_PASSWORD and "
                      "$STACKTOP_GALERA_PASSWORD instead of writing password files")
    init.add_argument("--dry-run", action="store_true", help="print the config; write nothing")
    init.add_argument("--force", action="store_true", help="replace an existing config (and its password files)")


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The subcommands' parsers (their own errors go through _Parser.error too)."""
    return [p for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for p in action.choices.values()]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {value}")
    return value


def _deadline(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not math.isfinite(value) or not 1.0 <= value <= 3600.0:
        raise argparse.ArgumentTypeError(f"must be between 1 and 3600 seconds, got {text}")
    return value


def _demo_knobs(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """Scale and pace of the simulated cloud (only with --demo)."""
    default = argparse.SUPPRESS if suppress else None
    group = parser.add_argument_group("simulated cloud (with --demo)")
    group.add_argument("--instances", type=_positive_int, default=default, help="servers (default 200)")
    group.add_argument("--hosts", type=_positive_int, default=default, help="compute hosts (default 8)")
    group.add_argument("--queues", type=_positive_int, default=default, help="RabbitMQ queues (default 300)")
    group.add_argument("--churn", type=float, default=default, help="boots (and deletes) per minute (default 6)")
    group.add_argument("--speed", type=_positive_float, default=default, help="sim seconds per second (default 1)")
    group.add_argument("--seed", type=int, default=default, help="random seed of the simulated cloud (default 0)")
    group.add_argument("--hostile", action="store_true", default=default,
                       help="names, faults and queues carrying markup and terminal controls, as a hostile tenant "
                            "would name them")


def _demo_options(args: argparse.Namespace) -> dict:
    return {k: getattr(args, k) for k in ("instances", "hosts", "queues", "churn", "speed", "seed", "hostile")
            if getattr(args, k, None) is not None}


def _with_cloud(config: Config, cloud: str | None) -> Config:
    """--cloud: the clouds.yaml entry of the single-cloud form; with [[clouds]], which entry is active."""
    if not cloud:
        return config
    if config.clouds:
        try:
            return config.for_cloud(cloud)
        except KeyError:
            names = ", ".join(c.name for c in config.clouds)
            raise ConfigError(config.path or "config", "--cloud", f"'{cloud}' is not a [[clouds]] name",
                              f"use one of {names}") from None
    from dataclasses import replace

    return replace(config, openstack=replace(config.openstack, cloud=cloud))


def _load_config(path: str | None, cloud: str | None = None) -> Config:
    """The config (--cloud applied), its warnings written to stderr one line each (they are not fatal)."""
    from tui.safetext import clean

    config = _with_cloud(load_config(path), cloud)
    for line in config.warnings:
        sys.stderr.write(clean(line) + "\n")
        logging.getLogger("stacktop.config").warning("%s", line)
    return config


def log_path() -> Path:
    """Where the dashboard and replay log: $XDG_STATE_HOME/stacktop/stacktop.log."""
    return Path(os.environ.get("XDG_STATE_HOME", "~/.local/state")).expanduser() / "stacktop" / "stacktop.log"


def _log_to_file(secrets: Sequence[str | None] = ()) -> Path | None:
    """Log to log_path() through the journal's redaction (known passwords, URL user:password@); returns the
    path, or None when it cannot be written (then nothing is logged)."""
    from tui.recorder import RedactingFormatter

    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path)
    except OSError:
        handler, path = logging.NullHandler(), None  # type: ignore[assignment]
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s", secrets=secrets))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    quiet_http_loggers()
    return path


EXIT_CRASH = 1  # the dashboard or replay stopped on an unhandled error (the traceback is in the log file)
EXIT_INTERRUPTED = 130  # SIGINT, as a shell reports it


def _exit_code(app: Any, log: Path | None) -> int:
    """0 after a quit; after a crash, EXIT_CRASH and one line on stderr saying where the traceback is."""
    if not app.return_code and app._exception is None:
        return 0
    error = app._exception
    what = f" ({type(error).__name__})" if error is not None else ""
    where = f"the traceback is in {log}" if log is not None else "no log file could be written"
    sys.stderr.write(f"stacktop: stopped on an unexpected error{what} - {where}\n")
    return EXIT_CRASH



HTTP_LOGGERS = ("httpx", "httpcore", "keystoneauth", "urllib3", "openstack")


def quiet_http_loggers() -> None:
    """The HTTP libraries log every request URL at INFO (httpx: `HTTP Request: GET https://...`): the log is
    for stacktop's own events, and a URL may carry a token, a project or a host name worth keeping out of it.
    WARNING and above still reach the file."""
    for name in HTTP_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


class _NoDemo:
    """Until the simulated cloud is built: the shell with every pane saying no source is configured."""

    def config(self) -> Config:
        return Config(demo=True)

    def stop(self) -> None:
        return None


def _start_demo(options: dict | None = None, *, clouds: bool = False,  # type: ignore[no-untyped-def]
                frozen: bool = False):
    """The simulated cloud; clouds=True: two of them (demo-east with the storyline, demo-west quiet);
    frozen=True: one, standing still at a fixed storyline point (the same answer on every read)."""
    import tui.sim

    name = "start_demo_clouds" if clouds else "start_demo_at" if frozen else "start_demo"
    start = getattr(tui.sim, name, None)
    return _NoDemo() if start is None else start(**(options or {}))


class _LateDemo:
    """`stacktop --demo`: the simulated clouds built after the dashboard's first frame (at 10,000 instances the
    simulator is 0.2-0.4 s of CPU the first frame does not wait for). Until then config() is the shell
    (tui.sim.shell: the same clouds and sources, nothing polled yet) and now() the wall clock."""

    def __init__(self, options: dict) -> None:
        self.options = options
        self.demo: Any = None
        self._lock = threading.Lock()  # held while the simulator is built: stop() waits for it
        self._stopped = False

    def config(self) -> Config:
        from tui.sim.shell import shell_config

        return shell_config()

    def start(self) -> Any:
        """Build and start the simulated clouds (the app's set-up thread); returns the app's LateStart."""
        from tui.app import LateStart

        with self._lock:
            if self._stopped:
                raise RuntimeError("the dashboard closed before the simulated cloud started")
            self.demo = _start_demo(self.options, clouds=True)
        return LateStart(self.demo.config(), getattr(self.demo, "galera_connectors", None) or {})

    def now_ts(self) -> float:
        """Sim time once the simulator runs (ages and rules follow the storyline), the wall clock until then."""
        demo = self.demo
        return demo.now().timestamp() if demo is not None and hasattr(demo, "now") else time.time()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self.demo is not None:
                self.demo.stop()


def _snapshot(args: argparse.Namespace) -> int:
    from tui.collectors.registry import build_collectors
    from tui.snapshot import exit_code, late_sources, run_snapshot

    fmt = _snapshot_format(args)
    logging.basicConfig(level=logging.CRITICAL, force=True)
    demo = None
    if args.demo:
        demo = _start_demo(_demo_options(args), frozen=True)
        config = demo.config()
    else:
        config = _load_config(args.config, args.cloud)
    connector = demo.galera_connector if demo is not None and hasattr(demo, "galera_connector") else None
    deadline = args.deadline if args.deadline is not None else config.snapshot.deadline
    # the simulated cloud stands still: its answers are judged at its time, so no age grows while reading
    clock = demo.clock.time if demo is not None and hasattr(demo, "clock") else time.time
    try:
        collectors = build_collectors(config, galera_connector=connector)
        left = max(0.5, deadline - (time.monotonic() - _STARTED) - 0.5)  # 0.5 s to print the report
        observations, lingering = run_snapshot(collectors, left, named=deadline, clock=clock)
    finally:
        if demo is not None:
            demo.stop()
    report = _snapshot_report(fmt, observations, config, clock(), to_terminal=args.output is None,
                              cloud=_cloud_name(config, args.cloud))
    if args.output is not None:
        _write_atomic(Path(args.output).expanduser(), report, nagios=fmt == "nagios")
    elif report is not None:
        sys.stdout.write(report)
    late = late_sources(observations)
    if late:
        sys.stderr.write(f"stacktop snapshot: {', '.join(late)} still not answered after the {deadline:g}s "
                         "deadline - see their errors above; raise --deadline or [snapshot] deadline if the "
                         "cloud is just slow\n")
    code = exit_code(observations)
    if lingering:  # worker threads still reading (given up on) would hold a normal exit: the answer is out
        from tui.abandon import leave

        leave(code)
    return code


SNAPSHOT_FORMATS = ("text", "json", "nagios", "prometheus")


def _snapshot_format(args: argparse.Namespace) -> str:
    """--format, or json for --json; both, disagreeing: a usage error."""
    if args.json and args.format not in (None, "json"):
        fail(f"stacktop: --json and --format {args.format} disagree - give one of them",
             nagios=args.format == "nagios")
    return "json" if args.json else args.format or "text"


def _cloud_name(config: Config, cloud: str | None) -> str:
    """The name of the cloud a snapshot reads: its [[clouds]] name, else its clouds.yaml entry."""
    if config.clouds:
        return cloud or config.clouds[0].name
    if config.demo:
        return "demo-east"
    return config.openstack.cloud or ""


def _write_atomic(path: Path, report: str | None, *, nagios: bool = False) -> None:
    """`report` into `path` through a temporary file in the same folder renamed over it (a reader sees the old
    file or the new one, never a part); the temporary file never stays behind. A folder that cannot be written
    is one line, exit 3."""
    import tempfile

    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(report or "")
        os.chmod(tmp, 0o644)  # node_exporter (another user) reads it; mkstemp makes it 600
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        fail(f"stacktop snapshot: --output {path}: cannot write: {exc.strerror or exc} - point it at a writable "
             "folder", nagios=nagios)
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _snapshot_report(fmt: str, observations: list, config: Config, now: float, *, to_terminal: bool = True,
                     cloud: str = "") -> str | None:
    """The report in `fmt`, as of `now`, every known secret redacted (a source's error may quote a URL); None
    when it went to the terminal as a table (text on a tty, no --output)."""
    from tui.recorder import Redactor

    thresholds = config.thresholds
    if fmt == "text" and to_terminal and sys.stdout.isatty():
        from rich.console import Console

        from tui.snapshot_terminal import TerminalReport

        # not cropped: a token wider than the terminal is printed whole (the terminal folds it)
        Console().print(TerminalReport(observations, thresholds=thresholds, now=now), crop=False)
        return None
    if fmt == "json":
        from tui.snapshot import to_report

        report = json.dumps(to_report(observations, now, thresholds=thresholds), indent=2) + "\n"
    elif fmt == "nagios":
        from tui.snapshot_nagios import render_nagios

        report = render_nagios(observations)
    elif fmt == "prometheus":
        from tui.snapshot_prometheus import render_prometheus

        report = render_prometheus(observations, now, cloud=cloud, thresholds=thresholds)
    else:
        from tui.snapshot_plain import render_plain

        report = render_plain(observations, thresholds, now)
    return Redactor(config.secrets())(report)


def _dashboard(args: argparse.Namespace) -> int:
    demo = None
    if args.demo:
        demo = _LateDemo(_demo_options(args))
        config = demo.config()
    else:
        config = _load_config(args.config, args.cloud)
    log = _log_to_file(config.secrets())
    from tui import abandon, gcpolicy

    gcpolicy.hold_until_first_frame()  # the app gives the collections back after its first frame
    try:
        code = _run_app(args, config, demo, log)
    except KeyboardInterrupt:  # SIGINT where Textual does not take it
        code = EXIT_INTERRUPTED
    finally:
        gcpolicy.end_hold()  # the app never painted (an error): collections back all the same
    # the dashboard is closed, its journal written: the process ends now, whatever still runs (a read given up
    # on, a node trickling its answer, in a thread Python would join) and without the interpreter's teardown
    abandon.leave(code)
    return code


def _ui_state() -> UIState:
    """Where the dashboard remembers the theme picked in the palette (tui.uistate)."""
    from tui.uistate import UIState, state_path

    return UIState(state_path())


def _run_app(args: argparse.Namespace, config: Config, demo: _LateDemo | None, log: Path | None) -> int:
    from tui.app import StacktopApp

    kwargs: dict = {}
    if config.clouds and args.cloud and not args.demo:
        kwargs["cloud"] = args.cloud
    if demo is not None:
        kwargs["clock"] = demo.now_ts
        kwargs["setup"] = demo.start
    recorder = _recorder(config)
    app = StacktopApp(config, recorder=recorder, **kwargs)
    app.ui_state = _ui_state()
    try:
        app.run()
    finally:
        if demo is not None:
            demo.stop()
        if recorder is not None:
            recorder.close()  # again (the app closed it when it unmounted, unless interrupted): notes are on disk
        _say_journal(recorder)
    return _exit_code(app, log)


def _say_journal(recorder: Any) -> None:
    """After the dashboard closes: where this session's journal is (replay and export take it)."""
    path = getattr(getattr(recorder, "journal", None), "path", None)
    if path is not None and Path(path).is_file():
        sys.stderr.write(f"journal: {path}\n")


def _export(args: argparse.Namespace) -> int:
    from tui.export import to_markdown

    path = Path(args.journal).expanduser()
    if not path.is_file():
        sys.stderr.write(f"{path}: no such journal - give a file from [recorder] dir\n".replace(
            JOURNAL_HINT, journal_hint(getattr(args, "config", None))))
        return EXIT_UNKNOWN
    contents = _read_journal(path)
    report = to_markdown(path, contents.events, output=args.output or None)
    if args.output:
        Path(args.output).write_text(report, encoding="utf-8")
    else:
        sys.stdout.write(report)
    return 0


def _init(args: argparse.Namespace) -> int:
    from tui.config import DEFAULT_PATH
    from tui.deployinit.common import EXIT_INCOMPLETE, InitError
    from tui.deployinit.kolla import read_kolla
    from tui.deployinit.osa import read_osa
    from tui.deployinit.write import build, check, write
    from tui.safetext import clean

    if (args.kolla is None and args.inventory is not None) or (args.osa is None and args.openrc is not None):
        sys.stderr.write("stacktop init: --inventory goes with --kolla, --openrc with --osa - see stacktop init "
                         "--help\n")
        return EXIT_UNKNOWN
    output = Path(args.output or DEFAULT_PATH).expanduser().absolute()
    try:
        if args.kolla is not None:
            inventory = Path(args.inventory).expanduser() if args.inventory else None
            plan = read_kolla(Path(args.kolla), inventory=inventory, cloud=args.init_cloud,
                              release=args.init_release)
        else:
            openrc = Path(args.openrc).expanduser() if args.openrc else None
            plan = read_osa(Path(args.osa), openrc=openrc, cloud=args.init_cloud, release=args.init_release)
        check(plan)
        result = build(plan, output, password_env=args.password_env)
        code = EXIT_INCOMPLETE if plan.gaps else 0
        if args.dry_run:
            sys.stdout.write(result.text)
            sys.stderr.write("".join(f"{gap}\n" for gap in plan.gaps))
            sys.stderr.write(clean(f"stacktop init: dry run, nothing written (would write {output}); "
                                   f"{result.summary}") + "\n")
            return code
        write(result, force=args.force)
    except InitError as exc:
        sys.stderr.write(f"{exc}\n")
        return EXIT_UNKNOWN
    sys.stderr.write("".join(f"{gap}\n" for gap in plan.gaps))
    sys.stderr.write(clean(f"stacktop init: wrote {output}; {result.summary}") + "\n")
    return code


def _config(args: argparse.Namespace) -> int:
    """`stacktop config example` prints the example written from the schema; `stacktop config path` the lookup."""
    from tui.config import config_candidates, find_config_path

    if args.config_action == "example":
        from tui.config_example import render

        sys.stdout.write(render())
        return 0
    path, explicit = find_config_path(None)
    sys.stdout.write(f"{path if path is not None else '(none: no config file found)'}\n")
    if not explicit:
        sys.stdout.write("looked in: " + ", ".join(str(p) for p in config_candidates()) + "\n")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from tui.replay import Player

    path = Path(args.journal).expanduser()
    if not path.is_file():
        sys.stderr.write(f"{path}: no such journal - give a file from [recorder] dir\n".replace(
            JOURNAL_HINT, journal_hint(getattr(args, "config", None))))
        return EXIT_UNKNOWN
    from tui.replay import Timeline

    contents = _read_journal(path)
    player = Player(Timeline(contents.events), speed=args.replay_speed)
    if not player.collectors:
        sys.stderr.write(f"{path}: no recorded snapshots to replay (journal schema 1, or no source was polled)"
                         " - record a session with this version of stacktop\n")
        return EXIT_UNKNOWN
    config = _load_config(getattr(args, "config", None))
    log = _log_to_file(config.secrets())
    from tui.replay_app import ReplayApp

    app = ReplayApp(config, player, name=path.name)
    app.ui_state = _ui_state()
    app.run()
    return _exit_code(app, log)


JOURNAL_HINT = "from [recorder] dir"  # how a journal error (tui.recorder, here) says where journals are


def journal_hint(config_path: str | None) -> str:
    """JOURNAL_HINT with the folder named: the [recorder] dir of the config stacktop reads (the default one when
    there is none, or it does not load), and the newest journal in it, if any."""
    from tui.config import RecorderConfig
    from tui.recorder import JOURNAL_GLOB
    from tui.safetext import clean

    try:
        directory = load_config(config_path).recorder.dir
    except (ConfigError, OSError):
        directory = RecorderConfig().dir
    folder = Path(directory).expanduser().absolute()
    try:
        journals = sorted(folder.glob(JOURNAL_GLOB), key=lambda f: f.stat().st_mtime)
    except OSError:
        journals = []
    newest = f"; the newest there: {journals[-1].name}" if journals else "; it holds no journal yet"
    return clean(f"{JOURNAL_HINT} ({folder}{newest})")


def _read_journal(path: Path):  # type: ignore[no-untyped-def]
    """load_journal, with its one warning line (skipped lines) on stderr; JournalError when unreadable, or when
    it is not one session's record (tui.recorder.journal_problem: export would show it twice, replay cannot)."""
    from tui.recorder import journal_problem, load_journal
    from tui.safetext import clean

    contents = load_journal(path)
    problem = journal_problem(contents.events)
    if problem is not None:
        raise JournalError(clean(f"{path}: {problem} - not one session's record; record each session to its "
                                 "own journal (stacktop names each one uniquely)"))
    warning = contents.warning(path)
    if warning:
        sys.stderr.write(warning + "\n")
    return contents


def _recorder(config: Config):  # type: ignore[no-untyped-def]
    from tui.recorder import Journal, Recorder

    secrets = config.secrets()
    try:
        return Recorder(Journal(config.recorder.dir, secrets=secrets,
                                max_bytes=config.recorder.max_file_bytes,
                                max_total_bytes=config.recorder.max_total_bytes,
                                thresholds=config.thresholds))
    except OSError as exc:
        sys.stderr.write(f"{config.path or 'config'}: recorder.dir: cannot write {config.recorder.dir}: "
                         f"{exc.strerror} - point [recorder] dir at a writable folder\n")
        raise SystemExit(EXIT_UNKNOWN) from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    nagios = asks_nagios(sys.argv[1:] if argv is None else argv)
    for action in [parser, *_subparsers(parser)]:
        action.nagios = nagios  # type: ignore[attr-defined]
    args = parser.parse_args(argv)
    if _demo_options(args) and not getattr(args, "demo", False):
        fail("stacktop: --instances/--hosts/--queues/--churn/--speed/--seed/--hostile shape the simulated cloud - "
             "add --demo", nagios=nagios)
    if args.command is not None:
        from tui import gcpolicy

        gcpolicy.end_hold()  # the start-up hold (tui.launch) is for the dashboard's first frame only
    try:
        if args.command == "snapshot":
            return _snapshot(args)
        if args.command == "export":
            return _export(args)
        if args.command == "init":
            return _init(args)
        if args.command == "config":
            return _config(args)
        if args.command == "replay":
            return _replay(args)
        return _dashboard(args)
    except ConfigError as exc:
        if nagios:
            fail(str(exc), nagios=True)
        sys.stderr.write(f"{exc}\n")
        return EXIT_UNKNOWN
    except JournalError as exc:
        sys.stderr.write(f"{exc}\n".replace(JOURNAL_HINT, journal_hint(getattr(args, "config", None))))
        return EXIT_UNKNOWN
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
