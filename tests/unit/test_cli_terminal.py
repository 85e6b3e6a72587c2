"""The command line as a person meets it: `stacktop snapshot` on a terminal (a real pty at 80 columns) breaks
lines between tokens only, so a kind, a subject, a request id or a command copied from the screen pastes whole;
every `--help` describes its command and lists every option; errors point at the command's own help and name
the folder they mean."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.testbed.pty import read_for, stacktop_in_pty

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLS = 80


def test_snapshot_on_a_terminal_breaks_lines_between_tokens_only(tmp_path: Path) -> None:
    with stacktop_in_pty(tmp_path, "snapshot", "--demo", "--deadline", "600", rows=50, cols=COLS) as (proc, master):
        out = read_for(master, 300).decode()
        proc.wait(timeout=30)
    lines = [ANSI.sub("", line) for line in out.replace("\r\n", "\n").split("\n")]
    text = "\n".join(lines)
    assert "Findings" in text, text
    # the demo's findings: tokens longer than any column a table would give them at 80 columns
    for token in ("rabbitmq.queue_no_consumer", "versioned_notifications.info", "placement.stale_allocation",
                  "nova.service_disabled", "[oslo_messaging_notifications]"):
        assert any(token in line for line in lines), f"{token!r} cut across lines:\n{text}"
    request_ids = re.findall(r"req-[0-9a-f-]+", text)
    assert request_ids and all(len(r) == len("req-") + 36 for r in request_ids), request_ids
    uuids = re.findall(r"(?<![0-9a-f-])[0-9a-f]{8}-[0-9a-f-]*", text)
    assert uuids and all(len(u) == 36 for u in uuids), f"a uuid cut across lines: {uuids}"
    for line in lines:  # the terminal folds nothing: no line is wider than it, but a lone token
        assert len(line.rstrip()) <= COLS or len(line.split()) == 1, line


# ------------------------------------------------------------------------------------------- help and errors
def _parsers() -> list[argparse.ArgumentParser]:
    from tui.cli import _subparsers, build_parser

    parser = build_parser()
    return [parser, *_subparsers(parser)]


@pytest.mark.parametrize("parser", _parsers(), ids=lambda p: p.prog)
def test_every_help_describes_the_command_and_lists_every_option(parser: argparse.ArgumentParser) -> None:
    """`stacktop --help` and each `stacktop COMMAND --help`: a description, and every option and argument the
    command takes listed with a line of help (`stacktop --config PATH` too)."""
    shown = parser.format_help()
    assert parser.description, f"{parser.prog} --help has no description"
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        assert action.help and action.help != argparse.SUPPRESS, f"{parser.prog}: {action.dest} has no help"
        names = action.option_strings or [action.metavar or action.dest]
        assert all(name in shown for name in names), f"{parser.prog} --help does not list {names}:\n{shown}"


@pytest.mark.parametrize(("args", "line"), [
    (("snapshot", "--format", "xml"), "stacktop snapshot: argument --format: invalid choice: 'xml' (choose from "
                                      "'text', 'json', 'nagios', 'prometheus') - see stacktop snapshot --help"),
    (("export",), "stacktop export: the following arguments are required: journal - see stacktop export --help"),
    (("config", "bogus"), "stacktop config: argument example|path: invalid choice: 'bogus' (choose from "
                          "'example', 'path') - see stacktop config --help"),
    (("replay", "j.jsonl", "--speed", "0"), "stacktop replay: argument --speed: must be above 0, got 0.0 - see "
                                            "stacktop replay --help"),
    (("init",), "stacktop init: one of the arguments --kolla --osa is required - see stacktop init --help"),
])
def test_a_subcommands_usage_error_points_at_its_own_help(args: tuple[str, ...], line: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3 and proc.stderr == line + "\n"


@pytest.mark.parametrize("command", ["export", "replay"])
def test_a_missing_journal_names_the_recordings_folder_and_its_newest_journal(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "recordings"
    folder.mkdir()
    for name, age in (("stacktop-20261201T100000Z-1.jsonl", 7200), ("stacktop-20261202T100000Z-2.jsonl", 60)):
        (folder / name).write_text("")
        os.utime(folder / name, (time.time() - age, time.time() - age))
    config = tmp_path / "config.toml"
    config.write_text(f'[recorder]\ndir = "{folder}"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}
    proc = subprocess.run([sys.executable, "-m", "tui", "--config", str(config), command, "gone.jsonl"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert proc.returncode == 3
    assert proc.stderr == (f"gone.jsonl: no such journal - give a file from [recorder] dir ({folder}; the newest "
                           "there: stacktop-20261202T100000Z-2.jsonl)\n")
