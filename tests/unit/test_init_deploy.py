"""`stacktop init --kolla / --osa` on the fixture folders of tests/data/deploy (real layouts, made-up values):
what is generated, that no secret reaches the TOML or the output, file modes, refusals, and that stacktop's
own config loader accepts the result."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tui.cli import main
from tui.config import load_config
from tui.deployinit import write as writer
from tui.deployinit.render import toml_string

DATA = Path(__file__).resolve().parents[1] / "data" / "deploy"


def fixture_passwords(folder: Path) -> set[str]:
    """Every password-looking value of a fixture folder (they all start with `fixture-`)."""
    found: set[str] = set()
    for path in folder.rglob("*"):
        if path.is_file():
            found.update(w.strip("'\",") for w in path.read_text().split() if "fixture-" in w)
    return {w.split("=", 1)[-1].strip("'\"") for w in found}


@pytest.fixture
def kolla(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DATA / "kolla", tmp_path / "kolla"))


@pytest.fixture
def osa(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DATA / "osa", tmp_path / "osa"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["init", *args])
    out, err = capsys.readouterr()
    return code, out, err


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def edit_yaml(path: Path, **changes: object) -> None:
    data = yaml.safe_load(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(yaml.safe_dump(data))


# ------------------------------------------------------------------------------------------------ kolla
def test_kolla_config_from_the_deployment_files(kolla: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "conf" / "stacktop.toml"
    code, stdout, err = run(capsys, "--kolla", str(kolla), "-o", str(out))
    assert code == 0, err
    data = tomllib.loads(out.read_text())
    assert data["openstack"] == {"cloud": "kolla-admin-internal", "clouds_file": str(kolla / "clouds.yaml")}
    assert data["rabbitmq"] == {
        "management_url": "https://internal.cloud.example:15672",  # kolla_internal_fqdn, TLS internal on
        "user": "openstack-monitoring",  # kolla's read-only monitoring user, not rabbitmq_user
        "password_file": str(tmp_path / "conf" / "stacktop.rabbitmq.password"),
        "vhosts": ["/"],
        "cacert": str(kolla / "certificates" / "ca" / "root.crt"),
    }
    assert data["galera"] == {
        "nodes": ["control01:3306", "control02:3306", "control03:3306"],  # [mariadb:children] control[01:03]
        "user": "monitor",  # kolla's monitor account: USAGE, REPLICATION CLIENT
        "password_file": str(tmp_path / "conf" / "stacktop.galera.password"),
        "expected_size": 3,
    }
    assert stdout == ""
    assert err.count("\n") == 1 and "passwords in " in err and "stacktop.rabbitmq.password" in err
    assert f"OpenStack credentials stay in {kolla / 'clouds.yaml'} (entry kolla-admin-internal)" in err


def test_kolla_passwords_go_to_mode_600_files_and_the_loader_reads_them(kolla: Path, tmp_path: Path,
                                                                          capsys) -> None:
    out = tmp_path / "stacktop.toml"
    assert run(capsys, "--kolla", str(kolla), "-o", str(out))[0] == 0
    rabbit, galera = tmp_path / "stacktop.rabbitmq.password", tmp_path / "stacktop.galera.password"
    assert rabbit.read_text() == "fixture-rabbit-monitor-6Jc5"
    assert galera.read_text() == "fixture-db-monitor-7Hn3"
    assert mode(rabbit) == mode(galera) == mode(out) == 0o600
    config = load_config(str(out), env={})
    assert config.rabbitmq.password.value == "fixture-rabbit-monitor-6Jc5"
    assert config.galera.password.value == "fixture-db-monitor-7Hn3"
    assert config.galera.nodes == ("control01:3306", "control02:3306", "control03:3306")
    assert config.openstack.cloud == "kolla-admin-internal"
    assert not config.warnings


def test_no_secret_in_the_toml_or_the_output(kolla: Path, tmp_path: Path, capsys) -> None:
    secrets = fixture_passwords(kolla)
    assert {"fixture-db-root-9Qx2", "fixture-keystone-admin-2Wd6", "fixture-rabbit-monitor-6Jc5"} <= secrets
    out = tmp_path / "stacktop.toml"
    shown = "".join(run(capsys, "--kolla", str(kolla), "-o", str(out))[1:])
    shown += "".join(run(capsys, "--kolla", str(kolla), "-o", str(tmp_path / "dry.toml"), "--dry-run")[1:])
    shown += "".join(run(capsys, "--kolla", str(kolla), "-o", str(tmp_path / "env.toml"), "--password-env")[1:])
    for text in (out.read_text(), (tmp_path / "env.toml").read_text(), shown):
        leaked = [s for s in secrets if s in text]
        assert not leaked, leaked
    # the administrator accounts' passwords are never written anywhere: only the monitoring ones
    written = "".join(p.read_text() for p in tmp_path.glob("*.password"))
    for admin in ("fixture-db-root-9Qx2", "fixture-rabbit-admin-3Vm9", "fixture-keystone-admin-2Wd6"):
        assert admin not in written


def test_password_env_writes_no_password_file_and_names_the_variables(kolla: Path, tmp_path: Path,
                                                                       capsys) -> None:
    out = tmp_path / "stacktop.toml"
    code, _, err = run(capsys, "--kolla", str(kolla), "-o", str(out), "--password-env")
    assert code == 0, err
    data = tomllib.loads(out.read_text())
    assert data["rabbitmq"]["password_env"] == "STACKTOP_RABBITMQ_PASSWORD"
    assert data["galera"]["password_env"] == "STACKTOP_GALERA_PASSWORD"
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["stacktop.toml"]
    assert err.count("\n") == 1
    assert "STACKTOP_RABBITMQ_PASSWORD to passwords.yml: rabbitmq_monitoring_password" in err
    assert "STACKTOP_GALERA_PASSWORD to passwords.yml: mariadb_monitor_password" in err
    config = load_config(str(out), env={"STACKTOP_RABBITMQ_PASSWORD": "r", "STACKTOP_GALERA_PASSWORD": "g"})
    assert (config.rabbitmq.password.value, config.galera.password.value) == ("r", "g")


def test_dry_run_prints_the_config_and_writes_nothing(kolla: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "stacktop.toml"
    code, stdout, err = run(capsys, "--kolla", str(kolla), "-o", str(out), "--dry-run")
    assert code == 0
    assert tomllib.loads(stdout)["galera"]["expected_size"] == 3
    assert "nothing written" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == [kolla]


def test_an_existing_config_is_kept_unless_force(kolla: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "stacktop.toml"
    out.write_text("# mine\n")
    code, _, err = run(capsys, "--kolla", str(kolla), "-o", str(out))
    assert code == 3 and "already exists" in err and "--force" in err and err.count("\n") == 1
    assert out.read_text() == "# mine\n"
    assert not (tmp_path / "stacktop.rabbitmq.password").exists()
    code, _, err = run(capsys, "--kolla", str(kolla), "-o", str(out), "--force")
    assert code == 0, err
    assert "[galera]" in out.read_text()


def test_force_replaces_a_symlink_never_writes_through_it(kolla: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("untouched\n")
    link = tmp_path / "stacktop.rabbitmq.password"
    link.symlink_to(target)
    code, _, err = run(capsys, "--kolla", str(kolla), "-o", str(tmp_path / "stacktop.toml"), "--force")
    assert code == 0, err
    assert target.read_text() == "untouched\n"
    assert not link.is_symlink() and mode(link) == 0o600


def test_admin_openrc_when_there_is_no_clouds_yaml(kolla: Path, tmp_path: Path, capsys) -> None:
    (kolla / "clouds.yaml").unlink()
    out = tmp_path / "stacktop.toml"
    code, _, err = run(capsys, "--kolla", str(kolla), "-o", str(out))
    assert code == 0, err
    clouds = tmp_path / "stacktop.clouds.yaml"
    assert mode(clouds) == 0o600
    entry = yaml.safe_load(clouds.read_text())["clouds"]["stacktop-init"]
    assert entry["auth"] == {"auth_url": "https://internal.cloud.example:5000", "username": "admin",
                             "password": "fixture-keystone-admin-2Wd6", "project_name": "admin",
                             "user_domain_name": "Default", "project_domain_name": "Default"}
    assert entry["interface"] == "internal"
    assert "fixture-keystone-admin-2Wd6" not in out.read_text()
    assert load_config(str(out), env={}).openstack.clouds_file == str(clouds)


def test_inventory_host_vars_ports_and_shards(kolla: Path, tmp_path: Path, capsys) -> None:
    inventory = tmp_path / "inv"
    inventory.write_text("[control]\nctl-a ansible_host=10.0.0.11 mariadb_port=3307\nctl-b ansible_host=10.0.0.12\n"
                         "db-[a:b] mariadb_shard_id=1\n\n[mariadb:children]\ncontrol\n\n[control:vars]\n"
                         "mariadb_port=3308\n")
    code, stdout, err = run(capsys, "--kolla", str(kolla), "--inventory", str(inventory), "--dry-run")
    assert code == 0, err
    galera = tomllib.loads(stdout)["galera"]
    assert galera["nodes"] == ["10.0.0.11:3307", "10.0.0.12:3308"]  # shard 1 (db-a, db-b) is another cluster
    assert galera["expected_size"] == 2
    edit_yaml(kolla / "globals.yml", mariadb_port=3309)  # globals.yml is extra vars: it beats the inventory
    code, stdout, _ = run(capsys, "--kolla", str(kolla), "--inventory", str(inventory), "--dry-run")
    assert tomllib.loads(stdout)["galera"]["nodes"] == ["10.0.0.11:3309", "10.0.0.12:3309"]


def test_globals_choices_follow_kolla(kolla: Path, capsys) -> None:
    edit_yaml(kolla / "globals.yml", kolla_internal_fqdn="{{ kolla_internal_vip_address }}",
              kolla_enable_tls_internal="no", rabbitmq_monitoring_user="watcher", mariadb_monitor_user="galmon",
              kolla_enable_tls_backend="yes", kolla_container_engine="podman")
    code, stdout, err = run(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 4, err  # backend TLS with host names: the certificate names IP addresses (a gap, one line)
    assert err.count("\n") == 2 and "multinode: control01, control02, control03: MariaDB's backend TLS" in err
    data = tomllib.loads(stdout)
    assert data["rabbitmq"]["management_url"] == "http://10.20.0.250:15672"
    assert "cacert" not in data["rabbitmq"]
    assert data["rabbitmq"]["user"] == "watcher" and data["galera"]["user"] == "galmon"
    assert data["galera"]["tls"] is True and data["galera"]["cacert"] == str(kolla / "certificates/ca/root.crt")
    assert 'cli_command = "podman exec rabbitmq rabbitmqctl"' in stdout


MISSING = [
    ("passwords.yml", {"rabbitmq_monitoring_password": None}, "passwords.yml: rabbitmq_monitoring_password: "),
    ("passwords.yml", {"mariadb_monitor_password": ""}, "passwords.yml: mariadb_monitor_password: "),
    ("globals.yml", {"kolla_internal_vip_address": None, "kolla_internal_fqdn": None},
     "globals.yml: kolla_internal_vip_address: "),
    ("globals.yml", {"kolla_internal_fqdn": "{{ lookup('env', 'FQDN') }}"}, "globals.yml: kolla_internal_fqdn: "),
    ("globals.yml", {"kolla_admin_openrc_cacert": "/nonexistent/ca.pem"}, "globals.yml: kolla_admin_openrc_cacert: "),
    ("globals.yml", {"kolla_enable_tls_internal": "maybe"}, "globals.yml: kolla_enable_tls_internal: "),
    ("globals.yml", {"rabbitmq_management_port": "http"}, "globals.yml: rabbitmq_management_port: "),
]


@pytest.mark.parametrize(("name", "changes", "line"), MISSING, ids=[m[2].split(": ")[1] for m in MISSING])
def test_a_missing_or_ambiguous_key_is_one_line_naming_it(kolla: Path, tmp_path: Path, capsys, name: str,
                                                          changes: dict, line: str) -> None:
    edit_yaml(kolla / name, **changes)
    out = tmp_path / "stacktop.toml"
    code, stdout, err = run(capsys, "--kolla", str(kolla), "-o", str(out))
    assert code == 3
    assert err.count("\n") == 1 and line in err and "Traceback" not in err
    assert stdout == "" and not out.exists() and not list(tmp_path.glob("*.password"))


@pytest.mark.parametrize(("setup", "line"), [
    (lambda d: (d / "multinode").unlink(),
     "(inventory): no ansible/inventory/all-in-one / multinode / all-in-one / inventory in the folder"),
    (lambda d: (d / "multinode").write_text("[control]\nc1\n"), "multinode: [mariadb]: no such group"),
    (lambda d: (d / "multinode").write_text("[mariadb]\nlocalhost ansible_connection=local\n"),
     "multinode: localhost: no address"),
    (lambda d: (d / "multinode").write_text("all:\n  children:\n"), "multinode: (file): is a YAML inventory"),
    (lambda d: [(d / n).unlink() for n in ("clouds.yaml", "admin-openrc.sh")], "clouds.yaml: (file): does not exist"),
    (lambda d: (d / "passwords.yml").write_text("$ANSIBLE_VAULT;1.1;AES256\n6162636465\n"),
     "passwords.yml: (file): is encrypted with ansible-vault"),
    (lambda d: (d / "globals.yml").write_text("a: [\n"), "globals.yml: (syntax): not valid YAML"),
    (lambda d: (d / "clouds.yaml").write_text("clouds:\n  one: {auth: {}}\n  two: {auth: {}}\n"),
     "clouds.yaml: clouds: 2 entries and none of kolla-admin-internal, kolla-admin - pick the admin entry"),
])
def test_missing_files_and_groups(kolla: Path, tmp_path: Path, capsys, monkeypatch, setup, line: str) -> None:
    monkeypatch.setattr("tui.deployinit.localaddr.interface_ipv4", lambda name: None)  # eth0 is not on this host
    setup(kolla)
    code, _, err = run(capsys, "--kolla", str(kolla), "-o", str(tmp_path / "x.toml"))
    assert code == 3, err
    assert err.count("\n") == 1 and line in err and "Traceback" not in err
    assert not (tmp_path / "x.toml").exists()


def test_cloud_picks_a_clouds_yaml_entry(kolla: Path, capsys) -> None:
    code, stdout, _ = run(capsys, "--kolla", str(kolla), "--cloud", "kolla-admin", "--dry-run")
    assert code == 0 and tomllib.loads(stdout)["openstack"]["cloud"] == "kolla-admin"
    code, _, err = run(capsys, "--kolla", str(kolla), "--cloud", "nope", "--dry-run")
    assert code == 3 and "clouds.yaml: clouds.nope: no such entry" in err


def test_options_of_the_other_layout_are_refused(kolla: Path, osa: Path, capsys) -> None:
    assert run(capsys, "--kolla", str(kolla), "--openrc", str(osa / "openrc"))[0] == 3
    assert run(capsys, "--osa", str(osa), "--inventory", str(kolla / "multinode"))[0] == 3
    with pytest.raises(SystemExit) as exc:
        main(["init", "--kolla", str(kolla), "--osa", str(osa)])
    assert exc.value.code == 3


def test_a_config_that_fails_validation_is_not_written(kolla: Path, tmp_path: Path, capsys) -> None:
    (kolla / "multinode").write_text("[mariadb]\ndb1 ansible_host=root@db1\n")  # the loader refuses user@
    out = tmp_path / "x.toml"
    code, _, err = run(capsys, "--kolla", str(kolla), "-o", str(out))
    assert code == 3 and err.count("\n") == 1 and "galera.nodes[0]: the config made from it does not pass" in err
    assert not out.exists()


# -------------------------------------------------------------------------------------------------- OSA
def test_osa_config_from_the_deployment_files(osa: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "stacktop.toml"
    code, _, err = run(capsys, "--osa", str(osa), "-o", str(out))
    assert code == 0, err
    data = tomllib.loads(out.read_text())
    root_ca = str(osa / "pki/roots/ExampleCorpRoot/certs/ExampleCorpRoot.crt")
    assert data["rabbitmq"] == {"management_url": "https://172.29.236.9:15671", "user": "monitoring",
                                "password_file": str(tmp_path / "stacktop.rabbitmq.password"), "cacert": root_ca}
    assert data["galera"] == {"nodes": ["172.29.237.21:3306", "172.29.237.22:3306", "172.29.237.23:3306"],
                              "user": "monitoring", "password_file": str(tmp_path / "stacktop.galera.password"),
                              "expected_size": 3, "tls": True, "cacert": root_ca}
    clouds = tmp_path / "stacktop.clouds.yaml"
    assert data["openstack"] == {"cloud": "stacktop-init", "clouds_file": str(clouds)}
    for path in (out, clouds, tmp_path / "stacktop.rabbitmq.password", tmp_path / "stacktop.galera.password"):
        assert mode(path) == 0o600
    assert (tmp_path / "stacktop.galera.password").read_text() == "fixture-osa-galera-monitor-4Ne7"
    config = load_config(str(out), env={})
    assert config.rabbitmq.password.value == "fixture-osa-rabbit-monitor-5Yb1"
    assert config.galera.uses_tls
    secrets = fixture_passwords(osa)
    assert not [s for s in secrets if s in out.read_text() + err]
    assert "fixture-osa-galera-root-3Xf6" not in "".join(p.read_text() for p in tmp_path.iterdir() if p.is_file())


def test_osa_user_variables_override_the_defaults(osa: Path, capsys) -> None:
    with (osa / "user_variables.yml").open("a") as handle:
        handle.write("rabbitmq_monitoring_userid: mon2\nhaproxy_ssl: false\ngalera_use_ssl: false\n")
    code, stdout, err = run(capsys, "--osa", str(osa), "--dry-run")
    assert code == 0, err
    data = tomllib.loads(stdout)
    assert data["rabbitmq"]["management_url"] == "http://172.29.236.9:15672"
    assert data["rabbitmq"]["user"] == "mon2" and "cacert" not in data["rabbitmq"]
    assert "tls" not in data["galera"]


def second_root_ca(folder: Path) -> None:
    certs = folder / "pki" / "roots" / "OtherRoot" / "certs"
    certs.mkdir(parents=True)
    (certs / "OtherRoot.crt").write_text("-----BEGIN CERTIFICATE-----\n")


@pytest.mark.parametrize(("setup", "line"), [
    (lambda d: edit_yaml(d / "user_secrets.yml", galera_monitoring_user_password=None),
     "user_secrets.yml: galera_monitoring_user_password: is missing"),
    (lambda d: edit_yaml(d / "user_secrets.yml", rabbitmq_monitoring_password=""),
     "user_secrets.yml: rabbitmq_monitoring_password: is missing"),
    (lambda d: (d / "openstack_inventory.json").unlink(), "openstack_inventory.json: (file): does not exist"),
    (lambda d: (d / "openrc").unlink(), "openrc: (file): does not exist - pass --openrc FILE"),
    (lambda d: edit_yaml(d / "openstack_user_config.yml", global_overrides={"management_bridge": "br-mgmt"}),
     "openstack_user_config.yml: global_overrides.internal_lb_vip_address: is not set"),
    (lambda d: (d / "openrc").write_text("export OS_AUTH_URL=https://x:5000/v3\nexport OS_USERNAME=admin\n"),
     "openrc: OS_PASSWORD: is missing"),
    (lambda d: second_root_ca(d), "roots: (root CA): 2 root CAs"),
])
def test_osa_missing_keys(osa: Path, tmp_path: Path, capsys, setup, line: str) -> None:
    setup(osa)
    code, _, err = run(capsys, "--osa", str(osa), "-o", str(tmp_path / "x.toml"))
    assert code == 3, err
    assert err.count("\n") == 1 and line in err and "Traceback" not in err
    assert not (tmp_path / "x.toml").exists()


def test_osa_openrc_option(osa: Path, tmp_path: Path, capsys) -> None:
    openrc = tmp_path / "root-openrc"
    os.rename(osa / "openrc", openrc)
    code, stdout, err = run(capsys, "--osa", str(osa), "--openrc", str(openrc), "--dry-run")
    assert code == 0, err
    assert "fixture-osa-keystone-admin-1Mc9" not in stdout + err


# ------------------------------------------------------------------------------------------ hostile values
@given(st.text())
def test_toml_strings_round_trip(text: str) -> None:
    assert tomllib.loads(f"k = {toml_string(text)}")["k"] == text


def test_a_hostile_value_stays_one_toml_string(kolla: Path, capsys) -> None:
    fqdn = 'in"ter\\nal\x1b]0;x\x07\n[galera]\nnodes = ["evil:1"]'
    edit_yaml(kolla / "globals.yml", kolla_internal_fqdn=fqdn)
    (kolla / "multinode").write_text('[mariadb]\ndb1 ansible_host="10.0.0.1 # x"\n')
    code, stdout, err = run(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 0, err
    data = tomllib.loads(stdout)
    assert data["rabbitmq"]["management_url"] == f"https://{fqdn}:15672"
    assert data["galera"]["nodes"] == ["10.0.0.1 # x:3306"]
    assert "\x1b" not in stdout + err and "\x07" not in stdout + err


def test_ipv6_addresses_are_bracketed(kolla: Path, capsys) -> None:
    edit_yaml(kolla / "globals.yml", kolla_internal_fqdn=None, kolla_internal_vip_address="fd00::250")
    (kolla / "multinode").write_text("[mariadb]\ndb1 ansible_host=fd00::11\n")
    code, stdout, err = run(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 0, err
    data = tomllib.loads(stdout)
    assert data["rabbitmq"]["management_url"] == "https://[fd00::250]:15672"
    assert data["galera"]["nodes"] == ["[fd00::11]:3306"]


def test_an_output_folder_that_cannot_be_made_is_one_line(kolla: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "--kolla", str(kolla), "-o", str(tmp_path / "file" / "sub" / "x.toml"))
    assert code == 3 and err.count("\n") == 1 and "(folder): cannot be created" in err


def test_the_check_writes_no_secret_anywhere(kolla: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """The loader's check runs on a scratch copy: no password goes to it, not even for a moment."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    seen: list[str] = []
    real_write = writer._write

    def spy(path: Path, data: bytes) -> None:
        if str(path).startswith(str(scratch)):
            seen.append(data.decode())
        real_write(path, data)

    monkeypatch.setattr(writer, "_write", spy)
    (kolla / "clouds.yaml").unlink()  # the clouds.yaml made from admin-openrc.sh holds a password too
    code, _, err = run(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 0, err
    assert seen and not [s for s in fixture_passwords(kolla) if s in "".join(seen)]


def test_a_relative_folder_gives_absolute_paths(kolla: Path, osa: Path, tmp_path: Path, monkeypatch,
                                                capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = run(capsys, "--kolla", "kolla", "--dry-run")
    assert code == 0
    assert tomllib.loads(stdout)["openstack"]["clouds_file"] == str(kolla / "clouds.yaml")
    code, stdout, _ = run(capsys, "--osa", "osa", "-o", "out.toml", "--dry-run")
    assert code == 0
    data = tomllib.loads(stdout)
    assert data["rabbitmq"]["cacert"].startswith(str(osa))
    assert data["openstack"]["clouds_file"] == str(tmp_path / "out.clouds.yaml")


def test_a_hostile_folder_name_is_shown_escaped(tmp_path: Path, capsys) -> None:
    folder = Path(shutil.copytree(DATA / "kolla", tmp_path / "k\x1b[31mred\x07"))
    code, _, err = run(capsys, "--kolla", str(folder), "-o", str(tmp_path / "x\x1b]0;t.toml"))
    assert code == 0, err
    assert "\x1b" not in err and "\x07" not in err and err.count("\n") == 1
    assert load_config(str(tmp_path / "x\x1b]0;t.toml"), env={}).openstack.clouds_file == str(folder / "clouds.yaml")
