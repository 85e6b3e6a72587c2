"""The command `y` copies from a finding is built from its words and shell-quoted: whatever a cloud, a broker or a
journal names a host, node, server, request id or cloud, the copied command pasted into a shell has that name as
exactly one argument and runs nothing else; the next step shows the same quoted command.

Each rule that names a command is driven with the name (hypothesis, plus a hand-made list of hostile names), its
finding's command (tui.rules.finding_detail, what the finding screen copies) is split with `shlex.split`, and
for the hand-made list run by bash with the programs replaced by functions printing their arguments, in an empty
folder that must stay empty."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.config import Thresholds
from tui.models.finding import Finding
from tui.models.instances import Fault, HostHealth, Server
from tui.models.observation import Observation
from tui.models.placement import Inventory, Provider, ProviderAllocation, ProviderView
from tui.models.rabbitmq import NodeInfo, QueueInfo, RabbitSnapshot
from tui.models.services import KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.rules.allocations import audit_findings, audit_provider
from tui.rules.finding_detail import finding_detail
from tui.rules.liveness import services_findings
from tui.rules.queues import rabbitmq_findings
from tui.rules.stuck import instance_error, instance_stuck
from tui.rules.task_states import DEFAULT_STUCK_SECONDS
from tui.rules.triage import triage_hints
from tui.safetext import has_unsafe

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
TH = Thresholds(service_down_time=60, agent_down_time=75, volume_service_down_time=60, fleet_down_fraction=0.5)
RP = "11111111-1111-1111-1111-111111111111"

HOSTILE: tuple[str, ...] = (
    "hx | touch pwned #", "$(touch pwned)", "`touch pwned`", "a;touch pwned", "a && touch pwned", "a & touch pwned",
    "a || touch pwned", "a > pwned", "a < /etc/passwd", "it's", "say \"hi\"", "'; touch pwned; '", "x'\"'\"'y",
    "#comment", "a b  c", " lead", "trail ", "\\", "back\\slash", "$HOME", "${IFS}touch${IFS}pwned", "*", "?",
    "[a-z]", "~root", "{a,b}", "!!", "-rf", "--all-projects", "-", "--", "ünïcødé-host", "主机-01", "rabbit@host",
    "req-1 (grep)", "x: y, z", "a\\nb", "%s\\0", "=", "a=b", "(", ")", "{", "}", ":", ",",
)
CONTROLS: tuple[str, ...] = ("a\ntouch pwned", "a\rb", "esc\x1b[2Jx", "osc\x1b]52;c;ZWNobw==\x07", "rtl\u202eabc",
                             "nul\x00x", "tab\tx", "c1\x9b31m")


def names() -> st.SearchStrategy[str]:
    return st.sampled_from(HOSTILE + CONTROLS) | st.text(min_size=1, max_size=30) | st.text(
        alphabet=st.sampled_from(list(" \t\n'\"\\$`;|&<>()#*?[]{}~!-=@:,.%^aZ9")), min_size=1, max_size=20)


def operand(name: str) -> list[str]:
    """How a name goes after the options: behind `--` when it starts with `-`."""
    return ["--", name] if name.startswith("-") else [name]


# ---- each rule that names a command: (finding for a name, the argv it must copy, an argv its prose names too)
def compute_row(host: str, **kw: object) -> ServiceRow:
    age = kw.pop("age", 5.0)
    return ServiceRow(section="compute", binary="nova-compute", host=host, id=f"id-{host}", zone="nova",
                      updated_at=NOW - timedelta(seconds=float(age)), age_at_read_s=float(age),  # type: ignore[arg-type]
                      **kw)  # type: ignore[arg-type]


def services(*rows: ServiceRow, cloud: str = "prod", keystone_ok: bool = True,
             missing: tuple[str, ...] = ()) -> ServicesSnapshot:
    return ServicesSnapshot(taken_at=NOW, keystone=KeystoneCheck("http://ks:5000/v3", cloud, ok=keystone_ok,
                                                                 error=None if keystone_ok else "refused"),
                            compute=SectionRead("compute", rows, NOW), missing_types=missing)


def one(findings: list[Finding], kind: str) -> Finding:
    found = [f for f in findings if f.kind == kind]
    assert len(found) == 1, [(f.kind, f.subject) for f in findings]
    return found[0]


def disabled(name: str) -> tuple[Finding, list[str]]:
    f = one(services_findings(services(compute_row(name, status="disabled")), NOW, TH), "nova.service_disabled")
    return f, ["openstack", "compute", "service", "set", "--enable", *operand(name), "nova-compute"]


def enabled_but_down(name: str) -> tuple[Finding, list[str]]:
    f = one(services_findings(services(compute_row(name, age=600)), NOW, TH), "nova.service_enabled_but_down")
    return f, ["openstack", "compute", "service", "set", "--disable", *operand(name), "nova-compute"]


def forced_down(name: str) -> tuple[Finding, list[str]]:
    f = one(services_findings(services(compute_row(name, age=600, forced_down=True)), NOW, TH), "nova.service_down")
    return f, ["openstack", "compute", "service", "set", "--up", *operand(name), "nova-compute"]


def compute_down_hint(name: str) -> tuple[Finding, list[str]]:
    snap = services(compute_row(name, age=600))
    obs = Observation(source="services", snapshot=snap, ok_at=NOW.timestamp(), tried_at=NOW.timestamp(),
                      findings=tuple(services_findings(snap, NOW, TH)))
    f = one(triage_hints({"services": obs}), "triage.compute_down")
    return f, ["openstack", "compute", "service", "set", "--disable", *operand(name), "nova-compute"]


def keystone_cloud(name: str) -> tuple[Finding, list[str]]:
    f = one(services_findings(services(cloud=name, keystone_ok=False), NOW, TH), "keystone.unreachable")
    return f, ["openstack", "--os-cloud", name, "token", "issue"]


def catalog_missing(name: str) -> tuple[Finding, list[str]]:
    f = one(services_findings(services(missing=(name,)), NOW, TH), "catalog.service_missing")
    return f, ["openstack", "catalog", "show", *operand(name)]


def server(**kw: object) -> Server:
    return Server(**{"id": "0123456789abcdef", "name": "web-1", **kw})  # type: ignore[arg-type]


def stuck_request(name: str) -> tuple[Finding, list[str]]:
    s = server(status="BUILD", task_state="spawning", host="compute-02", task_since=NOW - timedelta(hours=1),
               task_since_basis="observed", request_id=name)
    health = HostHealth(host="compute-02", compute_state="up", compute_status="enabled",
                        compute_updated_at=NOW - timedelta(seconds=3))
    f = instance_stuck(s, NOW, dict(DEFAULT_STUCK_SECONDS), {"compute-02": health})
    assert f is not None
    return f, ["grep", *operand(name)]


def error_without_fault(name: str) -> tuple[Finding, list[str]]:
    f = instance_error(server(id=name, status="ERROR"), NOW)
    assert f is not None
    return f, ["openstack", "server", "event", "list", *operand(name)]


def error_with_fault(name: str) -> tuple[Finding, list[str], list[str]]:
    f = instance_error(server(id=name, status="ERROR", request_id=name,
                              fault=Fault(code=500, message="something unexpected", created=NOW)), NOW)
    assert f is not None
    return f, ["openstack", "server", "show", *operand(name)], ["grep", *operand(name)]


def stale_allocation(name: str) -> tuple[Finding, list[str], list[str]]:
    inventories = {"VCPU": Inventory("VCPU", 8, 0, 1.0)}
    provider = Provider(uuid=RP, name="compute-01", root_provider_uuid=RP, inventories=inventories, usages=None,
                        allocations=(ProviderAllocation(name, {"VCPU": 1}),))
    view = ProviderView(provider=provider, host="compute-01", node="compute-01", instances=frozenset(),
                        migrations=(), compute_states={"compute-01": "up"}, consumers={})
    f = one(audit_findings([audit_provider(view)]), "placement.stale_allocation")
    return (f, ["openstack", "server", "show", *operand(name)],
            ["openstack", "resource", "provider", "allocation", "show", *operand(name)])


def rabbit(*nodes: NodeInfo, queues: tuple[QueueInfo, ...] = ()) -> list[Finding]:
    return rabbitmq_findings(RabbitSnapshot(endpoint="http://x", taken_at=NOW, nodes=nodes, queues=queues), NOW)


def node_down(name: str) -> tuple[Finding, list[str], list[str]]:
    f = one(rabbit(NodeInfo(name, running=False), NodeInfo("rabbit@ok", running=True)), "rabbitmq.node_down")
    return f, ["systemctl", "status", "rabbitmq-server"], ["rabbitmqctl", "-n", name, "start_app"]


def node_drained(name: str) -> tuple[Finding, list[str]]:
    f = one(rabbit(NodeInfo(name, running=True, being_drained=True)), "rabbitmq.node_drained")
    return f, ["rabbitmq-upgrade", "-n", name, "revive"]


def memory_alarm(name: str) -> tuple[Finding, list[str]]:
    f = one(rabbit(NodeInfo(name, running=True, mem_alarm=True)), "rabbitmq.alarm")
    return f, ["rabbitmq-diagnostics", "-n", name, "memory_breakdown"]


def quorum_lost(name: str) -> tuple[Finding, list[str]]:
    q = QueueInfo(vhost="/", name="scheduler", queue_type="quorum", members=(name, "rabbit@b", "rabbit@c"),
                  online=("rabbit@c",), leader="rabbit@c", messages=1)
    f = one(rabbit(NodeInfo("rabbit@c", running=True), queues=(q,)), "rabbitmq.quorum_lost")
    return f, ["rabbitmqctl", "-n", name, "start_app"]


def members_offline(name: str) -> tuple[Finding, list[str], list[str]]:
    q = QueueInfo(vhost="/", name="scheduler", queue_type="quorum", members=(name, "rabbit@b", "rabbit@c"),
                  online=("rabbit@b", "rabbit@c"), leader="rabbit@c", messages=0)
    f = one(rabbit(NodeInfo("rabbit@c", running=True), queues=(q,)), "rabbitmq.members_offline")
    return f, ["rabbitmq-queues", "check_if_node_is_quorum_critical"], ["rabbitmq-diagnostics", "-n", name, "status"]


def queue_down(name: str) -> tuple[Finding, list[str]]:
    q = QueueInfo(vhost="/", name="notifications.info", queue_type="classic", state="down", node=name)
    f = one(rabbit(NodeInfo("rabbit@c", running=True), queues=(q,)), "rabbitmq.queue_down")
    return f, ["rabbitmq-diagnostics", "-n", name, "status"]


SITES: dict[str, Callable[[str], tuple[Finding, ...] | tuple[Finding, list[str]]]] = {
    "nova.service_disabled (host)": disabled,
    "nova.service_enabled_but_down (host)": enabled_but_down,
    "nova.service_down forced (host)": forced_down,
    "triage.compute_down (host)": compute_down_hint,
    "keystone.unreachable (cloud)": keystone_cloud,
    "catalog.service_missing (service type)": catalog_missing,
    "instance.stuck (request id)": stuck_request,
    "instance.error without fault (server id)": error_without_fault,
    "instance.error (server id, request id)": error_with_fault,
    "placement.stale_allocation (consumer)": stale_allocation,
    "rabbitmq.node_down (node)": node_down,
    "rabbitmq.node_drained (node)": node_drained,
    "rabbitmq.alarm (node)": memory_alarm,
    "rabbitmq.quorum_lost (node)": quorum_lost,
    "rabbitmq.members_offline (node)": members_offline,
    "rabbitmq.queue_down (node)": queue_down,
}


def check(site: str, name: str) -> str | None:
    """The copied command for the name at a site, checked; None when (rightly) nothing is copyable."""
    finding, argv, *named = SITES[site](name)
    detail = finding_detail(finding)
    for words in (argv, *named):
        assert shlex.join(words) in finding.next_step, "the next step shows the command quoted as it is copied"
    if has_unsafe(name) and name in argv:
        assert detail.command is None and detail.uncopyable, "a control character is never put on the clipboard"
        return None
    assert detail.command is not None
    assert shlex.split(detail.command) == argv, detail.command
    return detail.command


@pytest.mark.parametrize("site", list(SITES))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=names())
def test_any_name_is_one_argument_of_the_copied_command(site: str, name: str) -> None:
    check(site, name)


BASH_FUNCTIONS = "".join(f"{program}() {{ printf '%s\\0' \"$@\"; }}\n" for program in (
    "openstack", "grep", "rabbitmqctl", "rabbitmq-diagnostics", "rabbitmq-upgrade", "rabbitmq-queues", "systemctl",
    "nova-manage"))


@pytest.mark.parametrize("site", list(SITES))
def test_bash_runs_the_copied_command_with_the_name_as_one_argument_and_nothing_else(site: str,
                                                                                    tmp_path: Path) -> None:
    for name in HOSTILE:
        command = check(site, name)
        assert command is not None
        run = subprocess.run(["bash", "--norc", "--noprofile", "-c", BASH_FUNCTIONS + command], cwd=tmp_path,
                             capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert run.returncode == 0, (name, command, run.stderr)
        argv = shlex.split(command)
        assert run.stdout.decode().split("\0")[:-1] == argv[1:], (name, command)
        assert not list(tmp_path.iterdir()), f"{command!r} created {list(tmp_path.iterdir())}"


def test_a_name_with_a_control_character_is_not_copyable_but_shown_written_out() -> None:
    finding, _ = enabled_but_down("compute-0\x1b1")
    detail = finding_detail(finding)
    assert detail.command is None and detail.uncopyable
    assert "compute-0\x1b1" in finding.next_step  # the screens write it out (tui.safetext)
