"""No secret leaves stacktop: known secret values (the OpenStack password in clouds.yaml, the Keystone token,
the RabbitMQ password from an environment variable, the Galera password from a password file) are set, the
dashboard runs with the recorder on, through healthy polls and failures (wrong passwords, 401s, a hung
source), and then every output is searched for them: the log file (DEBUG), the journal, the Markdown export,
the snapshot JSON, every error line, an SVG screenshot, stdout and stderr."""

from __future__ import annotations

import base64
import json
import logging
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tui.app import StacktopApp
from tui.collectors.galera import GaleraCollector
from tui.collectors.instances import InstancesCollector
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.services import ServicesCollector
from tui.config import load_config
from tui.export import to_markdown
from tui.openstack.client import connect
from tui.recorder import Journal, Recorder
from tui.sim import api_rabbit, start_demo
from tui.sim.faults import Faults, FaultyGaleraConnector
from tui.snapshot import to_report
from tui.snapshot_nagios import render_nagios
from tui.snapshot_plain import render_plain
from tui.snapshot_prometheus import render_prometheus
from tui.snapshot_terminal import TerminalReport

OS_PASSWORD = "Os-S3cret-7f3a9c"
RMQ_PASSWORD = "Rmq-S3cret-b81e44"
DB_PASSWORD = "Db-S3cret-0c9d12"


def _forms(secret: str) -> list[str]:
    """The spellings a leak could take: plain, URL-quoted, JSON-escaped, in a Basic auth header."""
    return [secret, quote(secret, safe=""), json.dumps(secret)[1:-1],
            base64.b64encode(f"monitor:{secret}".encode()).decode()]


def _leaks(text: str, secrets: list[str]) -> list[str]:
    return [s for secret in secrets for s in _forms(secret) if s and s in text]


