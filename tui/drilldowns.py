"""What the drill-down screens show, judged below them: the finding screen's reading of a finding and the
instance screen's five questions. The screens paint what these return; no screen calls a rule.

A finding's reading (owner, host, log, command) is the cloud's judgement of the poll (CloudView.details, made
by the runner's judge); one no longer reported (a screen showing it CLEARED) keeps the reading it had. The five
questions rest on what the instance screen read on demand (its actions, ports, allocations) joined with the
instances source's latest observation of the server and of the host its owner runs on: they are answered here,
with the one owner logic of the pane, the finding and the snapshot (tui.rules.stuck.instance_owner).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tui.models.finding import Finding, FindingDetail
from tui.models.instances import InstanceDetail, InstancesSnapshot, Server
from tui.models.judged import latest_view
from tui.models.observation import Observation
from tui.rules.finding_detail import finding_detail
from tui.rules.stuck import Answer, five_questions, instance_owner, with_task_since
from tui.rules.task_states import DEFAULT_STUCK_SECONDS


def finding_reading(finding: Finding, observations: Mapping[str, Observation]) -> FindingDetail:
    """The finding's owner, host, log and command as the cloud's latest judgement reads them."""
    view = latest_view(observations)
    detail = view.details.get(finding.key) if view is not None else None
    return detail if detail is not None else finding_detail(finding)


def stuck_after(collector: Any) -> Mapping[str, float]:
    """The stuck thresholds the instances source judges with (task_state -> seconds)."""
    return getattr(collector, "stuck", None) or DEFAULT_STUCK_SECONDS


def instance_answers(detail: InstanceDetail, now: datetime, stuck: Mapping[str, float], known: Server | None = None,
                     hosts: InstancesSnapshot | None = None) -> list[Answer]:
    """The five questions of the instance screen. `known`: the instances source's last observation of this
    server (when its task_state began, the host the scheduler chose for it); `hosts`: that source's snapshot,
    whose host health answers for a build's chosen host (the screen reads only the recorded host's)."""
    server = with_task_since(detail.server, known)
    health, health_error = detail.host_health, detail.errors.get("host")
    owned = instance_owner(server)
    if owned is not None and owned.cast and owned.host:
        health, health_error = None, None
        if hosts is None:
            health_error = "the instances source has not read the hosts"
        elif hosts.hosts_error is not None:
            health_error = hosts.hosts_error
        else:
            health = hosts.hosts.get(owned.host)
    return five_questions(server, now, stuck, health, detail.allocations, health_error=health_error,
                          allocations_error=detail.errors.get("allocations"))
