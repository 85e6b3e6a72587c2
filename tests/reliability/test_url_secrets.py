"""A password inside a URL never leaves stacktop (issue #22): the config refuses URLs with credentials, and
one that arrives another way (a Keystone catalog entry `http://glance:PASSWORD@host`) is cut out of the
endpoint checks, the journal, the log file, the Markdown export and the snapshot JSON and text."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from rich.console import Console

from tests.reliability.test_secrets import _leaks
from tui.collectors.registry import build_collectors
from tui.export import to_markdown
from tui.recorder import Journal, Recorder, RedactingFormatter, Redactor
from tui.redact import redact_userinfo
from tui.sim import start_demo
from tui.snapshot import collect_once, to_report
from tui.snapshot_terminal import TerminalReport

CANARY = "Url-Canary-4d2e9b"


def test_redaction_strips_url_passwords() -> None:
    assert redact_userinfo(f"GET http://glance:{CANARY}@127.0.0.1:9292/v2") == "GET http://glance:***@127.0.0.1:9292/v2"
    assert redact_userinfo(f'{{"url": "https://u:{CANARY}@h/x"}}') == '{"url": "https://u:***@h/x"}'
    assert redact_userinfo("amqp://guest@h:5672/ http://h/a:b@c") == "amqp://guest@h:5672/ http://h/a:b@c"
    assert CANARY not in Redactor([])(f"x amqps://u:{CANARY}@h:5671/")


def test_a_password_in_a_catalog_url_is_in_no_output(tmp_path: Path, capfd: Any) -> None:
    demo = start_demo(storyline=False, instances=5, hosts=2, queues=5, churn=0.0)
    log_file = tmp_path / "stacktop.log"
    handler = logging.FileHandler(log_file)
    handler.setFormatter(RedactingFormatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        plain = demo.url

        def url(service: str) -> str:  # the image endpoint's catalog URL carries a password
            base = plain(service)
            return base.replace("http://", f"http://glance:{CANARY}@") if service == "image" else base

        demo.url = url  # type: ignore[method-assign]
        config = demo.config()
        journal = Journal(tmp_path / "rec", secrets=config.secrets())
        recorder = Recorder(journal)
        collectors = [c for c in build_collectors(config) if c.name == "services"]
        observations = asyncio.run(collect_once(collectors))
        observations += asyncio.run(collect_once(collectors))
        for obs in observations:
            recorder.observe(obs)
        recorder.close()
        services = observations[-1]
        assert services.error is None, services.error
        image = [c for c in services.snapshot.catalog if c.service_type == "image"]
        assert image and image[0].url.startswith("http://glance:***@"), image
        console = Console(record=True, width=160)
        console.print(TerminalReport(observations))
        journal_text = journal.path.read_text()
        assert "glance:***@" in journal_text, "the catalog URL did reach the journal, redacted"
        outputs = {
            "journal": journal_text,
            "export": to_markdown(journal.path),
            "snapshot JSON": json.dumps(to_report(observations), default=str),
            "snapshot text": console.export_text(),
            "endpoint checks": repr(services.snapshot),
        }
        logging.getLogger("tui.test").warning("catalog entry %s", url("image"))
        handler.flush()
        outputs["log file"] = log_file.read_text()
        assert "glance:***@" in outputs["log file"]
        out, err = capfd.readouterr()
        outputs["stdout/stderr"] = out + err
        leaks = {name: _leaks(text, [CANARY]) for name, text in outputs.items()}
        assert not any(leaks.values()), {k: v for k, v in leaks.items() if v}
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()
        demo.stop()
