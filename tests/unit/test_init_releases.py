"""`stacktop init` on one deployment folder per release (tests/data/deploy/kolla-SERIES, osa-SERIES: each
release's own defaults, passwords filled as kolla-genpwd / pw-token-gen fill them, clouds.yaml and openrc as the
branch's templates render them): the accounts, ports, TLS and addresses that release really has, or the one-line
fix and exit 4 where it lacks what stacktop needs. The facts come from tui/deployinit/release_facts.py, whose
every source must be in docs/deployment-facts.md."""

from __future__ import annotations

import re
import shutil
import stat
import tomllib
from pathlib import Path

import pytest
import yaml

from tui.cli import main
from tui.config import load_config
from tui.deployinit.release_facts import KOLLA, OSA, all_sources

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "deploy"
VIP = "10.0.0.250"
VERSIONS = {"2024.1": "18.8.0", "2025.1": "20.5.0", "2025.2": "21.2.0", "2026.1": "22.1.0", "master": "23.0.0.dev4"}


@pytest.fixture(autouse=True)
def deployment_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """This host is the deployment host of the fixtures: its eth0 (kolla's default network_interface) has
    10.0.0.11; no kolla-ansible is on PATH unless a test installs one."""
    monkeypatch.setattr("tui.deployinit.localaddr.interface_ipv4", lambda name: {"eth0": "10.0.0.11"}.get(name))
    monkeypatch.setenv("PATH", "/nonexistent")


