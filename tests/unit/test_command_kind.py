"""Read or write: the commands findings name are told apart (`y` offers the read-only one first and marks the
one that changes state), and a write command on a service or a broker node has the read that shows its state."""

from __future__ import annotations

from tui.models.finding import Finding
from tui.rules.finding_detail import CopyCommand, finding_detail
from tui.shell_command import command, diagnostic_for, is_write


def test_every_command_the_rules_name_is_classified() -> None:
    writes = [command("openstack", "compute", "service", "set", "--disable", operands=("compute-01", "nova-compute")),
              command("openstack", "compute", "service", "set", "--enable", operands=("c1", "nova-compute")),
              command("rabbitmqctl", "-n", "rabbit@ctl-1", "start_app"),
              command("rabbitmq-upgrade", "-n", "rabbit@ctl-1", "revive"),
              command("systemctl", "restart", "rabbitmq-server")]
    reads = [command("openstack", "compute", "service", "list", "--host", "c1"),
             command("openstack", "--os-cloud", "prod", "token", "issue"),
             command("openstack", "server", "show", operands=("set",)),
             command("openstack", "image", "list"), command("openstack", "server", "event", "list", operands=("x",)),
             command("rabbitmqctl", "-n", "rabbit@ctl-1", "status"), command("rabbitmqctl", "cluster_status"),
             command("rabbitmqctl", "list_queues", "name", "consumers"),
             command("rabbitmq-queues", "check_if_node_is_quorum_critical"),
             command("rabbitmq-diagnostics", "-n", "n", "memory_breakdown"),
             command("systemctl", "status", "rabbitmq-server"), command("nova-manage", "cell_v2", "list_cells"),
             command("nova-manage", "placement", "audit", "--verbose", "--resource_provider", "u"),
             command("grep", operands=("req-1",))]
    assert [c for c in writes if not is_write(c)] == []
    assert [c for c in reads if is_write(c)] == []
    assert is_write(command("nova-manage", "placement", "audit", "--delete")), "audit --delete removes"
    assert is_write(command("some-tool", "do")), "an unknown program is not offered as a read"


def test_a_write_command_has_its_diagnostic() -> None:
    assert diagnostic_for(command("openstack", "compute", "service", "set", "--disable",
                                  operands=("compute-01", "nova-compute"))) == \
        ("openstack", "compute", "service", "list", "--host", "compute-01", "--service", "nova-compute")
    assert diagnostic_for(command("rabbitmqctl", "-n", "rabbit@ctl-1", "start_app")) == \
        ("rabbitmq-diagnostics", "-n", "rabbit@ctl-1", "status")


def test_compute_down_offers_the_diagnostic_before_the_write_command() -> None:
    hint = Finding(severity="critical", kind="triage.compute_down", subject="compute-01", summary="down",
                   evidence={"host": "compute-01", "command": ["openstack", "compute", "service", "set",
                                                               "--disable", "compute-01", "nova-compute"]},
                   next_step="...", source="triage")
    assert finding_detail(hint).commands == (
        CopyCommand("openstack compute service list --host compute-01 --service nova-compute", write=False),
        CopyCommand("openstack compute service set --disable compute-01 nova-compute", write=True))
    read = Finding(severity="warning", kind="rabbitmq.queue_no_consumer", subject="q", summary="s",
                   evidence={"command": ["rabbitmqctl", "list_queues", "name", "consumers"]}, next_step="",
                   source="rabbitmq")
    assert finding_detail(read).commands == (CopyCommand("rabbitmqctl list_queues name consumers", write=False),)
