"""The Ansible INI inventory reader behind `stacktop init --kolla`: ranges, children, variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.deployinit.common import InitError
from tui.deployinit.inventory import expand, load_inventory


@pytest.mark.parametrize(("pattern", "hosts"), [
    ("control[01:03]", ["control01", "control02", "control03"]),
    ("db[1:10:4]", ["db1", "db5", "db9"]),
    ("node-[a:c].example", ["node-a.example", "node-b.example", "node-c.example"]),
    ("r[1:2]c[1:2]", ["r1c1", "r1c2", "r2c1", "r2c2"]),
    ("plain", ["plain"]),
])
def test_host_ranges(pattern: str, hosts: list[str]) -> None:
    assert expand(pattern) == hosts


@pytest.mark.parametrize("pattern", ["h[0:99999999999]", "r[0:999]c[0:999]"])
def test_a_huge_range_is_refused_before_it_is_built(pattern: str) -> None:
    with pytest.raises(InitError, match="more than 10,000 hosts"):
        expand(pattern)


def test_children_variables_and_precedence(tmp_path: Path) -> None:
    path = tmp_path / "inv"
    path.write_text("stray\n[control]\nc1 ansible_host=10.0.0.1 mariadb_port=3307\nc2\n\n[extra]\nc3\n\n"
                    "[mariadb:children]\ncontrol\nextra\nmariadb\n\n[control:vars]\nmariadb_port=3308\n\n"
                    "[all:vars]\nmariadb_port=3309\nansible_host=\"10.9.9.9\"  # a comment\n")
    inv = load_inventory(path)
    assert inv.group_hosts("mariadb") == ["c1", "c2", "c3"]  # a group naming itself does not loop
    assert inv.group_hosts("ungrouped") == ["stray"]
    assert [inv.host_var(h, "mariadb_port") for h in ("c1", "c2", "c3")] == ["3307", "3308", "3309"]
    assert inv.host_var("c3", "ansible_host") == "10.9.9.9"
    assert inv.host_var("c2", "nothing") is None


@pytest.mark.parametrize(("text", "problem"), [
    ("[control]\nc1 ansible_host\n", "'ansible_host' is not key=value"),
    ("[control:bogus]\n", "unknown section kind ':bogus'"),
    ("[control]\nc1 ansible_host='10.0.0.1\n", "unbalanced quote"),
])
def test_bad_lines_are_one_error_naming_them(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "inv"
    path.write_text(text)
    with pytest.raises(InitError, match=problem) as exc:
        load_inventory(path)
    assert str(exc.value).startswith(str(path)) and "\n" not in str(exc.value)