def install_kolla_ansible(root: Path, version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A virtualenv with kolla-ansible VERSION as pip leaves it (bin/kolla-ansible, its dist-info), on PATH."""
    (root / "bin").mkdir(parents=True)
    command = root / "bin" / "kolla-ansible"
    command.write_text(f"#!{root}/bin/python3\nfrom kolla_ansible.cmd.kolla_ansible import main\nmain()\n")
    command.chmod(0o755)
    meta = root / "lib" / "python3.12" / "site-packages" / f"kolla_ansible-{version}.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: kolla-ansible\nVersion: {version}\n")
    monkeypatch.setenv("PATH", str(root / "bin"))


def copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(DATA / name, tmp_path / name))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["init", *args])
    out, err = capsys.readouterr()
    return code, out, err


def set_globals(folder: Path, **values: str) -> None:
    with (folder / "globals.yml").open("a") as handle:
        handle.write("".join(f'{key}: "{value}"\n' for key, value in values.items()))


def secrets_of(folder: Path) -> set[str]:
    """Every generated secret of a fixture folder (passwords.yml / user_secrets.yml values, ssh keys' parts)."""
    name = "passwords.yml" if (folder / "passwords.yml").exists() else "user_secrets.yml"
    out: set[str] = set()
    for value in yaml.safe_load((folder / name).read_text()).values():
        parts = value.values() if isinstance(value, dict) else [value]
        out.update(str(p) for p in parts if p and len(str(p)) >= 16)
    return out


RABBIT_GAP = ('globals.yml: rabbitmq_monitoring_user: is not set and kolla-ansible {series} defaults it to "": '
              "RabbitMQ has no monitoring user, [rabbitmq] not written - set rabbitmq_monitoring_user: "
              '"openstack-monitoring" in globals.yml, run `kolla-ansible reconfigure -i {inventory} -t rabbitmq`, '
              "then rerun stacktop init")

# series -> (exit code, [rabbitmq] or None, [galera] without the password reference, has a galera password,
#            the inventory init finds)
EXPECTED = {
    "2024.1": (4, None, {"nodes": ["control01:3306", "control02:3306", "control03:3306"], "user": "haproxy",
                         "expected_size": 3}, False, "multinode"),
    "2025.1": (4, None, {"nodes": ["10.0.0.11:3306"], "user": "monitor", "expected_size": 1}, True,
               "ansible/inventory/all-in-one"),
    "2025.2": (4, None, {"nodes": ["10.0.0.11:3306"], "user": "monitor", "expected_size": 1}, True,
               "ansible/inventory/all-in-one"),
    "2026.1": (0, {"management_url": f"http://{VIP}:15672", "user": "openstack-monitoring", "vhosts": ["/"]},
               {"nodes": ["10.0.0.11:3306", "10.0.0.12:3306", "10.0.0.13:3306"], "user": "monitor",
                "expected_size": 3}, True, "multinode"),
    "master": (4, {"management_url": f"https://{VIP}:15672", "user": "openstack-monitoring", "vhosts": ["/"],
                   "cacert": "certificates/ca/root.crt"},
               {"nodes": ["control01:3306", "control02:3306", "control03:3306"], "user": "monitor",
                "expected_size": 3, "tls": True, "cacert": "certificates/ca/root.crt"}, True, "multinode"),
}


def without_refs(section: dict | None, folder: Path) -> dict | None:
    if section is None:
        return None
    out = {k: v for k, v in section.items() if k not in ("password_file", "password_env")}
    if "cacert" in out:
        out["cacert"] = str(Path(out["cacert"]).relative_to(folder))
    return out


@pytest.mark.parametrize("series", list(EXPECTED))
def test_each_kolla_release_gets_its_own_accounts_ports_tls_and_addresses(series: str, tmp_path: Path, capsys,
                                                                          monkeypatch) -> None:
    folder = copy(f"kolla-{series}", tmp_path)
    install_kolla_ansible(tmp_path / "venv", VERSIONS[series], monkeypatch)  # openstack_release is commented out
    out = tmp_path / "out" / "stacktop.toml"
    code, stdout, err = run(capsys, "--kolla", str(folder), "-o", str(out))
    assert stdout == ""
    want_code, rabbitmq, galera, galera_password, inventory = EXPECTED[series]
    assert code == want_code, err
    data = tomllib.loads(out.read_text())  # written, whatever it lacks
    assert f"# kolla-ansible {series} ({tmp_path / 'venv' / 'bin' / 'kolla-ansible'}" in out.read_text()
    assert data["openstack"] == {"cloud": "kolla-admin-internal", "clouds_file": str(folder / "clouds.yaml")}
    assert without_refs(data.get("rabbitmq"), folder) == rabbitmq
    assert without_refs(data["galera"], folder) == galera
    assert ("password_file" in data["galera"]) is galera_password
    lines = err.splitlines()
    assert lines[-1].startswith(f"stacktop init: wrote {out}")
    gaps = lines[:-1]
    assert len(gaps) == (1 if code == 4 else 0)
    if rabbitmq is None:
        assert gaps == [str(folder / RABBIT_GAP.format(series=series, inventory=folder / inventory))]
    # stacktop's own loader takes what was written; the monitoring passwords are the release's
    config = load_config(str(out), env={})
    passwords = yaml.safe_load((folder / "passwords.yml").read_text())
    assert config.galera.password.value == (passwords["mariadb_monitor_password"] if galera_password else None)
    if rabbitmq is not None:
        assert config.rabbitmq.password.value == passwords["rabbitmq_monitoring_password"]


def test_no_account_the_release_lacks_is_written_and_no_secret_leaks(tmp_path: Path, capsys) -> None:
    for series in EXPECTED:
        folder = copy(f"kolla-{series}", tmp_path)
        out = tmp_path / series / "stacktop.toml"
        code, stdout, err = run(capsys, "--kolla", str(folder), "-o", str(out), "--release", series)
        assert code in (0, 4), err
        text = out.read_text()
        for secret in secrets_of(folder):
            assert secret not in text and secret not in stdout + err
        written = {p.name: p.read_text() for p in out.parent.glob("*.password")}
        passwords = yaml.safe_load((folder / "passwords.yml").read_text())
        allowed = {passwords["rabbitmq_monitoring_password"], passwords["mariadb_monitor_password"]}
        assert set(written.values()) <= allowed, series  # never an administrator's password
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in out.parent.iterdir())
        if series in ("2024.1", "2025.1", "2025.2"):
            assert "[rabbitmq]" not in text and "openstack-monitoring" not in text
        if series == "2024.1":
            assert 'user = "monitor"' not in text and "galera.password" not in text


def test_the_release_comes_from_globals_the_option_or_the_installed_kolla_ansible(tmp_path: Path, capsys,
                                                                                  monkeypatch) -> None:
    folder = copy("kolla-2025.2", tmp_path)
    code, _, err = run(capsys, "--kolla", str(folder), "--dry-run")
    assert code == 3 and err.count("\n") == 1
    assert (f"{folder / 'globals.yml'}: openstack_release: openstack_release is not set in globals.yml and no "
            "kolla-ansible is installed here; the release decides whether a RabbitMQ monitoring user exists "
            "(rabbitmq_monitoring_user) - set openstack_release in globals.yml or pass --release "
            "(2024.1, 2025.1, 2025.2, 2026.1, master)") in err
    code, stdout, _ = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2026.1")
    assert code == 0 and 'user = "openstack-monitoring"' in stdout and "# kolla-ansible 2026.1 (--release" in stdout
    set_globals(folder, openstack_release="2025.2")
    code, stdout, err = run(capsys, "--kolla", str(folder), "--dry-run")
    assert code == 4 and "kolla-ansible 2025.2 defaults it to" in err
    assert "# kolla-ansible 2025.2 (globals.yml openstack_release 2025.2)" in stdout
    code, _, err = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "zed")
    assert code == 3 and "--release: zed: is not a kolla-ansible series stacktop knows" in err
    folder = copy("kolla-2024.1", tmp_path)
    install_kolla_ansible(tmp_path / "venv", "19.8.0", monkeypatch)  # 2024.2: 2025.1's facts
    code, stdout, _ = run(capsys, "--kolla", str(folder), "--dry-run")
    assert "# kolla-ansible 2025.1 (" in stdout and tomllib.loads(stdout)["galera"]["user"] == "monitor"


