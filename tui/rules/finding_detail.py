"""What the finding screen says beside a finding's summary: who owns it, where, which log to open first, and the
command its next step names (the one `y` copies). Pure: read from the finding's kind, evidence and next step.

- owner: the rule's own (`evidence["owner"]`, a stuck instance's task_state owner), else the service or agent
  the finding is about (`binary`), the queue's consumer (`service`), else the component behind its kind;
- host: `evidence["host"]` (a cinder `host@backend` as written), else the subject when the kind is about a host;
- log: the rule's `first_log` (then `then`), else the owner's log on the host;
- command: the first command the next step names, as the rule gives it in `evidence["command"]` (its words,
  tui.shell_command), shell-quoted: the next step shows the same text. Never cut out of the prose, where
  a name from the cloud could end it early or carry shell syntax. None when the rule gives none;
  `uncopyable` when it gives one whose words hold a control character (not put on the clipboard);
- commands: what `y` offers, in order: a read-only (diagnostic) command first, then the rule's command, each
  marked when it changes state (tui.shell_command.is_write). The diagnostic is the rule's
  `evidence["diagnostic"]`, else the read that shows what the rule's write command would change
  (`openstack compute service list --host H --service B` before `openstack compute service set ...`).
"""

from __future__ import annotations

from tui.models.finding import CopyCommand, Finding, FindingDetail
from tui.shell_command import argv_of, copyable, diagnostic_for, is_write

COMPONENT_BY_PREFIX: tuple[tuple[str, str], ...] = (
    ("triage.compute_down", "nova-compute"), ("triage.bus_or_conductor", "nova-conductor and RabbitMQ"),
    ("triage.galera", "Galera (MariaDB)"), ("triage.image", "glance-api"), ("triage.keystone", "keystone"),
    ("triage.placement", "placement-api"), ("triage.scheduling", "nova-scheduler and placement"),
    ("triage.catalog_hidden", "keystone (the catalog)"),
    ("rabbitmq.", "RabbitMQ"), ("galera.", "Galera (MariaDB)"), ("placement.", "placement"),
    ("instance.", "nova"), ("nova.", "nova"), ("neutron.", "neutron"), ("cinder.", "cinder"),
    ("keystone.", "keystone"), ("catalog.", "keystone (the catalog)"), ("stacktop.", "stacktop itself"),
)
HOST_SUBJECT_KINDS = ("nova.service", "triage.compute", "triage.host")


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def owner_of(f: Finding) -> str:
    ev = f.evidence
    for key in ("owner", "binary", "service"):
        found = _text(ev.get(key))
        if found:
            return found
    for prefix, component in COMPONENT_BY_PREFIX:
        if f.kind.startswith(prefix):
            return component
    return f.source or "-"


def host_of(f: Finding) -> str | None:
    found = _text(f.evidence.get("host"))
    if found:
        return found
    return f.subject if f.kind.startswith(HOST_SUBJECT_KINDS) else None


def log_of(f: Finding, owner: str, host: str | None) -> str | None:
    first = _text(f.evidence.get("first_log"))
    if first:
        then = _text(f.evidence.get("then"))
        return f"{first}, then {then}" if then else first
    if owner.startswith(("nova-", "neutron-", "cinder-", "glance-", "placement-")):
        return f"{owner} on {host}" if host else owner
    return None


def command_of(f: Finding) -> str | None:
    return copyable(argv_of(f.evidence.get("command")))


def commands_of(f: Finding) -> tuple[CopyCommand, ...]:
    """The commands `y` offers: the diagnostic (read-only) first, then the rule's command."""
    argv = argv_of(f.evidence.get("command"))
    diagnostic = argv_of(f.evidence.get("diagnostic"))
    if diagnostic is None and argv is not None and is_write(argv):
        diagnostic = diagnostic_for(argv)
    out: list[CopyCommand] = []
    for words in (diagnostic, argv):
        text = copyable(words)
        if words is not None and text is not None and text not in (c.text for c in out):
            out.append(CopyCommand(text, is_write(words)))
    return tuple(sorted(out, key=lambda c: c.write))


def finding_detail(f: Finding) -> FindingDetail:
    owner = owner_of(f)
    host = host_of(f)
    owned_by = _text(f.evidence.get("owner_label")) or \
        owner + (f" on {host}" if host and host not in owner else "")
    command = command_of(f)
    return FindingDetail(owner=owner, host=host, log=log_of(f, owner, host), command=command, owned_by=owned_by,
                         uncopyable=command is None and argv_of(f.evidence.get("command")) is not None,
                         commands=commands_of(f))
