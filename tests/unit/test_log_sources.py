"""Per-host log sources: the config's checks (one line naming the key and the fix), the template split into
arguments before the values go in, reads bounded in bytes, and the choice of the lines that matter."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tui.config import ConfigError, LogSource, load_config
from tui.exercises.hostlogs import instance_query, lines_that_matter, read_all, targets
from tui.models.instances import Server


def load(tmp_path: Path, body: str) -> ConfigError:
    cfg = tmp_path / "stacktop.toml"
    cfg.write_text("[[recorder.log_sources]]\n" + body)
    with pytest.raises(ConfigError) as info:
        load_config(str(cfg), env={})
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize(("body", "key", "words"), [
    ('service = "nova-compute"\ncommand = "ssh {host} docker logs nova_compute"\n', ".hosts", "names {host}"),
    ('service = "nova-compute"\ncommand = "ssh c1 docker logs x"\nhosts = ["c1"]\n', ".hosts", "has no {host}"),
    ('service = "nova-compute"\ncommand = "ssh {host} docker logs {name}"\nhosts = ["c1"]\n', ".command",
     "unknown placeholder {name}"),
    ('service = "nova-compute"\ncommand = "ssh {host} docker logs {container}"\nhosts = ["c1"]\n', ".container",
     "is missing"),
    ('service = "x"\ncommand = "ssh {host} docker logs {container}"\nhosts = ["c1"]\ncontainer = "a b"\n',
     ".container", "not a plain name"),
    ('service = "x"\npath = "/srv/logs/{host}/x.log"\nhosts = "c1"\n', ".hosts", "must be a list"),
    ('service = "x"\ncommand = "ssh {host} \'unclosed"\nhosts = ["c1"]\n', ".command", "cannot be split"),
])
def test_a_bad_per_host_source_is_one_line_naming_its_key(tmp_path: Path, body: str, key: str, words: str) -> None:
    err = str(load(tmp_path, body))
    assert f"recorder.log_sources[0]{key}" in err and words in err, err


def test_a_good_per_host_source_loads(tmp_path: Path) -> None:
    cfg = tmp_path / "stacktop.toml"
    cfg.write_text('[[recorder.log_sources]]\nservice = "nova-compute"\n'
                   'command = "ssh -o \'ConnectTimeout 5\' {host} sudo journalctl -u {container} --since -2h"\n'
                   'hosts = ["compute-01", "compute-02"]\ncontainer = "nova-compute"\nmax_mb = 8\n')
    [src] = load_config(str(cfg), env={}).recorder.log_sources
    assert src.hosts == ("compute-01", "compute-02") and src.max_mb == 8
    assert src.argv_for("compute-02") == ["ssh", "-o", "ConnectTimeout 5", "compute-02", "sudo", "journalctl",
                                          "-u", "nova-compute", "--since", "-2h"]
    assert [t.label for t in targets(src)] == [
        "compute-01: ssh -o 'ConnectTimeout 5' compute-01 sudo journalctl -u nova-compute --since -2h",
        "compute-02: ssh -o 'ConnectTimeout 5' compute-02 sudo journalctl -u nova-compute --since -2h"]


def test_a_command_is_stopped_after_max_mb(tmp_path: Path) -> None:
    flood = f"{sys.executable} -c \"import sys\nwhile True: sys.stdout.write('x' * 1023 + '\\n')\""
    src = LogSource("x", command=flood, timeout=60, max_mb=1)
    [(_t, lines, err)] = read_all(targets(src), lambda line: False)
    assert lines == [] and err is not None and "more than 1 MB" in err


def test_a_file_is_read_from_its_last_max_mb(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    with log.open("w") as fh:
        fh.write("req-old first line\n")
        fh.write(("filler " * 100 + "\n") * 3000)  # ~2 MB
        fh.write("req-new last line\n")
    src = LogSource("x", path=str(log), max_mb=1)
    [(_t, lines, err)] = read_all(targets(src), lambda line: "req-" in line)
    assert err is None and lines == ["req-new last line"]


def test_a_missing_container_is_one_line_with_the_commands_own_words(tmp_path: Path) -> None:
    src = LogSource("nova-compute", command=f"{sys.executable} -c \"import sys; print('Error: No such container: "
                    "{host}_nova'); sys.exit(1)\"", hosts=("c1",), timeout=20)
    [block] = lines_that_matter([src], "nova-compute", "c1", ["req-x"], None)
    assert block.lines == [] and block.error is not None
    assert "exited 1: Error: No such container: c1_nova" in block.error and "\n" not in block.error


def test_lines_naming_the_ids_win_over_errors(tmp_path: Path) -> None:
    (tmp_path / "c1.log").write_text("2026-01-01T10:00:00Z ERROR unrelated\n"
                                     "2026-01-01T10:00:01Z INFO [instance: 1b4e28ba-2fa1-11d2-883f-0016d3cca427] "
                                     "Claim successful\n")
    src = LogSource("nova-compute", path=str(tmp_path / "{host}.log"), hosts=("c1", "c2"))
    server = Server(id="1b4e28ba-2fa1-11d2-883f-0016d3cca427", name="vm", status="ACTIVE", host="c1")
    query = instance_query(server)
    assert (query.owner, query.host) == ("nova-compute", "c1")
    [block] = lines_that_matter([src], query.owner, query.host, query.ids, datetime(2026, 1, 1, 10, tzinfo=UTC))
    assert block.host == "c1" and block.chosen_by == "id 1b4e28ba-2fa1-11d2-883f-0016d3cca427"
    assert len(block.lines) == 1 and "Claim successful" in block.lines[0]


def test_a_read_stuck_outside_a_command_is_left_behind_as_one_line(tmp_path: Path, monkeypatch) -> None:
    """A file read that never returns (a hung mount): the others answer, it is one line after the budget."""
    import threading

    from tui.exercises import hostlogs

    release = threading.Event()
    real = hostlogs._read_files

    def hung(t, keep, clock):  # type: ignore[no-untyped-def]
        if t.host == "stuck":
            release.wait(60)
        return real(t, keep, clock)

    monkeypatch.setattr(hostlogs, "_read_files", hung)
    (tmp_path / "ok.log").write_text("ERROR fine\n")
    (tmp_path / "stuck.log").write_text("ERROR never read\n")
    src = LogSource("x", path=str(tmp_path / "{host}.log"), hosts=("stuck", "ok"), timeout=1)
    try:
        answers = read_all(targets(src), lambda line: True, grace_s=1)
    finally:
        release.set()
    by_host = {t.host: (lines, err) for t, lines, err in answers}
    assert by_host["ok"] == (["ERROR fine"], None)
    assert by_host["stuck"][0] == [] and "no answer within 2 s" in str(by_host["stuck"][1])
