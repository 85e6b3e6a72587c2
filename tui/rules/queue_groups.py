"""Many queues, one finding: queues without a consumer grouped per class and service. Pure functions.

A broker of 20,000 queues where clients come and go leaves hundreds of reply and fanout queues behind, each a
finding of its own: the findings pane and `snapshot --json` drown in them. Above GROUP_OVER findings of the same
vhost, class and topic (reply queues; the fanouts of one topic; notifications; queues of no OpenStack topic),
they become one `rabbitmq.queues_no_consumer` finding that counts them, sums their messages and names the
fullest ones. Service topic queues (`compute.<host>`, `scheduler` ...) are never grouped: each names the host
and service that stopped listening, and the triage hints read them one by one.

The subject is stable (the class's name pattern, not the count), so a group is the same finding from poll to
poll while its count moves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tui.models.finding import SEVERITY_ORDER, Finding
from tui.shell_command import command, shell_text

GROUP_OVER = 5  # more findings than this in one group: one finding instead
EXAMPLES = 10  # the fullest queues named in a group's evidence
GROUP_KIND = "rabbitmq.queues_no_consumer"
MEMBER_KIND = "rabbitmq.queue_no_consumer"
GROUPED_CLASSES = ("reply", "fanout", "notifications", "other")
LIST_IDLE = command("rabbitmqctl", "list_queues", "name", "messages", "consumers", "idle_since")

GroupKey = tuple[str, str, str]  # (vhost, class, topic or "")


def group_key(evidence: Mapping[str, Any]) -> GroupKey:
    """Which group a queue belongs to (from a queue finding's evidence, or the pane's own view of a queue)."""
    cls = str(evidence.get("class") or "")
    topic = str(evidence.get("topic") or "") if cls == "fanout" else ""
    return (str(evidence.get("vhost") or "/"), cls, topic)


def _pattern(key: GroupKey) -> str:
    vhost, cls, topic = key
    name = {"reply": "reply_*", "fanout": f"{topic}_fanout*", "notifications": "notifications queues",
            "other": "queues of no OpenStack topic"}[cls]
    return name if vhost == "/" else f"{vhost}/{name}"


def _what(key: GroupKey, n: int) -> str:
    _, cls, topic = key
    plural = "s" if n != 1 else ""
    return {"reply": f"{n:,} reply queue{plural}", "fanout": f"{n:,} fanout queue{plural} of {topic}",
            "notifications": f"{n:,} notification queue{plural}",
            "other": f"{n:,} queue{plural} of no OpenStack topic"}[cls]


def _next_step(key: GroupKey, members: list[Finding]) -> str:
    cls = key[1]
    if cls in ("reply", "fanout"):
        hosts = sorted({str(f.evidence["host"]) for f in members if f.evidence.get("host")})
        where = f" (clients on {', '.join(hosts[:5])}{' ...' if len(hosts) > 5 else ''})" if hosts else ""
        return (f"their clients went away{where}: x-expires removes such queues after their last use; if they "
                "keep piling up, find the service that restarts or the CLI calls that leave them "
                f"({shell_text(LIST_IDLE)})")
    return members[0].next_step


def _command(key: GroupKey, members: list[Finding]) -> Any:
    """The command of the group's next step: its own, or (the next step being the first member's) the first
    member's."""
    return LIST_IDLE if key[1] in ("reply", "fanout") else members[0].evidence.get("command")


def group_queue_findings(findings: Iterable[Finding], over: int = GROUP_OVER) -> list[Finding]:
    """The findings with every group of more than `over` queue findings (of a grouped class) folded into one;
    other findings, and small groups, pass through in their order."""
    findings = list(findings)
    groups: dict[GroupKey, list[Finding]] = {}
    for f in findings:
        if f.kind == MEMBER_KIND and f.evidence.get("class") in GROUPED_CLASSES:
            groups.setdefault(group_key(f.evidence), []).append(f)
    big = {key: members for key, members in groups.items() if len(members) > over}
    if not big:
        return findings
    out: list[Finding] = []
    for f in findings:
        if f.kind == MEMBER_KIND and f.evidence.get("class") in GROUPED_CLASSES and group_key(f.evidence) in big:
            continue
        out.append(f)
    for key, members in big.items():
        out.append(_group(key, members))
    return out


def _group(key: GroupKey, members: list[Finding]) -> Finding:
    vhost, cls, topic = key
    fullest = sorted(members, key=lambda f: (-int(f.evidence.get("messages") or 0), f.subject))
    messages = sum(int(f.evidence.get("messages") or 0) for f in members)
    severity = min((f.severity for f in members), key=lambda s: SEVERITY_ORDER[s])
    evidence: dict[str, Any] = {
        "vhost": vhost, "class": cls, "count": len(members), "messages": messages,
        "queues": [f.evidence.get("queue") or f.subject for f in fullest[:EXAMPLES]],
        "more": max(0, len(members) - EXAMPLES),
    }
    if topic:
        evidence["topic"] = topic
    if (argv := _command(key, members)) is not None:
        evidence["command"] = argv
    expiring = [f.evidence["expires_in_s_at_most"] for f in members if f.evidence.get("expires_in_s_at_most")
                is not None]
    if expiring:
        evidence["expires_in_s_at_most"] = max(expiring)
    held = f"{messages:,} message{'s' if messages != 1 else ''}"
    summary = f"{_what(key, len(members))} hold {held} with 0 consumers (fullest: {evidence['queues'][0]})"
    return Finding(severity=severity, kind=GROUP_KIND, subject=_pattern(key), summary=summary, evidence=evidence,
                   next_step=_next_step(key, members), source=members[0].source)
