"""The README's monitoring examples are what stacktop does.

- Every `<!-- monitoring: NAME -->` block (NRPE, Icinga 2, Checkmk MRPE, systemd, cron): the stacktop command it
  holds is run against `--demo` (its `--config` swapped for `--demo`, its `--output` folder for a temporary one,
  its deadline for one no loaded machine reaches: the verdict is judged here, the deadline elsewhere) and must
  answer as the plugin or the textfile collector expects; the NRPE deadline fits check_nrpe's 10 s and the
  systemd unit fails on UNKNOWN only.
- Every `<!-- output: ARGS -->` block: each line shown (`...` marks lines left out) is a line of the real
  `stacktop ARGS` output, in the same order, read times and wall-clock stamps aside.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PROGRAM = "/usr/local/bin/stacktop"
EXIT_CRITICAL = 2
CHECK_NRPE_TIMEOUT = 10.0  # check_nrpe's default -t
BLOCK = re.compile(r"<!-- (monitoring|output): ([^>]+?) -->\n```\n(.*?)\n```", re.DOTALL)
# what differs between two runs of the frozen demo: read times and the wall clock's stamps
VARIABLE = [(re.compile(r"(_duration=)[0-9.]+s"), r"\1Ns"), (re.compile(r"(ok in )[0-9.]+s"), r"\1Ns"),
            (re.compile(r"(duration_seconds\{[^}]*\} )[0-9.e-]+"), r"\1N"),
            (re.compile(r"(timestamp_seconds\{[^}]*\} )[0-9.e+]+"), r"\1N"),
            (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ"), "TIME")]


def blocks(kind: str) -> dict[str, str]:
    found = {name: body for k, name, body in BLOCK.findall(README.read_text(encoding="utf-8")) if k == kind}
    assert found, f"no <!-- {kind}: ... --> block in README.md"
    return found


def masked(line: str) -> str:
    for pattern, replacement in VARIABLE:
        line = pattern.sub(replacement, line)
    return line


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("STACKTOP_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "tui", *argv], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=600)


def command_of(name: str, body: str) -> list[str]:
    """The stacktop command line a monitoring block runs."""
    if name == "nrpe":
        line = next(ln for ln in body.splitlines() if ln.startswith("command["))
        return shlex.split(line.split("]=", 1)[1])
    if name == "icinga2":
        line = next(ln for ln in body.splitlines() if ln.strip().startswith("command = ["))
        return list(json.loads(line.split("=", 1)[1]))
    if name == "mrpe":
        return shlex.split(body.strip())[1:]  # the first word is the service's name
    if name == "systemd":
        line = next(ln for ln in body.splitlines() if ln.startswith("ExecStart="))
        return shlex.split(line.removeprefix("ExecStart="))
    if name == "cron":
        return shlex.split(body.strip())[6:]  # five time fields and the user
    raise AssertionError(f"README.md: monitoring block {name!r} has no reader here")


def option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def on_the_demo(argv: list[str], folder: Path) -> list[str]:
    """The block's command as the test runs it: --demo instead of --config, --output into `folder`, a deadline
    no loaded machine reaches."""
    assert argv[0] == PROGRAM and argv[1] == "snapshot", argv
    out, args = [], argv[1:]
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in ("--config", "--deadline", "--output"):
            skip = True
            if arg == "--output":
                out += ["--output", str(folder / Path(args[i + 1]).name)]
            continue
        out.append(arg)
    return [*out, "--demo", "--deadline", "600"]


def test_every_monitoring_example_runs_as_shown(tmp_path: Path) -> None:
    examples = blocks("monitoring")
    assert set(examples) == {"nrpe", "icinga2", "mrpe", "systemd", "cron"}
    commands = {name: command_of(name, body) for name, body in examples.items()}
    for argv in commands.values():
        assert option(argv, "--config") == "/etc/stacktop/config.toml", argv
    assert float(option(commands["nrpe"], "--deadline") or 30) < CHECK_NRPE_TIMEOUT
    status = next(ln for ln in examples["systemd"].splitlines() if ln.startswith("SuccessExitStatus="))
    assert status.split("=", 1)[1].split() == ["1", "2"]  # WARNING, CRITICAL are results; UNKNOWN fails the unit

    folder = tmp_path / "textfile"
    folder.mkdir()
    runs = {name: on_the_demo(argv, folder) for name, argv in commands.items()}
    unique = sorted({tuple(argv) for argv in runs.values()})
    with ThreadPoolExecutor(2) as pool:
        answers = dict(zip(unique, pool.map(lambda argv: run(list(argv)), unique), strict=True))
    for name, argv in runs.items():
        proc = answers[tuple(argv)]
        assert proc.returncode == EXIT_CRITICAL, (name, proc.stdout[-500:], proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr
        if option(argv, "--format") == "nagios":
            assert proc.stdout.startswith("STACKTOP CRITICAL - "), (name, proc.stdout[:300])
            assert " | findings_critical=" in proc.stdout.splitlines()[0]
        else:
            assert option(argv, "--format") == "prometheus" and proc.stdout == "", name
            target = Path(option(argv, "--output") or "")
            assert target.suffix == ".prom"
            got = {f.name: f.samples for f in text_string_to_metric_families(target.read_text())}
            assert [s.value for s in got["stacktop_status"]] == [EXIT_CRITICAL]
    assert sorted(p.name for p in folder.iterdir()) == ["stacktop.prom"]  # no temporary file left


def test_the_nagios_config_error_shown_is_the_real_one(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    shown = re.search(r"`(STACKTOP UNKNOWN - /etc/stacktop/config.toml: \(file\): does not exist - )\.\.\.`", text)
    assert shown, "README.md: the NRPE paragraph's config error example is gone"
    missing = tmp_path / "config.toml"
    proc = run(["snapshot", "--format", "nagios", "--deadline", "8", "--config", str(missing)])
    assert proc.returncode == 3
    assert proc.stdout.startswith(shown.group(1).replace("/etc/stacktop/config.toml", str(missing)))


@pytest.mark.parametrize("args", sorted(blocks("output")))
def test_shown_output_is_real_output(args: str) -> None:
    shown = [masked(ln) for ln in blocks("output")[args].splitlines() if ln != "..."]
    proc = run([*shlex.split(args), "--deadline", "600"])
    assert proc.returncode == EXIT_CRITICAL, proc.stderr[-2000:]
    real = [masked(ln) for ln in proc.stdout.splitlines()]
    at = 0
    for line in shown:
        assert line in real[at:], f"README.md, `stacktop {args}` example: not in the real output (in order):\n{line}"
        at = real.index(line, at) + 1