def test_2024_1_options_proxysql_and_backend_tls(tmp_path: Path, capsys) -> None:
    folder = copy("kolla-2024.1", tmp_path)
    set_globals(folder, kolla_enable_tls_backend="yes")
    code, stdout, _ = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2024.1")
    galera = tomllib.loads(stdout)["galera"]
    assert "tls" not in galera  # 2024.1's MariaDB serves no TLS at all
    assert "kolla-ansible 2024.1's MariaDB serves no TLS (database_enable_tls_backend came in 2025.1)" in stdout
    set_globals(folder, enable_proxysql="yes")
    code, stdout, _ = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2024.1", "--password-env")
    assert code == 4  # RabbitMQ still has no monitoring user
    galera = tomllib.loads(stdout)["galera"]
    assert galera["user"] == "monitor" and galera["password_env"] == "STACKTOP_GALERA_PASSWORD"
    assert "tls" not in galera


def test_2025_1_backend_tls_names_the_local_address_and_proxysql_off_is_haproxy(tmp_path: Path, capsys) -> None:
    folder = copy("kolla-2025.1", tmp_path)
    set_globals(folder, kolla_enable_tls_backend="yes")
    code, stdout, err = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2025.1")
    assert code == 4 and err.count("\n") == 2 and "rabbitmq_monitoring_user" in err  # the only gap
    galera = tomllib.loads(stdout)["galera"]
    assert galera["nodes"] == ["10.0.0.11:3306"] and galera["tls"] is True  # the IP the certificate names
    folder = copy("kolla-2025.1", tmp_path / "b")
    set_globals(folder, enable_proxysql="no", kolla_enable_tls_backend="yes")
    code, stdout, _ = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2025.1")
    galera = tomllib.loads(stdout)["galera"]
    assert galera["user"] == "haproxy" and "password_file" not in galera and "tls" not in galera


def test_the_fix_applied_gives_a_complete_config(tmp_path: Path, capsys) -> None:
    folder = copy("kolla-2025.2", tmp_path)
    set_globals(folder, rabbitmq_monitoring_user="openstack-monitoring")
    code, stdout, err = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2025.2")
    assert code == 0 and err.count("\n") == 1, err
    assert tomllib.loads(stdout)["rabbitmq"]["user"] == "openstack-monitoring"
    folder = copy("kolla-master", tmp_path)  # backend TLS: give the inventory the addresses
    inventory = folder / "multinode"
    inventory.write_text(re.sub(r"^control0(\d)$", r"control0\1 ansible_host=10.0.0.1\1", inventory.read_text(),
                                flags=re.MULTILINE))
    code, stdout, err = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "master")
    assert code == 0, err
    galera = tomllib.loads(stdout)["galera"]
    assert galera["nodes"] == ["10.0.0.11:3306", "10.0.0.12:3306", "10.0.0.13:3306"] and galera["tls"] is True


def test_master_backend_tls_with_host_names_is_one_line_naming_them(tmp_path: Path, capsys) -> None:
    folder = copy("kolla-master", tmp_path)
    code, _, err = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "master")
    assert code == 4
    assert err.splitlines()[0] == (
        f"{folder / 'multinode'}: control01, control02, control03: MariaDB's backend TLS certificate "
        "(`kolla-ansible certificates`) names each host's api_interface IP address, not its name: the TLS check "
        "would fail - add ansible_host=<its api_interface IP> to the line of control01 and the others (or pass "
        "--inventory with addresses), then rerun stacktop init")


def test_all_in_one_local_host_addresses(tmp_path: Path, capsys, monkeypatch) -> None:
    folder = copy("kolla-2025.1", tmp_path)
    set_globals(folder, api_interface="ens4")  # api_interface beats network_interface
    monkeypatch.setattr("tui.deployinit.localaddr.interface_ipv4", lambda name: {"ens4": "192.0.2.7"}.get(name))
    code, stdout, _ = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2025.1")
    assert tomllib.loads(stdout)["galera"]["nodes"] == ["192.0.2.7:3306"]
    assert "Galera: localhost is this host (a local connection): its api_interface ens4 has 192.0.2.7" in stdout
    # init run away from the all-in-one host: its interface is not here
    monkeypatch.setattr("tui.deployinit.localaddr.interface_ipv4", lambda name: None)
    code, _, err = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2025.1")
    assert code == 3 and err.count("\n") == 1
    assert ("all-in-one: localhost: no address for this MariaDB host (a local connection, and api_interface ens4 "
            "has no IPv4 address on this machine) - run stacktop init on localhost itself, or add "
            "ansible_host=<its ens4 address> to its line") in err
    set_globals(folder, enable_haproxy="no")  # the sample globals.yml: then the VIP is network_interface's IP
    code, stdout, _ = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2025.1")
    assert tomllib.loads(stdout)["galera"]["nodes"] == [f"{VIP}:3306"]
    folder = copy("kolla-2024.1", tmp_path)  # 2024.1: no ProxySQL, HAProxy forwards the VIP's 3306
    (folder / "multinode").write_text((DATA / "kolla-2025.1" / "ansible" / "inventory" / "all-in-one").read_text())
    code, stdout, _ = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2024.1")
    assert tomllib.loads(stdout)["galera"]["nodes"] == [f"{VIP}:3306"]