async def test_no_secret_in_any_output(tmp_path: Path, capfd: Any) -> None:
    demo = start_demo(storyline=False, instances=10, hosts=3, queues=10, churn=0.0)
    try:
        demo.auth.password = OS_PASSWORD
        demo.galera.user, demo.galera.password = "monitor", DB_PASSWORD
        demo.listeners["rabbitmq"].app = api_rabbit.make_app(demo.engine, "monitor", RMQ_PASSWORD)
        clouds = Path(demo.clouds_file)
        clouds.write_text(clouds.read_text().replace("stacktop-demo-not-a-secret", OS_PASSWORD))
        pw_file = tmp_path / "galera.pw"
        pw_file.write_text(DB_PASSWORD + "\n")
        cfg_file = tmp_path / "config.toml"
        cfg_file.write_text(
            f'[openstack]\ncloud = "stacktop-demo"\nclouds_file = "{clouds}"\ntimeout = 3\ninterval = 1\n'
            f'[rabbitmq]\nmanagement_url = "{demo.rabbitmq_url}"\nuser = "monitor"\n'
            f'password_env = "STACKTOP_TEST_RMQ_PW"\ntimeout = 2\ninterval = 1\n'
            f'[galera]\nnodes = {json.dumps([n.address for n in demo.engine.galera_nodes])}\nuser = "monitor"\n'
            f'password_file = "{pw_file}"\ntimeout = 2\ninterval = 1\n'
            f'[recorder]\ndir = "{tmp_path / "rec"}"\n')
        cfg_file.chmod(0o600)
        config = load_config(str(cfg_file), env={**os.environ, "STACKTOP_TEST_RMQ_PW": RMQ_PASSWORD})
        assert config.rabbitmq.password.value == RMQ_PASSWORD and config.galera.password.value == DB_PASSWORD

        log_file = tmp_path / "stacktop.log"
        handler = logging.FileHandler(log_file)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        old_level = root.level
        root.addHandler(handler)
        root.setLevel(logging.DEBUG)

        client = connect(config.openstack)
        token = client.conn.session.get_token()
        secrets = [OS_PASSWORD, RMQ_PASSWORD, DB_PASSWORD, token]
        faults = Faults(demo)
        gfaults = FaultyGaleraConnector(demo.galera_connector)
        collectors = [
            ServicesCollector(config.openstack, config.thresholds, client_factory=lambda: client),
            InstancesCollector(config.openstack, client_factory=lambda: client),
            RabbitMQCollector.from_config(config.rabbitmq),
            GaleraCollector(config.galera.nodes, config.galera.user, config.galera.password.value,
                            timeout=config.galera.timeout, connector=gfaults, max_backoff_s=0.01),
        ]
        journal = Journal(config.recorder.dir, secrets=[config.rabbitmq.password.value, config.galera.password.value])
        errors: list[str] = []
        app = StacktopApp(config, collectors=collectors, recorder=Recorder(journal))
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                async def settle(what: str) -> None:
                    deadline = time.monotonic() + 15
                    while not all(s in app.observations for s in ("services", "instances", "rabbitmq", "galera")):
                        assert time.monotonic() < deadline, what
                        await pilot.pause(0.1)
                    await pilot.pause(2.5)
                    errors.extend(o.error for o in app.observations.values() if o.error)
                    galera = app.observations["galera"].snapshot
                    errors.extend(n.error for n in (galera.nodes if galera else ()) if n.error)

                await settle("healthy")
                # failures: a wrong RabbitMQ password, a Galera login refused, nova 401 and a hung neutron
                demo.listeners["rabbitmq"].app = api_rabbit.make_app(demo.engine, "monitor", "other")
                gfaults.set_node(config.galera.nodes[0], "auth")
                faults.set("nova", "401")
                faults.set("neutron", "hang")
                app.action_refresh_now()
                await settle("failing")
                # Keystone refuses the password: the session must log in again (token revoked)
                faults.clear()
                demo.auth.password = "changed"
                demo.auth._tokens.clear()
                app.action_refresh_now()
                await settle("keystone refusing")
                snap = app.observations["services"].snapshot
                errors.extend(x for x in (snap.keystone.error, snap.compute.error, snap.network.error) if x)
                app.run_command(f"server {next(iter(app.observations['instances'].snapshot.servers)).id}")
                await pilot.pause(1.0)
                app.pop_screen()
                svg = app.export_screenshot()
                report = json.dumps(to_report(list(app.observations.values())), default=str)
                from rich.console import Console

                console = Console(record=True, width=160)
                console.print(TerminalReport(list(app.observations.values())))
                text_report = console.export_text()
                observations = list(app.observations.values())
                formats = render_plain(observations) + render_nagios(observations) + \
                    render_prometheus(observations, 0.0)
        finally:
            demo.listeners["rabbitmq"].app = api_rabbit.make_app(demo.engine, "monitor", RMQ_PASSWORD)
            root.removeHandler(handler)
            root.setLevel(old_level)
            handler.close()
            client.close()
        journal_files = sorted(Path(config.recorder.dir).glob("*.jsonl"))
        assert journal_files, "the recorder wrote a journal"
        outputs = {
            "log file": log_file.read_text(),
            "journal": "".join(p.read_text() for p in journal_files),
            "export": "".join(to_markdown(p) for p in journal_files),
            "snapshot JSON": report,
            "snapshot text": text_report,
            "snapshot piped text, nagios, prometheus": formats,
            "error lines": "\n".join(errors),
            "screenshot SVG": svg,
        }
        out, err = capfd.readouterr()
        outputs["stdout/stderr"] = out + err
        assert len(errors) >= 3 and "source_failed" in outputs["journal"], "the failures really happened"
        assert any("1045" in e for e in errors), "the Galera login was refused"
        leaks = {name: _leaks(text, secrets) for name, text in outputs.items()}
        assert not any(leaks.values()), {k: v for k, v in leaks.items() if v}
    finally:
        demo.stop()


def test_config_and_secret_reprs_hide_values() -> None:
    from tui.config import RabbitMQConfig, Secret

    cfg = RabbitMQConfig(management_url="http://x", password=Secret(RMQ_PASSWORD, "$X"))
    assert RMQ_PASSWORD not in repr(cfg) and RMQ_PASSWORD not in str(cfg.password)
    assert RMQ_PASSWORD not in repr(replace(cfg))