def test_an_inventory_directory_with_host_vars(tmp_path: Path, capsys) -> None:
    folder = copy("kolla-2026.1", tmp_path)
    (folder / "multinode").unlink()
    inv = folder / "ansible" / "inventory" / "all-in-one"
    inv.mkdir(parents=True)
    (inv / "hosts").write_text("[control]\nctl1\nctl2\n\n[mariadb:children]\ncontrol\n")
    (inv / "host_vars").mkdir()
    (inv / "host_vars" / "ctl1.yml").write_text("ansible_host: 10.1.0.1\n")
    (inv / "host_vars" / "ctl2").write_text("---\nansible_host: 10.1.0.2\nmariadb_port: 3307\n")
    code, stdout, err = run(capsys, "--kolla", str(folder), "--dry-run", "--release", "2026.1")
    assert code == 0, err
    assert tomllib.loads(stdout)["galera"]["nodes"] == ["10.1.0.1:3306", "10.1.0.2:3307"]


@pytest.mark.parametrize(("series", "version"), [("2024.1", "29.2.4"), ("master", "34.0.0.0b2.dev10")])
def test_each_osa_release(series: str, version: str, tmp_path: Path, capsys, monkeypatch) -> None:
    folder = copy(f"osa-{series}", tmp_path)
    wrapper = tmp_path / "openstack-ansible"  # /usr/local/bin/openstack-ansible as bootstrap-ansible.sh writes it
    wrapper.write_text(f'#!/usr/bin/env bash\nexport PATH="/opt/ansible-runtime/bin:${{PATH}}"\n\n'
                       f'export OSA_VERSION="{version}"\nexport OSA_CLONE_ROOT="/opt/openstack-ansible"\n')
    monkeypatch.setattr("tui.deployinit.release_detect.OSA_WRAPPER", wrapper)
    out = tmp_path / "out" / "stacktop.toml"
    code, stdout, err = run(capsys, "--osa", str(folder), "-o", str(out))
    assert code == 0, err
    text = out.read_text()
    assert f"# OpenStack-Ansible {series} facts ({wrapper} OSA_VERSION {version}" in text
    data = tomllib.loads(text)
    assert data["rabbitmq"]["management_url"] == "https://172.29.236.9:15671"
    assert data["rabbitmq"]["user"] == "monitoring" and data["galera"]["user"] == "monitoring"
    assert data["galera"]["tls"] is True
    secrets = yaml.safe_load((folder / "user_secrets.yml").read_text())
    config = load_config(str(out), env={})
    assert config.rabbitmq.password.value == secrets["rabbitmq_monitoring_password"]
    assert config.galera.password.value == secrets["galera_monitoring_user_password"]
    for secret in secrets_of(folder):
        assert secret not in text and secret not in stdout + err


def test_every_fact_has_its_source_in_the_doc_table() -> None:
    doc = (ROOT / "docs" / "deployment-facts.md").read_text()
    missing = [(row, name, source) for row, name, source in all_sources() if source not in doc]
    assert not missing, missing
    assert len(all_sources()) == sum(13 for _ in KOLLA) + sum(6 for _ in OSA)
    for row in KOLLA:
        assert f"| {row.series} |" in doc


def test_an_unknown_release_is_needed_only_for_a_default(tmp_path: Path, capsys) -> None:
    folder = copy("kolla-2025.2", tmp_path)
    set_globals(folder, rabbitmq_monitoring_user="openstack-monitoring", mariadb_monitor_user="monitor",
                enable_proxysql="yes")  # everything named: no release needed
    code, stdout, err = run(capsys, "--kolla", str(folder), "--dry-run")
    assert code == 0, err
    assert tomllib.loads(stdout)["galera"]["user"] == "monitor" and "# kolla-ansible" not in stdout
    set_globals(folder, enable_proxysql="no")  # the password then depends on the release (empty up to 2025.1)
    code, _, err = run(capsys, "--kolla", str(folder), "--dry-run")
    assert code == 3 and err.count("\n") == 1
    assert "openstack_release: " in err and "which MariaDB monitoring account exists" in err
